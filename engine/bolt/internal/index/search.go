package index

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/search"
	"github.com/blevesearch/bleve/v2/search/query"

	"mnemo/contract"
)

// Keyword ranks the documents matching f by BM25 over their text for query
// (analysed by textAnalysis.queryTerms; every query term optional; scored
// with the index's own statistics, see stats.go), best first with ties by id ascending so pages
// are stable, and returns the page [offset, offset+size) and the number of
// matching documents. ranked applies the statuses rule of fetch and recall
// (only active records unless f names statuses). A query without a single
// searchable term matches nothing.
func (ix *Index) Keyword(ctx context.Context, q string, f contract.MetaFilter, ranked bool, offset, size int) ([]Scored, uint64, error) {
	if offset < 0 || size < 0 {
		return nil, 0, fmt.Errorf("keyword page [%d, +%d) is negative", offset, size)
	}
	terms := ix.build.text.queryTerms(q)
	if len(terms) == 0 {
		return nil, 0, nil
	}
	clauses := make([]query.Query, len(terms))
	for i, t := range terms {
		tq := query.NewTermQuery(t.term)
		tq.SetField(fieldText)
		tq.SetBoost(float64(t.count))
		clauses[i] = tq
	}
	bq := query.NewBooleanQuery(nil, clauses, nil)
	bq.AddFilter(filterQuery(f, ranked))
	pre := ix.preSearch()

	// Ordering by id needs every candidate's external id, a measured ~11% of
	// a query. So first rank by score alone, one hit past the page: when
	// the last hit fetched scores below the page's last, no tie crosses the
	// page's end, the top offset+size set is exact, and sorting it by
	// (score desc, id) gives the exact page. Scores are settled first
	// (settle): Bleve sums a document's term scores in an order that
	// depends on the segment layout, so two documents of equal text can
	// differ in the last bit from one search to the next, and a tie between
	// them would not be broken by id. While ties cross the page's end, the
	// window doubles (up to four times); past that Bleve sorts by id.
	end := offset + size
	var res *bleve.SearchResult
	var hits []*search.DocumentMatch
	for n := end + 1; ; n *= 2 {
		req := bleve.NewSearchRequestOptions(bq, n, 0, false)
		req.SortBy([]string{"-_score"})
		req.PreSearchData = pre
		var err error
		if res, err = ix.idx.SearchInContext(ctx, req); err != nil {
			return nil, 0, fmt.Errorf("keyword search: %w", err)
		}
		hits = res.Hits
		for _, h := range hits {
			h.Score = settle(h.Score)
		}
		if end == 0 || len(hits) < n || hits[len(hits)-1].Score < hits[end-1].Score {
			slices.SortFunc(hits, func(a, b *search.DocumentMatch) int {
				if c := cmp.Compare(b.Score, a.Score); c != 0 {
					return c
				}
				return strings.Compare(a.ID, b.ID)
			})
			hits = hits[min(offset, len(hits)):min(end, len(hits))]
			break
		}
		if n >= 4*(end+1) {
			req = bleve.NewSearchRequestOptions(bq, size, offset, false)
			req.SortBy([]string{"-_score", "_id"})
			req.PreSearchData = pre
			if res, err = ix.idx.SearchInContext(ctx, req); err != nil {
				return nil, 0, fmt.Errorf("keyword search: %w", err)
			}
			hits = res.Hits
			for _, h := range hits {
				h.Score = settle(h.Score)
			}
			break
		}
	}
	out := make([]Scored, len(hits))
	for i, h := range hits {
		out[i] = Scored{ID: h.ID, Score: h.Score}
	}
	return out, res.Total, nil
}

// settle rounds a score to float32 precision, far coarser than the order in
// which Bleve happens to add a document's term scores, so equal texts score
// equal in every search.
func settle(score float64) float64 { return float64(float32(score)) }

// Count is the number of documents matching f (every status unless f names some).
func (ix *Index) Count(ctx context.Context, f contract.MetaFilter) (uint64, error) {
	req := bleve.NewSearchRequestOptions(filterQuery(f, false), 0, 0, false)
	req.Score = "none"
	res, err := ix.idx.SearchInContext(ctx, req)
	if err != nil {
		return 0, fmt.Errorf("count: %w", err)
	}
	return res.Total, nil
}

// facetField is the logical metadata name a facet counts.
func facetField(facet contract.Facet) (string, bool) {
	switch facet {
	case contract.FacetKind:
		return fieldKind, true
	case contract.FacetSource:
		return fieldSource, true
	case contract.FacetSourceID:
		return fieldSourceID, true
	case contract.FacetWorkspace:
		return fieldWorkspace, true
	case contract.FacetFolder:
		return fieldFolder, true
	case contract.FacetFilePath:
		return fieldFilePath, true
	case contract.FacetLanguage:
		return fieldLanguage, true
	case contract.FacetRepo:
		return fieldRepo, true
	case contract.FacetURL:
		return fieldURL, true
	case contract.FacetThread:
		return fieldThreadID, true
	case contract.FacetAgent:
		return fieldAgentID, true
	case contract.FacetToolCall:
		return fieldToolCall, true
	case contract.FacetTag:
		return fieldTag, true
	case contract.FacetNamespace:
		return fieldNS, true
	case contract.FacetStatus:
		return fieldStatus, true
	}
	return "", false
}

const facetName = "facet"

// Facet counts, exactly, the documents matching f per value of facet, as
// contract.Facet.Values lists them (a record counts once per tag occurrence,
// like the reference's explore), and reports the number of matching
// documents and of those with no value for the facet.
func (ix *Index) Facet(ctx context.Context, f contract.MetaFilter, facet contract.Facet) (map[string]uint64, uint64, uint64, error) {
	field, ok := facetField(facet)
	if !ok {
		return nil, 0, 0, contract.Invalid("`%s` is not a facet", facet)
	}
	req := bleve.NewSearchRequestOptions(filterQuery(f, false), 0, 0, false)
	req.Score = "none"
	// The builder keeps every term anyway; the size only trims the answer.
	prefix := metaTerm(field, "")
	if facet == contract.FacetTag {
		prefix = fieldTag // repeated tags too; no other name starts with "tag"
	}
	fr := bleve.NewFacetRequest(fieldMeta, math.MaxInt32)
	fr.SetPrefixFilter(prefix)
	req.AddFacet(facetName, fr)
	res, err := ix.idx.SearchInContext(ctx, req)
	if err != nil {
		return nil, 0, 0, fmt.Errorf("facet %s: %w", facet, err)
	}
	counts := map[string]uint64{}
	result := res.Facets[facetName]
	if result == nil {
		return counts, res.Total, res.Total, nil
	}
	for _, t := range result.Terms.Terms() {
		if value, ok := facetValue(field, t.Term); ok {
			counts[value] += uint64(t.Count)
		}
	}
	return counts, res.Total, uint64(result.Missing), nil
}
