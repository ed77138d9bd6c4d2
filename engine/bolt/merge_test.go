package bolt_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"mnemo/contract"
	"mnemo/engine/bolt"
)

// After a catch-up of many documents (here a rebuild, 2,000 documents a
// batch), the index is merged in the background while it serves: its
// segments go down to one or two, and keyword fetch answers as before. A
// store that says never keeps its segments.
func TestIndexMergedAfterALargeCatchUp(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	e := openStore(t, dir, bolt.Options{SyncRebuildBelow: -1, IndexMergeAfter: -1})
	storeCorpus(t, e, 8000)
	if err := e.WaitIndex(ctx); err != nil {
		t.Fatal(err)
	}
	queries := []string{"worker restarts", "host failures", "timeout retry", "config file path"}
	ranked := func(e *bolt.Engine) [][]string {
		t.Helper()
		var out [][]string
		for _, q := range queries {
			page, err := e.Fetch(ctx, contract.FetchRequest{Query: q, Mode: contract.ModeKeyword, Limit: 10})
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			for _, h := range page.Hits {
				ids = append(ids, h.ID)
			}
			out = append(out, ids)
		}
		return out
	}
	before := ranked(e)
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	ixDir := filepath.Join(dir, bolt.IndexDir)
	rebuild := func(opts bolt.Options) *bolt.Engine {
		t.Helper()
		if err := os.RemoveAll(ixDir); err != nil {
			t.Fatal(err)
		}
		e := openStore(t, dir, opts)
		if err := e.WaitIndex(ctx); err != nil {
			t.Fatal(err)
		}
		return e
	}

	e = rebuild(bolt.Options{SyncRebuildBelow: -1, IndexMergeAfter: -1})
	kept := e.IndexSegments()
	if kept < 4 {
		t.Fatalf("the rebuild left %d segments; the test wants more than 3", kept)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}

	// WaitIndex waits for the merge the rebuild started.
	e = rebuild(bolt.Options{SyncRebuildBelow: -1, IndexMergeAfter: 1000})
	if n := e.IndexSegments(); n > 2 {
		t.Fatalf("after WaitIndex the index has %d segments (a rebuild without the merge left %d)", n, kept)
	}
	if got := ranked(e); !slices.EqualFunc(got, before, slices.Equal[[]string]) {
		t.Fatalf("keyword fetch after the merge:\n%v\nbefore:\n%v", got, before)
	}
}
