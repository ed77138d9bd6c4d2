package bolt_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	bbolt "go.etcd.io/bbolt"

	"mnemo/contract"
	"mnemo/engine/bolt"
	"mnemo/engine/memory"
)

// The root explore reads its counters in place (the global counts less the
// namespaces a reach leaves out, or the sum of those it admits); under every
// reach it must give what the reference engine gives, for a facet with a
// value per record and for one with a handful.
func TestRootExploreUnderEveryReachMatchesTheReference(t *testing.T) {
	ctx := context.Background()
	e := openStore(t, t.TempDir(), bolt.Options{})
	ref := memory.New()
	namespaces := []string{"team:a/agent:x", "team:a/agent:y", "team:b", "agent:z/service:job", "agent:z"}
	var items []contract.StoreItem
	for i := range 300 {
		ns, err := contract.ParseNamespace(namespaces[i%len(namespaces)])
		if err != nil {
			t.Fatal(err)
		}
		meta := contract.MemoryMeta{Namespace: ns, FilePath: contract.Ptr(fmt.Sprintf("src/f%03d.go", i%170)),
			Language: contract.Ptr([]string{"go", "rust", "sql"}[i%3])}
		items = append(items, contract.Document(fmt.Sprintf("document %d", i), meta))
	}
	for _, eng := range []contract.Engine{e, ref} {
		for at := 0; at < len(items); at += 100 {
			if _, err := contract.StoreMany(ctx, eng, items[at:at+100]); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := e.WaitIndex(ctx); err != nil {
		t.Fatal(err)
	}
	ns := func(s string) contract.Namespace {
		n, err := contract.ParseNamespace(s)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	reaches := map[string]*contract.Reach{
		"default":          nil,
		"one agent":        contract.Ptr(contract.ReachOf(ns("team:a/agent:x"))),
		"a subtree":        contract.Ptr(contract.ReachSubtree(ns("team:a"))),
		"only the sandbox": contract.Ptr(contract.ReachExact(ns("agent:z/service:job"))),
		"everything":       contract.Ptr(contract.ReachSubtree(contract.Root())),
	}
	for name, reach := range reaches {
		for _, f := range []contract.Facet{contract.FacetFilePath, contract.FacetLanguage, contract.FacetNamespace} {
			for _, limit := range []int{1, 7, contract.MaxBuckets} {
				req := contract.ExploreRequest{Facet: f, Filter: contract.MetaFilter{Reach: reach}, Limit: limit}
				got, err := e.Explore(ctx, req)
				if err != nil {
					t.Fatalf("%s %s: %v", name, f, err)
				}
				want, err := ref.Explore(ctx, req)
				if err != nil {
					t.Fatalf("%s %s (reference): %v", name, f, err)
				}
				if !reflect.DeepEqual(got, want) {
					t.Errorf("%s, %s, limit %d:\n got %+v\nwant %+v", name, f, limit, got, want)
				}
			}
		}
	}
}

// A new process on an unchanged large store answers the root explore (the
// TUI's facet tree) before its table loads, from the entries the last
// process wrote; after any write, or with an entry that does not decode,
// it waits for the table instead of answering from a stale or unreadable
// entry.
func TestRootExploreAnswersAtOpenOnlyWhileTheStoreIsUnchanged(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	e, err := bolt.Open(dir, bolt.Options{SyncRebuildBelow: -1})
	if err != nil {
		t.Fatal(err)
	}
	storeCorpus(t, e, 700)
	if err := e.WaitIndex(ctx); err != nil {
		t.Fatal(err)
	}
	root := func(f contract.Facet, limit int) contract.ExploreRequest {
		return contract.ExploreRequest{Facet: f, Limit: limit}
	}
	want := map[string]contract.ExplorePage{}
	for _, f := range contract.Facets() {
		for _, limit := range []int{1, 7, contract.MaxBuckets} {
			p, err := e.Explore(ctx, root(f, limit))
			if err != nil {
				t.Fatal(err)
			}
			want[fmt.Sprint(f, limit)] = p
		}
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}

	reopen := func() *bolt.Engine {
		t.Helper()
		e, err := bolt.Open(dir, bolt.WithLoadGate(bolt.Options{SyncRebuildBelow: -1}, make(chan struct{})))
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	waits := func(e *bolt.Engine, req contract.ExploreRequest) bool {
		short, cancel := context.WithTimeout(ctx, 30*time.Millisecond)
		defer cancel()
		_, err := e.Explore(short, req)
		return errors.Is(err, contract.ErrUnavailable)
	}

	e = reopen()
	for _, f := range contract.Facets() {
		for _, limit := range []int{1, 7, contract.MaxBuckets} {
			got, err := e.Explore(ctx, root(f, limit))
			if err != nil {
				t.Fatalf("%s limit %d before the table loads: %v", f, limit, err)
			}
			if !reflect.DeepEqual(got, want[fmt.Sprint(f, limit)]) {
				t.Fatalf("%s limit %d before the table loads:\n got %+v\nwant %+v", f, limit, got, want[fmt.Sprint(f, limit)])
			}
		}
	}
	// Not the root under the default reach: the entries do not answer it.
	if !waits(e, contract.ExploreRequest{Facet: contract.FacetTag, Limit: 5,
		Filter: contract.MetaFilter{Kinds: []contract.ItemKind{contract.KindLearning}}}) {
		t.Fatal("a filtered explore was answered before the table loaded")
	}
	if !waits(e, contract.ExploreRequest{Facet: contract.FacetTag, Limit: 5,
		Filter: contract.MetaFilter{Reach: contract.Ptr(contract.ReachSubtree(contract.Root()))}}) {
		t.Fatal("an explore under another reach was answered before the table loaded")
	}
	// A write makes every entry stale.
	if _, err := contract.Store(ctx, e, contract.Document("written after the entries", contract.MemoryMeta{Tags: []string{"late"}})); err != nil {
		t.Fatal(err)
	}
	if !waits(e, root(contract.FacetTag, 5)) {
		t.Fatal("after a write, the root explore answered from the stale entries")
	}
	if err := e.Close(); err != nil { // the table never loaded: nothing is rewritten
		t.Fatal(err)
	}
	e = reopen()
	if !waits(e, root(contract.FacetKind, 1)) {
		t.Fatal("a reopened store answered from entries older than its last write")
	}
	_ = e.Close()
}

// An entry that does not decode is ignored, never misread.
func TestRootExploreIgnoresACorruptEntry(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	e, err := bolt.Open(dir, bolt.Options{SyncRebuildBelow: -1})
	if err != nil {
		t.Fatal(err)
	}
	storeCorpus(t, e, 300)
	if err := e.WaitIndex(ctx); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	db, err := bbolt.Open(filepath.Join(dir, bolt.DBFile), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bbolt.Tx) error {
		b := tx.Bucket([]byte("explore_root"))
		if b == nil {
			return fmt.Errorf("no explore_root bucket")
		}
		v := append([]byte(nil), b.Get([]byte(contract.FacetKind))...)
		if len(v) < 20 {
			return fmt.Errorf("kind entry is %d bytes", len(v))
		}
		v[len(v)-3] = '{' // a valid header with a body that does not decode
		return b.Put([]byte(contract.FacetKind), v)
	})
	_ = db.Close()
	if err != nil {
		t.Fatal(err)
	}
	e, err = bolt.Open(dir, bolt.WithLoadGate(bolt.Options{SyncRebuildBelow: -1}, make(chan struct{})))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = e.Close() }()
	short, cancel := context.WithTimeout(ctx, 30*time.Millisecond)
	defer cancel()
	if _, err := e.Explore(short, contract.ExploreRequest{Facet: contract.FacetKind, Limit: 3}); !errors.Is(err, contract.ErrUnavailable) {
		t.Fatalf("explore from a corrupt entry: %v, want a wait for the table", err)
	}
	if _, err := e.Explore(ctx, contract.ExploreRequest{Facet: contract.FacetTag, Limit: 3}); err != nil {
		t.Fatalf("the intact entries stop answering: %v", err)
	}
}

// A filtered explore reuses the rows the same filter matched a moment ago
// (a drill-down asks every facet under one filter); every write must retire
// them, so a store, a review and a forget show in the next count.
func TestFilteredExploreSeesEveryWrite(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := openStore(t, t.TempDir(), bolt.Options{})
	filter := contract.MetaFilter{TagsAny: []string{"billing"}}
	count := func(f contract.Facet) map[string]uint64 {
		t.Helper()
		p, err := e.Explore(ctx, contract.ExploreRequest{Facet: f, Filter: filter, Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]uint64{"total": p.Total}
		for _, b := range p.Buckets {
			out[b.Value] = b.Count
		}
		return out
	}
	item := func(text string) contract.StoreItem {
		return contract.Learning(text, contract.LearningFact, 0.5, contract.MemoryMeta{Tags: []string{"billing"}})
	}
	if _, err := contract.StoreMany(ctx, e, []contract.StoreItem{item("one"), item("two")}); err != nil {
		t.Fatal(err)
	}
	if got := count(contract.FacetKind); got["total"] != 2 || got["learning"] != 2 {
		t.Fatalf("after two stores: %v", got)
	}
	count(contract.FacetStatus) // the same filter again, from the cached rows
	r, err := e.StoreWith(ctx, item("three"), contract.WriteOptions{Status: contract.StatusCandidate})
	if err != nil {
		t.Fatal(err)
	}
	if got := count(contract.FacetStatus); got["total"] != 3 || got["candidate"] != 1 {
		t.Fatalf("after a third store, a candidate: %v", got)
	}
	if _, err := e.Review(ctx, contract.ReviewRequest{ID: r.ID, Action: contract.ReviewApprove}); err != nil {
		t.Fatal(err)
	}
	if got := count(contract.FacetStatus); got["active"] != 3 || got["candidate"] != 0 {
		t.Fatalf("after approving it: %v", got)
	}
	if _, err := e.Forget(ctx, contract.ForgetIDs(r.ID)); err != nil {
		t.Fatal(err)
	}
	if got := count(contract.FacetStatus); got["total"] != 2 {
		t.Fatalf("after forgetting it: %v", got)
	}
}
