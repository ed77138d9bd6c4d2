package index

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/search"
	"github.com/blevesearch/bleve/v2/search/query"
	index "github.com/blevesearch/bleve_index_api"

	"mnemo/contract"
	"mnemo/engine/bolt/internal/idkey"
)

// Keyword ranks the documents matching f by BM25 over their text for query
// (analysed by textAnalysis.queryTerms; every query term optional; scored
// with the index's own statistics, see stats.go), best first with ties by id
// ascending so pages are stable, and returns the page [offset, offset+size).
// ranked applies the statuses rule of fetch and recall (only active records
// unless f names statuses). A query without a single searchable term
// matches nothing. When f needs a residual (NeedsResidual), res says which
// documents the whole filter admits; such a filter without one is refused.
func (ix *Index) Keyword(ctx context.Context, q string, f contract.MetaFilter, ranked bool, offset, size int, res *Residual) ([]Scored, error) {
	if offset < 0 || size < 0 {
		return nil, fmt.Errorf("keyword page [%d, +%d) is negative", offset, size)
	}
	residual := NeedsResidual(f)
	if residual && (res == nil || res.Admit == nil || res.Sample == nil) {
		return nil, fmt.Errorf("keyword search: the filter names fields the index does not hold, and no residual was given")
	}
	terms := ix.build.text.queryTerms(q)
	if len(terms) == 0 || offset+size == 0 {
		return nil, nil
	}
	text := func(filter query.Query) query.Query {
		return &filteredText{clauses: termClauses(terms), filter: filter}
	}
	held := filterQuery(f, ranked)
	if !residual {
		return ix.page(ctx, text(held), offset, size)
	}
	// A filter that admits few documents is given to Bleve as their ids.
	ix.statsMu.RLock()
	docs := ix.stats.Docs
	ix.statsMu.RUnlock()
	ids, complete, _ := res.Sample(residualListLimit(offset+size, docs))
	if complete {
		if len(ids) == 0 {
			return nil, nil
		}
		return ix.page(ctx, text(query.NewConjunctionQuery([]query.Query{held, query.NewDocIDQuery(idkey.Names(ids))})), offset, size)
	}
	// One that admits many is applied in the same pass: a match the page
	// would keep is kept only when the whole filter admits it.
	return ix.pageWhere(ctx, text(held), offset, size, res.Admit)
}

// KeywordAmong is Keyword's first size hits for a query of many words within
// a filter that admits few documents (a conversation's turns, searched for
// the things of a kind): the filter leads, and the words are looked up in
// the documents it admits, where Keyword scores every document that holds
// a word and then filters. It finds what Keyword finds; a hit's score is
// Keyword's plus what the filter's clauses add, the same for documents
// that match them alike (the turns of one conversation). A filter that
// needs a residual is Keyword's.
func (ix *Index) KeywordAmong(ctx context.Context, q string, f contract.MetaFilter, ranked bool, size int, res *Residual) ([]Scored, error) {
	if NeedsResidual(f) {
		return ix.Keyword(ctx, q, f, ranked, 0, size, res)
	}
	terms := ix.build.text.queryTerms(q)
	if len(terms) == 0 || size <= 0 {
		return nil, nil
	}
	words := query.NewDisjunctionQuery(termClauses(terms))
	return ix.page(ctx, query.NewConjunctionQuery([]query.Query{filterQuery(f, ranked), words}), 0, size)
}

// termClauses is a query's terms as clauses of the text field, each
// boosted by how often the query says it.
func termClauses(terms []queryTerm) []query.Query {
	clauses := make([]query.Query, len(terms))
	for i, t := range terms {
		tq := query.NewTermQuery(t.term)
		tq.SetField(fieldText)
		tq.SetBoost(float64(t.count))
		clauses[i] = tq
	}
	return clauses
}

// page is the exact page [offset, offset+size) of q by (score desc, id), in
// one pass over the matching documents.
//
// Ordering by id needs a document's external id, which Bleve reads from the
// segment's stored fields: sorted by (score, id), Bleve reads it for every
// matching document (a common word matches tens of thousands at 1M). So
// Bleve's collector hands every match to a pageTop instead, which keeps the
// best offset+size by score and reads an id only for a document it keeps or
// one whose score ties the worst kept. Scores are settled first (settle): Bleve sums
// a document's term scores in an order that depends on the segment layout,
// so two documents of equal text can differ in the last bit from one search
// to the next, and a tie between them would not be broken by id. (Before, a
// search by score alone in a window of four times the page was followed,
// when ties crossed its end, by a second search sorted by id: a common
// word's query searched twice and read every match's id.)
func (ix *Index) page(ctx context.Context, q query.Query, offset, size int) ([]Scored, error) {
	return ix.pageWhere(ctx, q, offset, size, nil)
}

// pageWhere is page among the matches admit admits (every match when nil):
// a match is checked when the page would keep it, so admit sees about as
// many documents as the page reads ids of.
func (ix *Index) pageWhere(ctx context.Context, q query.Query, offset, size int, admit func(id string) bool) ([]Scored, error) {
	end := offset + size
	if end <= 0 {
		return nil, nil
	}
	top := &pageTop{k: end, admit: admit}
	req := bleve.NewSearchRequestOptions(q, end, 0, false)
	req.SortBy([]string{"-_score"})
	req.PreSearchData = ix.preSearch()
	hctx := context.WithValue(ctx, search.MakeDocumentMatchHandlerKey, search.MakeDocumentMatchHandler(top.handler))
	if _, err := ix.idx.SearchInContext(hctx, req); err != nil {
		return nil, fmt.Errorf("keyword search: %w", err)
	}
	return top.page(offset)
}

// pageTop keeps the k best documents by (settled score desc, id asc) of the
// matches Bleve's collector hands it, and reads a document's id only when it
// keeps the document or a tie of scores needs it. The ids are read during
// the search: the index snapshot the documents' numbers belong to is
// released when the search returns.
type pageTop struct {
	k      int
	admit  func(id string) bool // nil: every match
	reader index.IndexReader
	pool   *search.DocumentMatchPool
	// kept is a heap whose root is the worst kept document.
	kept []keptHit
	err  error
}

type keptHit struct {
	dm    *search.DocumentMatch
	score float64
	id    string // read when kept or compared
}

// handler is the search.MakeDocumentMatchHandler Bleve's collector calls
// once per search: the returned callback gets every match in turn.
func (t *pageTop) handler(sc *search.SearchContext) (search.DocumentMatchHandler, bool, error) {
	t.reader, t.pool = sc.IndexReader, sc.DocumentMatchPool
	return t.add, false, nil
}

func (t *pageTop) add(d *search.DocumentMatch) error {
	if d == nil {
		return nil
	}
	h := keptHit{dm: d, score: settle(d.Score)}
	if len(t.kept) == t.k && !t.worse(&t.kept[0], &h) {
		t.pool.Put(d)
		return t.err
	}
	// A kept document's id is read now, while Bleve holds the index
	// snapshot its number belongs to: k ln(n/k) of n matches on average.
	if t.id(&h); t.err != nil {
		return t.err
	}
	if t.admit != nil && !t.admit(h.id) {
		t.pool.Put(d)
		return nil
	}
	if len(t.kept) < t.k {
		t.kept = append(t.kept, h)
		t.up(len(t.kept) - 1)
		return t.err
	}
	t.pool.Put(t.kept[0].dm)
	t.kept[0] = h
	t.down(0)
	return t.err
}

// worse says whether a ranks below b: a lower score, or an equal score and
// a greater id.
func (t *pageTop) worse(a, b *keptHit) bool {
	if a.score != b.score {
		return a.score < b.score
	}
	return t.id(a) > t.id(b)
}

func (t *pageTop) id(h *keptHit) string {
	if h.id == "" && t.err == nil {
		name, err := t.reader.ExternalID(h.dm.IndexInternalID)
		if err != nil {
			t.err = fmt.Errorf("reading a hit's id: %w", err)
		}
		h.id = idkey.ID(name)
	}
	return h.id
}

func (t *pageTop) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !t.worse(&t.kept[i], &t.kept[p]) {
			return
		}
		t.kept[i], t.kept[p] = t.kept[p], t.kept[i]
		i = p
	}
}

func (t *pageTop) down(i int) {
	for {
		w := i
		for _, c := range []int{2*i + 1, 2*i + 2} {
			if c < len(t.kept) && t.worse(&t.kept[c], &t.kept[w]) {
				w = c
			}
		}
		if w == i {
			return
		}
		t.kept[i], t.kept[w] = t.kept[w], t.kept[i]
		i = w
	}
}

// page is [offset, k) of the kept documents, best first.
func (t *pageTop) page(offset int) ([]Scored, error) {
	if t.err != nil {
		return nil, t.err
	}
	slices.SortFunc(t.kept, func(a, b keptHit) int {
		if c := cmp.Compare(b.score, a.score); c != 0 {
			return c
		}
		return strings.Compare(a.id, b.id)
	})
	kept := t.kept[min(offset, len(t.kept)):]
	out := make([]Scored, len(kept))
	for i, h := range kept {
		out[i] = Scored{ID: h.id, Score: h.score}
	}
	return out, nil
}

// settle rounds a score to float32 precision, far coarser than the order in
// which Bleve happens to add a document's term scores, so equal texts score
// equal in every search.
func settle(score float64) float64 { return float64(float32(score)) }

// Count is the number of documents matching f (every status unless f names
// some); f may not need a residual.
func (ix *Index) Count(ctx context.Context, f contract.MetaFilter) (uint64, error) {
	if NeedsResidual(f) {
		return 0, fmt.Errorf("count: the filter names fields the index does not hold")
	}
	req := bleve.NewSearchRequestOptions(filterQuery(f, false), 0, 0, false)
	req.Score = "none"
	res, err := ix.idx.SearchInContext(ctx, req)
	if err != nil {
		return 0, fmt.Errorf("count: %w", err)
	}
	return res.Total, nil
}
