package postgres_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"mnemo/contract"
	"mnemo/contract/conformance"
	"mnemo/engine/postgres"
	"mnemo/engine/postgres/pgtest"
)

// churn forgets, approves and rejects some of the fixture, so every count the
// engine keeps has gone up and down before the oracles compare.
func churn(t *testing.T, e *postgres.Engine) {
	t.Helper()
	ctx := context.Background()
	recs := conformance.Snapshot(t, e)
	var forget []string
	approved, rejected := 0, 0
	for i, r := range recs {
		switch {
		case i%17 == 0:
			forget = append(forget, r.ID)
		case r.Status == contract.StatusCandidate && approved <= rejected:
			if _, err := e.Review(ctx, contract.ReviewRequest{ID: r.ID, Action: contract.ReviewApprove}); err != nil {
				t.Fatal(err)
			}
			approved++
		case r.Status == contract.StatusCandidate && rejected < 10:
			if _, err := e.Review(ctx, contract.ReviewRequest{ID: r.ID, Action: contract.ReviewReject}); err != nil {
				t.Fatal(err)
			}
			rejected++
		}
	}
	if _, err := e.Forget(ctx, contract.ForgetIDs(forget...)); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Forget(ctx, contract.ForgetFilter(contract.MetaFilter{TagsAny: []string{"unicode"}})); err != nil {
		t.Fatal(err)
	}
}

// fixtureStore is a store filled with the oracle fixture.
func fixtureStore(t *testing.T, n int, seed int64, step time.Duration) (*postgres.Engine, []contract.Record) {
	t.Helper()
	e := openStore(t, pgtest.URL(t), postgres.Options{Clock: conformance.SteppingClock(time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC), step)})
	conformance.FillCorpus(t, e, n, seed)
	churn(t, e)
	recs := conformance.Snapshot(t, e)
	if len(recs) < n*8/10 {
		t.Fatalf("snapshot holds %d records of %d", len(recs), n)
	}
	return e, recs
}

// TestBrowseMatchesTheOracle walks random queries page by page and compares
// every page with contract.BrowseSlice over the same records.
func TestBrowseMatchesTheOracle(t *testing.T) {
	e, recs := fixtureStore(t, 600, 42, 7*time.Hour)
	r := rand.New(rand.NewPCG(1, 2))
	queries := 300
	if testing.Short() {
		queries = 60
	}
	conformance.CheckBrowseOracle(t, e, recs, r, queries)
}

// TestExploreIsExact compares every facet at the root and after narrows with
// counts taken from the records themselves.
func TestExploreIsExact(t *testing.T) {
	ctx := context.Background()
	e, recs := fixtureStore(t, 400, 9, time.Millisecond)
	filters := []contract.MetaFilter{{}, {Statuses: []contract.Status{contract.StatusCandidate}}, {Kinds: []contract.ItemKind{contract.KindLearning}}}
	reach := contract.ReachSubtree(contract.MustNamespace("team:acme"))
	filters = append(filters, contract.MetaFilter{Reach: &reach})
	for _, f := range filters {
		for _, facet := range contract.Facets() {
			got, err := e.Explore(ctx, contract.ExploreRequest{Facet: facet, Filter: f, Limit: 500})
			if err != nil {
				t.Fatal(err)
			}
			want := exploreOracle(recs, facet, f, 500)
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("explore %s with %+v\n got %+v\nwant %+v", facet, f, got, want)
			}
		}
	}
}

func exploreOracle(recs []contract.Record, facet contract.Facet, f contract.MetaFilter, limit int) contract.ExplorePage {
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
	return contract.ExplorePageOf(facet, counts, limit, total, missing, false)
}

// randomFilter draws a meta filter from values the records hold (and a few
// near misses), so most fields select something.
func randomFilter(r *rand.Rand, recs []contract.Record) contract.MetaFilter {
	var f contract.MetaFilter
	pick := func(p float64) bool { return r.Float64() < p }
	rec := recs[r.IntN(len(recs))]
	m := rec.Meta
	str := func(p *string) *string {
		if p == nil || pick(0.1) {
			return contract.Ptr("no-such-value")
		}
		return contract.Ptr(*p)
	}
	for pass := 0; pass < 1+r.IntN(3); pass++ {
		switch r.IntN(17) {
		case 0:
			reach := contract.ReachSubtree(m.Namespace)
			switch r.IntN(3) {
			case 0:
				reach = contract.ReachOf(m.Namespace)
			case 1:
				reach = contract.ReachExact(m.Namespace)
			}
			f.Reach = &reach
		case 1:
			f.Workspace = str(m.Workspace)
		case 2:
			f.Folder = str(m.Folder)
			if f.Folder != nil && pick(0.5) {
				if i := strings.LastIndex(*f.Folder, "/"); i > 0 {
					f.Folder = contract.Ptr((*f.Folder)[:i] + "/")
				}
			}
		case 3:
			f.FilePath = str(m.FilePath)
		case 4:
			f.Language = str(m.Language)
		case 5:
			f.Repo = str(m.Repo)
		case 6:
			f.Commit = str(m.Commit)
		case 7:
			f.URL = str(m.URL)
		case 8:
			f.ThreadID = str(m.ThreadID)
		case 9:
			f.AgentID = str(m.AgentID)
		case 10:
			f.SourceID = str(m.Source.ID)
		case 11:
			if m.ToolCall != nil {
				f.ToolCall = contract.Ptr(m.ToolCall.Name)
			}
		case 12:
			f.Kinds = []contract.ItemKind{rec.Kind}
		case 13:
			f.Sources = []contract.SourceKind{m.SourceKindOf()}
		case 14:
			if len(m.Tags) > 0 {
				f.TagsAny = []string{m.Tags[r.IntN(len(m.Tags))], "no-such-tag"}
			}
		case 15:
			if m.ObservedAt != nil {
				a := m.ObservedAt.Add(-time.Duration(r.IntN(3)) * time.Hour)
				b := m.ObservedAt.Add(time.Duration(r.IntN(3)) * time.Hour)
				f.ObservedAfter, f.ObservedBefore = &a, &b
			}
		case 16:
			f.Statuses = []contract.Status{rec.Status}
		}
	}
	if m.Turns != nil && pick(0.1) {
		tr := *m.Turns
		f.Turns = &tr
	}
	return f
}

// TestFiltersMatchTheContract compares list, explore and keyword fetch under
// random filters with MetaFilter.Matches over the same records: the SQL of
// every filter field is the contract's rule.
func TestFiltersMatchTheContract(t *testing.T) {
	ctx := context.Background()
	e, recs := fixtureStore(t, 500, 11, time.Millisecond)
	r := rand.New(rand.NewPCG(3, 4))
	n := 300
	if testing.Short() {
		n = 60
	}
	for i := 0; i < n; i++ {
		f := randomFilter(r, recs)
		var want []string
		for k := range recs {
			rc := &recs[k]
			if f.Matches(rc.Kind, &rc.Meta) && f.AdmitsStatus(rc.Status, false) {
				want = append(want, rc.ID)
			}
		}
		var got []string
		var cursor *string
		for {
			page, err := e.List(ctx, contract.ListRequest{Filter: f, Limit: 97, Cursor: cursor})
			if err != nil {
				t.Fatal(err)
			}
			for _, h := range page.Items {
				got = append(got, h.ID)
			}
			if cursor = page.NextCursor; cursor == nil {
				break
			}
		}
		slices.Sort(got)
		slices.Sort(want)
		fj, _ := json.Marshal(f)
		if !slices.Equal(got, want) {
			t.Fatalf("filter %s: list has %d records, the contract %d", fj, len(got), len(want))
		}
		page, err := e.Explore(ctx, contract.ExploreRequest{Facet: contract.FacetTag, Filter: f, Limit: 500})
		if err != nil {
			t.Fatal(err)
		}
		if w := exploreOracle(recs, contract.FacetTag, f, 500); fmt.Sprint(page) != fmt.Sprint(w) {
			t.Fatalf("filter %s: explore\n got %+v\nwant %+v", fj, page, w)
		}
	}
}
