package index

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/search/query"

	"mnemo/contract"
)

// TestFilteredTextScoresAsTheBooleanQuery: the keyword query's text within
// its filter (filteredText) finds the documents, with the scores to the
// bit, that Bleve's BooleanQuery of the same clauses and filter finds, for
// queries of one to three words (some common, some rare, some repeated)
// within filters of tag, kind and status, over several segments.
func TestFilteredTextScoresAsTheBooleanQuery(t *testing.T) {
	ctx := context.Background()
	ix, _ := openTemp(t)
	r := rand.New(rand.NewPCG(29, 2))
	vocab := []string{"alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa", "lambda", "mu"}
	word := func() string { return vocab[min(r.IntN(len(vocab)), r.IntN(len(vocab)))] }
	kinds := []contract.ItemKind{contract.KindDocument, contract.KindLearning}
	statuses := []contract.Status{contract.StatusActive, contract.StatusCandidate, contract.StatusSuperseded}
	n := 0
	for batch := range 4 {
		var docs []Doc
		for range 150 {
			words := make([]string, 3+r.IntN(12))
			for i := range words {
				words[i] = word()
			}
			d := doc(fmt.Sprintf("d%04d", n), strings.Join(words, " "))
			d.Kind = kinds[r.IntN(len(kinds))]
			d.Status = statuses[r.IntN(len(statuses))]
			d.Meta.Namespace = contract.MustNamespace(fmt.Sprintf("team:t%d", r.IntN(3)))
			d.Meta.Tags = []string{fmt.Sprintf("tag%d", r.IntN(3))}
			docs = append(docs, d)
			n++
		}
		if err := ix.Apply(docs, nil, uint64(batch+1)); err != nil {
			t.Fatal(err)
		}
	}
	filters := []struct {
		f      contract.MetaFilter
		ranked bool
	}{
		{contract.MetaFilter{}, true},
		{contract.MetaFilter{}, false},
		{contract.MetaFilter{TagsAny: []string{"tag1"}}, true},
		{contract.MetaFilter{Kinds: []contract.ItemKind{contract.KindLearning}, Statuses: []contract.Status{contract.StatusCandidate, contract.StatusSuperseded}}, false},
	}
	all := func(q query.Query) []string {
		t.Helper()
		req := bleve.NewSearchRequestOptions(q, 10000, 0, false)
		req.SortBy([]string{"-_score", "_id"})
		req.PreSearchData = ix.preSearch()
		res, err := ix.idx.SearchInContext(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		out := make([]string, len(res.Hits))
		for i, h := range res.Hits {
			out[i] = fmt.Sprintf("%s %b", h.ID, h.Score)
		}
		return out
	}
	compared := 0
	for _, fc := range filters {
		if NeedsResidual(fc.f) {
			t.Fatalf("filter %+v needs a residual", fc.f)
		}
		for range 15 {
			words := make([]string, 1+r.IntN(3))
			for i := range words {
				words[i] = word()
			}
			if r.IntN(4) == 0 {
				words = append(words, "nothingmatchesthis")
			}
			terms := ix.build.text.queryTerms(strings.Join(words, " "))
			if len(terms) == 0 {
				continue
			}
			held := filterQuery(fc.f, fc.ranked)
			bq := query.NewBooleanQuery(nil, termClauses(terms), nil)
			bq.AddFilter(held)
			want := all(bq)
			got := all(&filteredText{clauses: termClauses(terms), filter: held})
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Fatalf("%q in %+v: filteredText found %d hits, the boolean query %d\n%v\n%v", words, fc.f, len(got), len(want), got, want)
			}
			compared += len(want)
		}
	}
	if compared < 500 {
		t.Fatalf("only %d hits compared", compared)
	}
}
