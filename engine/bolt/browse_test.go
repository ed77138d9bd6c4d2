package bolt_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
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
	ctx := context.Background()
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
			got, err := e.Browse(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			want, err := contract.BrowseSlice(q, recs)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(conformance.PageIDs(got), conformance.PageIDs(want)) || got.Total != want.Total {
				t.Fatalf("order %v page %d:\n got %v (%d)\nwant %v (%d)", order, pageNo, conformance.PageIDs(got), got.Total, conformance.PageIDs(want), want.Total)
			}
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
