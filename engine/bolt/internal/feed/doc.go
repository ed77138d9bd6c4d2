// Package feed is a bbolt store's change feed (contract.Engine.Changes):
// an entry per changed record, appended by every mutation's own bbolt
// transaction, pruned as the retention lets go, read by waiting watchers.
//
// Every mutation's transaction appends one entry per changed record to
// Bucket, keyed by the feed's sequence number (meta feed_seq, one per
// change), in the same bbolt transaction as the mutation itself: a crash can
// neither lose a change whose write was acknowledged nor invent one whose
// write was not. Entries hold no content (op, status, time, id, namespace);
// a read attaches the record as it is now when it still exists. Later write
// transactions prune what the retention lets go (a bounded number per
// transaction) and remember the newest seq pruned (meta feed_pruned), so a
// since older than that is refused. Readers wait on an in-process signal
// broadcast after every commit; they never hold a lock while waiting, so a
// slow or idle reader never blocks a writer. A read holds no engine lock at
// all (only its bbolt read transaction), and the changes it attaches records
// to are kept in a small cache shared by every reader (the cache), so twenty
// watchers waiting at the head cost one record decode and one JSON encoding
// per change, not twenty.
//
// The engine owns the locking: Log and Committed run under its writers'
// lock, and Wake after it lets that lock go.
package feed
