package bolt

import "testing"

// TestRebuildMessageSaysHowFar: fetch's unavailable answer during a rebuild
// of the search index says how far it is, and before the rebuild has counted
// the records, that it is starting (not "0 of 0").
func TestRebuildMessageSaysHowFar(t *testing.T) {
	var e Engine
	if got, want := e.rebuildMessage(), "the search index is being rebuilt (starting)"; got != want {
		t.Fatalf("before the count: %q, want %q", got, want)
	}
	e.idx.total.Store(100_000)
	e.idx.done.Store(30_000)
	if got, want := e.rebuildMessage(), "the search index is being rebuilt (30000 of 100000)"; got != want {
		t.Fatalf("during the rebuild: %q, want %q", got, want)
	}
}
