package local

import (
	"context"
	"errors"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"mnemo/contract"
	"mnemo/engine/bolt"
	"mnemo/server/wire"
)

// fakeHolder serves the socket as a holder does for an attach, then answers
// calls as told: hold makes every request wait (a stopped process: nothing
// answers, the asks included), and slow makes the API's calls take that
// long while the asks are answered (a busy process).
type fakeHolder struct {
	mu   sync.Mutex
	hold chan struct{} // closed: answer again
	slow time.Duration
	done chan struct{}
}

func newFakeHolder(t *testing.T, dir string) *fakeHolder {
	t.Helper()
	l, err := net.Listen("unix", SocketPath(dir))
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeHolder{done: make(chan struct{})}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		hold, slow := f.hold, f.slow
		f.mu.Unlock()
		if hold != nil {
			select {
			case <-hold:
			case <-f.done:
				return
			}
		}
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case wire.PathPrefix + wire.EndpointDescriptor:
			_, _ = w.Write([]byte(`{"id":"mnemo","label":"fake","fetch_modes":["keyword"],"consolidation":"none"}`))
		case adminStatus:
			_, _ = w.Write([]byte(`{"pid":4242,"holder":"fake"}`))
		case adminAlive:
			_, _ = w.Write([]byte(`{}`))
		case wire.PathPrefix + wire.OpStore:
			select {
			case <-time.After(slow):
			case <-f.done:
				return
			}
			_, _ = w.Write([]byte(`{"id":"` + strings.Repeat("c", 40) + `","replayed":false}`))
		default:
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"error":{"kind":"not_found","message":"no such thing here"}}`))
		}
	})}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() {
		close(f.done)
		_ = srv.Close()
	})
	return f
}

func (f *fakeHolder) stop() {
	f.mu.Lock()
	f.hold = make(chan struct{})
	f.mu.Unlock()
}

func (f *fakeHolder) resume() {
	f.mu.Lock()
	close(f.hold)
	f.hold = nil
	f.mu.Unlock()
}

func attachedTo(t *testing.T) (*Store, *fakeHolder) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "store")
	e, err := bolt.Open(dir, bolt.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	f := newFakeHolder(t, dir)
	s := open(t, dir)
	if s.Role() != Attached {
		t.Fatalf("role %s, want attached to the fake holder", s.Role())
	}
	return s, f
}

// A holder that stops answering (Ctrl-Z in its terminal) does not hold the
// callers up for as long as it is stopped: a call is given up once an ask of
// its own goes unanswered, with a message that says why and whether the call
// may still be applied. Once the holder answers again, so do the calls.
func TestCallsToAStoppedHolderEnd(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		call func(s *Store) error
		want string
	}{
		{"store", func(s *Store) error { _, err := contract.Store(ctx, s, learning("to a stopped holder")); return err },
			"sending it again is safe"},
		{"forget", func(s *Store) error { _, err := s.Forget(ctx, contract.ForgetIDs(strings.Repeat("a", 40))); return err },
			"this forget may or may not be applied when that process resumes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s, f := attachedTo(t)
			f.stop()
			start := time.Now()
			err := tc.call(s)
			took := time.Since(start)
			var ce *contract.Error
			if !errors.As(err, &ce) || ce.Kind != contract.KindUnavailable ||
				!strings.Contains(ce.Message, "(pid 4242) has not answered for") ||
				!strings.Contains(ce.Message, "stopped (Ctrl-Z in its terminal: `fg` resumes it) or stuck") ||
				!strings.Contains(ce.Message, tc.want) {
				t.Fatalf("a %s to a stopped holder answered %v", tc.name, err)
			}
			// Given up after the first unanswered ask, not after the holder.
			if took > probeAfter+probeWait+10*time.Second {
				t.Errorf("the %s was given up after %v", tc.name, took)
			}
			f.resume()
			if _, err := contract.Store(ctx, s, learning("once it answers again")); err != nil {
				t.Errorf("a store once the holder answers again: %v", err)
			}
			if s.Role() != Attached {
				t.Errorf("role %s, want still attached", s.Role())
			}
		})
	}
}

// A holder that is busy answers the asks, and a call that takes it longer
// than an ask may wait is not given up.
func TestASlowCallToAnAnsweringHolderIsNotGivenUp(t *testing.T) {
	t.Parallel()
	s, f := attachedTo(t)
	f.mu.Lock()
	f.slow = probeAfter + probeWait + time.Second
	f.mu.Unlock()
	if _, err := contract.Store(context.Background(), s, learning("slow but answered")); err != nil {
		t.Fatalf("a slow store to a holder that answers its asks: %v", err)
	}
}
