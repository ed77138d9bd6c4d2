package bolt

import (
	"context"
	"time"

	bbolt "go.etcd.io/bbolt"

	"mnemo/contract"
)

// loadDelay is how long a large store waits after opening before it loads
// its table, unless a call needs the table sooner.
const loadDelay = 50 * time.Millisecond

// loadChunk is how many records the table loader reads per hold of the
// engine's write lock: writers wait at most one chunk.
const loadChunk = 1024

// loadTable fills the table from the records in chunks, each read in its own
// bbolt transaction under the write lock. Writers keep the table current
// meanwhile (put replaces a row the loader already read, remove and
// setStatus of a row not yet read do nothing, and the loader then reads the
// record as it is), so when the last chunk is read the table is exact. It
// closes tables.ready in every case; on failure or close tables.err says why.
func (e *Engine) loadTable() (err error) {
	defer func() {
		if err != nil {
			msg := err.Error()
			e.tables.err.Store(&msg)
		} else {
			e.tables.loaded.Store(true)
		}
		close(e.tables.ready)
	}()
	if e.opts.loadGate != nil {
		select {
		case <-e.opts.loadGate:
		case <-e.closing:
			return contract.Unavailable("the store is closed")
		}
	}
	// A short command (health, the first page, get) ends before this: it
	// then pays neither the load's CPU nor its memory. A call that needs the
	// table starts the load at once.
	select {
	case <-e.tables.wanted:
	case <-time.After(loadDelay):
	case <-e.closing:
		return contract.Unavailable("the store is closed")
	}
	if e.largeStore {
		if ok, err := e.loadSavedTable(); err != nil || ok {
			if err == nil {
				e.mu.Lock()
				err = e.tableLoadedHere(false)
				e.mu.Unlock()
			}
			return err
		}
	}
	e.mu.Lock()
	e.t.reserve(int(e.nextOrd))
	e.mu.Unlock()
	var after []byte
	for {
		select {
		case <-e.closing:
			return contract.Unavailable("the store is closed")
		default:
		}
		n := 0
		e.mu.Lock()
		err := e.db.View(func(tx *bbolt.Tx) error {
			recs := e.records(tx)
			c := recs.Cursor()
			k, v := seekAfter(c, after)
			for ; k != nil && n < loadChunk; k, v = c.Next() {
				if n%256 == 255 && e.closed.Load() {
					// A short command closing: leave at once, not after the chunk.
					return contract.Unavailable("the store is closed")
				}
				s, err := e.codec.decode(v, partHeader, e.t.namespaceOf)
				if err != nil {
					return contract.EngineErr("record %s: %w", recs.id(k), err)
				}
				e.t.put(recs.id(k), &s)
				after = append(after[:0], k...)
				n++
			}
			return nil
		})
		if err == nil && n == 0 {
			err = e.tableLoadedHere(true)
		}
		e.mu.Unlock()
		if err != nil {
			return contract.EngineErr("load store %s: %w", e.dir, err)
		}
		e.scanned(n, n == 0)
		if n == 0 {
			return nil
		}
	}
}

// tableLoadedHere finishes a load: the totals when the store lacked them,
// the stored root explore, and (after a load from the records) the saved
// table. The caller holds mu.
func (e *Engine) tableLoadedHere(fromRecords bool) error {
	if !e.totalsOK {
		if err := e.db.Update(e.writeTotals); err != nil {
			return err
		}
	}
	e.tables.loaded.Store(true)
	if err := e.saveExploreEntries(); err != nil {
		e.log.Error("saving the root explore failed; the next open waits for its table", "err", err)
	}
	if fromRecords && e.largeStore {
		if err := e.saveTable(e.feed.Seq()); err != nil {
			e.log.Error("saving the table failed; the next open loads it from the records", "err", err)
		}
	}
	return nil
}

// seekAfter positions c at the first key after after (the first key when
// after is nil): where a scan in chunks, each in its own transaction,
// resumes.
func seekAfter(c *bbolt.Cursor, after []byte) (k, v []byte) {
	if after == nil {
		return c.First()
	}
	k, v = c.Seek(after)
	if k != nil && string(k) == string(after) {
		k, v = c.Next()
	}
	return k, v
}

// releaseEvery is how many records background scans read between two
// releases of the mapped pages they touched: at a few KB a record, a
// browsing process keeps about 16 MB of the file resident, not the file.
const releaseEvery = 4096

// scanned notes that a background scan read n records (or stopped, done)
// and releases the store's pages once scans together read releaseEvery.
// Scans running side by side (the table, the content index, the vectors)
// share the count, so their pages go together.
func (e *Engine) scanned(n int, done bool) {
	if e.scannedSince.Add(int64(n)) >= releaseEvery || done {
		e.releasePages()
	}
}

// recordReader reads records in a foreground read and counts them.
type recordReader struct {
	b recordsBucket
	n int
}

func (r *recordReader) Get(id string) []byte {
	r.n++
	return r.b.Get(id)
}

// readView runs fn in a read transaction whose record reads go through
// recs, so the pages a long-lived process's reads touch (pages of browse,
// lists, hits) are released with the background scans' and the file does
// not creep into its resident set.
func (e *Engine) readView(fn func(tx *bbolt.Tx, recs *recordReader) error) error {
	var recs recordReader
	err := e.db.View(func(tx *bbolt.Tx) error {
		recs.b = e.records(tx)
		return fn(tx, &recs)
	})
	e.scanned(recs.n, false)
	return err
}

// writeTotals replaces the per-namespace totals with the table's (a store
// written before they were kept); the caller holds mu with the table loaded.
func (e *Engine) writeTotals(tx *bbolt.Tx) error {
	if err := tx.DeleteBucket(bucketTotals); err != nil && tx.Bucket(bucketTotals) != nil {
		return err
	}
	b, err := tx.CreateBucket(bucketTotals)
	if err != nil {
		return err
	}
	for ns, c := range e.t.nsTotal {
		if err := b.Put([]byte(e.t.ns.Val(ns)), putU64(c)); err != nil {
			return err
		}
	}
	if err := tx.Bucket(bucketMeta).Put(keyTotalsOK, []byte{1}); err != nil {
		return err
	}
	e.totalsOK = true
	return nil
}

// bumpTotals applies per-namespace deltas inside a write transaction.
func bumpTotals(tx *bbolt.Tx, deltas map[string]int64) error {
	b := tx.Bucket(bucketTotals)
	for ns, d := range deltas {
		if d == 0 {
			continue
		}
		c := int64(getU64(b.Get([]byte(ns)))) + d
		var err error
		if c <= 0 {
			err = b.Delete([]byte(ns))
		} else {
			err = b.Put([]byte(ns), putU64(uint64(c)))
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// waitTable waits until the table holds every record. Callers must not hold
// mu (the loader needs it).
func (e *Engine) waitTable(ctx context.Context) error {
	select {
	case <-e.tables.ready:
	default:
		e.tables.want.Do(func() { close(e.tables.wanted) })
		select {
		case <-e.tables.ready:
		case <-ctx.Done():
			return contract.Unavailable("the store is still loading: %w", ctx.Err())
		case <-e.closing:
			return contract.Unavailable("the store is closed")
		}
	}
	if p := e.tables.err.Load(); p != nil {
		if e.closed.Load() {
			return contract.Unavailable("the store is closed")
		}
		return contract.EngineErr("the store's tables could not be loaded: %s", *p)
	}
	return nil
}

// coldTotals reads the per-namespace totals from bbolt, for answers given
// before the table has loaded; ok is false when they are not known to be
// exact. The caller holds mu (read) so the totals match tx's snapshot.
func (e *Engine) coldTotals(tx *bbolt.Tx, reach *contract.Reach, all bool) (total int, ok bool) {
	if !e.totalsOK {
		return 0, false
	}
	_ = tx.Bucket(bucketTotals).ForEach(func(k, v []byte) error {
		if all || contract.AdmittedBy(reach, e.t.namespaceOf(string(k))) {
			total += int(getU64(v))
		}
		return nil
	})
	return total, true
}

// SetBulk marks the start and end of a bulk load (`mnemo import`). During
// one, writes stay durable and readable by list, get, browse, explore and
// forget as always, but the search index, the vectors, the content index
// and the ordered keys of its writes (ordered.go) are not maintained as the
// records arrive: their building competed with the
// writes for the same two cores. When the load ends, the index catches up in
// large batches in the background (or at the next open, which replays the
// outbox), the content index is rebuilt from the records, and fetch and
// recall wait for them as the contract allows.
func (e *Engine) SetBulk(on bool) {
	if e.closed.Load() || e.bulk.Load() == on {
		return
	}
	e.bulk.Store(on)
	if on {
		if !e.bulkUsed.Swap(true) {
			e.mu.RLock()
			e.filledInBulk.Store(e.nextOrd == 0)
			e.mu.RUnlock()
		}
		e.tri.Suspend()
		return
	}
	// The newest ordered keys at once, before the loader goes on: what
	// comes next (the first browse after `mnemo import`, through the process
	// it hands its work to) walks them, and without them waits for the table
	// and ranks it (95-150 ms at 100k, where the walk took 70). The rest
	// follow below, or in the process the work is handed to.
	if err := e.finishNewestKeys(); err != nil && !e.closed.Load() {
		e.log.Error("putting the ordered keys the bulk load deferred failed", "err", err)
	}
	e.closeMu.Lock()
	defer e.closeMu.Unlock()
	if e.closed.Load() {
		return
	}
	e.goBackground(func() {
		// A second's grace: `mnemo import` closes the store right after,
		// and a catch-up batch already begun would hold up its Close.
		select {
		case <-e.closing:
			return
		case <-time.After(bulkGrace):
		case <-e.hurry:
		}
		if err := e.finishOrdered(context.Background()); err != nil && !e.closed.Load() {
			e.log.Error("putting the ordered keys the bulk load deferred failed", "err", err)
		}
		e.kickIndex()
		// The learner too, beside the catch-up: woken only when the whole
		// catch-up had ended, it learned after the index had embedded every
		// record with the generation it then replaced. Now the catch-up
		// embeds with the new generation once it is in use, and the
		// re-embedding leaves those (the catch-up's embedding of a 100k
		// import: 9.0 s of CPU before, 3.5 s after).
		e.kickLearn()
		if err := e.buildTrigrams(); err != nil {
			e.log.Error("content index build failed", "err", err)
		}
	})
}

// bulkGrace is how long after a bulk load the deferred work begins.
const bulkGrace = time.Second

// ensureVectors starts loading the stored vectors (once), then embeds the
// records that lack one; vector search waits for the first step.
func (e *Engine) ensureVectors() {
	if e.vec.store == nil {
		return
	}
	e.vec.load.Do(func() {
		e.closeMu.Lock()
		defer e.closeMu.Unlock()
		if e.closed.Load() {
			return
		}
		e.goBackground(func() {
			err := e.waitTable(context.Background())
			if err == nil {
				err = e.loadVectors()
			}
			close(e.vec.ready)
			if err == nil {
				err = e.embedMissing(context.Background())
			}
			if err == nil {
				err = e.codeBlocks()
			}
			if err != nil {
				e.log.Error("loading or embedding vectors failed", "err", err)
				return
			}
			close(e.vec.complete)
		})
	})
}

// waitVectors waits until every record has its vector (Check needs them all).
func (e *Engine) waitVectors(ctx context.Context) error {
	if e.vec.store == nil {
		return nil
	}
	e.ensureVectors()
	select {
	case <-e.vec.complete:
		return nil
	case <-e.closing:
		return contract.Unavailable("the store is closed")
	case <-ctx.Done():
		return contract.Unavailable("the vectors are still loading: %w", ctx.Err())
	}
}
