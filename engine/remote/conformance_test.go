package remote_test

import (
	"context"
	"net/http/httptest"
	"testing"

	"mnemo/contract"
	"mnemo/contract/conformance"
	"mnemo/engine/bolt"
	"mnemo/engine/memory"
	"mnemo/engine/remote"
	"mnemo/server/httpapi"
)

const ownerToken = "owner-token-for-tests"

// serve runs the HTTP API over e on loopback and returns a client of it.
func serve(t *testing.T, e contract.Engine, opts httpapi.Options) *remote.Client {
	t.Helper()
	if opts.OwnerToken == "" && !opts.Open {
		opts.OwnerToken = ownerToken
	}
	srv := httptest.NewServer(httpapi.New(e, opts))
	t.Cleanup(srv.Close)
	c, err := remote.New(srv.URL, ownerToken)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func runSuite(t *testing.T, e contract.Engine) {
	t.Helper()
	rep := conformance.Run(context.Background(), e)
	for _, res := range rep.Results {
		t.Log(res.String())
	}
	if err := rep.Err(); err != nil {
		t.Fatal(err)
	}
}

func TestConformanceOverBolt(t *testing.T) {
	store, err := bolt.Open(t.TempDir(), bolt.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = store.Close() })
	runSuite(t, serve(t, store, httpapi.Options{}))
}

func TestConformanceOverMemory(t *testing.T) {
	runSuite(t, serve(t, memory.New(), httpapi.Options{}))
}
