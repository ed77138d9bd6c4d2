package remote_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/charmbracelet/x/exp/golden"
	"time"

	"mnemo/contract"
	"mnemo/engine/remote"
)

// TestRequestBytesAreTheGoldens: what the client sends is byte for byte what
// the goldens say (written by the client of b344131): servers of every
// version read these bodies. (StoreWith without options now sends the bare
// item, the body Store always sent, where b344131 sent {"item", "options": {}}:
// Store is StoreWith without options since contract.Engine lost its Store.)
func TestRequestBytesAreTheGoldens(t *testing.T) {
	var mu sync.Mutex
	var b strings.Builder
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		data, _ := io.ReadAll(r.Body)
		mu.Lock()
		b.WriteString(r.Method + " " + r.URL.Path + "\n" + string(data) + "\n")
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/v1/store":
			_, _ = io.WriteString(w, `{"id":"a","replayed":false}`)
		case "/v1/store_many", "/v1/get":
			_, _ = io.WriteString(w, `[]`)
		default:
			_, _ = io.WriteString(w, `{}`)
		}
	}))
	defer srv.Close()
	c, err := remote.New(srv.URL, "token", remote.WithRetries(0))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	item := contract.Document("a <note> & more", contract.MemoryMeta{Namespace: contract.MustNamespace("team:acme")})
	expires := time.Date(2027, 1, 2, 3, 4, 5, 0, time.UTC)
	calls := []func() error{
		func() error { _, err := contract.Store(ctx, c, item); return err },
		func() error {
			_, err := c.StoreWith(ctx, item, contract.WriteOptions{Wait: contract.WaitAccepted, Status: contract.StatusCandidate, ExpiresAt: &expires})
			return err
		},
		func() error { _, err := contract.StoreMany(ctx, c, nil); return err },
		func() error { _, err := contract.StoreMany(ctx, c, []contract.StoreItem{item}); return err },
		func() error {
			_, err := c.StoreManyWith(ctx, nil, contract.WriteOptions{Status: contract.StatusCandidate})
			return err
		},
		func() error {
			_, err := contract.ForgetWithin(ctx, c, nil, contract.ReachOf(contract.MustNamespace("team:acme")))
			return err
		},
		func() error { _, err := c.Forget(ctx, contract.ForgetIDs()); return err },
		func() error { _, err := c.Get(ctx, contract.GetRequest{IDs: []string{"a"}}); return err },
	}
	for i, call := range calls {
		if err := call(); err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	golden.RequireEqual(t, b.String())
}
