package bolt_test

import (
	"context"
	"strings"
	"testing"

	bbolt "go.etcd.io/bbolt"

	"mnemo/bench/corpus"
	"mnemo/contract"
	"mnemo/engine/bolt"
)

// recordsFill is the share of the records bucket's leaf pages in use.
func recordsFill(t *testing.T, dir string) float64 {
	t.Helper()
	db, err := bbolt.Open(dir+"/"+bolt.DBFile, 0o600, &bbolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var fill float64
	_ = db.View(func(tx *bbolt.Tx) error {
		st := tx.Bucket([]byte("records")).Stats()
		fill = float64(st.LeafInuse) / float64(st.LeafAlloc)
		return nil
	})
	return fill
}

// TestAStoreFilledInBulkIsRewrittenAtClose: a store that bulk loads filled
// from empty is written in one pass, and once the work the loads deferred is
// done, Close rewrites it with full pages; what it holds does not change. A
// store that held a record before, one closed during its load (the next
// process does the load's deferred work and writes the pages again), and one whose
// caller rewrites it (mnemo import, perhaps in its finisher) are left as
// written.
func TestAStoreFilledInBulkIsRewrittenAtClose(t *testing.T) {
	t.Parallel()
	const at = 600
	n := at + 200
	entries := corpus.Generate(n, 5)
	items := make([]contract.StoreItem, n)
	for i, en := range entries {
		items[i] = en.Item
	}
	cases := []struct {
		name      string
		heldFirst bool // a record stored before the bulk load
		settle    bool // the load ended and WaitIndex before Close; else closed during the load
		caller    bool // RewriteAfterClose
		rewritten bool
	}{
		{"filled from empty and settled", false, true, false, true},
		{"closed during the load", false, false, false, false},
		{"the caller rewrites it", false, true, true, false},
		{"held a record before", true, true, false, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			dir := t.TempDir()
			e, err := bolt.Open(dir, bolt.Options{RewriteFilledAt: at})
			if err != nil {
				t.Fatal(err)
			}
			if c.heldFirst {
				if _, err := e.StoreManyWith(ctx, []contract.StoreItem{contract.Document("a note stored before the load", contract.MemoryMeta{})}, contract.WriteOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			e.SetBulk(true)
			for lo := 0; lo < n; lo += contract.MaxStoreBulk {
				if _, err := e.StoreBulk(ctx, items[lo:min(lo+contract.MaxStoreBulk, n)], contract.WriteOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			// A load that never ended (its process stopped) leaves its
			// ordered keys and the index to the next process. (A load that
			// ended and closed at once races with its own catch-up, which at
			// this size can be done before Close.)
			if c.settle {
				e.SetBulk(false)
				if err := e.WaitIndex(ctx); err != nil {
					t.Fatal(err)
				}
			}
			if c.caller {
				e.RewriteAfterClose()
			}
			before := exportAll(t, e)
			if err := e.Close(); err != nil {
				t.Fatal(err)
			}
			// As written, random ids leave the records' pages about 61%
			// full here; rewritten, 91% (a page holds whole records of about
			// 600 bytes).
			fill := recordsFill(t, dir)
			if c.rewritten && fill < 0.85 || !c.rewritten && fill > 0.75 {
				t.Fatalf("the records' pages are %.0f%% full after Close; rewritten: want %v", 100*fill, c.rewritten)
			}
			e, err = bolt.Open(dir, bolt.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer e.Close()
			if after := exportAll(t, e); after != before {
				t.Fatal("the store exports differently after Close")
			}
			if rep, err := e.Check(ctx, false, nil); err != nil || !rep.Consistent {
				t.Fatalf("check after Close: %+v, %v", rep, err)
			}
			words := strings.Fields(items[n/2].RenderText())
			hits, err := e.Fetch(ctx, contract.FetchRequest{Query: strings.Join(words[:min(4, len(words))], " "), Mode: contract.ModeKeyword, Limit: 10})
			if err != nil || len(hits.Hits) == 0 {
				t.Fatalf("keyword fetch after Close: %v, %d hits", err, len(hits.Hits))
			}
		})
	}
}
