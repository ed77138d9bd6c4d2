package postgres_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"mnemo/contract"
	"mnemo/contract/conformance"
	"mnemo/engine/postgres"
	"mnemo/engine/postgres/pgtest"
)

// bulkState is what the database says of a store's bulk load: whether the
// bulk row exists and which of the two deferred indexes exist.
func bulkState(t *testing.T, conn *pgx.Conn, schema string) (row bool, indexes []string) {
	t.Helper()
	ctx := context.Background()
	if err := conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM "+pgx.Identifier{schema, "mnemo_meta"}.Sanitize()+" WHERE key = 'bulk_load')").Scan(&row); err != nil {
		t.Fatal(err)
	}
	rs, err := conn.Query(ctx, `SELECT indexname FROM pg_indexes WHERE schemaname = $1 AND indexname IN ('records_folded', 'records_tsv')
		ORDER BY indexname`, schema)
	if err != nil {
		t.Fatal(err)
	}
	indexes, err = pgx.CollectRows(rs, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	return row, indexes
}

// indexDefs is every index of a store's schema, its definition with the
// schema's name written as S, one a line in name order.
func indexDefs(t *testing.T, conn *pgx.Conn, schema string) string {
	t.Helper()
	rs, err := conn.Query(context.Background(), `SELECT indexdef FROM pg_indexes WHERE schemaname = $1 ORDER BY indexname`, schema)
	if err != nil {
		t.Fatal(err)
	}
	defs, err := pgx.CollectRows(rs, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	return strings.ReplaceAll(strings.Join(defs, "\n"), " "+schema+".", " S.")
}

// facetValues is a store's kept facet counts, the rows above zero.
func facetValues(t *testing.T, conn *pgx.Conn, schema string) string {
	t.Helper()
	rs, err := conn.Query(context.Background(), "SELECT facet, value, n FROM "+pgx.Identifier{schema, "facet_values"}.Sanitize()+
		" WHERE n <> 0 ORDER BY facet, value")
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for rs.Next() {
		var f int16
		var v string
		var n int64
		if err := rs.Scan(&f, &v, &n); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "%d/%s=%d\n", f, v, n)
	}
	if err := rs.Err(); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// containsMatchesTheOracle compares content filters (served by the trigram
// index when it exists, by a scan when it does not) with contract.BrowseSlice.
func containsMatchesTheOracle(t *testing.T, e contract.Engine, when string) {
	t.Helper()
	recs := conformance.Snapshot(t, e)
	for _, needle := range []string{"élan", "STRASSE", "own7", "amber birch", "juniper", "zzz-none", "ok"} {
		for _, op := range contract.BrowseFilterOps(contract.BrowseFieldContent) {
			q := contract.BrowseQuery{Limit: 1000, Filters: []contract.BrowseFilter{{Field: contract.BrowseFieldContent, Op: op, Text: needle}}}
			conformance.CheckBrowsePage(t, e, recs, q, fmt.Sprintf("%s: content %s %q", when, op, needle))
		}
	}
}

// everyReadIsExact runs the oracles of explore, keyword fetch and content
// filters against e.
func everyReadIsExact(t *testing.T, e *postgres.Engine, conn *pgx.Conn, schema, when string) {
	t.Helper()
	rootExploreMatches(t, e, when)
	keywordMatchesFullRanking(t, e, conn, schema, when)
	containsMatchesTheOracle(t, e, when)
}

// TestBulkLoadKeepsReadsExact: a bulk load drops the keyword and trigram
// indexes and suspends the facet counts once it has stored enough; every
// read stays exact meanwhile (forgets, reviews and supersessions included),
// and its end builds the indexes and counts that a store written without
// the bulk load keeps.
func TestBulkLoadKeepsReadsExact(t *testing.T) {
	ctx := context.Background()
	base := pgtest.BaseURL(t)
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close(ctx) }()
	plainSchema, bulkSchema := pgtest.Schema(t), pgtest.Schema(t)
	clock := func() func() time.Time {
		return conformance.SteppingClock(time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC), time.Second)
	}
	plain := openStore(t, pgtest.WithSchema(t, base, plainSchema), postgres.Options{Clock: clock()})
	bulk := openStore(t, pgtest.WithSchema(t, base, bulkSchema), postgres.Options{Clock: clock()})

	bulk.SetBulk(true)
	for _, e := range []*postgres.Engine{plain, bulk} {
		fillKeywordStore(t, e, 1100, 3)
		conformance.FillCorpus(t, e, 200, 5)
	}
	if row, idx := bulkState(t, conn, bulkSchema); !row || len(idx) != 0 {
		t.Fatalf("during the load: bulk row %v, indexes %v; want the row and no index", row, idx)
	}
	if defs := indexDefs(t, conn, bulkSchema); strings.Contains(defs, "records_updated") || strings.Contains(defs, "record_facets_tags") {
		t.Fatalf("during the load the secondary indexes are still there:\n%s", defs)
	}
	everyReadIsExact(t, bulk, conn, bulkSchema, "during the bulk load")
	conformance.CheckBrowseOracle(t, bulk, conformance.Snapshot(t, bulk), rand.New(rand.NewPCG(3, 4)), 60)
	churn(t, bulk)
	churn(t, plain)
	everyReadIsExact(t, bulk, conn, bulkSchema, "after churn during the bulk load")

	bulk.SetBulk(false)
	if err := bulk.WaitIndex(ctx); err != nil {
		t.Fatal(err)
	}
	if row, idx := bulkState(t, conn, bulkSchema); row || len(idx) != 2 {
		t.Fatalf("after the load: bulk row %v, indexes %v; want no row and both indexes", row, idx)
	}
	if got, want := facetValues(t, conn, bulkSchema), facetValues(t, conn, plainSchema); got != want {
		t.Fatalf("facet counts after the bulk load differ from those kept row by row:\n got %s\nwant %s", got, want)
	}
	if got, want := indexDefs(t, conn, bulkSchema), indexDefs(t, conn, plainSchema); got != want {
		t.Fatalf("the indexes after the bulk load differ from those of a store written without it:\n got %s\nwant %s", got, want)
	}
	everyReadIsExact(t, bulk, conn, bulkSchema, "after the bulk load")
	// Counting resumes: later writes are counted as they come.
	conformance.FillCorpus(t, bulk, 40, 9)
	rootExploreMatches(t, bulk, "after writes that follow the bulk load")

	// A small load into a store holding more than it keeps its indexes.
	bulk.SetBulk(true)
	conformance.FillCorpus(t, bulk, 100, 10)
	if row, idx := bulkState(t, conn, bulkSchema); row || len(idx) != 2 {
		t.Fatalf("a small load into a larger store: bulk row %v, indexes %v; want no row and both indexes", row, idx)
	}
	bulk.SetBulk(false)
	rootExploreMatches(t, bulk, "after a small load")
}

// TestBulkLoadCutShortIsFinished: a process that dies during a bulk load
// leaves the bulk row and no index; reads stay exact on that store, and the
// next open of it builds the indexes and takes the counts.
func TestBulkLoadCutShortIsFinished(t *testing.T) {
	if url := os.Getenv("MNEMO_BULK_CHILD_URL"); url != "" {
		// The child: load in bulk, then end as a crash would, without
		// Close (so without the load's end).
		e, err := postgres.Open(context.Background(), url, postgres.Options{})
		if err != nil {
			t.Fatal(err)
		}
		e.SetBulk(true)
		fillKeywordStore(t, e, 1100, 4)
		conformance.FillCorpus(t, e, 150, 6)
		os.Exit(0)
	}
	ctx := context.Background()
	base := pgtest.BaseURL(t)
	schema := pgtest.Schema(t)
	url := pgtest.WithSchema(t, base, schema)
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close(ctx) }()
	cmd := exec.Command(os.Args[0], "-test.run=^TestBulkLoadCutShortIsFinished$")
	cmd.Env = append(os.Environ(), "MNEMO_BULK_CHILD_URL="+url)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	if row, idx := bulkState(t, conn, schema); !row || len(idx) != 0 {
		t.Fatalf("after the child died: bulk row %v, indexes %v; want the row and no index", row, idx)
	}

	// While another session holds the bulk lock (as a live loader would),
	// an open leaves the load alone, and reads are exact without the
	// indexes and the counts.
	const lock = "hashtext('mnemo.bulk.' || $1)"
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock("+lock+")", schema); err != nil {
		t.Fatal(err)
	}
	e := openStore(t, url, postgres.Options{})
	everyReadIsExact(t, e, conn, schema, "with the load cut short")
	if row, idx := bulkState(t, conn, schema); !row || len(idx) != 0 {
		t.Fatalf("with the lock held: bulk row %v, indexes %v; want the load left alone", row, idx)
	}
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_unlock("+lock+")", schema); err != nil {
		t.Fatal(err)
	}

	// Nobody holds it now: the next open finishes the load in the background.
	f := openStore(t, url, postgres.Options{})
	deadline := time.Now().Add(60 * time.Second)
	for {
		row, idx := bulkState(t, conn, schema)
		if !row && len(idx) == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the load was not finished: bulk row %v, indexes %v", row, idx)
		}
		time.Sleep(50 * time.Millisecond)
	}
	everyReadIsExact(t, f, conn, schema, "after the next open finished the load")
	everyReadIsExact(t, e, conn, schema, "through the engine opened before")
}

// TestBulkLoadLeftToAnotherProcess: a load whose engine leaves its finish
// (LeaveBulkFinish, as `mnemo import` has it) ends with the bulk row kept and
// no index, reads exact; its own engine does not finish it, even when it
// looks again, and another engine's FinishLeftLoad builds the indexes and
// the counts and returns once they are in.
func TestBulkLoadLeftToAnotherProcess(t *testing.T) {
	ctx := context.Background()
	base := pgtest.BaseURL(t)
	schema := pgtest.Schema(t)
	url := pgtest.WithSchema(t, base, schema)
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close(ctx) }()
	loader := openStore(t, url, postgres.Options{})
	if loader.BulkLeft() {
		t.Fatal("a new engine says it left a load")
	}
	loader.LeaveBulkFinish()
	loader.SetBulk(true)
	fillKeywordStore(t, loader, 1100, 7)
	conformance.FillCorpus(t, loader, 150, 8)
	loader.SetBulk(false)
	if !loader.BulkLeft() {
		t.Fatal("the load's engine does not say it left the finish")
	}
	if err := loader.FinishLeftLoad(ctx); err != nil {
		t.Fatal(err)
	}
	if row, idx := bulkState(t, conn, schema); row || len(idx) != 2 {
		// FinishLeftLoad finishes whatever was left, its own engine's too.
		t.Fatalf("after FinishLeftLoad on the loading engine: bulk row %v, indexes %v", row, idx)
	}

	// Again, the finish left to a second engine this time.
	schema2 := pgtest.Schema(t)
	url2 := pgtest.WithSchema(t, base, schema2)
	loader2 := openStore(t, url2, postgres.Options{})
	loader2.LeaveBulkFinish()
	loader2.SetBulk(true)
	fillKeywordStore(t, loader2, 1100, 7)
	conformance.FillCorpus(t, loader2, 150, 8)
	loader2.SetBulk(false)
	if err := loader2.WaitIndex(ctx); err != nil {
		t.Fatal(err)
	}
	if row, idx := bulkState(t, conn, schema2); !row || len(idx) != 0 {
		t.Fatalf("after a load left to another process: bulk row %v, indexes %v; want the row and no index", row, idx)
	}
	everyReadIsExact(t, loader2, conn, schema2, "with the finish left to another process")
	finisher := openStore(t, url2, postgres.Options{})
	if err := finisher.FinishLeftLoad(ctx); err != nil {
		t.Fatal(err)
	}
	if row, idx := bulkState(t, conn, schema2); row || len(idx) != 2 {
		t.Fatalf("after FinishLeftLoad: bulk row %v, indexes %v; want no row and both indexes", row, idx)
	}
	everyReadIsExact(t, finisher, conn, schema2, "after another process finished the load")
	everyReadIsExact(t, loader2, conn, schema2, "through the loading engine after the finish")
	// With nothing left, FinishLeftLoad does nothing.
	if err := finisher.FinishLeftLoad(ctx); err != nil {
		t.Fatal(err)
	}
}

// numberedNotes is n documents "what from", "what from+1", ...
func numberedNotes(what string, from, n int) []contract.StoreItem {
	out := make([]contract.StoreItem, n)
	for i := range out {
		out[i] = contract.Document(fmt.Sprintf("%s %d", what, from+i), contract.MemoryMeta{})
	}
	return out
}

// TestStoreBulkIsOneTransaction: StoreBulk writes up to MaxBulkItems items
// in one transaction (every row has the same xmin), replays what is there,
// and refuses an empty or oversized call and an invalid item.
func TestStoreBulkIsOneTransaction(t *testing.T) {
	ctx := context.Background()
	base := pgtest.BaseURL(t)
	schema := pgtest.Schema(t)
	e := openStore(t, pgtest.WithSchema(t, base, schema), postgres.Options{})
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close(ctx) }()
	items := func(from, n int) []contract.StoreItem { return numberedNotes("bulk note", from, n) }
	if e.BulkItems() != postgres.MaxBulkItems {
		t.Fatalf("BulkItems = %d", e.BulkItems())
	}
	rs, err := e.StoreBulk(ctx, items(0, postgres.MaxBulkItems), contract.WriteOptions{Status: contract.StatusCandidate})
	if err != nil || len(rs) != postgres.MaxBulkItems || rs[0].Replayed {
		t.Fatalf("%d receipts, %v", len(rs), err)
	}
	var rows, transactions int
	if err := conn.QueryRow(ctx, "SELECT count(*), count(DISTINCT xmin::text) FROM "+pgx.Identifier{schema, "records"}.Sanitize()).
		Scan(&rows, &transactions); err != nil {
		t.Fatal(err)
	}
	if rows != postgres.MaxBulkItems || transactions != 1 {
		t.Fatalf("%d rows written by %d transactions, want %d by 1", rows, transactions, postgres.MaxBulkItems)
	}
	again, err := e.StoreBulk(ctx, items(postgres.MaxBulkItems-1, 2), contract.WriteOptions{})
	if err != nil || !again[0].Replayed || again[1].Replayed {
		t.Fatalf("a bulk store over the last record: %+v, %v", again, err)
	}
	for _, c := range []struct {
		items []contract.StoreItem
		want  string
	}{
		{nil, "a bulk store takes between 1 and 2000 items"},
		{items(0, postgres.MaxBulkItems+1), "a bulk store takes between 1 and 2000 items"},
		{[]contract.StoreItem{contract.Document("", contract.MemoryMeta{})}, "document body must not be empty"},
	} {
		_, err := e.StoreBulk(ctx, c.items, contract.WriteOptions{})
		if contract.KindOf(err) != contract.KindInvalidRequest || !strings.Contains(err.Error(), c.want) {
			t.Fatalf("StoreBulk of %d items: %v, want invalid_request naming %q", len(c.items), err, c.want)
		}
	}
}

// TestStartBulkCommitsInTheOrderStarted: batches started one after another
// before any is waited for are each one transaction, committed in the order
// they were started (the change feed lists them so), a batch's replay of an
// item an earlier batch in flight stores is a replay, an invalid batch is
// refused at once, and a batch after a failed one is not written.
func TestStartBulkCommitsInTheOrderStarted(t *testing.T) {
	ctx := context.Background()
	base := pgtest.BaseURL(t)
	schema := pgtest.Schema(t)
	e := openStore(t, pgtest.WithSchema(t, base, schema), postgres.Options{})
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close(ctx) }()
	batch := func(from, n int) []contract.StoreItem { return numberedNotes("piped note", from, n) }
	// Eight batches in flight; the fifth repeats the fourth's last item.
	var waits []func() ([]contract.StoreReceipt, error)
	var want []string
	for b := range 8 {
		items := batch(b*300, 300)
		if b == 4 {
			items[0] = batch(3*300+299, 1)[0]
		}
		waits = append(waits, e.StartBulk(ctx, items, contract.WriteOptions{}))
		for i, it := range items {
			if b == 4 && i == 0 {
				continue
			}
			want = append(want, it.Fingerprint())
		}
	}
	for b, wait := range waits {
		rs, err := wait()
		if err != nil || len(rs) != 300 {
			t.Fatalf("batch %d: %d receipts, %v", b, len(rs), err)
		}
		if replayed := rs[0].Replayed; replayed != (b == 4) {
			t.Fatalf("batch %d: its first item replayed %v", b, replayed)
		}
	}
	var transactions int
	if err := conn.QueryRow(ctx, "SELECT count(DISTINCT xmin::text) FROM "+pgx.Identifier{schema, "records"}.Sanitize()).Scan(&transactions); err != nil {
		t.Fatal(err)
	}
	if transactions != 8 {
		t.Fatalf("the batches were written by %d transactions, want 8", transactions)
	}
	var got []string
	for since := uint64(0); ; {
		page, err := e.Changes(ctx, contract.ChangesRequest{Since: since, Limit: 1000})
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range page.Changes {
			got = append(got, c.ID)
		}
		if len(page.Changes) == 0 {
			break
		}
		since = page.Next
	}
	if !slices.Equal(got, want) {
		t.Fatalf("the feed lists %d stores, want %d in the order they were started", len(got), len(want))
	}

	// An invalid batch is refused before anything is written.
	_, err = e.StartBulk(ctx, []contract.StoreItem{contract.Document("", contract.MemoryMeta{})}, contract.WriteOptions{})()
	if contract.KindOf(err) != contract.KindInvalidRequest {
		t.Fatalf("an invalid batch: %v", err)
	}
	// A batch whose transaction fails (its context ended) takes the one
	// started after it down with it.
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	failed := e.StartBulk(cancelled, batch(10_000, 10), contract.WriteOptions{})
	after := e.StartBulk(ctx, batch(20_000, 10), contract.WriteOptions{})
	if _, err := failed(); err == nil {
		t.Fatal("a batch with its context ended was written")
	}
	if _, err := after(); err == nil {
		t.Fatal("the batch after a failed one was written")
	}
	n, err := e.Len(ctx)
	if err != nil || n != len(want) {
		t.Fatalf("the store holds %d records (%v), want %d", n, err, len(want))
	}
}
