package postgres_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"mnemo/contract"
	"mnemo/engine/postgres"
	"mnemo/engine/postgres/pgtest"
)

// keywordWords is the fixture's vocabulary: few words, so that records hold
// a word several times and several query words at once.
var keywordWords = []string{"amber", "birch", "cedar", "delta", "ember", "fjord", "gale", "heron", "iris", "juniper"}

// fillKeywordStore stores n documents of 1 to 14 words drawn from
// keywordWords (plus a word of their own), some candidates, some in a
// service sandbox, some under a team.
func fillKeywordStore(t *testing.T, e contract.Engine, n int, seed uint64) {
	t.Helper()
	ctx := context.Background()
	r := rand.New(rand.NewPCG(seed, 11))
	nss := []contract.Namespace{contract.Root(), contract.MustNamespace("team:acme"), contract.MustNamespace("team:acme/service:digest")}
	for i := 0; i < n; {
		var batch []contract.StoreItem
		status := contract.StatusActive
		if r.IntN(4) == 0 {
			status = contract.StatusCandidate
		}
		for k := 0; k < 1+r.IntN(30) && i < n; k++ {
			words := []string{fmt.Sprintf("own%d", i)}
			for range 1 + r.IntN(14) {
				// Skewed, so the first words repeat often.
				words = append(words, keywordWords[min(r.IntN(len(keywordWords)), r.IntN(len(keywordWords)))])
			}
			batch = append(batch, contract.Document(strings.Join(words, " "), contract.MemoryMeta{Namespace: nss[r.IntN(len(nss))]}))
			i++
		}
		if _, err := e.StoreManyWith(ctx, batch, contract.WriteOptions{Status: status}); err != nil {
			t.Fatal(err)
		}
	}
}

// rankedIDs is the keyword ranking as one statement ranking every match
// would give it: ts_rank descending, then id, with the filter's reach (the
// root) and statuses.
func rankedIDs(t *testing.T, conn *pgx.Conn, schema string, words []string, statuses []string) []string {
	t.Helper()
	var lex []string
	for _, w := range words {
		lex = append(lex, "'"+w+"'")
	}
	if len(statuses) == 0 {
		statuses = []string{"active"}
	}
	rs, err := conn.Query(context.Background(), "SELECT id FROM "+pgx.Identifier{schema, "records"}.Sanitize()+
		" WHERE tsv @@ $1::tsquery AND last_svc < 0 AND status = ANY($2) ORDER BY ts_rank(tsv, $1::tsquery) DESC, id",
		strings.Join(lex, " | "), statuses)
	if err != nil {
		t.Fatal(err)
	}
	ids, err := pgx.CollectRows(rs, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	return ids
}

// fetchedIDs pages through the engine's keyword ranking, limit at a time.
func fetchedIDs(t *testing.T, e contract.Engine, query string, statuses []contract.Status, limit int) []string {
	t.Helper()
	var ids []string
	var cursor *string
	for {
		page, err := e.Fetch(context.Background(), contract.FetchRequest{Query: query, Mode: contract.ModeKeyword, Limit: limit,
			Cursor: cursor, Filter: contract.MetaFilter{Statuses: statuses}})
		if err != nil {
			t.Fatal(err)
		}
		for i, h := range page.Hits {
			ids = append(ids, h.ID)
			if i > 0 && h.Score > page.Hits[i-1].Score {
				t.Fatalf("%q: scores rise within a page: %v", query, page.Hits)
			}
		}
		if page.NextCursor == nil {
			return ids
		}
		cursor = page.NextCursor
	}
}

// keywordMatchesFullRanking checks, for single words, pairs and triples,
// with and without candidates, at several page sizes, that the engine's
// ranking is the one ranking every match gives.
func keywordMatchesFullRanking(t *testing.T, e contract.Engine, conn *pgx.Conn, schema, when string) {
	t.Helper()
	queries := [][]string{{"amber"}, {"juniper"}, {"iris"}, {"amber", "birch"}, {"heron", "juniper"}, {"gale", "iris", "cedar"},
		{"amber", "birch", "cedar", "delta", "ember", "fjord", "gale", "heron", "iris"}, {"own7"}, {"own7", "juniper"}, {"nothing"}}
	for _, words := range queries {
		for _, st := range [][]contract.Status{nil, {contract.StatusActive, contract.StatusCandidate}} {
			want := rankedIDs(t, conn, schema, words, strs(st))
			for _, limit := range []int{2, 50} {
				got := fetchedIDs(t, e, strings.Join(words, " "), st, limit)
				if strings.Join(got, ",") != strings.Join(want, ",") {
					t.Fatalf("%s: %q statuses %v limit %d:\n got %d %v\nwant %d %v", when, words, st, limit, len(got), got, len(want), want)
				}
			}
		}
	}
}

func strs(st []contract.Status) []string {
	var out []string
	for _, s := range st {
		out = append(out, string(s))
	}
	return out
}

// TestKeywordRankingIsExact: the two-stage ranking (repeat markers and pairs
// first, single occurrences in id order after) gives exactly the ranking of
// every match, page by page, through writes, approvals and forgets.
func TestKeywordRankingIsExact(t *testing.T) {
	ctx := context.Background()
	base := pgtest.BaseURL(t)
	schema := pgtest.Schema(t)
	e := openStore(t, pgtest.WithSchema(t, base, schema), postgres.Options{})
	fillKeywordStore(t, e, 600, 3)
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close(ctx) }()
	keywordMatchesFullRanking(t, e, conn, schema, "after the load")

	// A forget leaves no ghost in the ranking, an approval joins it.
	hits, err := e.Fetch(ctx, contract.FetchRequest{Query: "amber", Mode: contract.ModeKeyword, Limit: 5})
	if err != nil {
		t.Fatal(err)
	}
	var gone []string
	for _, h := range hits.Hits {
		gone = append(gone, h.ID)
	}
	if _, err := e.Forget(ctx, contract.ForgetTarget{IDs: gone}); err != nil {
		t.Fatal(err)
	}
	page, err := e.Browse(ctx, contract.BrowseQuery{Status: []contract.Status{contract.StatusCandidate}, Limit: 20})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range page.Records {
		if _, err := e.Review(ctx, contract.ReviewRequest{ID: r.ID, Action: contract.ReviewApprove}); err != nil {
			t.Fatal(err)
		}
	}
	keywordMatchesFullRanking(t, e, conn, schema, "after forgets and approvals")
	for _, id := range gone {
		for _, words := range [][]string{{"amber"}, {"amber", "birch"}} {
			for _, got := range fetchedIDs(t, e, strings.Join(words, " "), nil, 50) {
				if got == id {
					t.Fatalf("forgotten %s is still ranked for %q", id, words)
				}
			}
		}
	}
}

// TestKeywordMarksOfAStepSevenStore: a store at schema version 7 (no repeat
// markers) ranks exactly before its rows are marked, while the backfill
// marks them, and after.
func TestKeywordMarksOfAStepSevenStore(t *testing.T) {
	ctx := context.Background()
	base := pgtest.BaseURL(t)
	schema := pgtest.Schema(t)
	url := pgtest.WithSchema(t, base, schema)
	e := openStore(t, url, postgres.Options{})
	fillKeywordStore(t, e, 1500, 5)
	_ = e.Close()
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close(ctx) }()
	records := pgx.Identifier{schema, "records"}.Sanitize()
	for _, sql := range []string{
		// What step 7 held: no kw column, no markers in the tsvectors, the
		// status index.
		"ALTER TABLE " + records + " DROP COLUMN kw",
		"CREATE INDEX records_status ON " + records + " (status)",
		"UPDATE " + records + " SET tsv = ts_delete(tsv, ARRAY(SELECT u.lexeme FROM unnest(tsv) u WHERE u.lexeme LIKE '%+' OR u.lexeme LIKE '#%'))",
		"UPDATE " + pgx.Identifier{schema, "mnemo_meta"}.Sanitize() + " SET value = '7' WHERE key = 'schema_version'",
	} {
		if _, err := conn.Exec(ctx, sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	var marked int
	if err := conn.QueryRow(ctx, "SELECT count(*) FROM "+records+", unnest(tsv) u WHERE u.lexeme LIKE '%+'").Scan(&marked); err != nil || marked != 0 {
		t.Fatalf("markers left in the step-7 store: %d, %v", marked, err)
	}
	e = openStore(t, url, postgres.Options{})
	keywordMatchesFullRanking(t, e, conn, schema, "right after the migration")
	fillKeywordStore(t, e, 100, 6)
	deadline := time.Now().Add(30 * time.Second)
	for {
		var left int
		if err := conn.QueryRow(ctx, "SELECT count(*) FROM "+records+" WHERE kw IS NULL").Scan(&left); err != nil {
			t.Fatal(err)
		}
		if left == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d rows still without markers", left)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err := conn.QueryRow(ctx, "SELECT count(*) FROM "+records+", unnest(tsv) u WHERE u.lexeme LIKE '%+'").Scan(&marked); err != nil || marked == 0 {
		t.Fatalf("no markers after the backfill: %d, %v", marked, err)
	}
	keywordMatchesFullRanking(t, e, conn, schema, "after the backfill")
}
