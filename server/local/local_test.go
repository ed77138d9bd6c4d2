package local

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	bbolt "go.etcd.io/bbolt"

	"mnemo/contract"
	"mnemo/engine/bolt"
	"mnemo/engine/curate"
	"mnemo/server/wire"
)

func learning(text string) contract.StoreItem {
	var it contract.StoreItem
	if err := it.UnmarshalJSON([]byte(`{"type":"learning","kind":"fact","confidence":0.9,"text":` +
		quote(text) + `,"meta":{"namespace":"team:acme"}}`)); err != nil {
		panic(err)
	}
	return it
}

func quote(s string) string {
	b := []byte{'"'}
	for _, r := range s {
		if r == '"' || r == '\\' {
			b = append(b, '\\')
		}
		b = append(b, string(r)...)
	}
	return string(append(b, '"'))
}

func open(t *testing.T, dir string) *Store {
	t.Helper()
	s, err := Open(context.Background(), dir, Options{})
	if err != nil {
		t.Fatalf("open %s: %v", dir, err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func ids(t *testing.T, s *Store) map[string]bool {
	t.Helper()
	page, err := s.List(context.Background(), contract.ListRequest{Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, it := range page.Items {
		out[it.ID] = true
	}
	return out
}

// The first process to open a store holds it; the next one reaches it
// through the socket, and each sees the other's writes at once.
func TestSecondOpenAttaches(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "store")
	first := open(t, dir)
	second := open(t, dir)
	if first.Role() != Holding || second.Role() != Attached {
		t.Fatalf("roles = %s, %s; want holding, attached", first.Role(), second.Role())
	}
	st, err := os.Stat(filepath.Join(dir, SocketFile))
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("socket = %v, %v; want mode 0600", st, err)
	}
	ctx := context.Background()
	r1, err := contract.Store(ctx, second, learning("stored through the socket"))
	if err != nil {
		t.Fatal(err)
	}
	r2, err := contract.Store(ctx, first, learning("stored by the holder"))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []*Store{first, second} {
		got := ids(t, s)
		if !got[r1.ID] || !got[r2.ID] {
			t.Errorf("%s sees %v, want both stores", s.Role(), got)
		}
	}
	h, err := second.Holder(ctx)
	if err != nil || h.PID != os.Getpid() {
		t.Errorf("holder = %+v, %v", h, err)
	}
	st2, err := second.Status(ctx)
	if err != nil || st2.Records != 2 {
		t.Errorf("status through the socket = %+v, %v; want 2 records", st2, err)
	}
}

// When the holder lets go, the next call of the attached process takes the
// store over, and a third process attaches to it.
func TestTakeoverWhenTheHolderCloses(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "store")
	first := open(t, dir)
	second := open(t, dir)
	ctx := context.Background()
	r, err := contract.Store(ctx, first, learning("before the holder stopped"))
	if err != nil {
		t.Fatal(err)
	}
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	got := ids(t, second)
	if !got[r.ID] {
		t.Fatalf("after the takeover the store lacks %s", r.ID)
	}
	if second.Role() != Holding || second.Takeovers() != 1 {
		t.Errorf("role %s after %d takeovers; want holding after 1", second.Role(), second.Takeovers())
	}
	third := open(t, dir)
	if third.Role() != Attached {
		t.Errorf("a new process is %s, want attached", third.Role())
	}
}

// A long poll of the change feed through the socket goes on across a
// takeover: the change stored after it arrives.
func TestChangesAcrossATakeover(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "store")
	first := open(t, dir)
	second := open(t, dir)
	ctx := context.Background()
	head, err := second.Changes(ctx, contract.ChangesRequest{Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var page contract.ChangesPage
	var perr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		since := head.Next
		deadline := time.Now().Add(10 * time.Second)
		for time.Now().Before(deadline) {
			page, perr = second.Changes(ctx, contract.ChangesRequest{Since: since, Limit: 10, Wait: 2 * time.Second})
			if perr != nil || len(page.Changes) > 0 {
				return
			}
			since = page.Next
		}
	}()
	time.Sleep(200 * time.Millisecond)
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	third := open(t, dir)
	r, err := contract.Store(ctx, third, learning("after the takeover"))
	if err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if perr != nil {
		t.Fatalf("the long poll failed: %v", perr)
	}
	if len(page.Changes) != 1 || page.Changes[0].ID != r.ID {
		t.Errorf("changes = %+v, want the store of %s", page.Changes, r.ID)
	}
}

// A read command on a path with no store says so and creates nothing.
func TestMustExistCreatesNothing(t *testing.T) {
	root := t.TempDir()
	missing := filepath.Join(root, "typo")
	_, err := Open(context.Background(), missing, Options{MustExist: true})
	var ce *contract.Error
	if !errors.As(err, &ce) || ce.Kind != contract.KindNotFound {
		t.Fatalf("open of a missing path = %v, want not found", err)
	}
	if _, err := os.Stat(missing); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the missing path was created: %v", err)
	}
	empty := filepath.Join(root, "empty")
	if err := os.Mkdir(empty, 0o700); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(context.Background(), empty, Options{MustExist: true}); !errors.As(err, &ce) || ce.Kind != contract.KindNotFound {
		t.Fatalf("open of a directory with no store = %v, want not found", err)
	}
	if entries, _ := os.ReadDir(empty); len(entries) != 0 {
		t.Errorf("the empty directory now holds %v", entries)
	}
}

// A holder that stops with nobody attached first finishes what its writes
// started: the next process finds the index caught up.
func TestCloseSettlesWithNobodyAttached(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "store")
	s := open(t, dir)
	ctx := context.Background()
	s.SetBulk(true)
	var items []contract.StoreItem
	for i := range 50 {
		items = append(items, learning("bulk note "+string(rune('a'+i%26))+string(rune('a'+i/26))))
	}
	if _, err := contract.StoreMany(ctx, s, items); err != nil {
		t.Fatal(err)
	}
	s.SetBulk(false)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	e, err := bolt.Open(dir, bolt.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	st := e.IndexStatus()
	if st.State != "ready" || st.AppliedSeq != 1 {
		t.Errorf("after the holder stopped the index is %+v, want ready at seq 1", st)
	}
}

// A holder that hands its background work off (mnemo import, which starts
// a finisher) lets go at once: the index has not caught up with its bulk
// writes (their outbox entries are still there), and the next holder
// catches it up.
func TestHandOffBackgroundWorkLeavesItToTheNextHolder(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "store")
	s := open(t, dir)
	ctx := context.Background()
	s.SetBulk(true)
	var items []contract.StoreItem
	for i := range 50 {
		items = append(items, learning(fmt.Sprintf("handed off note %d", i)))
	}
	if _, err := contract.StoreMany(ctx, s, items); err != nil {
		t.Fatal(err)
	}
	s.SetBulk(false)
	if !s.HandOffBackgroundWork() {
		t.Fatal("a holder with nobody attached could not hand its work off")
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if s.HandOffBackgroundWork() {
		t.Error("a closed store handed its work off")
	}
	db, err := bbolt.Open(filepath.Join(dir, bolt.DBFile), 0o600, &bbolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	var pending int
	err = db.View(func(tx *bbolt.Tx) error {
		pending = tx.Bucket([]byte("outbox")).Stats().KeyN
		return nil
	})
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	if pending == 0 {
		t.Fatal("the holder caught the index up before letting go: nothing was left to hand off")
	}
	next := open(t, dir)
	defer next.Close()
	if err := next.WaitIdle(ctx); err != nil {
		t.Fatal(err)
	}
	page, err := next.Fetch(ctx, contract.FetchRequest{Query: "handed off note", Mode: contract.ModeKeyword, Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Hits) != 50 {
		t.Errorf("the next holder's keyword fetch found %d of the 50 records", len(page.Hits))
	}
}

// crashingHolder stands in for a holder that dies with a call in flight: it
// answers the descriptor and its status, then takes the first other call, closes its
// connection without an answer and stops listening, leaving the lock free.
func crashingHolder(t *testing.T, dir string) {
	t.Helper()
	l, err := net.Listen("unix", SocketPath(dir))
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{}
	srv.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == wire.PathPrefix+wire.EndpointDescriptor {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"id":"mnemo","label":"about to crash","fetch_modes":["keyword"],"consolidation":"none"}`))
			return
		}
		if r.URL.Path == adminStatus {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"pid":1,"holder":"about-to-crash"}`))
			return
		}
		_, _ = io.Copy(io.Discard, r.Body)
		// The listener goes first, as a dead process's does: the caller,
		// seeing its connection end, finds no holder left to attach to.
		_ = l.Close()
		_ = os.Remove(SocketPath(dir))
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			_ = conn.Close()
		}
	})
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })
}

// A call the holder may have applied before it died: a store is sent again
// (a replay at worst), a forget is not, and says so; either way the store
// goes on under this process.
func TestInFlightCallsWhenTheHolderDies(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name  string
		call  func(s *Store) error
		retry bool
	}{
		{"store", func(s *Store) error { _, err := contract.Store(ctx, s, learning("sent twice at worst")); return err }, true},
		{"forget", func(s *Store) error { _, err := s.Forget(ctx, contract.ForgetIDs(strings.Repeat("a", 40))); return err }, false},
		{"review", func(s *Store) error {
			_, err := s.Review(ctx, contract.ReviewRequest{ID: strings.Repeat("b", 40), Action: contract.ReviewApprove})
			return err
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "store")
			e, err := bolt.Open(dir, bolt.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if err := e.Close(); err != nil {
				t.Fatal(err)
			}
			crashingHolder(t, dir)
			s := open(t, dir)
			if s.Role() != Attached {
				t.Fatalf("role %s, want attached to the holder about to crash", s.Role())
			}
			err = tc.call(s)
			if tc.retry {
				if err != nil {
					t.Fatalf("a store in flight when the holder died: %v", err)
				}
			} else {
				var ce *contract.Error
				if !errors.As(err, &ce) || ce.Kind != contract.KindUnavailable ||
					!strings.Contains(ce.Message, "may or may not have been applied") {
					t.Fatalf("a %s in flight when the holder died: %v", tc.name, err)
				}
			}
			if s.Role() != Holding || s.Takeovers() != 1 {
				t.Errorf("after the holder died this process is %s (%d takeovers), want holding", s.Role(), s.Takeovers())
			}
			if _, err := s.List(ctx, contract.ListRequest{Limit: 1}); err != nil {
				t.Errorf("the next call: %v", err)
			}
		})
	}
}

// TestStoreBulk: the holder stores a bulk of up to 1,000 in one call of its
// engine; a process attached to it takes store_many's 100 at a time through
// the socket, and both see every record.
func TestStoreBulk(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "store")
	first := open(t, dir)
	second := open(t, dir)
	if first.BulkItems() != contract.MaxStoreBulk || second.BulkItems() != contract.MaxStoreMany {
		t.Fatalf("bulk items: holder %d, attached %d", first.BulkItems(), second.BulkItems())
	}
	ctx := context.Background()
	batch := func(who string, n int) []contract.StoreItem {
		out := make([]contract.StoreItem, n)
		for i := range out {
			out[i] = learning(fmt.Sprintf("%s bulk %d", who, i))
		}
		return out
	}
	for _, c := range []struct {
		s    *Store
		who  string
		size int
	}{{first, "holder", 1000}, {second, "attached", 250}} {
		items := batch(c.who, c.size)
		rs, err := c.s.StoreBulk(ctx, items[:c.size/2], contract.WriteOptions{})
		if err != nil || len(rs) != c.size/2 {
			t.Fatalf("%s: %d receipts, %v", c.who, len(rs), err)
		}
		// The second half through StartBulk (the holder's engine prepares it
		// and commits it after; attached, it is stored at once), with the
		// first half's last item again: replayed.
		wait := c.s.StartBulk(ctx, items[c.size/2-1:], contract.WriteOptions{})
		more, err := wait()
		if err != nil || len(more) != c.size-c.size/2+1 || !more[0].Replayed {
			t.Fatalf("%s: StartBulk: %d receipts, %v", c.who, len(more), err)
		}
		for _, r := range append(rs, more[1:]...) {
			if r.Replayed || r.ID == "" {
				t.Fatalf("%s: receipt %+v", c.who, r)
			}
		}
	}
	for _, s := range []*Store{first, second} {
		page, err := s.Explore(ctx, contract.ExploreRequest{Facet: contract.FacetKind, Limit: 10})
		if err != nil || page.Total != 1250 {
			t.Fatalf("%s counts %d records, %v; want 1,250", s.Role(), page.Total, err)
		}
	}
}

// Clustering answers the holder's clustering in the holding process only: a
// holder told ClustersNow has begun it when Open returns, and its first pass
// comes to an end; an attached process has none to tell.
func TestClusteringIsTheHolders(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "store")
	ctx := context.Background()
	first, err := Open(ctx, dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 30 {
		if _, err := contract.Store(ctx, first, learning(fmt.Sprintf("the deploy runs on friday, note %d", i))); err != nil {
			t.Fatal(err)
		}
	}
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	cfg := curate.DefaultConfig()
	holder, err := Open(ctx, dir, Options{Clusters: &cfg, ClustersNow: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = holder.Close() })
	attached := open(t, dir)
	if st, ok := attached.Clustering(); ok || st.Kept {
		t.Fatalf("attached: Clustering = %+v, %v; want nothing to tell", st, ok)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		st, ok := holder.Clustering()
		if !ok || !st.Kept {
			t.Fatalf("holder: Clustering = %+v, %v; want kept", st, ok)
		}
		if st.Err != "" {
			t.Fatalf("holder: clustering failed: %s", st.Err)
		}
		if st.Ready {
			if st.Total != 30 || st.Done != 30 {
				t.Fatalf("holder: first pass read %d of %d records, want 30 of 30", st.Done, st.Total)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("holder: first pass not done after 30 s: %+v", st)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
