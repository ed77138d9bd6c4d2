package bolt_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	bbolt "go.etcd.io/bbolt"

	"mnemo/contract"
	"mnemo/engine/bolt"
)

// recordLayouts counts a closed store's records by layout; n[0] is their
// bytes. It also answers how many record dictionaries the store holds.
func recordLayouts(t *testing.T, dir string) (n map[byte]int, dicts int) {
	t.Helper()
	db, err := bbolt.Open(filepath.Join(dir, bolt.DBFile), 0o600, &bbolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	n = map[byte]int{}
	_ = db.View(func(tx *bbolt.Tx) error {
		c := tx.Bucket([]byte("meta")).Cursor()
		for k, _ := c.Seek([]byte("record_dict/")); k != nil && strings.HasPrefix(string(k), "record_dict/"); k, _ = c.Next() {
			dicts++
		}
		return tx.Bucket([]byte("records")).ForEach(func(_, v []byte) error { n[v[0]]++; n[0] += len(v); return nil })
	})
	return n, dicts
}

// TestStoreMakesItsRecordDictionary: the write that brings a store to 500
// records makes its dictionary in its own transaction and is written
// against it, as is every write after; the store reads every record back
// the same after reopening (read-only too), after mnemo compact rewrites
// the older records against the dictionary, and check finds it consistent.
func TestStoreMakesItsRecordDictionary(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	e := openStore(t, dir, bolt.Options{})
	items := markerItems(700, "dictionary")
	for i := range items {
		if i%7 == 0 {
			items[i] = contract.Document(strings.Repeat("ünïcödé notes on the canary deploy ", 3)+items[i].RenderText(), contract.MemoryMeta{Tags: []string{"dictionary", "unicode"}})
		}
	}
	for start := 0; start < len(items); start += 100 {
		if _, err := contract.StoreMany(ctx, e, items[start:start+100]); err != nil {
			t.Fatal(err)
		}
	}
	one, err := contract.Store(ctx, e, contract.Document("one more, a kiwifruit, written alone after the threshold", contract.MemoryMeta{}))
	if err != nil {
		t.Fatal(err)
	}
	before := exportAll(t, e)
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	n, dicts := recordLayouts(t, dir)
	if dicts != 1 || n[4] != 400 || n[6] != 301 {
		t.Fatalf("layouts %v with %d dictionaries: want the 400 records before the dictionary in version 4, the 301 from the write that made it on in version 6 (3 with the item in binary and the header compact)", n, dicts)
	}

	for _, opts := range []bolt.Options{{}, {ReadOnly: true}} {
		e = openStore(t, dir, opts)
		if got := exportAll(t, e); got != before {
			t.Fatalf("reopened (read-only %v), the store exports differently", opts.ReadOnly)
		}
		p, err := e.Browse(ctx, contract.BrowseQuery{Filters: []contract.BrowseFilter{{Field: "content", Op: "contains", Text: "ÜNÏCÖDÉ NOTES"}}})
		if err != nil || p.Total != 100 {
			t.Fatalf("contains across both layouts: %d, %v", p.Total, err)
		}
		if err := e.Close(); err != nil {
			t.Fatal(err)
		}
	}

	if _, err := bolt.Compact(dir); err != nil {
		t.Fatal(err)
	}
	after, dicts := recordLayouts(t, dir)
	if dicts != 1 || after[4] != 0 || after[6] != 701 {
		t.Fatalf("layouts after compacting %v with %d dictionaries: want all 701 in version 6 against the one", after, dicts)
	}
	if after[0] >= n[0] {
		t.Fatalf("compacting took the records from %d to %d bytes", n[0], after[0])
	}
	e = openStore(t, dir, bolt.Options{})
	defer e.Close()
	if got := exportAll(t, e); got != before {
		t.Fatal("compacted, the store exports differently")
	}
	if err := e.WaitIndex(ctx); err != nil {
		t.Fatal(err)
	}
	if h, err := e.Fetch(ctx, contract.FetchRequest{Query: "kiwifruit", Mode: contract.ModeKeyword, Limit: 3}); err != nil || len(h.Hits) == 0 || h.Hits[0].ID != one.ID {
		t.Fatalf("keyword fetch of the record written alone: %+v %v", h, err)
	}
	if rep, err := e.Check(ctx, false, nil); err != nil || !rep.Consistent {
		t.Fatalf("check: %v %+v", err, rep.Checks)
	}
}

// TestCompactMakesTheDictionaryOfAStoreWithout: a store of 500 records or
// more written without a dictionary (as before schema 6) gets one when
// compacted, and every record is rewritten against it.
func TestCompactMakesTheDictionaryOfAStoreWithout(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	e := openStore(t, dir, bolt.Options{})
	items := markerItems(400, "older")
	// 400 records: below the threshold, so no dictionary is made.
	for start := 0; start < 400; start += 100 {
		if _, err := contract.StoreMany(ctx, e, items[start:start+100]); err != nil {
			t.Fatal(err)
		}
	}
	before := exportAll(t, e)
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	damage(t, dir, func(tx *bbolt.Tx) error {
		// Pretend the store is large: the write that makes the dictionary
		// has not come yet.
		return tx.Bucket([]byte("meta")).Put([]byte("next_ord"), []byte{0, 0, 0, 0, 0, 0, 2, 0})
	})
	if _, dicts := recordLayouts(t, dir); dicts != 0 {
		t.Fatalf("%d dictionaries before compacting", dicts)
	}
	if _, err := bolt.Compact(dir); err != nil {
		t.Fatal(err)
	}
	n, dicts := recordLayouts(t, dir)
	if dicts != 1 || n[6] != 400 {
		t.Fatalf("after compacting: layouts %v, %d dictionaries", n, dicts)
	}
	e = openStore(t, dir, bolt.Options{})
	defer e.Close()
	if got := exportAll(t, e); got != before {
		t.Fatal("compacted, the store exports differently")
	}
}

// TestRestoreMakesTheDictionaryToo: records restored whole (a backup's) go
// through the same rule: the batch that brings the store to 500 records
// makes its dictionary, and every record reads back as it was.
func TestRestoreMakesTheDictionaryToo(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	from := openStore(t, t.TempDir(), bolt.Options{})
	defer from.Close()
	items := markerItems(600, "restored")
	for start := 0; start < len(items); start += 100 {
		if _, err := contract.StoreMany(ctx, from, items[start:start+100]); err != nil {
			t.Fatal(err)
		}
	}
	var recs []contract.Record
	ids := idsOfItems(items)
	for start := 0; start < len(ids); start += 200 {
		got, err := from.GetRecords(ctx, contract.GetRequest{IDs: ids[start : start+200]})
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, got...)
	}
	dir := t.TempDir()
	to := openStore(t, dir, bolt.Options{})
	for start := 0; start < len(recs); start += 300 {
		if n, err := contract.Restore(ctx, to, recs[start:start+300]); err != nil || n != 300 {
			t.Fatalf("restore: %d, %v", n, err)
		}
	}
	if exportAll(t, to) != exportAll(t, from) {
		t.Fatal("the restored store exports differently")
	}
	if err := to.Close(); err != nil {
		t.Fatal(err)
	}
	if n, dicts := recordLayouts(t, dir); dicts != 1 || n[4] != 300 || n[6] != 300 {
		t.Fatalf("layouts %v with %d dictionaries: want the first batch before the dictionary, the second against it", n, dicts)
	}
}
