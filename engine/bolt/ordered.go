package bolt

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	bbolt "go.etcd.io/bbolt"

	"mnemo/contract"
)

// A bulk load defers the ordered keys (by_updated, by_created,
// by_confidence) of the records it stores, as it defers the search index:
// putting them was a sixth of a 100k load's time, by_confidence's random
// keys dirtying a page of their own for most records. The store notes the
// first ordinal whose keys may be missing (keyOrderedFrom, in the meta
// bucket, written in the transaction that first skips them), and once the
// load has ended the keys of every live record from that ordinal on are
// put in key order, a chunk of ordinals a transaction, the mark moving
// with each (finishOrdered). Until then the readers that walk the keys do
// without: browse ranks the table's rows, list and export page through the
// table, and the cold paths wait for it. A key a later write puts for a
// record past the mark (a restatus, a write that is not bulk) is put again
// by the finish, unchanged, so the finish needs no record of them.
var keyOrderedFrom = []byte("ordered_from")

// orderedChunk is how many ordinals one transaction of the finish covers:
// calls wait for one chunk at most. A chunk of 8,192 took 40-60 ms at 100k,
// but the 13 chunks of a 100k load took 0.55-0.8 s where 2 took 0.3-0.4:
// each commit waits for its syncs.
const orderedChunk = 1 << 16

// keysGrace is how long after open a process that found keys deferred
// waits before it puts them: a short command (a browse right after an
// import) closes before it would start; a holder that stays does it, and
// WaitIndex does it at once.
const keysGrace = time.Second

// orderedState is what this process knows of the deferred keys; from is
// guarded by the engine's mu, and deferred is set and cleared under it.
type orderedState struct {
	deferred atomic.Bool
	from     uint32
	// finishing serializes finishOrdered.
	finishing sync.Mutex
}

// loadOrdered reads the mark at open.
func (e *Engine) loadOrdered(meta *bbolt.Bucket) {
	if v := meta.Get(keyOrderedFrom); len(v) == 4 {
		e.ordered.from = binary.BigEndian.Uint32(v)
		e.ordered.deferred.Store(true)
	}
}

// errKeysDeferred is scanCreatedFrom's answer while keys are deferred: the
// walk would miss records, scanCreatedTable does not.
var errKeysDeferred = errors.New("ordered keys deferred")

// keysDeferred tells whether some records may lack their ordered keys.
func (e *Engine) keysDeferred() bool { return e.ordered.deferred.Load() }

// deferKeysIn marks, in tx, the keys of the records from ord on as deferred
// unless an earlier mark stands; the caller holds mu and calls
// keysDeferredFrom once tx has committed.
func (e *Engine) deferKeysIn(tx *bbolt.Tx, ord uint32) error {
	if e.ordered.deferred.Load() {
		return nil
	}
	return tx.Bucket(bucketMeta).Put(keyOrderedFrom, binary.BigEndian.AppendUint32(nil, ord))
}

// keysDeferredFrom records in memory the mark deferKeysIn wrote.
func (e *Engine) keysDeferredFrom(ord uint32) {
	if !e.ordered.deferred.Load() {
		e.ordered.from = ord
		e.ordered.deferred.Store(true)
	}
}

// startFinishingKeys finishes, in the background, the keys a bulk load left
// deferred (the last process's, found at open).
func (e *Engine) startFinishingKeys() {
	if !e.keysDeferred() || e.opts.ReadOnly {
		return
	}
	e.goBackground(func() {
		select {
		case <-e.closing:
			return
		case <-time.After(keysGrace):
		}
		if err := e.finishOrdered(context.Background()); err != nil && !e.closed.Load() {
			e.log.Error("putting the ordered keys a bulk load deferred failed", "err", err)
		}
	})
}

// finishOrdered puts the deferred keys, unless a bulk load is running here
// (its end starts it again) or the store is read-only. It needs the table,
// whose rows give each record's keys as its last write left them, and runs
// until every key is in, the store closes or ctx ends.
func (e *Engine) finishOrdered(ctx context.Context) error {
	if !e.keysDeferred() || e.opts.ReadOnly {
		return nil
	}
	if err := e.waitTable(ctx); err != nil {
		return err
	}
	e.ordered.finishing.Lock()
	defer e.ordered.finishing.Unlock()
	for e.keysDeferred() && !e.bulk.Load() {
		select {
		case <-e.closing:
			return nil
		default:
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := e.finishOrderedChunk(); err != nil {
			return contract.AsError(err)
		}
	}
	return nil
}

// finishOrderedChunk puts the keys of the live records of one chunk of
// ordinals and moves the mark past it (or clears it, at the last ordinal).
func (e *Engine) finishOrderedChunk() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.ordered.deferred.Load() {
		return nil
	}
	from := e.ordered.from
	end := min(uint64(from)+orderedChunk, uint64(e.nextOrd))
	t := e.t
	type key struct {
		k   []byte
		ord uint32
	}
	var times [2][]key // updated, created
	var confs []key
	for ord := uint64(from); ord < end; ord++ {
		o := uint32(ord)
		if int(o) >= len(t.alive) || !t.alive[o] {
			continue
		}
		r, id := &t.rows[o], t.idOf(o)
		times[0] = append(times[0], key{descMillisKey(r.updated, id), o})
		times[1] = append(times[1], key{descMillisKey(r.created, id), o})
		if kindByCode[r.kind] == contract.KindLearning {
			confs = append(confs, key{confKey(r.conf, id), o})
		}
	}
	byKey := func(a, b key) int { return bytes.Compare(a.k, b.k) }
	err := e.db.Update(func(tx *bbolt.Tx) error {
		fillBulk(tx)
		for i, b := range [][]byte{bucketUpdated, bucketCreated, bucketConf} {
			keys := confs
			if i < 2 {
				keys = times[i]
			}
			slices.SortFunc(keys, byKey)
			bk := tx.Bucket(b)
			for _, k := range keys {
				if err := bk.Put(k.k, ordValue(k.ord)); err != nil {
					return err
				}
			}
		}
		meta := tx.Bucket(bucketMeta)
		if end >= uint64(e.nextOrd) {
			return meta.Delete(keyOrderedFrom)
		}
		return meta.Put(keyOrderedFrom, binary.BigEndian.AppendUint32(nil, uint32(end)))
	})
	if err != nil {
		return err
	}
	if end >= uint64(e.nextOrd) {
		e.ordered.deferred.Store(false)
	} else {
		e.ordered.from = uint32(end)
	}
	return nil
}

// scanCreatedTable is scanCreatedFrom while keys are deferred: the table's
// live rows that f admits, after the cursor key after, newest created_at
// first and then by id (the order of by_created's keys), up to limit.
func (e *Engine) scanCreatedTable(ctx context.Context, f contract.MetaFilter, after []byte, limit int, part recordPart,
	emit func(string, *storedRecord) error) (*string, error) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	t := e.t
	p := t.compileFilter(f, false)
	afterMs, afterID, hasAfter := int64(0), "", false
	if after != nil {
		afterMs, afterID, hasAfter = splitDescMillisKey(after)
	}
	// by_created's order: created_at descending, then id, as browse sorts.
	order := []contract.SortKey{{Field: contract.BrowseFieldCreatedAt, Dir: contract.SortDesc}}
	cursor := []bval{{ok: true, ms: afterMs}}
	// The best limit+1 rows, so a page costs one pass over the rows.
	h := rowHeap{t: t, order: order, max: limit + 1}
	for ord, alive := range t.alive {
		o := uint32(ord)
		if !alive || !p.match(&t.rows[o]) || hasAfter && !t.afterCursor(order, cursor, afterID, &t.rows[o]) {
			continue
		}
		h.offer(o)
		if ord%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, contract.Unavailable("%w", err)
			}
		}
	}
	ords := h.sorted()
	var next *string
	if len(ords) > limit {
		ords = ords[:limit]
		last := ords[limit-1]
		next = encodeListCursor(descMillisKey(t.rows[last].created, t.idOf(last)))
	}
	err := e.readView(func(tx *bbolt.Tx, recs *recordReader) error {
		for _, o := range ords {
			id := t.idOf(o)
			s, err := e.codec.decode(recs.Get([]byte(id)), part, t.namespaceOf)
			if err != nil {
				return contract.EngineErr("record %s: %w", id, err)
			}
			if err := emit(id, &s); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, contract.AsError(err)
	}
	return next, nil
}
