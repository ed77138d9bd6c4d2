package bolt

import (
	"context"

	bbolt "go.etcd.io/bbolt"

	"mnemo/contract"
	"mnemo/engine/bolt/internal/feed"
)

// The change feed (contract.Engine.Changes) is package feed's: an entry per
// changed record, written by each mutation's own transaction. The engine
// logs a write's changes under mu (logChanges), publishes the head once the
// transaction has committed (feed.Committed, under mu) and wakes the readers
// after letting mu go (feed.Wake).

// statusCodes are the records' status codes, which the feed's entries use.
var statusCodes = feed.StatusCodes{Code: statusCode, ByCode: statusByCode[:]}

// loadFeed reads the feed's counters at open.
func (e *Engine) loadFeed(meta *bbolt.Bucket) {
	e.feed.Load(meta, e.opts.ChangeRetention.OrDefault(), statusCodes)
}

// logChanges appends cs to the feed in tx and prunes what retention lets go;
// it returns the new head, which the caller publishes with feed.Committed
// once tx has committed. The caller holds mu.
func (e *Engine) logChanges(tx *bbolt.Tx, at int64, cs []feed.Change) (uint64, error) {
	return e.feed.Log(tx, tx.Bucket(bucketMeta), at, cs)
}

// Changes reads the change feed (contract.ChangesRequest).
func (e *Engine) Changes(ctx context.Context, req contract.ChangesRequest) (contract.ChangesPage, error) {
	if err := req.Validate(); err != nil {
		return contract.ChangesPage{}, err
	}
	if err := e.enter(ctx); err != nil {
		return contract.ChangesPage{}, err
	}
	defer e.leave()
	if req.Wait > 0 {
		// A waiting read ends when the store closes.
		var cancel context.CancelFunc
		ctx, cancel = e.untilClosed(ctx)
		defer cancel()
	}
	return contract.ServeChanges(ctx, req, e.feed.Signal(), 0, e.readChanges)
}

func (e *Engine) readChanges(_ context.Context, since uint64, limit int, reach *contract.Reach, fromNow bool) (contract.ChangesPage, error) {
	if e.closed.Load() {
		return contract.ChangesPage{}, errClosed()
	}
	var page contract.ChangesPage
	err := e.readView(func(tx *bbolt.Tx, recs *recordReader) error {
		var err error
		page, err = e.feed.Read(tx, tx.Bucket(bucketMeta), since, limit, reach, fromNow, func(id string) (*contract.Record, error) {
			rv := recs.Get(id)
			if rv == nil {
				return nil, nil
			}
			s, err := e.codec.decode(rv, partHit, e.feed.NamespaceOf)
			if err != nil {
				return nil, contract.EngineErr("record %s: %v", id, err)
			}
			r, err := s.record(id, false)
			if err != nil {
				return nil, err
			}
			return &r, nil
		})
		return err
	})
	if err != nil {
		return contract.ChangesPage{}, contract.AsError(err)
	}
	return page, nil
}

// FeedHead is the feed's newest seq (tests, info).
func (e *Engine) FeedHead() uint64 { return e.feed.Head() }

// checkFeed verifies the feed against the records: its seqs run without a
// gap from the oldest kept to the head, every entry decodes, and the last
// change kept for each id agrees with the records (a removal: no record; any
// other: the record is there, in the namespace the change names).
func (e *Engine) checkFeed(tx *bbolt.Tx, recs map[string]checkedRecord) CheckEntry {
	c := CheckEntry{Name: checkFeed}
	checked, lastOf := e.feed.Verify(tx, tx.Bucket(bucketMeta), e.t.namespaceOf, c.disagree)
	c.Checked = checked
	for id, l := range lastOf {
		r, exists := recs[id]
		switch {
		case l.Removed && exists:
			c.disagree("record %s exists, but its last change (seq %d) removed it", id, l.Seq)
		case !l.Removed && !exists:
			c.disagree("record %s is gone, but the feed has no removal of it after seq %d", id, l.Seq)
		case !l.Removed && r.ns != l.NS:
			c.disagree("record %s lives in %s, its change %d names %s", id, r.ns, l.Seq, l.NS)
		}
	}
	return c
}
