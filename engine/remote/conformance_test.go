package remote_test

import (
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

// The suite passes through a real loopback server, over either engine,
// the cancelled-context check included (the client honours its context).
func TestConformanceOverBolt(t *testing.T) {
	t.Parallel()
	conformance.Test(t, func(t *testing.T) contract.Engine {
		store, err := bolt.Open(t.TempDir(), bolt.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = store.Close() })
		return serve(t, store, httpapi.Options{})
	})
}

func TestConformanceOverMemory(t *testing.T) {
	t.Parallel()
	conformance.Test(t, func(t *testing.T) contract.Engine { return serve(t, memory.New(), httpapi.Options{}) })
}

// Undo over --remote is exact too: the client restores whole records
// through the server's restore operation.
func TestUndoRestoresExactlyOverHTTP(t *testing.T) {
	t.Parallel()
	store, err := bolt.Open(t.TempDir(), bolt.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = store.Close() })
	if err := conformance.UndoProperty(t.Context(), serve(t, store, httpapi.Options{}), 7, 10); err != nil {
		t.Fatal(err)
	}
}
