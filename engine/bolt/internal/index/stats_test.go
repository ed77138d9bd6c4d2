package index

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"mnemo/contract"
)

// analysedLength is what the text analysis makes of text, counted by hand.
func analysedLength(t *testing.T, text string) uint64 {
	t.Helper()
	a, err := newTextAnalysis()
	if err != nil {
		t.Fatal(err)
	}
	return uint64(len(a.Analyze([]byte(text))))
}

func wantStats(t *testing.T, ix *Index, texts map[string]string) {
	t.Helper()
	var want bm25Stats
	for _, text := range texts {
		want.Docs++
		want.Tokens += analysedLength(t, text)
	}
	ix.statsMu.RLock()
	got := ix.stats
	ix.statsMu.RUnlock()
	if got != want {
		t.Fatalf("bm25 statistics %+v, want %+v", got, want)
	}
	if n, err := ix.DocCount(); err != nil || n != want.Docs {
		t.Fatalf("DocCount %d, %v; statistics count %d", n, err, want.Docs)
	}
}

// TestBM25StatisticsFollowEveryChange: the running sums equal the sums over
// what the index holds after inserts, replacements, deletes (also of absent
// ids), replays of a batch, many small batches that scorch merges, and a
// reopen.
func TestBM25StatisticsFollowEveryChange(t *testing.T) {
	ix, dir := openTemp(t)
	held := map[string]string{}
	apply := func(docs []Doc, deletes []string, seq uint64) {
		t.Helper()
		if err := ix.Apply(docs, deletes, seq); err != nil {
			t.Fatal(err)
		}
		for _, id := range deletes {
			delete(held, id)
		}
		for _, d := range docs {
			held[d.ID] = d.Text
		}
		wantStats(t, ix, held)
	}
	wantStats(t, ix, held)
	batch := []Doc{doc("a", "alpha beta gamma"), doc("b", "the quick brown fox jumps"), doc("c", "aiohttp.web serves go's http")}
	apply(batch, nil, 1)
	apply(batch, nil, 2) // replay: nothing changes
	apply([]Doc{doc("a", "alpha, now a much longer text than it was before")}, nil, 3)
	apply(nil, []string{"b", "nope"}, 4)
	apply([]Doc{doc("b", "back again")}, []string{"b"}, 5) // delete then upsert in one batch
	for i := range 40 {                                    // small batches: segments merge
		apply([]Doc{doc(fmt.Sprintf("m%02d", i), fmt.Sprintf("merge filler number %d of many", i))}, nil, uint64(6+i))
	}
	for i := range 20 {
		apply(nil, []string{fmt.Sprintf("m%02d", i*2)}, uint64(50+i))
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
		t.Fatal("a good index with statistics must not ask for a rebuild")
	}
	wantStats(t, again, held)
}

// TestIndexWithoutStatisticsIsRebuilt: documents without statistics (an
// index from before they were kept) cannot be scored right, so Open starts
// over.
func TestIndexWithoutStatisticsIsRebuilt(t *testing.T) {
	ix, dir := openTemp(t)
	if err := ix.Apply([]Doc{doc("a", "alpha")}, nil, 1); err != nil {
		t.Fatal(err)
	}
	if err := ix.idx.DeleteInternal([]byte(keyBM25Stats)); err != nil {
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

// TestLongDocumentsAreNotPenalisedByAWrongAverage: with the real average
// length, a document that repeats the query's words in a long text beats a
// short one that mentions one of them once. Bleve's own average (distinct
// terms per segment over documents, a few tokens here) ranked it last.
func TestLongDocumentsAreNotPenalisedByAWrongAverage(t *testing.T) {
	ix, _ := openTemp(t)
	filler := func(n int) string {
		s := ""
		for i := range n {
			s += fmt.Sprintf(" word%d", i%7)
		}
		return s
	}
	docs := []Doc{
		doc("long", "the bridge tolls rose; bridge tolls are paid at the bridge"+filler(40)),
		doc("short", "bridge"+filler(3)),
	}
	for i := range 30 {
		docs = append(docs, doc(fmt.Sprintf("other%d", i), filler(30+i)))
	}
	if err := ix.Apply(docs, nil, 1); err != nil {
		t.Fatal(err)
	}
	hits, err := ix.Keyword(context.Background(), "bridge tolls", contract.MetaFilter{}, false, 0, 10, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(hits); !slices.Equal(got, []string{"long", "short"}) {
		t.Fatalf("ranking %v, want [long short]", got)
	}
}

// TestIdentifiersStillFindTheirRecords: English analysis (stemming,
// possessives, stop words) and identifier parts must not lose exact names.
func TestIdentifiersStillFindTheirRecords(t *testing.T) {
	ix, _ := openTemp(t)
	docs := []Doc{
		doc("cpp", "Modern C++ move semantics and templates"),
		doc("csharp", "C# records and pattern matching"),
		doc("deb", "install libfoo-dev before building the bindings"),
		doc("dev", "the dev server restarts on every change"),
		doc("aio", "serve the API with aiohttp.web and an app runner"),
		doc("web", "the web team ships a new landing page"),
		doc("gos", "go's scheduler parks idle goroutines"),
		doc("going", "going to the shops, then going home"),
		doc("id", "deploy failed, see incident 7f3a9c1e-42b0-4d8e-9a55-0c6e1d2b3a4f"),
		doc("path", "the bug is in engine/bolt/search.go near rankVector"),
		doc("search", "search engines rank pages"),
		doc("who", "The Who played at the festival"),
		doc("stem", "the indexer was rebuilding indexes after crashes"),
	}
	if err := ix.Apply(docs, nil, 1); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		query string
		want  string
		top   int
	}{
		{"C++", "cpp", 2}, // "c" is all the segmenter keeps, as for C#
		{"libfoo-dev", "deb", 1},
		{"aiohttp.web", "aio", 1},
		{"aiohttp", "aio", 1},
		{"go's", "gos", 2}, // "going" stems to "go" too
		{"go", "gos", 2},
		{"7f3a9c1e-42b0-4d8e-9a55-0c6e1d2b3a4f", "id", 1},
		{"7f3a9c1e", "id", 1},
		{"engine/bolt/search.go", "path", 1},
		{"search.go", "path", 1},
		{"rankVector", "path", 1},
		{"the who", "who", 1}, // stop words alone still search
		{"rebuild index crash", "stem", 1},
	} {
		hits, err := ix.Keyword(context.Background(), c.query, contract.MetaFilter{}, false, 0, c.top, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Contains(ids(hits), c.want) {
			t.Errorf("%q: top %d %v lacks %s", c.query, c.top, ids(hits), c.want)
		}
	}
}

// TestKeywordOrderDoesNotDependOnSegments: two indexes of the same documents,
// built in one batch and in many (other segments, other merges), rank every
// query alike, and documents of equal text tie and follow their ids, even
// for long queries whose term scores Bleve adds in a segment-dependent order.
func TestKeywordOrderDoesNotDependOnSegments(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 9))
	vocab := make([]string, 300)
	for i := range vocab {
		vocab[i] = fmt.Sprintf("w%03d", i)
	}
	words := func(n int) string {
		var b strings.Builder
		for range n {
			b.WriteString(vocab[int(float64(len(vocab))*r.Float64()*r.Float64())] + " ")
		}
		return b.String()
	}
	var docs []Doc
	for i := range 400 {
		text := words(20 + r.IntN(60))
		docs = append(docs, doc(fmt.Sprintf("d%03d", i), text))
		if i%10 == 0 { // an exact duplicate under another id
			docs = append(docs, doc(fmt.Sprintf("d%03d-copy", i), text))
		}
	}
	one, _ := openTemp(t)
	if err := one.Apply(docs, nil, 1); err != nil {
		t.Fatal(err)
	}
	many, _ := openTemp(t)
	for lo := 0; lo < len(docs); lo += 7 {
		if err := many.Apply(docs[lo:min(lo+7, len(docs))], nil, uint64(lo+1)); err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()
	for q := range 60 {
		query := words(14)
		a, err := one.Keyword(ctx, query, contract.MetaFilter{}, false, 0, 10, nil)
		if err != nil {
			t.Fatal(err)
		}
		b, err := many.Keyword(ctx, query, contract.MetaFilter{}, false, 0, 10, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(a, b) {
			t.Fatalf("query %d %q:\none batch   %v\nmany batches %v", q, query, a, b)
		}
		for i := 1; i < len(a); i++ {
			if a[i].Score == a[i-1].Score && a[i].ID < a[i-1].ID {
				t.Fatalf("query %d: tie not ordered by id: %v", q, a)
			}
		}
	}
}
