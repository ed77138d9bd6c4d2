package bolt

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	bbolt "go.etcd.io/bbolt"

	"mnemo/contract"
)

// TestCatchUpPrunesTheOutbox: the entries of a backlog of writes the index
// has caught up with leave the outbox when the catch-up ends, not at the
// next write (a bulk load's last writes have no next one); a trickle's stay
// for the next write to take.
func TestCatchUpPrunesTheOutbox(t *testing.T) {
	ctx := context.Background()
	e, err := Open(t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	entries := func() int {
		n := 0
		_ = e.db.View(func(tx *bbolt.Tx) error {
			n = tx.Bucket(bucketOutbox).Stats().KeyN
			return nil
		})
		return n
	}
	// Hold the index back so the writes pile up as a backlog.
	e.idx.applyMu.Lock()
	for i := range 150 {
		if _, err := contract.StoreMany(ctx, e, []contract.StoreItem{contract.Document(fmt.Sprintf("backlog note %d", i), contract.MemoryMeta{})}); err != nil {
			e.idx.applyMu.Unlock()
			t.Fatal(err)
		}
	}
	if n := entries(); n != 150 {
		e.idx.applyMu.Unlock()
		t.Fatalf("%d outbox entries while the index is held back, want 150", n)
	}
	e.idx.applyMu.Unlock()
	if err := e.WaitIndex(ctx); err != nil {
		t.Fatal(err)
	}
	if n := entries(); n != 0 {
		t.Fatalf("%d outbox entries after the catch-up, want none", n)
	}
	if h, err := e.Fetch(ctx, contract.FetchRequest{Query: "backlog note 149", Mode: contract.ModeKeyword, Limit: 1}); err != nil || len(h.Hits) != 1 {
		t.Fatalf("the backlog's last record is not searchable: %+v %v", h, err)
	}
	// A trickle: one write applied on its own is pruned by the next write.
	if _, err := contract.Store(ctx, e, contract.Document("a trickle", contract.MemoryMeta{})); err != nil {
		t.Fatal(err)
	}
	if err := e.WaitIndex(ctx); err != nil {
		t.Fatal(err)
	}
	if n := entries(); n != 1 {
		t.Fatalf("%d outbox entries after one write, want its own", n)
	}
}

// TestCloseLeavesNoAppliedOutboxEntries: entries the index took one write
// at a time are left for the next write while the store is open, and Close
// prunes them: none is left in the file.
func TestCloseLeavesNoAppliedOutboxEntries(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	e, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		if _, err := contract.StoreMany(ctx, e, []contract.StoreItem{contract.Document(fmt.Sprintf("trickled note %d", i), contract.MemoryMeta{})}); err != nil {
			t.Fatal(err)
		}
		if err := e.WaitIndex(ctx); err != nil {
			t.Fatal(err)
		}
	}
	var left int
	_ = e.db.View(func(tx *bbolt.Tx) error {
		left = tx.Bucket(bucketOutbox).Stats().KeyN
		return nil
	})
	if left == 0 {
		t.Fatal("no applied entry was waiting for a next write: the test proves nothing")
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	db, err := bbolt.Open(filepath.Join(dir, DBFile), 0o600, &bbolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	_ = db.View(func(tx *bbolt.Tx) error {
		left = tx.Bucket(bucketOutbox).Stats().KeyN
		return nil
	})
	if left != 0 {
		t.Fatalf("%d applied outbox entries left in the closed store", left)
	}
}
