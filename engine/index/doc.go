// Package index is mnemo's derived full-text index: a Bleve scorch index that
// holds, for every record of the bbolt store, its rendered text (BM25-scored)
// and its metadata as exact terms, so that keyword search, counts and facets
// apply a contract.MetaFilter inside the query with exactly the semantics of
// contract.MetaFilter.Matches.
//
// The index is never the record: bbolt is. Every batch carries the store's
// sequence number ("applied_seq") so the engine can replay what the index
// missed, and a mapping version so an index built by another mapping is
// thrown away and rebuilt instead of being misread.
package index
