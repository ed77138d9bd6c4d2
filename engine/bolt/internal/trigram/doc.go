// Package trigram is engine/bolt's content index: every byte trigram of a
// record's case-folded rendered text, mapped to the ordinals holding it, so
// that a content filter ("contains") reads a few postings instead of every
// record's text.
//
// The index is a prefilter. The candidates it returns are a superset: the
// ordinals of forgotten records stay until the postings are next written,
// which costs nothing since ordinals are never reused and the engine checks
// every candidate against its table's text.
//
// On a large store the postings live in a file (package contentfile), read
// in place, and the heap holds only the records added since the file was
// written; on a small one everything is in the heap. Writers only queue
// their texts (Add); the engine's index worker folds them into the postings
// off the write path (Drain). Until then a queued record is a candidate of
// every needle, so the superset rule holds at every moment.
//
// The engine owns the reading of records and the change feed, and its
// locks: a Build or a Replay is fed by the engine and installed here; a
// Rewrite is begun under the engine's read lock (so nothing committed is
// left queued) and written outside it.
package trigram
