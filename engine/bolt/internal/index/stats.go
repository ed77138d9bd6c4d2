package index

import (
	"encoding/binary"
	"fmt"
	"strconv"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/search"

	"mnemo/engine/bolt/internal/idkey"
)

// bm25Stats are the corpus statistics BM25 needs for the text field: the
// number of documents and the total analysed length of their text.
//
// Bleve derives the average length itself from the number of distinct terms
// in each segment's dictionary divided by the document count (see
// bm25ScoreMetrics in bleve/v2 search/searcher/search_term.go), which for
// mnemo's records came out near 4 tokens instead of ~70 and moves as
// segments merge; short documents then win. The running sum here is exact
// and passed to every keyword search as Bleve's BM25 pre-search data.
type bm25Stats struct {
	Docs   uint64
	Tokens uint64
}

func (s bm25Stats) encode() []byte {
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], s.Docs)
	binary.BigEndian.PutUint64(b[8:], s.Tokens)
	return b[:]
}

// loadStats reads the statistics kept in idx; an index holding documents
// but no statistics is not usable (ok false), an empty one starts at zero.
func loadStats(idx bleve.Index) (bm25Stats, bool) {
	v, err := idx.GetInternal([]byte(keyBM25Stats))
	if err != nil {
		return bm25Stats{}, false
	}
	if len(v) == 16 {
		return bm25Stats{Docs: binary.BigEndian.Uint64(v[:8]), Tokens: binary.BigEndian.Uint64(v[8:])}, true
	}
	n, err := idx.DocCount()
	return bm25Stats{}, len(v) == 0 && err == nil && n == 0
}

// statsAfter is the statistics once every document final names (docName)
// holds its length there (-1: deleted). The length an id holds now is read from its term in
// the len field (its doc values), so a replay, a replacement or a delete of
// an absent id changes the sums exactly as much as the index changes.
func (ix *Index) statsAfter(final map[string]int) (bm25Stats, error) {
	stats := ix.stats
	adv, err := ix.idx.Advanced()
	if err != nil {
		return stats, fmt.Errorf("bm25 statistics: %w", err)
	}
	r, err := adv.Reader()
	if err != nil {
		return stats, fmt.Errorf("bm25 statistics: %w", err)
	}
	defer r.Close()
	dv, err := r.DocValueReader([]string{fieldLen})
	if err != nil {
		return stats, fmt.Errorf("bm25 statistics: %w", err)
	}
	for name, length := range final {
		id := idkey.ID(name)
		iid, err := r.InternalID(name)
		if err != nil {
			return stats, fmt.Errorf("bm25 statistics of %s: %w", id, err)
		}
		if len(iid) > 0 {
			old := -1
			err := dv.VisitDocValues(iid, func(_ string, term []byte) {
				if n, err := strconv.Atoi(string(term)); err == nil {
					old = n
				}
			})
			if err != nil {
				return stats, fmt.Errorf("bm25 statistics of %s: %w", id, err)
			}
			if old < 0 {
				return stats, fmt.Errorf("bm25 statistics: indexed record %s has no text length", id)
			}
			stats.Docs--
			stats.Tokens -= uint64(old)
		}
		if length >= 0 {
			stats.Docs++
			stats.Tokens += uint64(length)
		}
	}
	return stats, nil
}

// preSearch is the BM25 pre-search data of a keyword search. Bleve refuses a
// search whose term searchers touch a field missing from it, so the filter
// fields are listed too (their clauses are not scored).
func (ix *Index) preSearch() map[string]interface{} {
	ix.statsMu.RLock()
	s := ix.stats
	ix.statsMu.RUnlock()
	docs := max(s.Docs, 1)
	return map[string]interface{}{search.BM25PreSearchDataKey: &search.BM25Stats{
		DocCount: float64(docs),
		FieldCardinality: map[string]int{
			fieldText:   int(max(s.Tokens, 1)),
			fieldMeta:   int(docs),
			fieldLookup: int(docs),
			"*":         int(docs), // the optimised disjunctions of a filter
		},
	}}
}
