package bolt

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	bbolt "go.etcd.io/bbolt"

	"mnemo/contract"
	"mnemo/engine/bolt/internal/idkey"
)

// orderedItems are n items, a third learnings with confidences that repeat
// (ties broken by id), from index from.
func orderedItems(from, n int) []contract.StoreItem {
	out := make([]contract.StoreItem, n)
	for i := range out {
		k := from + i
		if k%3 == 0 {
			out[i] = contract.Learning(fmt.Sprintf("ordered learning %d", k), contract.LearningFact, float32(k%7)/7, contract.MemoryMeta{})
		} else {
			out[i] = contract.Document(fmt.Sprintf("ordered note %d", k), contract.MemoryMeta{})
		}
	}
	return out
}

// everyPage reads every page of q (pages of 7, through the cursor) and
// answers the ids in order.
func everyPage(t *testing.T, e *Engine, q contract.BrowseQuery) []string {
	t.Helper()
	q.Limit = 7
	var ids []string
	for {
		page, err := e.Browse(context.Background(), q)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range page.Records {
			ids = append(ids, r.ID)
		}
		if page.Continuation == nil {
			return ids
		}
		q.Cursor = *page.Continuation
	}
}

// everyListed reads every list page (pages of 9) and answers the ids.
func everyListed(t *testing.T, e *Engine) []string {
	t.Helper()
	var ids []string
	req := contract.ListRequest{Limit: 9}
	for {
		page, err := e.List(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range page.Items {
			ids = append(ids, it.ID)
		}
		if page.NextCursor == nil {
			return ids
		}
		req.Cursor = page.NextCursor
	}
}

// keyCounts are the number of keys in updated order (walkUpdated), by_created and
// by_confidence, and the deferral mark (-1: none).
func keyCounts(t *testing.T, db *bbolt.DB) (counts [3]int, from int64) {
	t.Helper()
	from = -1
	err := db.View(func(tx *bbolt.Tx) error {
		// Updated order's keys: by_updated's and the unmoved records'
		// by_created ones, as a walk of that order visits them.
		walkUpdated(tx, nil, func(_, _ []byte) bool { counts[0]++; return true })
		for i, b := range [][]byte{bucketCreated, bucketConf} {
			counts[i+1] = tx.Bucket(b).Stats().KeyN
		}
		if m, ok := parseMark(tx.Bucket(bucketMeta).Get(keyOrderedFrom)); ok {
			from = int64(m.from)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return counts, from
}

// TestBulkLoadDefersOrderedKeys: the records of a bulk load get no ordered
// keys while it runs (the mark names the first of them); browse in each
// walked order and list read them in the same order as once the keys are
// in, with none of the keys, with the newest chunk's only (walked down to
// the time the rest may lack, then ranked by the table) and with all; a
// forget and a review of such a record meanwhile leave nothing behind; and
// the load's end and WaitIndex put every key, and check agrees.
func TestBulkLoadDefersOrderedKeys(t *testing.T) {
	ctx := context.Background()
	var now atomic.Int64
	now.Store(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC).UnixMilli())
	e, err := Open(t.TempDir(), Options{Clock: func() time.Time { return time.UnixMilli(now.Add(1000)) }})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	e.ordered.chunk = 100
	if _, err := contract.StoreMany(ctx, e, orderedItems(0, 30)); err != nil {
		t.Fatal(err)
	}
	e.SetBulk(true)
	var bulkIDs []string
	for b := range 4 {
		rs, err := e.StoreBulk(ctx, orderedItems(30+100*b, 100), contract.WriteOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rs {
			bulkIDs = append(bulkIDs, r.ID)
		}
	}
	counts, from := keyCounts(t, e.db)
	if from != 30 || counts != [3]int{30, 30, 10} {
		t.Fatalf("during the load: keys %v, mark %d; want the 30 records' keys only and the mark at ordinal 30", counts, from)
	}
	// A forget and a review of the load's records while their keys wait.
	if _, err := e.Forget(ctx, contract.ForgetIDs(bulkIDs[5])); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Supersede(ctx, contract.SupersedeRequest{ID: bulkIDs[7], By: bulkIDs[8]}); err != nil {
		t.Fatal(err)
	}
	orders := map[string]contract.BrowseQuery{
		"updated":    {OrderBy: []contract.SortKey{{Field: contract.BrowseFieldUpdatedAt, Dir: contract.SortDesc}}},
		"created":    {OrderBy: []contract.SortKey{{Field: contract.BrowseFieldCreatedAt, Dir: contract.SortDesc}}},
		"confidence": {OrderBy: []contract.SortKey{{Field: contract.BrowseFieldConfidence, Dir: contract.SortDesc}}},
		"default":    {},
	}
	during := map[string][]string{}
	for name, q := range orders {
		during[name] = everyPage(t, e, q)
		if len(during[name]) != 429 {
			t.Fatalf("browse by %s during the load: %d records, want 429", name, len(during[name]))
		}
	}
	listed := everyListed(t, e)

	// The newest chunk's keys, as the load's end puts them first.
	if err := e.finishNewestKeys(); err != nil {
		t.Fatal(err)
	}
	// 30 before the load, the newest 100, and the superseded record's
	// (its review put them).
	if counts, from := keyCounts(t, e.db); from != 30 || counts[0] != 131 || counts[1] != 131 {
		t.Fatalf("after the newest chunk: keys %v, mark %d; want 131 time keys and the mark still at 30", counts, from)
	}
	for name, q := range orders {
		if got := everyPage(t, e, q); !slices.Equal(got, during[name]) {
			t.Fatalf("browse by %s with the newest keys only: the walk and the table's ranking differ\nnow    %v\nbefore %v", name, got, during[name])
		}
	}
	first, err := e.Browse(ctx, contract.BrowseQuery{Limit: 20})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range first.Records {
		if !e.keyedAbove(r.UpdatedAt.UnixMilli()) {
			t.Fatalf("the first page's %s (updated %v) is not above the time the rest may lack", r.ID, r.UpdatedAt)
		}
	}
	if got := everyListed(t, e); !slices.Equal(got, listed) {
		t.Fatalf("list with the newest keys only differs")
	}

	e.SetBulk(false)
	if err := e.WaitIndex(ctx); err != nil {
		t.Fatal(err)
	}
	counts, from = keyCounts(t, e.db)
	if from != -1 || counts != [3]int{429, 429, 144} || e.keysDeferred() {
		t.Fatalf("after the load: keys %v, mark %d (deferred %v); want every live record's and no mark", counts, from, e.keysDeferred())
	}
	for name, q := range orders {
		if after := everyPage(t, e, q); !slices.Equal(after, during[name]) {
			t.Fatalf("browse by %s: the keys' walk and the table's ranking differ\nwalk  %v\ntable %v", name, after, during[name])
		}
	}
	if after := everyListed(t, e); !slices.Equal(after, listed) {
		t.Fatalf("list: by_created's walk and the table's differ\nwalk  %v\ntable %v", after, listed)
	}
	// Check compares the vectors too: the load's records are embedded in
	// the background (a CI run checked while 173 of them were not yet).
	if err := e.WaitEmbedder(ctx); err != nil {
		t.Fatal(err)
	}
	rep, err := e.Check(ctx, false, nil)
	if err != nil || !rep.Consistent {
		t.Fatalf("check after the load: %+v, %v", rep, err)
	}
}

// TestOrderedKeysOfVersion8ArePutAgain: a store of schema 8 keyed its
// ordered keys by the ids' 40 digits. At the upgrade its keys are dropped
// and put again, 20 bytes an id, in the background: meanwhile every order
// browses and lists as before (the table ranks, and a walk of the keys
// already put stops above the newest time of any record still without,
// a record updated since its creation included), a list cursor handed out
// before the upgrade goes on where it was, and once the keys are in, check
// agrees.
func TestOrderedKeysOfVersion8ArePutAgain(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	e, clock, ids := batchesOfTen(t, dir, 6)
	// The oldest records, moved to the head of updated_at.
	if _, err := e.Supersede(ctx, contract.SupersedeRequest{ID: ids[1], By: ids[2]}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Forget(ctx, contract.ForgetIDs(ids[4])); err != nil {
		t.Fatal(err)
	}
	orders := map[string]contract.BrowseQuery{
		"updated":    {OrderBy: []contract.SortKey{{Field: contract.BrowseFieldUpdatedAt, Dir: contract.SortDesc}}},
		"created":    {OrderBy: []contract.SortKey{{Field: contract.BrowseFieldCreatedAt, Dir: contract.SortDesc}}},
		"confidence": {OrderBy: []contract.SortKey{{Field: contract.BrowseFieldConfidence, Dir: contract.SortDesc}}},
	}
	before := map[string][]string{}
	for name, q := range orders {
		before[name] = everyPage(t, e, q)
	}
	listed := everyListed(t, e)
	firstList, err := e.List(ctx, contract.ListRequest{Limit: 9})
	if err != nil || firstList.NextCursor == nil {
		t.Fatalf("list: %+v, %v", firstList, err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}

	// The keys as schema 8 wrote them.
	db, err := bbolt.Open(dir+"/mnemo.db", 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bbolt.Tx) error {
		for i, name := range [][]byte{bucketUpdated, bucketCreated, bucketConf} {
			b := tx.Bucket(name)
			prefix := 8
			if i == 2 {
				prefix = 4
			}
			var keys, vals [][]byte
			_ = b.ForEach(func(k, v []byte) error {
				if len(k) != prefix+idkey.Len {
					t.Errorf("%s key of %d bytes, want %d", name, len(k), prefix+idkey.Len)
				}
				keys = append(keys, append(slices.Clone(k[:prefix]), idkey.ID(k[prefix:])...))
				vals = append(vals, slices.Clone(v))
				return nil
			})
			if err := tx.DeleteBucket(name); err != nil {
				return err
			}
			if b, err = tx.CreateBucket(name); err != nil {
				return err
			}
			for j := range keys {
				if err := b.Put(keys[j], vals[j]); err != nil {
					return err
				}
			}
		}
		return tx.Bucket(bucketMeta).Put(keySchema, []byte("8"))
	})
	db.Close()
	if err != nil {
		t.Fatal(err)
	}

	e, err = Open(dir, Options{Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	e.mu.Lock()
	e.ordered.chunk = 20
	e.mu.Unlock()
	if counts, from := keyCounts(t, e.db); counts != [3]int{} || from != 0 || !e.ordered.every {
		t.Fatalf("after the upgrade: keys %v, mark %d (every %v); want none, every record's deferred", counts, from, e.ordered.every)
	}
	same := func(when string) {
		t.Helper()
		for name, q := range orders {
			if got := everyPage(t, e, q); !slices.Equal(got, before[name]) {
				t.Fatalf("browse by %s %s:\nnow    %v\nbefore %v", name, when, got, before[name])
			}
		}
		if got := everyListed(t, e); !slices.Equal(got, listed) {
			t.Fatalf("list %s differs", when)
		}
		rest, err := e.List(ctx, contract.ListRequest{Limit: 100, Cursor: firstList.NextCursor})
		if err != nil || len(rest.Items) != len(listed)-9 || rest.Items[0].ID != listed[9] {
			t.Fatalf("list %s through a cursor of schema 8: %d items, %v; want the %d after the first 9", when, len(rest.Items), err, len(listed)-9)
		}
	}
	same("with no key put")
	if err := e.finishNewestKeys(); err != nil {
		t.Fatal(err)
	}
	if counts, _ := keyCounts(t, e.db); counts[0] != 20 || !e.keysDeferred() {
		t.Fatalf("after the newest chunk: keys %v", counts)
	}
	same("with the newest chunk's keys")
	if err := e.WaitIndex(ctx); err != nil {
		t.Fatal(err)
	}
	if counts, from := keyCounts(t, e.db); counts != [3]int{59, 59, 20} || from != -1 || e.keysDeferred() {
		t.Fatalf("once put: keys %v, mark %d", counts, from)
	}
	same("once the keys are in")
	if err := e.WaitEmbedder(ctx); err != nil {
		t.Fatal(err)
	}
	rep, err := e.Check(ctx, false, nil)
	if err != nil || !rep.Consistent {
		t.Fatalf("check: %+v, %v", rep, err)
	}
}

// TestDeferredKeysAreFinishedByTheNextOpen: a load whose process stopped
// before its end (an import killed, the machine down) leaves the mark, and
// the next process to open the store puts the keys.
func TestDeferredKeysAreFinishedByTheNextOpen(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	e, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	e.SetBulk(true)
	if _, err := e.StoreBulk(ctx, orderedItems(0, 300), contract.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil { // the load never ended
		t.Fatal(err)
	}
	db, err := bbolt.Open(dir+"/mnemo.db", 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	counts, from := keyCounts(t, db)
	db.Close()
	if from != 0 || counts != [3]int{} {
		t.Fatalf("after close: keys %v, mark %d; want none and the mark at 0", counts, from)
	}
	e, err = Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	deadline := time.Now().Add(10 * time.Second)
	for e.keysDeferred() && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if counts, from := keyCounts(t, e.db); from != -1 || counts != [3]int{300, 300, 100} {
		t.Fatalf("after the next open: keys %v, mark %d", counts, from)
	}
	if err := e.WaitEmbedder(ctx); err != nil {
		t.Fatal(err)
	}
	rep, err := e.Check(ctx, false, nil)
	if err != nil || !rep.Consistent {
		t.Fatalf("check: %+v, %v", rep, err)
	}
}

// TestReadsGoOnWhileDeferredKeysArePut: the finish's transaction keeps
// writers out but not readers. Here a transaction of the test's own holds
// bbolt's writer lock, so the finish waits inside its transaction: a browse
// still answers meanwhile, as it did before, and a write waits until the
// finish is done. (Under the write lock, right after an import of 1M
// records, browses through its finisher took 1-2.7 s.)
func TestReadsGoOnWhileDeferredKeysArePut(t *testing.T) {
	ctx := context.Background()
	e, err := Open(t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	e.ordered.chunk = 100
	e.SetBulk(true)
	for b := range 3 {
		if _, err := e.StoreBulk(ctx, orderedItems(100*b, 100), contract.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.waitTable(ctx); err != nil {
		t.Fatal(err)
	}
	first := contract.BrowseQuery{Limit: 50}
	want, err := e.Browse(ctx, first)
	if err != nil {
		t.Fatal(err)
	}
	hold, err := e.db.Begin(true)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = hold.Rollback() }() // before Close, should the test fail
	finished := make(chan error, 1)
	go func() {
		e.ordered.finishing.Lock()
		defer e.ordered.finishing.Unlock()
		finished <- e.finishOrderedChunk(3) // the 300 records, in one transaction
	}()
	// The finish is in its transaction once it waits on bbolt's lock; give
	// it the time to get there.
	time.Sleep(100 * time.Millisecond)
	type answer struct {
		page contract.BrowsePage
		err  error
	}
	browsed := make(chan answer, 1)
	go func() {
		p, err := e.Browse(ctx, first)
		browsed <- answer{p, err}
	}()
	select {
	case a := <-browsed:
		if a.err != nil || !slices.EqualFunc(a.page.Records, want.Records, func(x, y contract.Record) bool { return x.ID == y.ID }) || a.page.Total != want.Total {
			t.Fatalf("the browse during the finish: %d records of %d, %v; want the page before it", len(a.page.Records), a.page.Total, a.err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a browse waited for the finish of the deferred keys")
	}
	wrote := make(chan error, 1)
	go func() {
		_, err := contract.StoreMany(ctx, e, orderedItems(1000, 1))
		wrote <- err
	}()
	select {
	case err := <-wrote:
		t.Fatalf("a write went in during the finish's transaction (%v)", err)
	case <-time.After(100 * time.Millisecond):
	}
	_ = hold.Rollback()
	if err := <-finished; err != nil {
		t.Fatal(err)
	}
	if err := <-wrote; err != nil {
		t.Fatal(err)
	}
	if e.keysDeferred() {
		t.Fatal("the keys are still deferred after the finish")
	}
	e.SetBulk(false)
	if rep, err := e.Check(ctx, false, nil); err != nil || !rep.Consistent {
		t.Fatalf("check after the finish: %+v, %v", rep, err)
	}
}

// batchesOfTen opens a store in dir whose clock moves a second a call and
// stores n batches of ten orderedItems in it, a time each; it answers the
// clock and the ids in the order stored.
func batchesOfTen(t *testing.T, dir string, n int) (*Engine, func() time.Time, []string) {
	t.Helper()
	var now atomic.Int64
	now.Store(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC).UnixMilli())
	clock := func() time.Time { return time.UnixMilli(now.Add(1000)) }
	e, err := Open(dir, Options{Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for b := range n {
		rs, err := contract.StoreMany(context.Background(), e, orderedItems(10*b, 10))
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rs {
			ids = append(ids, r.ID)
		}
	}
	return e, clock, ids
}

// timeOrder is ids sorted by the time at's newest first, ties by id: the
// order of the time keys.
func timeOrder(recs []contract.Record, at func(contract.Record) time.Time) []string {
	sorted := slices.Clone(recs)
	slices.SortFunc(sorted, func(a, b contract.Record) int {
		if c := at(b).Compare(at(a)); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	out := make([]string, len(sorted))
	for i, r := range sorted {
		out[i] = r.ID
	}
	return out
}

// TestUpdatedOrderKeepsOnlyMovedKeys: by_updated holds the keys of the
// records whose updated_at moved past their created_at, by_created marks
// those and holds every record's; browsing by updated_at (a walk merging
// the two) and by created_at pages through every record in the order
// their times give, ties by id: after supersedes, a supersede undone (a
// record moved twice), forgets of moved and unmoved records, a batch
// stored after the moves, and a reopen. Check agrees throughout, finds a
// by_updated key of a record that has not moved and a moved record whose
// mark is gone, and its repair puts the keys right.
func TestUpdatedOrderKeepsOnlyMovedKeys(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	e, clock, ids := batchesOfTen(t, dir, 5)
	for _, i := range []int{1, 5, 12, 13, 27, 33} {
		if _, err := e.Supersede(ctx, contract.SupersedeRequest{ID: ids[i], By: ids[i+1]}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := e.Supersede(ctx, contract.SupersedeRequest{ID: ids[5], By: ids[6], Undo: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Forget(ctx, contract.ForgetIDs(ids[12], ids[20])); err != nil {
		t.Fatal(err)
	}
	if _, err := contract.StoreMany(ctx, e, orderedItems(50, 10)); err != nil {
		t.Fatal(err)
	}

	checkOrders := func(when string) {
		t.Helper()
		all := everyPage(t, e, contract.BrowseQuery{OrderBy: []contract.SortKey{{Field: contract.BrowseFieldCreatedAt, Dir: contract.SortDesc}}})
		recs, err := e.GetRecords(ctx, contract.GetRequest{IDs: all})
		if err != nil || len(recs) != 58 {
			t.Fatalf("%s: %d records, %v; want 58", when, len(recs), err)
		}
		moved := 0
		for _, r := range recs {
			if !r.UpdatedAt.Equal(r.CreatedAt) {
				moved++
			}
		}
		if moved != 5 {
			t.Fatalf("%s: %d records moved, want 5 (six superseded, one forgotten)", when, moved)
		}
		for name, at := range map[string]func(contract.Record) time.Time{
			contract.BrowseFieldUpdatedAt: func(r contract.Record) time.Time { return r.UpdatedAt },
			contract.BrowseFieldCreatedAt: func(r contract.Record) time.Time { return r.CreatedAt },
		} {
			got := everyPage(t, e, contract.BrowseQuery{OrderBy: []contract.SortKey{{Field: name, Dir: contract.SortDesc}}})
			if want := timeOrder(recs, at); !slices.Equal(got, want) {
				t.Fatalf("%s: browse by %s\ngot  %v\nwant %v", when, name, got, want)
			}
		}
		var updatedKeys, marks int
		_ = e.db.View(func(tx *bbolt.Tx) error {
			updatedKeys = tx.Bucket(bucketUpdated).Stats().KeyN
			return tx.Bucket(bucketCreated).ForEach(func(_, v []byte) error {
				if movedValue(v) {
					marks++
				}
				return nil
			})
		})
		if updatedKeys != moved || marks != moved {
			t.Fatalf("%s: by_updated holds %d keys and by_created marks %d, want the %d moved records'", when, updatedKeys, marks, moved)
		}
		rep, err := e.Check(ctx, false, nil)
		if err != nil || !rep.Consistent {
			t.Fatalf("%s: check %+v, %v", when, rep, err)
		}
	}
	checkOrders("after the moves")
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	var err error
	if e, err = Open(dir, Options{Clock: clock}); err != nil {
		t.Fatal(err)
	}
	checkOrders("after a reopen")
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}

	// A stray by_updated key of a record that never moved, and a moved
	// record's mark cleared from its by_created value.
	rewriteStore(t, dir, func(tx *bbolt.Tx) error {
		crt := tx.Bucket(bucketCreated)
		var stray, cleared bool
		return crt.ForEach(func(k, v []byte) error {
			switch {
			case !movedValue(v) && !stray:
				stray = true
				return tx.Bucket(bucketUpdated).Put(slices.Clone(k), slices.Clone(v))
			case movedValue(v) && !cleared:
				cleared = true
				return crt.Put(slices.Clone(k), slices.Clone(v[:4]))
			}
			return nil
		})
	})
	if e, err = Open(dir, Options{Clock: clock}); err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	rep, err := e.Check(ctx, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range rep.Checks {
		if !strings.HasPrefix(c.Name, "browse keys") {
			continue
		}
		// The stray key; the cleared mark's stale by_created key, which
		// leaves its record a key short.
		ex := strings.Join(c.Examples, "\n")
		if c.Disagreements != 3 || !strings.Contains(ex, "whose updated_at is its created_at") || !strings.Contains(ex, "by_created key of") {
			t.Errorf("check: %d browse key disagreements, want 3:\n%s", c.Disagreements, ex)
		}
	}
	if rep, err = e.Check(ctx, true, nil); err != nil || !rep.Repaired || !rep.Consistent {
		t.Fatalf("repair: %+v, %v", rep, err)
	}
	checkOrders("after the repair")
}

// TestUpdatedKeysOfVersion10ArePutAgain: a store of schema 10 held a
// by_updated key for every record and no marks in by_created. At the
// upgrade its keys are dropped and put again by the rule of schema 11 in
// the background; meanwhile and afterwards both orders browse as before,
// and check agrees.
func TestUpdatedKeysOfVersion10ArePutAgain(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	e, clock, ids := batchesOfTen(t, dir, 3)
	for _, i := range []int{2, 11} {
		if _, err := e.Supersede(ctx, contract.SupersedeRequest{ID: ids[i], By: ids[i+1]}); err != nil {
			t.Fatal(err)
		}
	}
	orders := map[string]contract.BrowseQuery{
		"updated": {OrderBy: []contract.SortKey{{Field: contract.BrowseFieldUpdatedAt, Dir: contract.SortDesc}}},
		"created": {OrderBy: []contract.SortKey{{Field: contract.BrowseFieldCreatedAt, Dir: contract.SortDesc}}},
	}
	before := map[string][]string{}
	for name, q := range orders {
		before[name] = everyPage(t, e, q)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}

	// The keys as schema 10 wrote them.
	rewriteStore(t, dir, func(tx *bbolt.Tx) error {
		crt, upd := tx.Bucket(bucketCreated), tx.Bucket(bucketUpdated)
		var keys, vals [][]byte
		_ = crt.ForEach(func(k, v []byte) error {
			keys, vals = append(keys, slices.Clone(k)), append(vals, slices.Clone(v))
			return nil
		})
		for i, k := range keys {
			if !movedValue(vals[i]) {
				if err := upd.Put(k, vals[i]); err != nil {
					return err
				}
			}
			if err := crt.Put(k, vals[i][:4]); err != nil {
				return err
			}
		}
		return tx.Bucket(bucketMeta).Put(keySchema, []byte("10"))
	})

	var err error
	if e, err = Open(dir, Options{Clock: clock}); err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if counts, _ := keyCounts(t, e.db); counts != [3]int{} || !e.keysDeferred() || !e.ordered.every {
		t.Fatalf("after the upgrade: keys %v, deferred %v; want none, every record's deferred", counts, e.keysDeferred())
	}
	same := func(when string) {
		t.Helper()
		for name, q := range orders {
			if got := everyPage(t, e, q); !slices.Equal(got, before[name]) {
				t.Fatalf("browse by %s %s:\nnow    %v\nbefore %v", name, when, got, before[name])
			}
		}
	}
	same("with no key put")
	if err := e.WaitIndex(ctx); err != nil {
		t.Fatal(err)
	}
	var updatedKeys int
	_ = e.db.View(func(tx *bbolt.Tx) error { updatedKeys = tx.Bucket(bucketUpdated).Stats().KeyN; return nil })
	if counts, _ := keyCounts(t, e.db); counts != [3]int{30, 30, 10} || updatedKeys != 2 || e.keysDeferred() {
		t.Fatalf("once put: keys %v, by_updated %d; want 30 in each order, 10 by confidence, 2 in by_updated", counts, updatedKeys)
	}
	same("once the keys are in")
	if err := e.WaitEmbedder(ctx); err != nil {
		t.Fatal(err)
	}
	if rep, err := e.Check(ctx, false, nil); err != nil || !rep.Consistent {
		t.Fatalf("check: %+v, %v", rep, err)
	}
}
