package bolt

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"math"
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
// ordinals whose keys may be missing, [from, upto), and a time, below, that
// no such record's created_at or updated_at passes (keyOrderedFrom, in the
// meta bucket, written in each transaction that skips keys). They are put
// newest first, in key order, a chunk of ordinals a transaction, the mark
// shrinking with each (finishOrdered): the load's end puts the newest chunk
// before the loader goes on, the rest follows in the background (or in the
// process an import hands its work to). Meanwhile a walk of by_updated or
// by_created is exact down to below: every key newer than that is there, so
// the first pages (the newest records, a bulk load's last ones) still come
// from the walk; a walk that would go further is left for the table's
// ranking, and so is by_confidence, list and export. A key a later write
// puts for a record in the range (a restatus, a write that is not bulk) is
// put again by the finish, unchanged, so the finish needs no record of them.
var keyOrderedFrom = []byte("ordered_from")

// The time keys. by_created holds every record's key, (created_at, id),
// its value the ordinal and, when the record's updated_at differs from its
// created_at, the byte movedMark. by_updated holds the keys (updated_at,
// id) of those moved records only: a record never changed since its
// creation, most of a store and every record a bulk load writes, stands in
// updated order where its by_created key stands, since the two times are
// one. A walk in updated order merges the two (walkUpdated). At 1M bench
// records that leaves by_updated nearly empty, where it took 48.7 MB.
const movedMark = 1

// createdValue is a by_created value: the ordinal, and movedMark when
// updated_at is not created_at.
func createdValue(ord uint32, created, updated int64) []byte {
	v := ordValue(ord)
	if created != updated {
		v = append(v, movedMark)
	}
	return v
}

// movedValue tells whether a by_created value marks its record moved.
func movedValue(v []byte) bool { return len(v) == 5 && v[4] == movedMark }

// putTimeKeys puts a record's time keys: by_created's, and by_updated's
// when it has moved.
func putTimeKeys(tx *bbolt.Tx, id string, ord uint32, created, updated int64) error {
	if err := tx.Bucket(bucketCreated).Put(descMillisKey(created, id), createdValue(ord, created, updated)); err != nil {
		return err
	}
	if created == updated {
		return nil
	}
	return tx.Bucket(bucketUpdated).Put(descMillisKey(updated, id), ordValue(ord))
}

// deleteTimeKeys deletes the time keys putTimeKeys put for these times.
func deleteTimeKeys(tx *bbolt.Tx, id string, created, updated int64) error {
	if err := tx.Bucket(bucketCreated).Delete(descMillisKey(created, id)); err != nil {
		return err
	}
	if created == updated {
		return nil
	}
	return tx.Bucket(bucketUpdated).Delete(descMillisKey(updated, id))
}

// walkUpdated visits the keys of updated order after seek (from the first
// when nil), as walkAfter visits one bucket's: by_updated's keys merged
// with by_created's of the records that have not moved, each visit with
// the key (whose time is the record's updated_at) and a value whose first
// four bytes are the ordinal. A moved record's by_created key is passed
// over when the walk reaches it, which is after its by_updated key
// (updated_at is never before created_at), so what is passed over is
// bounded by what is visited.
func walkUpdated(tx *bbolt.Tx, seek []byte, visit func(k, v []byte) bool) {
	created, updated := tx.Bucket(bucketCreated).Cursor(), tx.Bucket(bucketUpdated).Cursor()
	kc, vc := seekAfter(created, seek)
	ku, vu := seekAfter(updated, seek)
	for kc != nil || ku != nil {
		if kc != nil && (ku == nil || bytes.Compare(kc, ku) < 0) {
			if !movedValue(vc) && !visit(kc, vc) {
				return
			}
			kc, vc = created.Next()
			continue
		}
		if !visit(ku, vu) {
			return
		}
		ku, vu = updated.Next()
	}
}

// orderedChunk is how many ordinals one transaction of the finish covers:
// calls wait for one chunk at most. The load's end puts one. A chunk of
// 8,192 took 40-60 ms at 100k, but 13 of them took 0.55-0.8 s where 2 of
// 65,536 took 0.3-0.4 (each commit waits for its syncs).
const orderedChunk = 1 << 13

// orderedBatch is how many chunks the background finish puts a
// transaction. One: a writer queued behind a transaction (the index
// worker's embedding, in an import's finisher) holds every new read until
// that transaction ends, and with eight chunks a transaction the second
// browse right after `mnemo import` of 100k took 608-609 ms, with one
// 115-152 ms (the finish takes longer overall, in the background).
const orderedBatch = 1

// keysGrace is how long after open a process that found keys deferred
// waits before it puts them: a short command (a browse right after an
// import) closes before it would start; a holder that stays does it, and
// WaitIndex does it at once.
const keysGrace = time.Second

// orderedState is what this process knows of the deferred keys: the mark's
// fields, guarded by the engine's mu; deferred is set and cleared under it.
type orderedState struct {
	deferred atomic.Bool
	orderedMark
	chunk     int // orderedChunk; tests set fewer
	finishing sync.Mutex
}

// orderedMark is the range of ordinals whose keys may be missing.
type orderedMark struct {
	from, upto uint32
	below      int64 // unix ms
	// every says the range's records may lack their keys whatever their
	// times (a store whose keys are put again in a new form, rekeyOrdered),
	// not only those a bulk write left as it wrote them.
	every bool
}

// mark is the stored mark: from, upto, below, and a byte 1 when every.
func (o *orderedMark) mark() []byte {
	b := binary.BigEndian.AppendUint32(nil, o.from)
	b = binary.BigEndian.AppendUint32(b, o.upto)
	b = binary.BigEndian.AppendUint64(b, uint64(o.below))
	if o.every {
		b = append(b, 1)
	}
	return b
}

// parseMark reads a stored mark; ok is false when there is none. A mark
// of 4 bytes (from alone, as 7763b2c wrote it) covers every ordinal from
// it, at any time.
func parseMark(v []byte) (o orderedMark, ok bool) {
	switch len(v) {
	case 16, 17:
		o = orderedMark{from: binary.BigEndian.Uint32(v), upto: binary.BigEndian.Uint32(v[4:]), below: int64(binary.BigEndian.Uint64(v[8:]))}
		o.every = len(v) == 17 && v[16] == 1
		return o, true
	case 4:
		return orderedMark{from: binary.BigEndian.Uint32(v), upto: math.MaxUint32, below: math.MaxInt64}, true
	}
	return orderedMark{}, false
}

// loadOrdered reads the mark at open.
func (e *Engine) loadOrdered(meta *bbolt.Bucket) {
	if m, ok := parseMark(meta.Get(keyOrderedFrom)); ok {
		e.ordered.orderedMark = m
		e.ordered.deferred.Store(true)
	}
}

// rekeyOrdered empties the ordered keys' buckets of a store written before
// schema 11 (before schema 9 the keys held the ids' digits; before 11
// by_updated held every record's key) and marks every record's keys
// deferred, in tx: the finish puts them again in the new form, newest
// first, in the background, as it puts a bulk load's (the table ranks
// meanwhile). At 1M a rewrite in the opening transaction would hold the
// open for seconds and take a few hundred MB of pages in memory at once.
func rekeyOrdered(tx *bbolt.Tx) error {
	if b := tx.Bucket(bucketCreated); b == nil {
		return nil
	} else if k, _ := b.Cursor().First(); k == nil {
		return nil
	}
	for _, name := range [][]byte{bucketUpdated, bucketCreated, bucketConf} {
		if tx.Bucket(name) != nil {
			if err := tx.DeleteBucket(name); err != nil {
				return err
			}
		}
		if _, err := tx.CreateBucket(name); err != nil {
			return err
		}
	}
	o := orderedMark{from: 0, upto: math.MaxUint32, below: math.MaxInt64, every: true}
	return tx.Bucket(bucketMeta).Put(keyOrderedFrom, o.mark())
}

// errKeysDeferred is scanCreatedFrom's answer while keys are deferred: the
// walk would miss records, scanCreatedTable does not.
var errKeysDeferred = errors.New("ordered keys deferred")

// keysDeferred tells whether some records may lack their ordered keys.
func (e *Engine) keysDeferred() bool { return e.ordered.deferred.Load() }

// keyedAbove tells whether every record whose time (of the order walked) is
// ms has its key, so a walk may take the key; the caller holds mu.
func (e *Engine) keyedAbove(ms int64) bool {
	return !e.ordered.deferred.Load() || ms > e.ordered.below
}

// deferKeysIn marks, in tx, the keys of the records [first, end), written
// at now, as deferred, widening a mark that stands; the caller holds mu and
// calls keysDeferredFor(first, end, now) once tx has committed.
func (e *Engine) deferKeysIn(tx *bbolt.Tx, first, end uint32, now int64) error {
	o := e.widened(first, end, now)
	return tx.Bucket(bucketMeta).Put(keyOrderedFrom, o.mark())
}

// widened is the mark with [first, end) written at now added to it.
func (e *Engine) widened(first, end uint32, now int64) orderedMark {
	o := orderedMark{from: first, upto: end, below: now}
	if e.ordered.deferred.Load() {
		o.from, o.upto, o.below = min(first, e.ordered.from), max(end, e.ordered.upto), max(now, e.ordered.below)
		o.every = e.ordered.every
	}
	return o
}

// keysDeferredFor records in memory the mark deferKeysIn wrote.
func (e *Engine) keysDeferredFor(first, end uint32, now int64) {
	o := e.widened(first, end, now)
	e.ordered.orderedMark = o
	e.ordered.deferred.Store(true)
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
		if err := e.finishOrderedChunk(orderedBatch); err != nil {
			return contract.AsError(err)
		}
	}
	return nil
}

// finishNewestKeys puts the newest chunk of deferred keys (the load's end:
// the first pages walk them).
func (e *Engine) finishNewestKeys() error {
	if !e.keysDeferred() || e.opts.ReadOnly || !e.tables.loaded.Load() {
		return nil
	}
	e.ordered.finishing.Lock()
	defer e.ordered.finishing.Unlock()
	return e.finishOrderedChunk(1)
}

// finishOrderedChunk puts the keys of the live records of the newest n
// chunks of the range and shrinks the mark past them (or clears it), with
// below lowered to the newest time left in it.
//
// Its transaction runs under the read lock: that keeps writers out (a write
// that moved a record's times while its keys were being put could be undone
// by them), and lets reads go on. Under the write lock, as every write, a
// transaction of 65,536 ordinals at 1M held every browse for 1-2 s right
// after `mnemo import` (browses through its finisher took 0.8-2.7 s). The mark in memory is shrunk under the write lock once the
// transaction has committed; meanwhile readers use the mark as it was,
// which claims more keys missing than are, and walk less far. The caller
// holds ordered.finishing.
func (e *Engine) finishOrderedChunk(n int) error {
	e.mu.RLock()
	if !e.ordered.deferred.Load() {
		e.mu.RUnlock()
		return nil
	}
	o := &e.ordered
	from0, upto0 := o.from, o.upto
	size := orderedChunk
	if o.chunk > 0 {
		size = o.chunk
	}
	upto := min(uint64(o.upto), uint64(e.nextOrd))
	lo := max(uint64(o.from), upto-min(upto, uint64(n*size)))
	t := e.t
	type key struct {
		k, v []byte
	}
	var times [2][]key // updated, created
	var confs []key
	for ord := lo; ord < upto; ord++ {
		r := uint32(ord)
		if int(r) >= len(t.alive) || !t.alive[r] {
			continue
		}
		row, id := &t.rows[r], t.idOf(r)
		if row.updated != row.created {
			times[0] = append(times[0], key{descMillisKey(row.updated, id), ordValue(r)})
		}
		times[1] = append(times[1], key{descMillisKey(row.created, id), createdValue(r, row.created, row.updated)})
		if kindByCode[row.kind] == contract.KindLearning {
			confs = append(confs, key{confKey(row.conf, id), ordValue(r)})
		}
	}
	// What is left: [from, lo). A record there without its keys is as its
	// bulk write left it, created and updated at one time; one whose
	// updated_at moved since had its keys put by the write that moved it.
	// So below is the newest such time; when every key of the range may be
	// missing (rekeyOrdered), the newest time of any record there.
	done := lo <= uint64(o.from)
	below := int64(noTime)
	for ord := uint64(o.from); !done && ord < lo; ord++ {
		r := uint32(ord)
		if int(r) >= len(t.alive) || !t.alive[r] {
			continue
		}
		if row := &t.rows[r]; o.every {
			below = max(below, row.created, row.updated)
		} else if row.updated == row.created {
			below = max(below, row.created)
		}
	}
	left := orderedMark{from: o.from, upto: uint32(lo), below: below, every: o.every}
	byKey := func(a, b key) int { return bytes.Compare(a.k, b.k) }
	started := time.Now()
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
				if err := bk.Put(k.k, k.v); err != nil {
					return err
				}
			}
		}
		meta := tx.Bucket(bucketMeta)
		if done {
			return meta.Delete(keyOrderedFrom)
		}
		return meta.Put(keyOrderedFrom, left.mark())
	})
	e.mu.RUnlock()
	if err != nil {
		return err
	}
	e.log.Debug("put deferred ordered keys", "from", lo, "upto", upto, "done", done, "every", left.every,
		"seconds", time.Since(started).Seconds())
	e.mu.Lock()
	defer e.mu.Unlock()
	// A write between the two locks may have widened the mark (a bulk
	// write) or put every key (check --repair): then the mark it left
	// stands, and claims this chunk's keys missing until a next pass puts
	// them again, unchanged.
	if !o.deferred.Load() || o.from != from0 || o.upto != upto0 {
		return nil
	}
	if done {
		o.deferred.Store(false)
	} else {
		o.upto, o.below = left.upto, left.below
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
	afterMs, afterName, hasAfter := int64(0), "", false
	if after != nil {
		// The key ends with the id's name, which the table's hold too.
		if ms, _, ok := splitDescMillisKey(after); ok {
			afterMs, afterName, hasAfter = ms, string(after[8:]), true
		}
	}
	// by_created's order: created_at descending, then id, as browse sorts.
	order := []contract.SortKey{{Field: contract.BrowseFieldCreatedAt, Dir: contract.SortDesc}}
	cursor := []bval{{ok: true, ms: afterMs}}
	// The best limit+1 rows, so a page costs one pass over the rows.
	h := rowHeap{t: t, order: order, max: limit + 1}
	for ord := range t.alive {
		o := uint32(ord)
		if !t.matchOrd(&p, o) || hasAfter && !t.afterCursor(order, cursor, afterName, &t.rows[o]) {
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
			s, err := e.codec.decode(recs.Get(id), part, t.namespaceOf)
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
