package bolt

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"mnemo/contract"
)

// TestStoreBulkIsOneTransaction: StoreBulk writes up to MaxBulkItems items
// as one write (one outbox entry, one commit), replays what is there,
// refuses an empty or oversized call and an invalid item, and leaves every
// record readable at once.
func TestStoreBulkIsOneTransaction(t *testing.T) {
	ctx := context.Background()
	e, err := Open(t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	items := func(from, n int) []contract.StoreItem {
		out := make([]contract.StoreItem, n)
		for i := range out {
			out[i] = contract.Document(fmt.Sprintf("bulk note %d", from+i), contract.MemoryMeta{})
		}
		return out
	}
	before := e.committed.Load()
	rs, err := e.StoreBulk(ctx, items(0, MaxBulkItems), contract.WriteOptions{Status: contract.StatusCandidate})
	if err != nil {
		t.Fatal(err)
	}
	if got := e.committed.Load() - before; got != 1 {
		t.Fatalf("%d items took %d writes, want 1", MaxBulkItems, got)
	}
	if len(rs) != MaxBulkItems || rs[0].Replayed || rs[MaxBulkItems-1].Replayed {
		t.Fatalf("receipts: %d, first %+v", len(rs), rs[0])
	}
	hits, err := e.Get(ctx, contract.GetRequest{IDs: []string{rs[MaxBulkItems-1].ID}})
	if err != nil || len(hits) != 1 || hits[0].Text != fmt.Sprintf("bulk note %d", MaxBulkItems-1) {
		t.Fatalf("the last record: %+v, %v", hits, err)
	}
	again, err := e.StoreBulk(ctx, items(MaxBulkItems-1, 2), contract.WriteOptions{})
	if err != nil || !again[0].Replayed || again[1].Replayed {
		t.Fatalf("a bulk store over the last record: %+v, %v", again, err)
	}
	if n := e.Len(); n != MaxBulkItems+1 {
		t.Fatalf("records = %d", n)
	}
	for _, c := range []struct {
		items []contract.StoreItem
		want  string
	}{
		{nil, "a bulk store takes between 1 and 2000 items"},
		{items(0, MaxBulkItems+1), "a bulk store takes between 1 and 2000 items"},
		{[]contract.StoreItem{contract.Document("", contract.MemoryMeta{})}, "document body must not be empty"},
	} {
		_, err := e.StoreBulk(ctx, c.items, contract.WriteOptions{})
		if contract.KindOf(err) != contract.KindInvalidRequest || !strings.Contains(err.Error(), c.want) {
			t.Fatalf("StoreBulk of %d items: %v, want invalid_request naming %q", len(c.items), err, c.want)
		}
	}
}

// TestStartBulkCommitsInTheOrderStarted: batches started one after the
// other commit in that order whichever is waited for first (a line in two
// batches is stored by the first and replayed by the second), each is one
// write, an invalid batch fails alone, and Close waits for a batch in
// flight: it is in the store when it opens again.
func TestStartBulkCommitsInTheOrderStarted(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	e, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	notes := func(from, n int) []contract.StoreItem {
		out := make([]contract.StoreItem, n)
		for i := range out {
			out[i] = contract.Document(fmt.Sprintf("pipelined note %d", from+i), contract.MemoryMeta{})
		}
		return out
	}
	before := e.committed.Load()
	// The write lock is held while the batches start, so that every one is
	// ready to commit when it is let go: the order is StartBulk's to keep.
	e.mu.Lock()
	waits := []func() ([]contract.StoreReceipt, error){
		e.StartBulk(ctx, notes(0, 600), contract.WriteOptions{}),
		e.StartBulk(ctx, notes(500, 600), contract.WriteOptions{Status: contract.StatusCandidate}),
		e.StartBulk(ctx, []contract.StoreItem{contract.Document("", contract.MemoryMeta{})}, contract.WriteOptions{}),
		e.StartBulk(ctx, notes(1000, 200), contract.WriteOptions{}),
	}
	time.Sleep(50 * time.Millisecond)
	e.mu.Unlock()
	var receipts [4][]contract.StoreReceipt
	var errs [4]error
	for _, i := range []int{3, 1, 2, 0} { // waited for out of order
		receipts[i], errs[i] = waits[i]()
	}
	if errs[0] != nil || errs[1] != nil || errs[3] != nil {
		t.Fatalf("errors: %v", errs)
	}
	if contract.KindOf(errs[2]) != contract.KindInvalidRequest {
		t.Fatalf("the invalid batch: %v, want invalid_request", errs[2])
	}
	if got := e.committed.Load() - before; got != 3 {
		t.Fatalf("three batches took %d writes", got)
	}
	for i, r := range receipts[0] {
		if r.Replayed {
			t.Fatalf("batch 0, item %d replayed", i)
		}
	}
	for i, r := range receipts[1] {
		if r.Replayed != (i < 100) {
			t.Fatalf("batch 1, item %d (note %d): replayed %v", i, 500+i, r.Replayed)
		}
	}
	for i, r := range receipts[3] {
		if r.Replayed != (i < 100) {
			t.Fatalf("batch 3, item %d (note %d): replayed %v", i, 1000+i, r.Replayed)
		}
	}
	// The candidates are batch 1's new notes only: the first batch stored
	// the notes they share, active.
	page, err := e.Browse(ctx, contract.BrowseQuery{Status: []contract.Status{contract.StatusCandidate}, Limit: 1000})
	if err != nil || page.Total != 500 {
		t.Fatalf("candidates: %d, %v; want 500", page.Total, err)
	}
	last := e.StartBulk(ctx, notes(2000, 300), contract.WriteOptions{})
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := last(); err != nil {
		t.Fatalf("the batch in flight at Close: %v", err)
	}
	e, err = Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if n := e.Len(); n != 1500 {
		t.Fatalf("after reopening: %d records, want 1,500", n)
	}
}
