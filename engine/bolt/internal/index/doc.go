// Package index is mnemo's derived full-text index: a Bleve scorch index that
// holds, for every record of the bbolt store, its rendered text (BM25-scored)
// and its metadata as exact terms, so that keyword search, counts and facets
// apply a contract.MetaFilter inside the query with exactly the semantics of
// contract.MetaFilter.Matches (checked by a property test against it).
//
// The index is never the record: bbolt is. Every batch carries the store's
// sequence number ("applied_seq") so the engine can replay what the index
// missed, and a mapping version so an index built by another mapping is
// thrown away and rebuilt instead of being misread. Batches are persisted
// before Apply returns, so AppliedSeq never runs ahead of what a crash keeps.
//
// Keyword search is BM25 over `text` with the English analysis of
// analysis.go and exact corpus statistics (stats.go): the document count and
// the total analysed length travel in every batch as a running sum and are
// handed to Bleve as its BM25 pre-search data, because Bleve's own average
// length is not one.
//
// Layout (see mapping.go): `text` is the only analysed and scored field;
// every metadata value is one exact term "<name>=<value>" in the `meta` field
// (with doc values, for facets) or, for terms derived only to make a filter a
// term lookup (namespace subtree anchors, `/`-boundary path prefixes), in the
// `lookup` field. Only observed_at is a Bleve date: the record times and
// confidence are not indexed, because nothing here queries them and each
// numeric field costs 17 terms (dropping them cut indexing CPU by ~40%).
package index
