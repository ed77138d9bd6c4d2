package bolt

import (
	"context"

	bbolt "go.etcd.io/bbolt"

	"mnemo/contract"
)

// Restore writes whole records as they are (contract.Restorer): the item,
// status, created and updated times, expiry and successor, in one bbolt
// transaction that also writes their ordered keys, the namespace totals, the
// outbox entry (so the search index and vectors take them in) and one
// restore change each. A record comes back in its place in every order:
// orders are by its own fields, ties broken by id. A held id, or a repeat
// in the batch, is left as it is and its receipt says replayed.
func (e *Engine) Restore(ctx context.Context, recs []contract.Record) ([]contract.StoreReceipt, error) {
	if err := contract.ValidateRestore(recs); err != nil {
		return nil, err
	}
	preps := make([]written, len(recs))
	for i := range recs {
		r := &recs[i]
		it := r.Item
		js, err := it.MarshalJSON()
		if err != nil {
			return nil, contract.Invalid("record %s: %w", r.ID, err)
		}
		s := storedRecord{status: r.Status, kind: it.Type, expires: noTime, text: it.RenderText(), meta: it.Meta,
			created: r.CreatedAt.UnixMilli(), updated: r.UpdatedAt.UnixMilli()}
		s.setItem(it, js)
		if it.Type == contract.KindLearning {
			s.confidence = it.Confidence
		}
		if r.ExpiresAt != nil {
			s.expires = r.ExpiresAt.UnixNano()
		}
		if r.SupersededBy != nil {
			s.supersededBy = *r.SupersededBy
		}
		preps[i] = written{id: r.ID, s: s}
	}
	if err := e.enterWrite(ctx); err != nil {
		return nil, err
	}
	defer e.leave()
	rs, err := e.restoreLocked(ctx, preps)
	if err != nil {
		return nil, err
	}
	e.kickIndex()
	return rs, nil
}

func (e *Engine) restoreLocked(ctx context.Context, preps []written) ([]contract.StoreReceipt, error) {
	defer e.feed.Wake() // after Unlock: readers wake once mu is free
	e.mu.Lock()
	defer e.mu.Unlock()
	if err := contract.ContextErr(ctx); err != nil {
		return nil, err
	}
	now := e.nowMillis()
	receipts := make([]contract.StoreReceipt, len(preps))
	var added []written
	var seq, feedSeq uint64
	undoDict := func() {}
	err := e.db.Update(func(tx *bbolt.Tx) error {
		recs := e.records(tx)
		var err error
		if undoDict, err = e.makeDictIn(tx, len(preps), func(i int) *storedRecord { return &preps[i].s }); err != nil {
			return err
		}
		seen := make(map[string]bool, len(preps))
		for i := range preps {
			p := &preps[i]
			receipts[i].ID = p.id
			if seen[p.id] || recs.Get(p.id) != nil {
				receipts[i].Replayed = true
				continue
			}
			seen[p.id] = true
			p.s.ord = e.nextOrd + uint32(len(added))
			if err := e.putRecord(tx, p.id, &p.s); err != nil {
				return err
			}
			added = append(added, *p)
		}
		if len(added) == 0 {
			return nil
		}
		seq, feedSeq, err = e.logAdded(tx, now, contract.OpRestore, added)
		return err
	})
	if err != nil {
		undoDict()
		return nil, contract.AsError(err)
	}
	if len(added) > 0 {
		e.publishAdded(added, seq, feedSeq)
		e.kickTableSave()
	}
	return receipts, nil
}
