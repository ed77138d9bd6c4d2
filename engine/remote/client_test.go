package remote_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"mnemo/contract"
	"mnemo/engine/memory"
	"mnemo/engine/remote"
	"mnemo/server/audit"
	"mnemo/server/httpapi"
	"mnemo/server/wire"
)

// canned answers every request with one status, body and headers.
func canned(t *testing.T, status int, body string, hdr map[string]string) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		for k, v := range hdr {
			w.Header().Set(k, v)
		}
		w.WriteHeader(status)
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)
	return srv, &calls
}

func TestErrorsComeBackAsContractErrors(t *testing.T) {
	cases := []struct {
		status    int
		body      string
		kind      contract.ErrorKind
		code, msg string
	}{
		{400, `{"error":{"kind":"invalid_request","code":"invalid-query","message":"limit must be between 1 and 1000"}}`, contract.KindInvalidRequest, "invalid-query", "limit must be between 1 and 1000"},
		{400, `{"error":{"kind":"unsupported","message":"engine ` + "`mnemo`" + ` does not erase"}}`, contract.KindUnsupported, "", "engine `mnemo` does not erase"},
		{401, `{"error":{"kind":"unauthorized","message":"the bearer token is not known to this server"}}`, contract.KindUnauthorized, "", "the bearer token is not known to this server"},
		{403, `{"error":{"kind":"unauthorized","message":"principal ` + "`rita`" + ` is a reader and cannot forget"}}`, contract.KindUnauthorized, wire.CodeForbidden, "principal `rita` is a reader and cannot forget"},
		{404, `{"error":{"kind":"not_found","message":"record x does not exist"}}`, contract.KindNotFound, "", "record x does not exist"},
		{409, `{"error":{"kind":"conflict","message":"record x is 'active', not a candidate"}}`, contract.KindConflict, "", "record x is 'active', not a candidate"},
		{503, `{"error":{"kind":"unavailable","message":"index rebuilding"}}`, contract.KindUnavailable, "", "index rebuilding"},
		{500, `{"error":{"kind":"engine","message":"the server's engine failed"}}`, contract.KindEngine, "", "the server's engine failed"},
		{502, `<html>bad gateway</html>`, contract.KindUnavailable, "", "the server answered 502 Bad Gateway"},
		{403, `forbidden`, contract.KindUnauthorized, wire.CodeForbidden, "the server answered 403 Forbidden"},
	}
	for _, c := range cases {
		srv, _ := canned(t, c.status, c.body, nil)
		cl, err := remote.New(srv.URL, "secret-token-123")
		if err != nil {
			t.Fatal(err)
		}
		_, err = cl.List(context.Background(), contract.ListRequest{Limit: 1})
		var ce *contract.Error
		if !errors.As(err, &ce) || ce.Kind != c.kind || ce.Code != c.code || ce.Message != c.msg {
			t.Fatalf("%d %s: decoded %#v", c.status, c.body, ce)
		}
		if strings.Contains(err.Error(), "secret-token-123") {
			t.Fatal("an error carries the token")
		}
	}
}

func TestRateLimitedCallsWaitAndRetry(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusTooManyRequests)
			_, _ = w.Write([]byte(`{"error":{"kind":"unavailable","message":"too many requests"}}`))
			return
		}
		_, _ = w.Write([]byte(`{"items":[]}`))
	}))
	defer srv.Close()
	cl, _ := remote.New(srv.URL, "t")
	if _, err := cl.List(context.Background(), contract.ListRequest{Limit: 1}); err != nil {
		t.Fatalf("the retried call failed: %v", err)
	}
	if calls.Load() != 2 {
		t.Fatalf("%d calls, want 2", calls.Load())
	}
	// Without retries the 429 is an unavailable error.
	calls.Store(0)
	cl, _ = remote.New(srv.URL, "t", remote.WithRetries(0))
	_, err := cl.List(context.Background(), contract.ListRequest{Limit: 1})
	if contract.KindOf(err) != contract.KindUnavailable {
		t.Fatalf("429 without retries: %v", err)
	}
}

func TestTimeoutsAndUnreachableServers(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	}))
	defer srv.Close()
	cl, _ := remote.New(srv.URL, "t", remote.WithTimeout(100*time.Millisecond))
	_, err := cl.List(context.Background(), contract.ListRequest{Limit: 1})
	if contract.KindOf(err) != contract.KindUnavailable || !strings.Contains(err.Error(), "did not answer in time") {
		t.Fatalf("timeout: %v", err)
	}
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := l.Addr().String()
	l.Close()
	cl, _ = remote.New("http://"+addr, "t")
	if h := cl.Health(context.Background()); h.State != contract.HealthDown {
		t.Fatalf("health of a closed port: %+v", h)
	}
	d := cl.Descriptor()
	if len(d.FetchModes) != 0 || !strings.Contains(d.Label, "unreachable") {
		t.Fatalf("descriptor of an unreachable server: %+v", d)
	}
	if err := cl.Connect(context.Background()); contract.KindOf(err) != contract.KindUnavailable {
		t.Fatalf("connect to a closed port: %v", err)
	}
}

func TestAddressesAreChecked(t *testing.T) {
	for _, bad := range []string{"ftp://x", "http://", "127.0.0.1:7077", "unix://"} {
		if _, err := remote.New(bad, ""); contract.KindOf(err) != contract.KindConfig {
			t.Fatalf("%q: %v", bad, err)
		}
	}
}

func TestUnixSocketAndAudit(t *testing.T) {
	t.Parallel()
	sock := filepath.Join(t.TempDir(), "api.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: httpapi.New(memory.New(), httpapi.Options{Open: true})}
	go func() { _ = srv.Serve(l) }()
	defer srv.Close()
	cl, err := remote.New("unix://"+sock, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := cl.Connect(context.Background()); err != nil {
		t.Fatal(err)
	}
	if d := cl.Descriptor(); d.ID == "" || len(d.FetchModes) == 0 {
		t.Fatalf("descriptor over the socket: %+v", d)
	}
	// This server keeps no audit log: the read is a not-found, not a failure.
	if _, err := cl.ReadAudit(context.Background(), audit.Query{Limit: 5}); contract.KindOf(err) != contract.KindNotFound {
		t.Fatalf("audit without a log: %v", err)
	}
}
