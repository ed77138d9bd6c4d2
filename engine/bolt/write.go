package bolt

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"sync"

	bbolt "go.etcd.io/bbolt"

	"mnemo/contract"
	"mnemo/engine/bolt/internal/feed"
	"mnemo/engine/bolt/internal/trigram"
	"mnemo/engine/internal/parallel"
)

// nowMillis is the clock truncated to the millisecond precision records carry.
func (e *Engine) nowMillis() int64 { return e.clock().UTC().UnixMilli() }

// StoreWith writes one item with options: wait, status and expires_at.
func (e *Engine) StoreWith(ctx context.Context, item contract.StoreItem, opts contract.WriteOptions) (contract.StoreReceipt, error) {
	if err := item.Validate(); err != nil {
		return contract.StoreReceipt{}, err
	}
	if err := opts.Validate(); err != nil {
		return contract.StoreReceipt{}, err
	}
	if err := e.enterWrite(ctx); err != nil {
		return contract.StoreReceipt{}, err
	}
	defer e.leave()
	rs, err := e.write(ctx, []contract.StoreItem{item}, opts)
	if err != nil {
		return contract.StoreReceipt{}, err
	}
	if opts.Wait != contract.WaitAccepted && !rs[0].Replayed {
		if err := e.flushIndex(ctx); err != nil {
			return contract.StoreReceipt{}, err
		}
	}
	return rs[0], nil
}

// StoreManyWith writes 1..100 items with options. The items are readable by
// list, get, browse, explore and forget on return; the index catches up in
// the background and fetch waits for it.
func (e *Engine) StoreManyWith(ctx context.Context, items []contract.StoreItem, opts contract.WriteOptions) ([]contract.StoreReceipt, error) {
	if err := contract.ValidateMany(items); err != nil {
		return nil, err
	}
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	return e.storeMany(ctx, items, opts)
}

// MaxBulkItems is the most items StoreBulk writes in one transaction.
const MaxBulkItems = contract.MaxStoreBulk

// BulkItems is the most items StoreBulk takes (the importer and the bench's
// load group their items by it).
func (e *Engine) BulkItems() int { return MaxBulkItems }

// StoreBulk is StoreManyWith for a bulk load (`mnemo import` into a store
// this process holds): up to MaxBulkItems items in one transaction. Each
// commit waits for its pages and then its meta page to reach the disk,
// which was 9 of the 24 s a 100k import spent writing in batches of 100.
func (e *Engine) StoreBulk(ctx context.Context, items []contract.StoreItem, opts contract.WriteOptions) ([]contract.StoreReceipt, error) {
	return e.StartBulk(ctx, items, opts)()
}

// StartBulk is StoreBulk in two steps (contract.BulkPipeliner): it prepares
// the items (their JSON, ids and compressed bodies, on every core) and
// returns; their transaction runs in the background, after those of the
// StartBulk calls that returned before this one was called, and the
// returned wait answers its receipts once it has committed. A loader that
// starts the next batch before it waits for this one prepares it while
// this one commits: the two took about a third and two thirds of a 100k
// bench load's time, one after the other.
func (e *Engine) StartBulk(ctx context.Context, items []contract.StoreItem, opts contract.WriteOptions) (wait func() ([]contract.StoreReceipt, error)) {
	failed := func(err error) func() ([]contract.StoreReceipt, error) {
		return func() ([]contract.StoreReceipt, error) { return nil, err }
	}
	if err := contract.ValidateBulk(items, opts); err != nil {
		return failed(err)
	}
	if err := e.enterWrite(ctx); err != nil {
		return failed(err)
	}
	// The bulk write before this one is most likely committing: its
	// transaction runs alone, and the longer step of a large load. The
	// items are prepared on this goroutine's core while it does, and on
	// every core once it is done (a 1M import: 42.2-46.0 s against
	// 44.6-48.4 with every core preparing from the start, four pairs of
	// runs alternated; docs/performance.md).
	e.bulkMu.Lock()
	committing := e.bulkTail
	e.bulkMu.Unlock()
	w, err := e.prepareWriteAfter(items, opts, committing)
	if err != nil {
		e.leave()
		return failed(err)
	}
	w.bulk = true
	e.bulkMu.Lock()
	prev, done := e.bulkTail, make(chan struct{})
	e.bulkTail = done
	e.bulkMu.Unlock()
	type result struct {
		rs  []contract.StoreReceipt
		err error
	}
	out := make(chan result, 1)
	go func() {
		defer e.leave()
		if prev != nil {
			<-prev
		}
		rs, err := e.commitWrite(ctx, w)
		close(done)
		if err == nil {
			e.kickIndex()
		}
		out <- result{rs, err}
	}()
	return sync.OnceValues(func() ([]contract.StoreReceipt, error) {
		r := <-out
		return r.rs, r.err
	})
}

// storeMany writes validated items in one transaction and wakes the index.
func (e *Engine) storeMany(ctx context.Context, items []contract.StoreItem, opts contract.WriteOptions) ([]contract.StoreReceipt, error) {
	if err := e.enterWrite(ctx); err != nil {
		return nil, err
	}
	defer e.leave()
	rs, err := e.write(ctx, items, opts)
	if err != nil {
		return nil, err
	}
	e.kickIndex()
	return rs, nil
}

func (e *Engine) kickIndex() {
	select {
	case e.kick <- struct{}{}:
	default:
	}
}

type written struct {
	id string
	s  storedRecord
}

// write stores validated items in one bbolt transaction; the caller has
// entered the engine.
func (e *Engine) write(ctx context.Context, items []contract.StoreItem, opts contract.WriteOptions) ([]contract.StoreReceipt, error) {
	w, err := e.prepareWriteAfter(items, opts, nil)
	if err != nil {
		return nil, err
	}
	return e.commitWrite(ctx, w)
}

// preparedWrite is a write's items made ready outside the write lock: their
// ids, encodings and compressed bodies.
type preparedWrite struct {
	preps []prepared
	// bulk: a StartBulk write, whose new records' ordered keys wait for
	// the end of the bulk load (ordered.go) while one is marked (SetBulk).
	bulk bool
}

type prepared struct {
	id   string
	s    storedRecord
	body packedBody
}

// prepareWriteAfter does the part of a write that needs no lock, on this
// goroutine alone until others is closed (parallel.EachAfter; nil: on
// every core at once). The header (ordinal, times) waits for the
// transaction.
func (e *Engine) prepareWriteAfter(items []contract.StoreItem, opts contract.WriteOptions, others <-chan struct{}) (*preparedWrite, error) {
	status := opts.Status
	if status == "" {
		status = contract.StatusActive
	}
	expires := int64(noTime)
	if opts.ExpiresAt != nil {
		expires = opts.ExpiresAt.UnixNano()
	}
	// A bulk write's items are prepared on every core (once the commit
	// before them is done, for StartBulk): their JSON, ids and compressed
	// bodies were about 30 µs of a record's 90 in a 100k bench load.
	preps := make([]prepared, len(items))
	errs := make([]error, len(items))
	parallel.EachAfter(len(items), prepareRun, others, func(i int) {
		it := &items[i]
		js, id, err := it.JSONAndFingerprint()
		if err != nil {
			errs[i] = contract.Invalid("%w", err)
			return
		}
		s := storedRecord{status: status, kind: it.Type, expires: expires, text: it.RenderText(), meta: it.Meta}
		s.setItem(it, js)
		if it.Type == contract.KindLearning {
			s.confidence = it.Confidence
		}
		preps[i] = prepared{id: id, s: s, body: e.codec.pack(&s)}
	})
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return &preparedWrite{preps: preps}, nil
}

// commitWrite stores a prepared write in one bbolt transaction, under the
// write lock.
func (e *Engine) commitWrite(ctx context.Context, w *preparedWrite) ([]contract.StoreReceipt, error) {
	preps := w.preps
	defer e.feed.Wake() // after Unlock: readers wake once mu is free
	e.mu.Lock()
	defer e.mu.Unlock()
	// The write lock may have been long in coming: a call cancelled
	// meanwhile writes nothing.
	if err := contract.ContextErr(ctx); err != nil {
		return nil, err
	}
	now := e.nowMillis()
	receipts := make([]contract.StoreReceipt, len(preps))
	var added []written
	var seq, feedSeq uint64
	var deferKeys bool
	undoDict := func() {}
	err := e.db.Update(func(tx *bbolt.Tx) error {
		recs := e.records(tx)
		if len(preps) >= bulkBatch {
			fillBulk(tx)
		}
		var err error
		if undoDict, err = e.makeDictIn(tx, len(preps), func(i int) *storedRecord { return &preps[i].s }); err != nil {
			return err
		}
		seen := make(map[string]bool, len(preps))
		var values [][]byte
		for i := range preps {
			p := &preps[i]
			receipts[i].ID = p.id
			if seen[p.id] || recs.Get(p.id) != nil {
				receipts[i].Replayed = true
				continue
			}
			seen[p.id] = true
			p.s.ord = e.nextOrd + uint32(len(added))
			p.s.created, p.s.updated = now, now
			values = append(values, e.codec.encodePacked(&p.s, p.body))
			added = append(added, written{p.id, p.s})
		}
		if len(added) == 0 {
			return nil
		}
		if deferKeys = w.bulk && e.bulk.Load(); deferKeys {
			if err := e.deferKeysIn(tx, e.nextOrd, e.nextOrd+uint32(len(added)), now); err != nil {
				return err
			}
		}
		if err := e.putWritten(tx, added, values, !deferKeys); err != nil {
			return err
		}
		seq, feedSeq, err = e.logAdded(tx, now, contract.OpStore, added)
		return err
	})
	if err != nil {
		undoDict()
		return nil, contract.AsError(err)
	}
	if len(added) > 0 {
		if deferKeys {
			e.keysDeferredFor(added[0].s.ord, added[0].s.ord+uint32(len(added)), now)
		}
		e.publishAdded(added, seq, feedSeq)
	}
	return receipts, nil
}

// logAdded writes, in tx, what new records (stored or restored) change
// beside themselves: the namespace totals, the change feed (op) and the
// write's outbox entry. It answers the write's seq and the feed's head,
// which publishAdded makes visible once tx has committed.
func (e *Engine) logAdded(tx *bbolt.Tx, now int64, op contract.ChangeOp, added []written) (seq, feedSeq uint64, err error) {
	ids := make([]string, len(added))
	deltas := map[string]int64{}
	cs := make([]feed.Change, len(added))
	for i, w := range added {
		ids[i] = w.id
		deltas[w.s.meta.Namespace.String()]++
		cs[i] = feed.Change{Op: op, ID: w.id, NS: w.s.meta.Namespace, Status: w.s.status}
	}
	if err := bumpTotals(tx, deltas); err != nil {
		return 0, 0, err
	}
	if feedSeq, err = e.logChanges(tx, now, cs); err != nil {
		return 0, 0, err
	}
	seq, err = e.logWrite(tx, ids, e.nextOrd+uint32(len(added)))
	return seq, feedSeq, err
}

// publishAdded makes committed new records visible: the sequence, the
// feed's head, the table and the content index.
func (e *Engine) publishAdded(added []written, seq, feedSeq uint64) {
	e.seq = seq
	e.committed.Store(seq)
	e.feed.Committed(feedSeq)
	e.nextOrd += uint32(len(added))
	if need := int(e.nextOrd); len(added) >= bulkBatch && need > cap(e.t.rows) {
		// A bulk load's rows grow the table by doubling: appended one at a
		// time, Go grows a large slice by a quarter, and copying a million
		// rows again and again took 3.1 s of a 1M import's 74, under the
		// write lock. A trickle of writes grows it as before, so a process
		// that writes a record into a large table does not double its heap.
		e.t.reserve(max(need, 2*cap(e.t.rows)))
	}
	texts := make([]trigram.Text, len(added))
	for i := range added {
		w := &added[i]
		e.t.put(w.id, &w.s)
		texts[i] = trigram.Text{Ord: w.s.ord, Text: w.s.text}
	}
	e.tri.Add(texts)
}

// bulkBatch is the least number of records a write stores for its pages to
// be written full (fillBulk).
const bulkBatch = 64

// prepareRun is the fewest items a goroutine prepares for a write
// (parallel.Each): a write of fewer than 64 is prepared in the caller's
// goroutine.
const prepareRun = 32

// bulkFill is how full fillBulk writes pages.
const bulkFill = 0.9

// fillBulk has the pages a bulk write splits in the time-ordered buckets
// written fuller than bbolt's half: a batch's new keys come together there
// (one created and updated time, in id order), and an import's pages are
// never written again. Measured on a 20k import: by_created and by_updated
// 56% -> 76% full. Not the records (random ids: 64% either way) nor
// by_confidence (random confidences: a fuller split left it 35% full).
func fillBulk(tx *bbolt.Tx) {
	for _, name := range [][]byte{bucketUpdated, bucketCreated} {
		if b := tx.Bucket(name); b != nil {
			b.FillPercent = bulkFill
		}
	}
}

// putRecord writes a record and its ordered keys.
func (e *Engine) putRecord(tx *bbolt.Tx, id string, s *storedRecord) error {
	return e.putEncoded(tx, id, s, e.codec.encode(s))
}

// putWritten writes new records (values[i] is added[i] encoded) and, with
// keys, their ordered keys, each bucket's keys in key order. The put order
// changes nothing stored, only bbolt's cost: a key put into a leaf shifts
// the keys after it, and a write's records share one time, so its time keys
// all go to one leaf, which grows to the whole batch before the commit
// splits it. In the items' random id order that shifted half the batch a
// key (a tenth of a 100k bench load's CPU); in id order, only the few keys
// already there.
func (e *Engine) putWritten(tx *bbolt.Tx, added []written, values [][]byte, keys bool) error {
	byID := make([]int, len(added))
	for i := range byID {
		byID[i] = i
	}
	slices.SortFunc(byID, func(a, b int) int { return strings.Compare(added[a].id, added[b].id) })
	recs, upd, crt := e.records(tx), tx.Bucket(bucketUpdated), tx.Bucket(bucketCreated)
	var learnings [][2][]byte
	for _, i := range byID {
		w := &added[i]
		if err := recs.Put(w.id, values[i]); err != nil {
			return err
		}
		if !keys {
			continue
		}
		// putTimeKeys's rule, with the buckets looked up once.
		if w.s.updated != w.s.created {
			if err := upd.Put(descMillisKey(w.s.updated, w.id), ordValue(w.s.ord)); err != nil {
				return err
			}
		}
		if err := crt.Put(descMillisKey(w.s.created, w.id), createdValue(w.s.ord, w.s.created, w.s.updated)); err != nil {
			return err
		}
		if w.s.kind == contract.KindLearning {
			learnings = append(learnings, [2][]byte{confKey(w.s.confidence, w.id), ordValue(w.s.ord)})
		}
	}
	slices.SortFunc(learnings, func(a, b [2][]byte) int { return bytes.Compare(a[0], b[0]) })
	conf := tx.Bucket(bucketConf)
	for _, kv := range learnings {
		if err := conf.Put(kv[0], kv[1]); err != nil {
			return err
		}
	}
	return nil
}

// putEncoded is putRecord with the record already encoded.
func (e *Engine) putEncoded(tx *bbolt.Tx, id string, s *storedRecord, value []byte) error {
	if err := e.records(tx).Put(id, value); err != nil {
		return err
	}
	if err := putTimeKeys(tx, id, s.ord, s.created, s.updated); err != nil {
		return err
	}
	if s.kind == contract.KindLearning {
		return tx.Bucket(bucketConf).Put(confKey(s.confidence, id), ordValue(s.ord))
	}
	return nil
}

// deleteRecord removes a record, its ordered keys and its vector.
func (e *Engine) deleteRecord(tx *bbolt.Tx, id string, s *storedRecord) error {
	if err := e.records(tx).Delete(id); err != nil {
		return err
	}
	if err := deleteTimeKeys(tx, id, s.created, s.updated); err != nil {
		return err
	}
	if s.kind == contract.KindLearning {
		if err := tx.Bucket(bucketConf).Delete(confKey(s.confidence, id)); err != nil {
			return err
		}
	}
	// A store migrating from the layout before vector blocks.
	if old := tx.Bucket(bucketVectors); old != nil {
		return old.Delete([]byte(id))
	}
	return nil
}

// logWrite bumps the sequence, appends the outbox entry naming the changed
// ids, and prunes the entries the index has already applied.
func (e *Engine) logWrite(tx *bbolt.Tx, ids []string, nextOrd uint32) (uint64, error) {
	seq := e.seq + 1
	meta := tx.Bucket(bucketMeta)
	if err := meta.Put(keySeq, putU64(seq)); err != nil {
		return 0, err
	}
	if err := meta.Put(keyNextOrd, putU64(uint64(nextOrd))); err != nil {
		return 0, err
	}
	// Vectors wait for a batch: a block is rewritten whole.
	if e.vec.store != nil && len(e.vec.store.pending) >= maxPendingVectors {
		if err := e.vec.store.writeBlocks(tx, nil, true); err != nil {
			return 0, err
		}
	}
	ob := tx.Bucket(bucketOutbox)
	if err := ob.Put(seqKey(seq), []byte(strings.Join(ids, "\n"))); err != nil {
		return 0, err
	}
	if err := pruneApplied(ob, e.idx.applied.Load()); err != nil {
		return 0, err
	}
	return seq, nil
}

// pruneApplied deletes the outbox entries up to applied: the search index
// holds them.
func pruneApplied(ob *bbolt.Bucket, applied uint64) error {
	var stale [][]byte
	c := ob.Cursor()
	for k, _ := c.First(); k != nil && getU64(k) <= applied; k, _ = c.Next() {
		stale = append(stale, bytes.Clone(k))
	}
	for _, k := range stale {
		if err := ob.Delete(k); err != nil {
			return err
		}
	}
	return nil
}

// pruneOutbox deletes the outbox entries the search index has applied, once
// a catch-up of a backlog has ended. A write prunes them too, but the last writes of a
// bulk load leave theirs until the next: an import of 100k records left
// 1,082 entries, 6 MB of the store.
func (e *Engine) pruneOutbox() error {
	if e.opts.ReadOnly {
		return nil
	}
	applied := e.idx.applied.Load()
	stale := false
	if err := e.db.View(func(tx *bbolt.Tx) error {
		k, _ := tx.Bucket(bucketOutbox).Cursor().First()
		stale = k != nil && getU64(k) <= applied
		return nil
	}); err != nil || !stale {
		return err
	}
	return e.db.Update(func(tx *bbolt.Tx) error { return pruneApplied(tx.Bucket(bucketOutbox), applied) })
}

// Forget removes items by id (anywhere, sandboxes included) or by filter.
func (e *Engine) Forget(ctx context.Context, target contract.ForgetTarget) (contract.ForgetReport, error) {
	if err := target.Validate(); err != nil {
		return contract.ForgetReport{}, err
	}
	if err := e.enterWrite(ctx); err != nil {
		return contract.ForgetReport{}, err
	}
	defer e.leave()
	if target.Filter != nil {
		// Matching a filter needs the table; forgetting ids does not.
		if err := e.waitTable(ctx); err != nil {
			return contract.ForgetReport{}, err
		}
	}
	defer e.feed.Wake() // after Unlock: readers wake once mu is free
	e.mu.Lock()
	defer e.mu.Unlock()
	// A call cancelled while it waited for the write lock forgets nothing.
	if err := contract.ContextErr(ctx); err != nil {
		return contract.ForgetReport{}, err
	}
	var ids []string
	if target.Filter != nil {
		p := e.t.compileFilter(*target.Filter, false)
		for ord := range e.t.alive {
			if e.t.matchOrd(&p, uint32(ord)) {
				ids = append(ids, e.t.idOf(uint32(ord)))
			}
		}
	} else {
		ids = target.IDs
	}
	n, err := e.deleteLocked(ids, contract.OpForget)
	if err != nil {
		return contract.ForgetReport{}, err
	}
	return contract.ForgetReport{Forgotten: n}, nil
}

// ForgetWithin forgets the ids that live inside the reach, skipping the others.
func (e *Engine) ForgetWithin(ctx context.Context, ids []string, reach contract.Reach) (contract.ForgetReport, error) {
	ids, err := contract.ForgetWithinIDs(ids)
	if err != nil {
		return contract.ForgetReport{}, err
	}
	if err := e.enterWrite(ctx); err != nil {
		return contract.ForgetReport{}, err
	}
	defer e.leave()
	defer e.feed.Wake() // after Unlock: readers wake once mu is free
	e.mu.Lock()
	defer e.mu.Unlock()
	if err := contract.ContextErr(ctx); err != nil {
		return contract.ForgetReport{}, err
	}
	// Each id is read back from the record (the table may still be loading).
	inside := ids[:0:0]
	err = e.db.View(func(tx *bbolt.Tx) error {
		recs := e.records(tx)
		for _, id := range ids {
			v := recs.Get(id)
			if v == nil {
				continue
			}
			s, err := e.codec.decode(v, partHeader, e.t.namespaceOf)
			if err != nil {
				return contract.EngineErr("record %s: %w", id, err)
			}
			if reach.Admits(s.meta.Namespace) {
				inside = append(inside, id)
			}
		}
		return nil
	})
	if err != nil {
		return contract.ForgetReport{}, contract.AsError(err)
	}
	n, err := e.deleteLocked(inside, contract.OpForget)
	if err != nil {
		return contract.ForgetReport{}, err
	}
	return contract.ForgetReport{Forgotten: n}, nil
}

// deleteLocked removes the named records in one transaction, logging each
// removal as op (forget, or reject); the caller holds mu.
func (e *Engine) deleteLocked(ids []string, op contract.ChangeOp) (int, error) {
	if len(ids) == 0 {
		return 0, nil
	}
	var removed []written
	var seq, feedSeq uint64
	err := e.db.Update(func(tx *bbolt.Tx) error {
		recs := e.records(tx)
		seen := make(map[string]bool, len(ids))
		for _, id := range ids {
			if seen[id] {
				continue
			}
			seen[id] = true
			v := recs.Get(id)
			if v == nil {
				continue
			}
			s, err := e.codec.decode(v, partHeader, e.t.namespaceOf)
			if err != nil {
				return err
			}
			if err := e.deleteRecord(tx, id, &s); err != nil {
				return err
			}
			removed = append(removed, written{id: id, s: s})
		}
		if len(removed) == 0 {
			return nil
		}
		names := make([]string, len(removed))
		deltas := map[string]int64{}
		cs := make([]feed.Change, len(removed))
		for i, w := range removed {
			names[i] = w.id
			deltas[w.s.meta.Namespace.String()]--
			cs[i] = feed.Change{Op: op, ID: w.id, NS: w.s.meta.Namespace, Status: w.s.status}
		}
		if err := bumpTotals(tx, deltas); err != nil {
			return err
		}
		// The forgotten records' vectors are cleared by this very
		// transaction, and a pending one is dropped first, so that no write
		// of this transaction (logWrite saves a full batch) puts it back.
		if e.vec.store != nil {
			ords := make([]uint32, len(removed))
			for i, w := range removed {
				ords[i] = w.s.ord
				delete(e.vec.store.pending, w.s.ord)
			}
			if err := e.vec.store.writeBlocks(tx, ords, false); err != nil {
				return err
			}
		}
		var err error
		if feedSeq, err = e.logChanges(tx, e.nowMillis(), cs); err != nil {
			return err
		}
		seq, err = e.logWrite(tx, names, e.nextOrd)
		return err
	})
	if err != nil {
		return 0, contract.AsError(err)
	}
	if len(removed) > 0 {
		e.seq = seq
		e.committed.Store(seq)
		e.feed.Committed(feedSeq)
		for _, w := range removed {
			e.cache.drop(w.s.ord)
			e.t.remove(w.s.ord)
		}
		e.tri.Forgot(len(removed))
		e.kickTableSave()
		e.kickIndex()
	}
	return len(removed), nil
}

// Review approves a candidate (it becomes active, updated now) or rejects it
// (it is forgotten).
func (e *Engine) Review(ctx context.Context, req contract.ReviewRequest) (contract.ReviewResult, error) {
	if err := req.Validate(); err != nil {
		return contract.ReviewResult{}, err
	}
	if err := e.enterWrite(ctx); err != nil {
		return contract.ReviewResult{}, err
	}
	defer e.leave()
	defer e.feed.Wake() // after Unlock: readers wake once mu is free
	e.mu.Lock()
	defer e.mu.Unlock()
	if err := contract.ContextErr(ctx); err != nil {
		return contract.ReviewResult{}, err
	}
	s, err := e.loadLocked(req.ID)
	if err != nil {
		return contract.ReviewResult{}, err
	}
	if s.status != contract.StatusCandidate {
		return contract.ReviewResult{}, contract.Conflict("record %s is '%s', not a candidate", req.ID, s.status)
	}
	if req.Action == contract.ReviewReject {
		n, err := e.deleteLocked([]string{req.ID}, contract.OpReject)
		if err != nil {
			return contract.ReviewResult{}, err
		}
		return contract.ReviewResult{Forgotten: n}, nil
	}
	rec, err := e.restatusLocked(req.ID, s, contract.StatusActive, s.supersededBy, contract.OpApprove)
	if err != nil {
		return contract.ReviewResult{}, err
	}
	return contract.ReviewResult{Record: &rec}, nil
}

// Supersede marks id as superseded by another record; both must exist.
func (e *Engine) Supersede(ctx context.Context, req contract.SupersedeRequest) (contract.Record, error) {
	if err := req.Validate(); err != nil {
		return contract.Record{}, err
	}
	if err := e.enterWrite(ctx); err != nil {
		return contract.Record{}, err
	}
	defer e.leave()
	defer e.feed.Wake() // after Unlock: readers wake once mu is free
	e.mu.Lock()
	defer e.mu.Unlock()
	if err := contract.ContextErr(ctx); err != nil {
		return contract.Record{}, err
	}
	s, err := e.loadLocked(req.ID)
	if err != nil {
		return contract.Record{}, err
	}
	if req.Undo {
		if s.status != contract.StatusSuperseded || s.supersededBy != req.By {
			return contract.Record{}, contract.NotSupersededBy(req.ID, req.By)
		}
		return e.restatusLocked(req.ID, s, req.UndoStatus(), "", req.UndoOp())
	}
	if _, err := e.loadLocked(req.By); err != nil {
		return contract.Record{}, err
	}
	return e.restatusLocked(req.ID, s, contract.StatusSuperseded, req.By, contract.OpSupersede)
}

// loadLocked reads a whole record or answers not found.
func (e *Engine) loadLocked(id string) (storedRecord, error) {
	var s storedRecord
	found := false
	err := e.db.View(func(tx *bbolt.Tx) error {
		v := e.records(tx).Get(id)
		if v == nil {
			return nil
		}
		found = true
		var err error
		s, err = e.codec.decode(v, partFull, e.t.namespaceOf)
		return err
	})
	if err != nil {
		return storedRecord{}, contract.AsError(err)
	}
	if !found {
		return storedRecord{}, contract.NotFound("record %s does not exist", id)
	}
	return s, nil
}

// restatusLocked changes a record's status (and superseded_by), stamping
// updated_at, and logs the change as op.
func (e *Engine) restatusLocked(id string, s storedRecord, status contract.Status, by string, op contract.ChangeOp) (contract.Record, error) {
	old := s
	s.status, s.supersededBy = status, by
	s.updated = e.nowMillis()
	var seq, feedSeq uint64
	err := e.db.Update(func(tx *bbolt.Tx) error {
		if err := deleteTimeKeys(tx, id, old.created, old.updated); err != nil {
			return err
		}
		if err := e.putRecord(tx, id, &s); err != nil {
			return err
		}
		var err error
		if feedSeq, err = e.logChanges(tx, s.updated, []feed.Change{{Op: op, ID: id, NS: s.meta.Namespace, Status: status}}); err != nil {
			return err
		}
		seq, err = e.logWrite(tx, []string{id}, e.nextOrd)
		return err
	})
	if err != nil {
		return contract.Record{}, contract.AsError(err)
	}
	e.seq = seq
	e.committed.Store(seq)
	e.feed.Committed(feedSeq)
	e.cache.drop(s.ord)
	e.t.setStatus(s.ord, status, s.updated)
	e.kickIndex()
	return s.record(id, false)
}
