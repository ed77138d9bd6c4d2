package bolt_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"mnemo/contract"
	"mnemo/contract/conformance"
	"mnemo/engine/bolt"
)

// TestBrowseMatchesTheOracle walks random queries page by page and compares
// every page with contract.BrowseSlice over the same records.
func TestBrowseMatchesTheOracle(t *testing.T) {
	t.Parallel()
	e := openStore(t, t.TempDir(), bolt.Options{Clock: conformance.SteppingClock(time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC), 7*time.Hour)})
	conformance.FillCorpus(t, e, 600, 42)
	recs := conformance.Snapshot(t, e)
	if len(recs) < 500 {
		t.Fatalf("snapshot holds %d records", len(recs))
	}
	r := rand.New(rand.NewPCG(1, 2))
	queries := 400
	if testing.Short() {
		queries = 60
	}
	conformance.CheckBrowseOracle(t, e, recs, r, queries)
}

// TestExploreIsExact compares every facet at the root and after narrows with
// counts taken from the records themselves.
func TestExploreIsExact(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := openStore(t, t.TempDir(), bolt.Options{})
	conformance.FillCorpus(t, e, 400, 9)
	recs := conformance.Snapshot(t, e)
	filters := []contract.MetaFilter{{}, {Statuses: []contract.Status{contract.StatusCandidate}}, {Kinds: []contract.ItemKind{contract.KindLearning}}}
	reach := contract.ReachSubtree(contract.MustNamespace("team:acme"))
	filters = append(filters, contract.MetaFilter{Reach: &reach})
	for _, f := range filters {
		for _, facet := range contract.Facets() {
			got, err := e.Explore(ctx, contract.ExploreRequest{Facet: facet, Filter: f, Limit: 500})
			if err != nil {
				t.Fatal(err)
			}
			counts := map[string]uint64{}
			var total, missing uint64
			for i := range recs {
				rc := &recs[i]
				if !f.Matches(rc.Kind, &rc.Meta) || !f.AdmitsStatus(rc.Status, false) {
					continue
				}
				total++
				vals := facet.Values(rc.Kind, &rc.Meta, rc.Status)
				if len(vals) == 0 {
					missing++
				}
				for _, v := range vals {
					counts[v]++
				}
			}
			want := contract.ExplorePageOf(facet, counts, 500, total, missing, false)
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("explore %s with %+v\n got %+v\nwant %+v", facet, f, got, want)
			}
		}
	}
}

// TestIndexedWalksVisitEverything walks whole stores along each ordered
// index (and a heap order for contrast) and compares every page with the oracle.
func TestIndexedWalksVisitEverything(t *testing.T) {
	t.Parallel()
	e := openStore(t, t.TempDir(), bolt.Options{Clock: conformance.SteppingClock(time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC), time.Hour)})
	conformance.FillCorpus(t, e, 300, 5)
	recs := conformance.Snapshot(t, e)
	for _, order := range [][]contract.SortKey{
		{{Field: "confidence", Dir: "desc"}}, {{Field: "updated_at", Dir: "desc"}},
		{{Field: "created_at", Dir: "desc"}}, {{Field: "confidence", Dir: "asc"}},
	} {
		q := contract.BrowseQuery{OrderBy: order, Limit: 37}
		seen := map[string]bool{}
		for pageNo := 0; ; pageNo++ {
			got := conformance.CheckBrowsePage(t, e, recs, q, fmt.Sprintf("order %v page %d", order, pageNo))
			for _, id := range conformance.PageIDs(got) {
				if seen[id] {
					t.Fatalf("order %v: %s visited twice", order, id)
				}
				seen[id] = true
			}
			if got.Continuation == nil {
				break
			}
			q.Cursor = *got.Continuation
		}
		if len(seen) != len(recs) {
			t.Fatalf("order %v visited %d of %d records", order, len(seen), len(recs))
		}
	}
}

// TestStatusFiltersFollowEveryChangeOfStatus browses by status while
// records are approved, rejected, superseded, forgotten and stored again,
// and after the store is opened again from its table file: a status clause
// is checked against the table's status column before a row is read
// (table.stat), so that column must follow every change the rows do.
func TestStatusFiltersFollowEveryChangeOfStatus(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	clock := conformance.SteppingClock(time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC), time.Minute)
	// A large store's table is saved to its file and read back from it.
	opts := bolt.Options{Clock: clock, SyncRebuildBelow: -1}
	e, err := bolt.Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	conformance.FillCorpus(t, e, 400, 11)
	queries := [][]contract.BrowseFilter{
		{{Field: "status", Op: "in", Values: []string{"active"}}},
		{{Field: "status", Op: "in", Values: []string{"candidate"}}},
		{{Field: "status", Op: "in", Values: []string{"superseded"}}},
		{{Field: "status", Op: "not_in", Values: []string{"active"}}},
		{{Field: "status", Op: "not_in", Values: []string{"candidate", "superseded"}}},
		{{Field: "status", Op: "in", Values: []string{"candidate"}}, {Field: "kind", Op: "in", Values: []string{"learning"}}},
	}
	orders := [][]contract.SortKey{nil, {{Field: "confidence", Dir: "desc"}}, {{Field: "created_at", Dir: "asc"}}}
	check := func(when string, e *bolt.Engine) {
		t.Helper()
		recs := conformance.Snapshot(t, e)
		for _, filters := range queries {
			for _, order := range orders {
				for _, limit := range []int{1, 25, 1000} {
					q := contract.BrowseQuery{Filters: filters, OrderBy: order, Limit: limit}
					conformance.CheckBrowsePage(t, e, recs, q, fmt.Sprintf("%s, %v by %v, limit %d", when, filters, order, limit))
				}
			}
		}
	}
	check("as stored", e)

	byStatus := func(s contract.Status) []string {
		page, err := e.Browse(ctx, contract.BrowseQuery{Filters: []contract.BrowseFilter{{Field: "status", Op: "in", Values: []string{string(s)}}}, Limit: 1000})
		if err != nil {
			t.Fatal(err)
		}
		return conformance.PageIDs(page)
	}
	candidates, active := byStatus(contract.StatusCandidate), byStatus(contract.StatusActive)
	if len(candidates) < 20 || len(active) < 40 {
		t.Fatalf("the corpus holds %d candidates and %d active records", len(candidates), len(active))
	}
	for i, id := range candidates[:20] {
		action := contract.ReviewApprove
		if i%2 == 1 {
			action = contract.ReviewReject
		}
		if _, err := e.Review(ctx, contract.ReviewRequest{ID: id, Action: action}); err != nil {
			t.Fatal(err)
		}
	}
	check("after reviews", e)
	for i := 0; i < 10; i++ {
		if _, err := e.Supersede(ctx, contract.SupersedeRequest{ID: active[i], By: active[20+i]}); err != nil {
			t.Fatal(err)
		}
	}
	check("after supersessions", e)
	// A forgotten record's ordinal is left behind; storing it again as a
	// candidate gives it a new one.
	got, err := e.GetRecords(ctx, contract.GetRequest{IDs: active[10:15]})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Forget(ctx, contract.ForgetTarget{IDs: active[10:15]}); err != nil {
		t.Fatal(err)
	}
	check("after a forget", e)
	for _, r := range got {
		if _, err := e.StoreWith(ctx, *r.Item, contract.WriteOptions{Status: contract.StatusCandidate}); err != nil {
			t.Fatal(err)
		}
	}
	check("after storing the forgotten records again as candidates", e)
	// Saved as it is now, so nothing is replayed over the file's rows.
	if err := e.SaveTable(); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	e = openStore(t, dir, opts)
	if !e.TableFromFile() {
		t.Fatal("the store was not opened from its table file")
	}
	check("opened again from the table file", e)
}
