package bolt

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"testing"

	bbolt "go.etcd.io/bbolt"

	"mnemo/contract"
)

// recordKeyLens are the lengths of the closed store's records keys.
func recordKeyLens(t *testing.T, dir string) map[int]int {
	t.Helper()
	n := map[int]int{}
	rewriteStore(t, dir, func(tx *bbolt.Tx) error {
		return tx.Bucket(bucketRecords).ForEach(func(k, _ []byte) error { n[len(k)]++; return nil })
	})
	return n
}

// A new store keys its records by their ids' 20 bytes; a store that held
// records keyed by their 40 digits (every store before schema 13) keeps
// them, and writes new ones the same way, until mnemo compact rewrites them
// keyed by their names. Both answer every read by id,
// walk the records in id order (a browse by confidence pages through the
// records that have none in id order, from the records bucket), list,
// forget, store again and check consistent.
func TestRecordsAreKeyedByTheirNamesInANewStore(t *testing.T) {
	ctx := context.Background()
	for _, digits := range []bool{false, true} {
		t.Run(fmt.Sprintf("digits=%v", digits), func(t *testing.T) {
			dir := t.TempDir()
			e, err := Open(dir, Options{})
			if err != nil {
				t.Fatal(err)
			}
			var items []contract.StoreItem
			for i := range 60 {
				items = append(items, contract.Document(fmt.Sprintf("note %d on the canary rollout", i), contract.MemoryMeta{Tags: []string{fmt.Sprint(i % 3)}}))
			}
			stored, err := contract.StoreMany(ctx, e, items)
			if err != nil {
				t.Fatal(err)
			}
			if err := e.Close(); err != nil {
				t.Fatal(err)
			}
			want := map[int]int{20: 60}
			if digits {
				// The store as schema 12 wrote it: the digits, no mark.
				rewriteStore(t, dir, func(tx *bbolt.Tx) error {
					recs := tx.Bucket(bucketRecords)
					var keys, vals [][]byte
					_ = recs.ForEach(func(k, v []byte) error {
						keys, vals = append(keys, slices.Clone(k)), append(vals, slices.Clone(v))
						return nil
					})
					for i, k := range keys {
						if err := recs.Delete(k); err != nil {
							return err
						}
						if err := recs.Put([]byte(recordKeys{names: true}.id(k)), vals[i]); err != nil {
							return err
						}
					}
					return tx.Bucket(bucketMeta).Delete(keyRecordNames)
				})
				want = map[int]int{40: 60}
			}
			if got := recordKeyLens(t, dir); !maps.Equal(got, want) {
				t.Fatalf("records keys by length %v, want %v", got, want)
			}
			e, err = Open(dir, Options{})
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			for _, s := range stored {
				ids = append(ids, s.ID)
			}
			recs, err := e.GetRecords(ctx, contract.GetRequest{IDs: ids})
			if err != nil || len(recs) != len(ids) {
				t.Fatalf("get: %d of %d, %v", len(recs), len(ids), err)
			}
			var listed []string
			req := contract.ListRequest{Limit: 7}
			for pages := 0; ; pages++ {
				if pages > 20 {
					t.Fatalf("listing does not end: %d records so far", len(listed))
				}
				p, err := e.List(ctx, req)
				if err != nil {
					t.Fatal(err)
				}
				for _, h := range p.Items {
					listed = append(listed, h.ID)
				}
				if p.NextCursor == nil {
					break
				}
				req.Cursor = p.NextCursor
			}
			if len(listed) != len(ids) {
				t.Fatalf("listed %d of %d", len(listed), len(ids))
			}
			var walked []string
			q := contract.BrowseQuery{Limit: 7, OrderBy: []contract.SortKey{{Field: "confidence", Dir: "desc"}}}
			for pages := 0; ; pages++ {
				if pages > 20 {
					t.Fatalf("paging by confidence does not end: %d records so far", len(walked))
				}
				p, err := e.Browse(ctx, q)
				if err != nil {
					t.Fatal(err)
				}
				for _, r := range p.Records {
					walked = append(walked, r.ID)
				}
				if p.Continuation == nil {
					break
				}
				q.Cursor = *p.Continuation
			}
			if sorted := slices.Sorted(slices.Values(ids)); !slices.Equal(walked, sorted) {
				t.Fatalf("by confidence, the records without one are not in id order:\n%v\nwant\n%v", walked, sorted)
			}
			if _, err := e.Forget(ctx, contract.ForgetIDs(ids[0])); err != nil {
				t.Fatal(err)
			}
			if got, err := e.GetRecords(ctx, contract.GetRequest{IDs: ids[:1]}); err != nil || len(got) != 0 {
				t.Fatalf("a forgotten record is read: %v %v", got, err)
			}
			if _, err := contract.Store(ctx, e, items[0]); err != nil {
				t.Fatal(err)
			}
			if _, err := contract.Store(ctx, e, contract.Document("one more note", contract.MemoryMeta{})); err != nil {
				t.Fatal(err)
			}
			if err := e.WaitIndex(ctx); err != nil {
				t.Fatal(err)
			}
			if h, err := e.Fetch(ctx, contract.FetchRequest{Query: "one more note", Mode: contract.ModeKeyword, Limit: 1}); err != nil || len(h.Hits) != 1 {
				t.Fatalf("fetch: %+v %v", h, err)
			}
			rep, err := e.Check(ctx, false, nil)
			if err != nil || !rep.Consistent {
				t.Fatalf("check: %v %+v", err, rep.Checks)
			}
			if err := e.Close(); err != nil {
				t.Fatal(err)
			}
			if digits {
				want = map[int]int{40: 61}
			} else {
				want = map[int]int{20: 61}
			}
			if got := recordKeyLens(t, dir); !maps.Equal(got, want) {
				t.Fatalf("records keys by length after the writes %v, want %v", got, want)
			}
			// mnemo compact keys them by their names.
			if _, err := Compact(dir); err != nil {
				t.Fatal(err)
			}
			if got := recordKeyLens(t, dir); !maps.Equal(got, map[int]int{20: 61}) {
				t.Fatalf("records keys by length after compact %v", got)
			}
			e, err = Open(dir, Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer e.Close()
			if got, err := e.GetRecords(ctx, contract.GetRequest{IDs: ids}); err != nil || len(got) != len(ids) {
				t.Fatalf("get after compact: %d of %d, %v", len(got), len(ids), err)
			}
			if rep, err := e.Check(ctx, false, nil); err != nil || !rep.Consistent {
				t.Fatalf("check after compact: %v %+v", err, rep.Checks)
			}
		})
	}
}
