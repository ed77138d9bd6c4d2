package bolt

import (
	"context"
	"fmt"
	"strings"
	"testing"

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
		{nil, "a bulk store takes between 1 and 1000 items"},
		{items(0, MaxBulkItems+1), "a bulk store takes between 1 and 1000 items"},
		{[]contract.StoreItem{contract.Document("", contract.MemoryMeta{})}, "document body must not be empty"},
	} {
		_, err := e.StoreBulk(ctx, c.items, contract.WriteOptions{})
		if contract.KindOf(err) != contract.KindInvalidRequest || !strings.Contains(err.Error(), c.want) {
			t.Fatalf("StoreBulk of %d items: %v, want invalid_request naming %q", len(c.items), err, c.want)
		}
	}
}
