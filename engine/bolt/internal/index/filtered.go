package index

import (
	"context"
	"math"

	"github.com/blevesearch/bleve/v2/mapping"
	"github.com/blevesearch/bleve/v2/search"
	"github.com/blevesearch/bleve/v2/search/query"
	"github.com/blevesearch/bleve/v2/search/searcher"
	index "github.com/blevesearch/bleve_index_api"
)

// filteredText is a keyword query's text clauses (any of them) within a
// filter, scored as Bleve's BooleanQuery of the clauses as its should part
// and the filter as its filter scores them, without the boolean searcher
// that query puts between them. With no must part, that searcher only
// passes its should part's hits on, each score summed alone (the same
// value), at a cost per hit; a query of one term also skips the
// disjunction of one (whose score is that term's times a coordination of
// 1). A common word's query scores tens of thousands of documents at 1M,
// so what is paid per hit is most of its time. TestFilteredTextScoresAsTheBooleanQuery
// checks the hits and scores are the same.
type filteredText struct {
	clauses []query.Query
	filter  query.Query
}

func (q *filteredText) Searcher(ctx context.Context, i index.IndexReader, m mapping.IndexMapping, options search.SearcherOptions) (search.Searcher, error) {
	var text search.Searcher
	var err error
	if len(q.clauses) == 1 {
		text, err = q.clauses[0].Searcher(ctx, i, m, options)
	} else {
		text, err = query.NewDisjunctionQuery(q.clauses).Searcher(ctx, i, m, options)
	}
	if err != nil {
		return nil, err
	}
	// The norm the boolean searcher gives its should part, which passes it
	// on to the terms: the same scores to the bit.
	text.SetQueryNorm(1.0 / math.Sqrt(0.0+text.Weight()))
	if q.filter == nil {
		return text, nil
	}
	// The filter as BooleanQuery runs it: unscored, advanced to each hit.
	fs, err := q.filter.Searcher(ctx, i, m, search.SearcherOptions{Score: "none"})
	if err != nil {
		_ = text.Close()
		return nil, err
	}
	var started bool
	var at *search.DocumentMatch
	admit := func(sctx *search.SearchContext, d *search.DocumentMatch) bool {
		var ferr error
		if !started {
			started = true
			if at, ferr = fs.Next(sctx); ferr != nil {
				return false
			}
		}
		if at == nil {
			return false
		}
		if at.IndexInternalID.Compare(d.IndexInternalID) < 0 {
			sctx.DocumentMatchPool.Put(at)
			if at, ferr = fs.Advance(sctx, d.IndexInternalID); ferr != nil || at == nil {
				return false
			}
		}
		return at.IndexInternalID.Compare(d.IndexInternalID) == 0
	}
	return searcher.NewFilteringSearcher(ctx, &closeBoth{text, fs}, admit), nil
}

// closeBoth is a searcher that also closes the filter's searcher.
type closeBoth struct {
	search.Searcher
	filter search.Searcher
}

func (c *closeBoth) Close() error {
	err := c.Searcher.Close()
	if ferr := c.filter.Close(); err == nil {
		err = ferr
	}
	return err
}
