package index

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"mnemo/contract"
)

func openTemp(t testing.TB) (*Index, string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "index")
	ix, err := Open(dir)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { _ = ix.Close() })
	return ix, dir
}

func doc(id, text string) Doc {
	return Doc{ID: id, Kind: contract.KindDocument, Text: text, Status: contract.StatusActive,
		CreatedAt: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), UpdatedAt: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
}

func ids(hits []Scored) []string {
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = h.ID
	}
	return out
}

func TestFreshIndexNeedsRebuildAndReopenKeepsAppliedSeq(t *testing.T) {
	ctx := context.Background()
	ix, dir := openTemp(t)
	if !ix.NeedsRebuild() {
		t.Fatal("a newly created index must ask for a rebuild")
	}
	if seq, err := ix.AppliedSeq(); err != nil || seq != 0 {
		t.Fatalf("AppliedSeq of a fresh index = %d, %v; want 0", seq, err)
	}
	if err := ix.Apply([]Doc{doc("a", "alpha"), doc("b", "beta"), doc("c", "gamma")}, nil, 3); err != nil {
		t.Fatal(err)
	}
	if err := ix.Apply(nil, []string{"b"}, 4); err != nil {
		t.Fatal(err)
	}
	if err := ix.Close(); err != nil {
		t.Fatal(err)
	}

	again, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	if again.NeedsRebuild() {
		t.Fatal("reopening a good index must not ask for a rebuild")
	}
	if seq, err := again.AppliedSeq(); err != nil || seq != 4 {
		t.Fatalf("AppliedSeq after reopen = %d, %v; want 4", seq, err)
	}
	if n, err := again.DocCount(); err != nil || n != 2 {
		t.Fatalf("DocCount after reopen = %d, %v; want 2", n, err)
	}
	hits, err := again.Keyword(ctx, "beta alpha", contract.MetaFilter{}, false, 0, 10, nil)
	total := len(hits)
	if err != nil {
		t.Fatal(err)
	}
	if total != 1 || !slices.Equal(ids(hits), []string{"a"}) {
		t.Fatalf("deleted doc still searchable: %v total %d", ids(hits), total)
	}
}

func TestDeleteAndUpsertOfSameIDInOneBatchKeepsTheUpsert(t *testing.T) {
	ix, _ := openTemp(t)
	if err := ix.Apply([]Doc{doc("a", "old words")}, nil, 1); err != nil {
		t.Fatal(err)
	}
	if err := ix.Apply([]Doc{doc("a", "new words")}, []string{"a"}, 2); err != nil {
		t.Fatal(err)
	}
	hits, err := ix.Keyword(context.Background(), "new", contract.MetaFilter{}, false, 0, 10, nil)
	if err != nil || !slices.Equal(ids(hits), []string{"a"}) {
		t.Fatalf("hits %v, %v; want [a]", ids(hits), err)
	}
	hits, _ = ix.Keyword(context.Background(), "old", contract.MetaFilter{}, false, 0, 10, nil)
	if len(hits) != 0 {
		t.Fatalf("the replaced text is still indexed: %v", ids(hits))
	}
}

func TestMappingVersionMismatchStartsEmpty(t *testing.T) {
	ix, dir := openTemp(t)
	if err := ix.Apply([]Doc{doc("a", "alpha")}, nil, 7); err != nil {
		t.Fatal(err)
	}
	if err := ix.idx.SetInternal([]byte(keyMappingVersion), []byte("mnemo-index-0")); err != nil {
		t.Fatal(err)
	}
	if err := ix.Close(); err != nil {
		t.Fatal(err)
	}
	again, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	assertFreshAndEmpty(t, again)
}

func TestCorruptIndexStartsEmpty(t *testing.T) {
	for name, corrupt := range map[string]func(t *testing.T, dir string){
		"garbage meta": func(t *testing.T, dir string) {
			if err := os.WriteFile(filepath.Join(dir, "index_meta.json"), []byte("{not json"), 0o600); err != nil {
				t.Fatal(err)
			}
		},
		"garbage root": func(t *testing.T, dir string) {
			if err := os.WriteFile(filepath.Join(dir, "store", "root.bolt"), []byte("not a bolt file at all, just words"), 0o600); err != nil {
				t.Fatal(err)
			}
		},
		"plain file": func(t *testing.T, dir string) {
			if err := os.RemoveAll(dir); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(dir, []byte("x"), 0o600); err != nil {
				t.Fatal(err)
			}
		},
	} {
		t.Run(name, func(t *testing.T) {
			ix, dir := openTemp(t)
			if err := ix.Apply([]Doc{doc("a", "alpha")}, nil, 7); err != nil {
				t.Fatal(err)
			}
			if err := ix.Close(); err != nil {
				t.Fatal(err)
			}
			corrupt(t, dir)
			again, err := Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer again.Close()
			assertFreshAndEmpty(t, again)
		})
	}
}

func assertFreshAndEmpty(t *testing.T, ix *Index) {
	t.Helper()
	if !ix.NeedsRebuild() {
		t.Fatal("NeedsRebuild() = false; want true")
	}
	if n, err := ix.DocCount(); err != nil || n != 0 {
		t.Fatalf("DocCount = %d, %v; want 0", n, err)
	}
	if seq, err := ix.AppliedSeq(); err != nil || seq != 0 {
		t.Fatalf("AppliedSeq = %d, %v; want 0", seq, err)
	}
}

func TestBM25RanksTheRareTermFirst(t *testing.T) {
	ix, _ := openTemp(t)
	var docs []Doc
	for i := range 20 {
		docs = append(docs, doc(string(rune('a'+i))+"-common", "the meeting notes about the project plan"))
	}
	docs = append(docs, doc("z-rare", "the meeting notes mention the zeppelin once"))
	if err := ix.Apply(docs, nil, 1); err != nil {
		t.Fatal(err)
	}
	hits, err := ix.Keyword(context.Background(), "meeting zeppelin", contract.MetaFilter{}, false, 0, 3, nil)
	total, _ := ix.Count(context.Background(), contract.MetaFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if total != 21 {
		t.Fatalf("total = %d; want 21 (every doc holds `meeting`)", total)
	}
	if hits[0].ID != "z-rare" || !(hits[0].Score > hits[1].Score) {
		t.Fatalf("hits %+v; want z-rare first with a higher score", hits)
	}
	// Equal scores page by id.
	if hits[1].ID != "a-common" || hits[2].ID != "b-common" {
		t.Fatalf("ties not broken by id: %v", ids(hits))
	}
	page2, err := ix.Keyword(context.Background(), "meeting zeppelin", contract.MetaFilter{}, false, 3, 3, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ids(page2), []string{"c-common", "d-common", "e-common"}) {
		t.Fatalf("page 2 = %v", ids(page2))
	}
}

func TestFilterTermsDoNotChangeScores(t *testing.T) {
	ix, _ := openTemp(t)
	a := doc("a", "river stone")
	a.Meta.Tags = []string{"x"}
	b := doc("b", "river stone river")
	b.Meta.Tags = []string{"x", "y"}
	if err := ix.Apply([]Doc{a, b}, nil, 1); err != nil {
		t.Fatal(err)
	}
	plain, err := ix.Keyword(context.Background(), "river", contract.MetaFilter{}, false, 0, 10, nil)
	if err != nil {
		t.Fatal(err)
	}
	filtered, err := ix.Keyword(context.Background(), "river", contract.MetaFilter{TagsAny: []string{"x", "y"}}, false, 0, 10, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(plain, filtered) {
		t.Fatalf("a filter changed the ranking: %+v vs %+v", plain, filtered)
	}
}

func TestUnicodeTextIsSearchable(t *testing.T) {
	ix, _ := openTemp(t)
	docs := []Doc{
		doc("cyr", "Большой ЖУК сидит на траве"),
		doc("de", "Die Straße in München ist schön"),
		doc("ja", "東京 の 天気 は 晴れ"),
		doc("fr", "Café crème à la française"),
		doc("plain", "nothing special here"),
	}
	if err := ix.Apply(docs, nil, 1); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ query, want string }{
		{"жук", "cyr"},
		{"ЖУК", "cyr"},
		{"müNCHEN", "de"},
		{"munchen", "de"},
		{"東京", "ja"},
		{"晴れ", "ja"},
		{"cafe", "fr"},
		{"CRÈME", "fr"},
	} {
		hits, err := ix.Keyword(context.Background(), tc.query, contract.MetaFilter{}, false, 0, 10, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(ids(hits), []string{tc.want}) {
			t.Errorf("Keyword(%q) = %v; want [%s]", tc.query, ids(hits), tc.want)
		}
	}
}

func TestRankedReadsSeeOnlyActiveRecords(t *testing.T) {
	ix, _ := openTemp(t)
	cand := doc("cand", "shared word")
	cand.Status = contract.StatusCandidate
	old := doc("old", "shared word")
	old.Status = contract.StatusSuperseded
	unset := doc("unset", "shared word")
	unset.Status = ""
	if err := ix.Apply([]Doc{doc("act", "shared word"), cand, old, unset}, nil, 1); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	hits, _ := ix.Keyword(ctx, "shared", contract.MetaFilter{}, true, 0, 10, nil)
	if !slices.Equal(ids(hits), []string{"act", "unset"}) {
		t.Fatalf("ranked hits %v; want [act unset]", ids(hits))
	}
	hits, _ = ix.Keyword(ctx, "shared", contract.MetaFilter{}, false, 0, 10, nil)
	if len(hits) != 4 {
		t.Fatalf("unranked hits %v; want all four", ids(hits))
	}
	hits, _ = ix.Keyword(ctx, "shared", contract.MetaFilter{Statuses: []contract.Status{contract.StatusCandidate}}, true, 0, 10, nil)
	if !slices.Equal(ids(hits), []string{"cand"}) {
		t.Fatalf("statuses=[candidate] hits %v; want [cand]", ids(hits))
	}
	if n, err := ix.Count(ctx, contract.MetaFilter{Statuses: []contract.Status{contract.StatusActive}}); err != nil || n != 2 {
		t.Fatalf("active count %d, %v; want 2", n, err)
	}
}

func TestQueryWithoutTermsMatchesNothing(t *testing.T) {
	ix, _ := openTemp(t)
	if err := ix.Apply([]Doc{doc("a", "alpha")}, nil, 1); err != nil {
		t.Fatal(err)
	}
	hits, err := ix.Keyword(context.Background(), " ,.; ", contract.MetaFilter{}, false, 0, 10, nil)
	if err != nil || len(hits) != 0 {
		t.Fatalf("punctuation query = %v, %v; want nothing", ids(hits), err)
	}
}

func TestCancelledContextStopsSearch(t *testing.T) {
	ix, _ := openTemp(t)
	if err := ix.Apply([]Doc{doc("a", "alpha")}, nil, 1); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := ix.Keyword(ctx, "alpha", contract.MetaFilter{}, false, 0, 10, nil); err == nil {
		t.Fatal("a cancelled context must fail the search")
	}
}

func TestOpenWhileInUseFailsWithoutTouchingTheIndex(t *testing.T) {
	ix, dir := openTemp(t)
	if err := ix.Apply([]Doc{doc("a", "alpha")}, nil, 5); err != nil {
		t.Fatal(err)
	}
	second, err := Open(dir)
	if err == nil {
		_ = second.Close()
		t.Fatal("a second Open of a live index must fail")
	}
	if !strings.Contains(err.Error(), "in use") {
		t.Fatalf("second Open failed for another reason: %v", err)
	}
	if n, err := ix.DocCount(); err != nil || n != 1 {
		t.Fatalf("the live index lost data: DocCount = %d, %v", n, err)
	}
	if seq, err := ix.AppliedSeq(); err != nil || seq != 5 {
		t.Fatalf("the live index lost applied_seq: %d, %v", seq, err)
	}
}

// TestKeywordPagesFollowScoreThenID pages through corpora with and without
// tied scores and checks every page against the full (score desc, id asc)
// order.
func TestKeywordPagesFollowScoreThenID(t *testing.T) {
	ctx := context.Background()
	ix, _ := openTemp(t)
	var docs []Doc
	for i := range 40 {
		// Varying lengths and repeats give mostly distinct scores; every
		// fifth doc repeats an earlier text exactly, so ties exist too.
		text := strings.Repeat("lantern ", 1+i%7) + strings.Repeat("filler words here ", i%5)
		if i%5 == 4 {
			text = docs[i-4].Text
		}
		docs = append(docs, doc(fmt.Sprintf("d%02d", (i*17)%40), text))
	}
	if err := ix.Apply(docs, nil, 1); err != nil {
		t.Fatal(err)
	}
	all, err := ix.Keyword(ctx, "lantern", contract.MetaFilter{}, false, 0, 100, nil)
	total := len(all)
	if err != nil || total != 40 || len(all) != 40 {
		t.Fatalf("full ranking: %d hits, total %d, %v", len(all), total, err)
	}
	want := slices.Clone(all)
	slices.SortStableFunc(want, func(a, b Scored) int {
		if a.Score != b.Score {
			if a.Score > b.Score {
				return -1
			}
			return 1
		}
		return strings.Compare(a.ID, b.ID)
	})
	if !slices.Equal(all, want) {
		t.Fatalf("full ranking is not (score desc, id asc):\n%v", all)
	}
	for size := 1; size <= 12; size++ {
		for offset := 0; offset <= 41; offset++ {
			page, err := ix.Keyword(ctx, "lantern", contract.MetaFilter{}, false, offset, size, nil)
			if err != nil {
				t.Fatal(err)
			}
			exp := want[min(offset, 40):min(offset+size, 40)]
			if !slices.Equal(page, exp) {
				t.Fatalf("page offset %d size %d = %v; want %v", offset, size, page, exp)
			}
		}
	}
}

// A single 1 MB token (a blob pasted into a memory) is indexed in moments,
// not the minutes the stemmer took over it, and found by its own prefix-free
// whole term.
func TestAHugeTokenIsIndexedPromptly(t *testing.T) {
	ix, _ := openTemp(t)
	blob := strings.Repeat("qz", 512*1024)
	done := make(chan error, 1)
	go func() {
		done <- ix.Apply([]Doc{{ID: strings.Repeat("b", 40), Kind: contract.KindDocument, Text: blob + " tail words"}}, nil, 1)
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("indexing a 1 MB token did not finish in 30 s")
	}
	hits, err := ix.Keyword(context.Background(), "tail", contract.MetaFilter{}, false, 0, 5, nil)
	if err != nil || len(hits) != 1 {
		t.Fatalf("the record with the blob: %v %v", hits, err)
	}
}
