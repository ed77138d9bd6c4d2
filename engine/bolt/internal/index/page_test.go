package index

import (
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/blevesearch/bleve/v2"

	"mnemo/contract"
	"mnemo/engine/bolt/internal/idkey"
)

// TestKeywordPagesEqualTheFullRanking: over documents whose scores tie in
// long runs (short texts of few words, many of the same length), spread
// over segments whose numbering is not the ids' order, every page of
// Keyword, at every offset and several sizes, with and without a filter,
// is the same slice of the full ranking: every match, by (score desc, id
// asc), as Bleve lists them all. The page keeps the best by score in one
// pass and reads ids only for the documents it keeps or whose score ties
// its worst, so a tie crossing the page's end is where it could go wrong.
func TestKeywordPagesEqualTheFullRanking(t *testing.T) {
	ctx := context.Background()
	ix, _ := openTemp(t)
	r := rand.New(rand.NewPCG(41, 3))
	vocab := []string{"lamp", "stone", "river", "cloud", "ember", "frost"}
	kinds := []contract.ItemKind{contract.KindDocument, contract.KindLearning}
	n := 0
	for batch := range 5 {
		var docs []Doc
		for range 120 {
			words := make([]string, 2+r.IntN(4))
			for i := range words {
				words[i] = vocab[min(r.IntN(len(vocab)), r.IntN(len(vocab)))]
			}
			// Ids in an order unrelated to the documents' numbers.
			d := doc(fmt.Sprintf("d%04d", (n*7919)%10007), strings.Join(words, " "))
			d.Kind = kinds[r.IntN(len(kinds))]
			docs = append(docs, d)
			n++
		}
		if err := ix.Apply(docs, nil, uint64(batch+1)); err != nil {
			t.Fatal(err)
		}
	}
	filters := []contract.MetaFilter{{}, {Kinds: []contract.ItemKind{contract.KindLearning}}}
	for _, q := range []string{"lamp", "frost", "lamp river", "ember frost stone", "absent"} {
		for _, f := range filters {
			// The full ranking: every match, as Bleve's own collector
			// lists them, ordered here.
			full, err := bleveRanking(ctx, ix, q, f)
			if err != nil {
				t.Fatal(err)
			}
			ties := 0
			for i := 1; i < len(full); i++ {
				if full[i].Score == full[i-1].Score {
					ties++
				}
			}
			if q != "absent" && ties < len(full)/2 {
				t.Fatalf("%q: only %d of %d hits tie their predecessor; the test needs long ties", q, ties, len(full))
			}
			for _, size := range []int{1, 3, 10, 25} {
				for offset := 0; offset <= len(full); offset += 1 + offset/10 {
					page, err := ix.Keyword(ctx, q, f, true, offset, size, nil)
					if err != nil {
						t.Fatal(err)
					}
					exp := full[min(offset, len(full)):min(offset+size, len(full))]
					if !slices.Equal(page, exp) {
						t.Fatalf("%q %+v offset %d size %d:\n got %v\nwant %v", q, f, offset, size, page, exp)
					}
				}
			}
		}
	}
}

// bleveRanking is every document Keyword's query matches, from Bleve's own
// top-N collector, by (settled score desc, id asc).
func bleveRanking(ctx context.Context, ix *Index, q string, f contract.MetaFilter) ([]Scored, error) {
	terms := ix.build.text.queryTerms(q)
	if len(terms) == 0 {
		return nil, nil
	}
	req := bleve.NewSearchRequestOptions(&filteredText{clauses: termClauses(terms), filter: filterQuery(f, true)}, 100000, 0, false)
	req.SortBy([]string{"-_score"})
	req.PreSearchData = ix.preSearch()
	res, err := ix.idx.SearchInContext(ctx, req)
	if err != nil {
		return nil, err
	}
	out := make([]Scored, len(res.Hits))
	for i, h := range res.Hits {
		out[i] = Scored{ID: idkey.ID(h.ID), Score: settle(h.Score)}
	}
	slices.SortFunc(out, func(a, b Scored) int {
		if c := cmp.Compare(b.Score, a.Score); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return out, nil
}
