package postgres_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"mnemo/bench/corpus"
	"mnemo/contract"
	"mnemo/contract/conformance"
	"mnemo/engine/postgres"
	"mnemo/engine/postgres/pgtest"
)

// rootExploreMatches compares every facet's explore, at the root (the kept
// counts) and under narrower filters (record_facets), with counts taken from
// the records themselves.
func rootExploreMatches(t *testing.T, e contract.Engine, when string) {
	t.Helper()
	ctx := context.Background()
	recs := conformance.Snapshot(t, e)
	acme := contract.ReachSubtree(contract.MustNamespace("team:acme"))
	filters := []contract.MetaFilter{{}, {Kinds: []contract.ItemKind{contract.KindLearning}, TagsAny: []string{"infra", "style"}},
		{Statuses: []contract.Status{contract.StatusActive}}, {Reach: &acme}}
	for _, f := range filters {
		for _, facet := range contract.Facets() {
			for _, limit := range []int{3, 500} {
				got, err := e.Explore(ctx, contract.ExploreRequest{Facet: facet, Filter: f, Limit: limit})
				if err != nil {
					t.Fatal(err)
				}
				want := exploreOracle(recs, facet, f, limit)
				if fmt.Sprint(got) != fmt.Sprint(want) {
					t.Fatalf("%s: explore %s under %+v, limit %d\n got %+v\nwant %+v", when, facet, f, limit, got, want)
				}
			}
		}
	}
}

// TestFacetCountsFollowEveryWrite: the root explore's kept counts stay exact
// through forgets (by id and by filter), reviews, supersessions, replays and
// two engines writing overlapping batches at once.
func TestFacetCountsFollowEveryWrite(t *testing.T) {
	ctx := context.Background()
	url := pgtest.URL(t)
	a := openStore(t, url, postgres.Options{})
	b := openStore(t, url, postgres.Options{})
	conformance.FillCorpus(t, a, 300, 5)
	rootExploreMatches(t, a, "after the load")

	entries := corpus.Generate(700, 6)[300:]
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for w, e := range []*postgres.Engine{a, b, a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(w), 9))
			for start := 0; start < len(entries); {
				n := 1 + r.IntN(60)
				items := make([]contract.StoreItem, 0, n)
				for _, en := range entries[start:min(start+n, len(entries))] {
					items = append(items, en.Item)
				}
				if w%2 == 1 {
					// From the back, so the batches of two workers overlap.
					for i, j := 0, len(items)-1; i < j; i, j = i+1, j-1 {
						items[i], items[j] = items[j], items[i]
					}
				}
				if _, err := e.StoreManyWith(ctx, items, contract.WriteOptions{Status: contract.StatusCandidate}); err != nil {
					errs <- err
					return
				}
				start += n
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	rootExploreMatches(t, b, "after concurrent overlapping batches")

	recs := conformance.Snapshot(t, a)
	var candidates, others []string
	for _, r := range recs {
		if r.Status == contract.StatusCandidate {
			candidates = append(candidates, r.ID)
		} else {
			others = append(others, r.ID)
		}
	}
	for i, id := range candidates[:40] {
		action := contract.ReviewApprove
		if i%2 == 1 {
			action = contract.ReviewReject
		}
		if _, err := a.Review(ctx, contract.ReviewRequest{ID: id, Action: action}); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i+1 < 20; i += 2 {
		if _, err := b.Supersede(ctx, contract.SupersedeRequest{ID: others[i], By: others[i+1]}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := a.Forget(ctx, contract.ForgetTarget{IDs: others[20:60]}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Forget(ctx, contract.ForgetTarget{Filter: &contract.MetaFilter{TagsAny: []string{"billing"}}}); err != nil {
		t.Fatal(err)
	}
	rootExploreMatches(t, a, "after reviews, supersessions and forgets")
}

// TestFacetCountsOfAnOlderStore: a store written before the kept facet counts
// and the hit column (schema version 4) is migrated: the counts are taken
// from the records it holds, and rows without a hit read from their item.
func TestFacetCountsOfAnOlderStore(t *testing.T) {
	ctx := context.Background()
	base := pgtest.BaseURL(t)
	schema := pgtest.Schema(t)
	url := pgtest.WithSchema(t, base, schema)
	e := openStore(t, url, postgres.Options{Clock: conformance.SteppingClock(time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC), time.Second)})
	conformance.FillCorpus(t, e, 250, 8)
	want := conformance.Snapshot(t, e)
	wantPage, err := e.Browse(ctx, contract.BrowseQuery{Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	_ = e.Close()

	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close(ctx) }()
	s := func(name string) string { return pgx.Identifier{schema, name}.Sanitize() }
	for _, sql := range []string{
		"DROP TABLE " + s("facet_values") + ", " + s("record_facets"),
		"DROP TRIGGER records_facets_insert ON " + s("records"),
		"DROP TRIGGER records_facets_delete ON " + s("records"),
		"DROP TRIGGER records_facets_update ON " + s("records"),
		"DROP FUNCTION " + s("records_facets_insert") + ", " + s("records_facets_delete") + ", " + s("records_facets_update") + ", " +
			s("facet_apply") + ", " + s("facet_pairs"),
		"UPDATE " + s("records") + " SET hit = NULL",
		"ALTER TABLE " + s("records") + " DROP COLUMN kw",
		"CREATE INDEX records_status ON " + s("records") + " (status)",
		"UPDATE " + s("mnemo_meta") + " SET value = '5' WHERE key = 'schema_version'",
	} {
		if _, err := conn.Exec(ctx, sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}

	e = openStore(t, url, postgres.Options{})
	rootExploreMatches(t, e, "after the migration")
	got := conformance.Snapshot(t, e)
	if gj, wj := mustJSON(t, got), mustJSON(t, want); gj != wj {
		t.Fatalf("records after the migration\n got %s\nwant %s", gj, wj)
	}
	page, err := e.Browse(ctx, contract.BrowseQuery{Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if gj, wj := mustJSON(t, page), mustJSON(t, wantPage); gj != wj {
		t.Fatalf("browse of rows without a hit\n got %s\nwant %s", gj, wj)
	}

	// The engine fills the hit column in behind the reads.
	deadline := time.Now().Add(20 * time.Second)
	for {
		var left int
		if err := conn.QueryRow(ctx, "SELECT count(*) FROM "+s("records")+" WHERE hit IS NULL").Scan(&left); err != nil {
			t.Fatal(err)
		}
		if left == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d rows still without a hit", left)
		}
		time.Sleep(50 * time.Millisecond)
	}
	page, err = e.Browse(ctx, contract.BrowseQuery{Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if gj, wj := mustJSON(t, page), mustJSON(t, wantPage); gj != wj {
		t.Fatalf("browse after the backfill\n got %s\nwant %s", gj, wj)
	}
	rootExploreMatches(t, e, "after the backfill")
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestNarrowCopyOfAStepSixStore: a store at schema version 6 (kept counts,
// no narrow copy) gets record_facets from the records it holds.
func TestNarrowCopyOfAStepSixStore(t *testing.T) {
	ctx := context.Background()
	base := pgtest.BaseURL(t)
	schema := pgtest.Schema(t)
	url := pgtest.WithSchema(t, base, schema)
	e := openStore(t, url, postgres.Options{})
	conformance.FillCorpus(t, e, 200, 12)
	_ = e.Close()
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close(ctx) }()
	for _, sql := range []string{
		"DROP TABLE " + pgx.Identifier{schema, "record_facets"}.Sanitize(),
		"ALTER TABLE " + pgx.Identifier{schema, "records"}.Sanitize() + " DROP COLUMN kw",
		"CREATE INDEX records_status ON " + pgx.Identifier{schema, "records"}.Sanitize() + " (status)",
		"UPDATE " + pgx.Identifier{schema, "mnemo_meta"}.Sanitize() + " SET value = '6' WHERE key = 'schema_version'",
	} {
		if _, err := conn.Exec(ctx, sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	e = openStore(t, url, postgres.Options{})
	rootExploreMatches(t, e, "after step 7")
	conformance.FillCorpus(t, e, 60, 13)
	rootExploreMatches(t, e, "after writes on the migrated store")
}
