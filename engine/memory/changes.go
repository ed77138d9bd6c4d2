package memory

import (
	"context"
	"sort"
	"time"

	"mnemo/contract"
)

// feedEntry is one change as the feed keeps it: never the content.
type feedEntry struct {
	seq    uint64
	at     time.Time
	op     contract.ChangeOp
	id     string
	ns     contract.Namespace
	status contract.Status
}

// logLocked appends the change op made to s; callers hold mu for writing.
func (e *Engine) logLocked(op contract.ChangeOp, s *stored, at time.Time) {
	e.feedSeq++
	e.feed = append(e.feed, feedEntry{seq: e.feedSeq, at: at, op: op, id: s.id, ns: s.item.Meta.Namespace, status: s.status})
}

// commitLocked prunes what retention lets go and wakes the waiting readers
// when the operation changed anything; callers hold mu for writing.
func (e *Engine) commitLocked(now time.Time) {
	n := 0
	for n < len(e.feed) && e.retention.Prunable(e.feed[n].seq, e.feed[n].at, now, e.feedSeq) {
		n++
	}
	if n > 0 {
		e.pruned = e.feed[n-1].seq
		e.feed = append(e.feed[:0:0], e.feed[n:]...)
	}
	if e.notified != e.feedSeq {
		e.notified = e.feedSeq
		e.signal.Notify()
	}
}

// Changes reads the change feed (contract.ChangesRequest).
func (e *Engine) Changes(ctx context.Context, req contract.ChangesRequest) (contract.ChangesPage, error) {
	return contract.ServeChanges(ctx, req, e.signal.C, 0, e.readChanges)
}

func (e *Engine) readChanges(_ context.Context, since uint64, limit int, reach *contract.Reach, fromNow bool) (contract.ChangesPage, error) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	page := contract.ChangesPage{Changes: []contract.Change{}, Next: since, Head: e.feedSeq, Floor: e.pruned}
	if fromNow {
		page.Next = e.feedSeq
		return page, nil
	}
	if err := contract.CheckSince(since, e.pruned, e.feedSeq); err != nil {
		return contract.ChangesPage{}, err
	}
	i := sort.Search(len(e.feed), func(i int) bool { return e.feed[i].seq > since })
	for scanned := 0; i < len(e.feed) && scanned < contract.MaxChangesScan && len(page.Changes) < limit; i, scanned = i+1, scanned+1 {
		f := &e.feed[i]
		page.Next = f.seq
		if !contract.AdmittedBy(reach, f.ns) {
			continue
		}
		c := contract.Change{Seq: f.seq, At: f.at, Op: f.op, ID: f.id, Namespace: f.ns, Status: f.status}
		if !f.op.Removes() {
			if s, ok := e.records[f.id]; ok {
				r := s.record()
				c.Record = &r
			}
		}
		page.Changes = append(page.Changes, c)
	}
	return page, nil
}
