package bolt

import (
	"context"
	"encoding/binary"
	"math"
	"strings"
	"time"

	bbolt "go.etcd.io/bbolt"

	"mnemo/contract"
	"mnemo/engine/bolt/internal/index"
	"mnemo/engine/bolt/internal/vecblock"
)

// applyChunk bounds how many records one Bleve batch carries when the outbox
// or a rebuild has a lot to apply.
const applyChunk = 2000

// catchUpChunk is the Bleve batch when the index is far behind: more than
// catchUpBehind writes (a bulk load's backlog).
const (
	catchUpChunk  = 10000
	catchUpBehind = 100
)

// gatherWrites is how many pending writes (store_many calls of up to 100
// records) make the background worker apply at once; gatherQuiet is the quiet
// spell after which it applies fewer. An import stores a batch every ~50-100
// ms, so a shorter spell would apply one small batch per call.
const (
	gatherWrites = 10
	gatherQuiet  = 250 * time.Millisecond
)

// indexWorker applies the outbox in the background after store_many, forget,
// review and supersede, coalescing bursts into few Bleve batches.
func (e *Engine) indexWorker() {
	for {
		select {
		case <-e.closing:
			return
		case <-e.kick:
			if e.bulk.Load() {
				// A bulk load defers the index: it catches up in large
				// batches when the load ends (or at the next open).
				continue
			}
			// Let a burst of batches accumulate into one Bleve batch: wait for
			// a quiet spell or enough writes, but never longer than a bounded
			// lag. Small Bleve batches cost a persisted segment each and then
			// merges, which measured as most of an import's indexing CPU;
			// nothing waits on this lag (fetch applies the outbox itself).
			deadline := time.After(3 * time.Second)
		gather:
			for e.committed.Load()-e.idx.applied.Load() < gatherWrites {
				select {
				case <-e.closing:
					return
				case <-e.kick:
				case <-deadline:
					break gather
				case <-time.After(gatherQuiet):
					break gather
				}
			}
			if err := e.flushIndex(context.Background()); err != nil {
				e.log.Error("index update failed", "err", err)
			}
		}
	}
}

// flushIndex applies every outbox entry the index lacks; callers that need
// ranked reads to see all earlier writes call it first. During a rebuild it
// does nothing (the rebuild catches up when it ends).
func (e *Engine) flushIndex(ctx context.Context) error {
	if e.opts.ReadOnly {
		// A read-only store ranks what its index holds: it cannot apply more.
		return nil
	}
	// Queued texts join the content index here, off the write path.
	defer e.drainContent()
	defer e.kickLearn()
	if e.idx.rebuilding.Load() || e.idx.applied.Load() >= e.committed.Load() {
		return nil
	}
	e.idx.applyMu.Lock()
	defer e.idx.applyMu.Unlock()
	if e.idx.rebuilding.Load() || e.closed.Load() && e.ix == nil {
		return nil
	}
	// A large backlog (after a bulk load) is applied in larger Bleve
	// batches: fewer segments to write and to merge.
	chunk := applyChunk
	if e.committed.Load()-e.idx.applied.Load() > catchUpBehind {
		chunk = catchUpChunk
	}
	for {
		select {
		case <-e.closing:
			// What is left is replayed from the outbox at the next open.
			return contract.Unavailable("the store is closed")
		default:
		}
		applied := e.idx.applied.Load()
		var docs []index.Doc
		var deletes []string
		var upto uint64
		err := e.db.View(func(tx *bbolt.Tx) error {
			recs := e.records(tx)
			seen := map[string]bool{}
			c := tx.Bucket(bucketOutbox).Cursor()
			for k, v := c.Seek(seqKey(applied + 1)); k != nil; k, v = c.Next() {
				for _, id := range strings.Split(string(v), "\n") {
					if seen[id] {
						continue
					}
					seen[id] = true
					rv := recs.Get(id)
					if rv == nil {
						deletes = append(deletes, id)
						continue
					}
					s, err := e.codec.decode(rv, partHit, parseNS)
					if err != nil {
						return contract.EngineErr("record %s: %w", id, err)
					}
					docs = append(docs, docOf(id, &s))
				}
				upto = getU64(k)
				if len(seen) >= chunk {
					break
				}
			}
			return nil
		})
		if err != nil {
			return contract.AsError(err)
		}
		if upto <= applied {
			if chunk == catchUpChunk {
				// Only after a backlog: a trickle's entries go with the
				// next write, in its transaction, not in one more fsync.
				if err := e.pruneOutbox(); err != nil {
					e.log.Error("pruning the outbox failed", "err", err)
				}
			}
			e.maybeMergeIndex()
			return nil
		}
		if err := e.ix.Apply(docs, deletes, upto); err != nil {
			e.setIndexErr(err)
			return contract.EngineErr("update the search index: %w", err)
		}
		if chunk == catchUpChunk {
			e.idx.sinceMerge.Add(int64(len(docs)))
		}
		if err := e.embedDocs(ctx, docs); err != nil {
			e.setIndexErr(err)
			e.log.Error("embedding failed", "err", err)
		} else {
			e.setIndexErr(nil)
		}
		e.idx.applied.Store(upto)
		if chunk == catchUpChunk {
			// A catch-up reads every record once: let their pages go.
			e.releasePages()
		}
	}
}

// mergeAfterDocs is how many documents catch-ups (a bulk load's, an
// import's, a rebuild's) must have applied before the index is merged (and
// at least half the index, so a store loaded in steps merges a few times,
// not at every step), and mergeAboveSegments how many segments it must
// have. Scorch merges in tiers as batches come and leaves a bulk-loaded
// index in a dozen segments, each of which a query walks in turn: merged,
// the 1M bench store's keyword fetch took p50 3.0 ms against 4.4 to 4.9
// (index.Merge). A trickle of writes never calls for it.
const (
	mergeAfterDocs     = 20000
	mergeAboveSegments = 3
)

// maybeMergeIndex merges the index in the background, while it serves, once
// catch-ups have applied mergeAfterDocs documents (and half the index) to an
// index of more than mergeAboveSegments segments. WaitIndex waits for it, so
// what waits for the index to catch up (an import's exit, the bench) finds
// it merged. It is skipped while the store closes (a later catch-up's end
// tries again). The caller holds idx.applyMu, after its last batch.
func (e *Engine) maybeMergeIndex() {
	after := int64(e.opts.IndexMergeAfter)
	if after == 0 {
		after = mergeAfterDocs
	}
	if after < 0 || e.opts.ReadOnly || e.bulk.Load() {
		return
	}
	if since := e.idx.sinceMerge.Load(); since < after {
		return
	} else if docs, err := e.ix.DocCount(); err != nil || uint64(since) < docs/2 {
		return
	}
	if e.ix.SegmentCount() <= mergeAboveSegments || !e.idx.merging.CompareAndSwap(false, true) {
		return
	}
	// Close holds closeMu while it waits for the background work: one that
	// has begun does not start more.
	if !e.closeMu.TryLock() {
		e.idx.merging.Store(false)
		return
	}
	defer e.closeMu.Unlock()
	if e.closed.Load() {
		e.idx.merging.Store(false)
		return
	}
	e.idx.sinceMerge.Store(0)
	e.goBackground(func() {
		defer e.idx.merging.Store(false)
		ctx, cancel := e.untilClosed(context.Background())
		defer cancel()
		e.idx.mu.RLock()
		defer e.idx.mu.RUnlock()
		start, segments := time.Now(), e.ix.SegmentCount()
		if err := e.ix.MergeSegments(ctx); err != nil {
			if ctx.Err() == nil {
				e.log.Warn("merging the search index failed; it answers as it is", "err", err)
			}
			return
		}
		e.log.Info("search index merged", "segments", segments, "took", time.Since(start))
	})
}

func docOf(id string, s *storedRecord) index.Doc {
	d := index.Doc{ID: id, Kind: s.kind, Text: s.text, Meta: s.meta, Status: s.status,
		CreatedAt: time.UnixMilli(s.created).UTC(), UpdatedAt: time.UnixMilli(s.updated).UTC()}
	if s.kind == contract.KindLearning {
		d.Confidence = contract.Ptr(s.confidence)
	}
	if s.expires != noTime {
		d.ExpiresAt = contract.Ptr(time.Unix(0, s.expires).UTC())
	}
	return d
}

// rebuildIndex refills a fresh index from the record. It notes the sequence
// first and reads the records in chunks; every write after that sequence is
// in the outbox and is applied once the refill ends, so nothing is missed
// even though the chunks are not one snapshot. A marker in bbolt makes an
// interrupted rebuild start over at the next open.
func (e *Engine) rebuildIndex() error {
	e.idx.applyMu.Lock()
	err := e.db.Update(func(tx *bbolt.Tx) error { return tx.Bucket(bucketMeta).Put(keyRebuild, []byte{1}) })
	if err != nil {
		e.idx.applyMu.Unlock()
		return contract.AsError(err)
	}
	total := e.Len()
	e.mu.RLock()
	start := e.seq
	e.idx.total.Store(int64(total))
	e.mu.RUnlock()
	e.idx.done.Store(0)
	var after []byte
	for {
		select {
		case <-e.closing:
			e.idx.applyMu.Unlock()
			return nil
		default:
		}
		var docs []index.Doc
		err := e.db.View(func(tx *bbolt.Tx) error {
			recs := e.records(tx)
			c := recs.Cursor()
			k, v := seekAfter(c, after)
			for ; k != nil && len(docs) < applyChunk; k, v = c.Next() {
				s, err := e.codec.decode(v, partHit, parseNS)
				if err != nil {
					return contract.EngineErr("record %s: %w", recs.id(k), err)
				}
				docs = append(docs, docOf(recs.id(k), &s))
				after = append(after[:0], k...)
			}
			return nil
		})
		if err != nil {
			e.idx.applyMu.Unlock()
			return contract.AsError(err)
		}
		e.scanned(len(docs), len(docs) == 0)
		if len(docs) == 0 {
			break
		}
		if err := e.ix.Apply(docs, nil, 0); err != nil {
			e.idx.applyMu.Unlock()
			return contract.EngineErr("rebuild the search index: %w", err)
		}
		e.idx.done.Add(int64(len(docs)))
		e.idx.sinceMerge.Add(int64(len(docs)))
	}
	if err := e.ix.Apply(nil, nil, start); err != nil {
		e.idx.applyMu.Unlock()
		return contract.EngineErr("rebuild the search index: %w", err)
	}
	err = e.db.Update(func(tx *bbolt.Tx) error { return tx.Bucket(bucketMeta).Delete(keyRebuild) })
	if err != nil {
		e.idx.applyMu.Unlock()
		return contract.AsError(err)
	}
	e.idx.applied.Store(start)
	// Merging is set before rebuilding is cleared, so a WaitIndex sees one
	// or the other and does not return before the merge.
	e.maybeMergeIndex()
	e.idx.rebuilding.Store(false)
	e.idx.applyMu.Unlock()
	e.log.Info("search index rebuilt", "records", e.idx.done.Load())
	return e.flushIndex(context.Background())
}

// Before schema 5 a vector was stored as the model id, a zero byte, a
// float32 scale and one int8 per dimension (value = int8 * scale), keyed by
// its record's id; migrateVectors reads them into blocks.

func decodeVector(b []byte, model string, dim int) ([]float32, bool) {
	if dim <= 0 {
		// A lazily sized embedder: take the stored length.
		dim = len(b) - len(model) - 5
	}
	if dim <= 0 || len(b) != len(model)+5+dim || string(b[:len(model)]) != model || b[len(model)] != 0 {
		return nil, false
	}
	b = b[len(model)+1:]
	scale := math.Float32frombits(binary.LittleEndian.Uint32(b))
	out := make([]float32, dim)
	for i := range out {
		out[i] = float32(int8(b[4+i])) * scale
	}
	return out, true
}

// loadVectors migrates vectors of the layout before blocks, then reads
// which ordinals hold a vector of which model from the blocks' tags, in
// chunks (no long read transaction, the engine's lock held only to apply
// each chunk); records without one are embedded by embedMissing. A row of a
// record that is gone (its clearing lost to a crash) is cleared.
func (e *Engine) loadVectors() error {
	e.useStoredGeneration()
	if err := e.migrateVectors(); err != nil {
		return err
	}
	v := e.vec.store
	e.mu.Lock()
	v.use(e.embedder.Model())
	e.mu.Unlock()
	var after uint32
	first := true
	for {
		select {
		case <-e.closing:
			return nil
		default:
		}
		type row struct{ ord, tag uint32 }
		var rows []row
		blocks := 0
		// The lock is not taken inside the transaction: a writer holding it
		// may be waiting for bbolt to remap, which waits for this one.
		e.mu.RLock()
		dim := v.dim
		e.mu.RUnlock()
		err := e.db.View(func(tx *bbolt.Tx) error {
			c := tx.Bucket(bucketVecBlocks).Cursor()
			k, val := c.First()
			if !first {
				k, val = c.Seek(vecblock.Key(after + 1))
			}
			for ; k != nil && blocks < 64; k, val = c.Next() {
				blocks++
				if len(k) != 4 {
					continue
				}
				after, first = binary.BigEndian.Uint32(k), false
				blk, ok := vecblock.Parse(val)
				if ok && dim == 0 {
					dim = blk.Dim // an embedder that learns its length
				}
				if !ok || blk.Dim != dim {
					continue // unreadable, or of another embedder: its rows are embedded again
				}
				for r := range blk.N {
					if tag := blk.Tag(r); tag != 0 {
						rows = append(rows, row{after*vecBlockRows + uint32(r), tag})
					}
				}
			}
			return nil
		})
		if err != nil {
			return contract.AsError(err)
		}
		e.scanned(len(rows), blocks == 0)
		if blocks == 0 {
			return nil
		}
		e.mu.Lock()
		if v.dim == 0 {
			v.dim = dim
		}
		for _, r := range rows {
			if _, pending := v.pending[r.ord]; pending {
				continue
			}
			if int(r.ord) < len(e.t.alive) && e.t.alive[r.ord] {
				v.setTag(r.ord, r.tag)
			} else {
				v.gen++
				v.pending[r.ord] = pendingRow{gen: v.gen}
			}
		}
		e.mu.Unlock()
	}
}

// migrateVectors moves the vectors of the layout before blocks (one per
// record, keyed by id) into blocks, in ordinal order so that each commit
// writes a few whole blocks, then drops the old bucket. A crash part way
// leaves the old bucket, and the next load goes on from the start (the rows
// already moved are written again, unchanged).
func (e *Engine) migrateVectors() error {
	has := false
	_ = e.db.View(func(tx *bbolt.Tx) error {
		has = tx.Bucket(bucketVectors) != nil
		return nil
	})
	if !has {
		return nil
	}
	model, dim := e.embedder.Model(), e.embedder.Dim()
	v := e.vec.store
	moved := 0
	for start := 0; ; start += maxPendingVectors {
		select {
		case <-e.closing:
			return nil
		default:
		}
		done := false
		e.mu.Lock()
		err := e.db.Update(func(tx *bbolt.Tx) error {
			old := tx.Bucket(bucketVectors)
			end := min(start+maxPendingVectors, len(e.t.alive))
			for ord := start; ord < end; ord++ {
				if !e.t.alive[ord] {
					continue
				}
				if vec, ok := decodeVector(old.Get([]byte(e.t.idOf(uint32(ord)))), model, dim); ok && (v.dim == 0 || len(vec) == v.dim) {
					v.upsert(uint32(ord), model, vec)
					moved++
				}
			}
			if err := v.writeBlocks(tx, nil, true); err != nil {
				return err
			}
			if end >= len(e.t.alive) {
				done = true
				return tx.DeleteBucket(bucketVectors)
			}
			return nil
		})
		e.mu.Unlock()
		if err != nil {
			return contract.EngineErr("migrate the vectors into blocks: %w", err)
		}
		if done {
			e.log.Info("vectors moved into blocks", "vectors", moved)
			return nil
		}
	}
}

// embedMissing embeds every record without a vector of the model in use (a
// new store after a crash, or a changed embedding model), in chunks.
func (e *Engine) embedMissing(ctx context.Context) error {
	e.mu.RLock()
	var missing []string
	for ord, alive := range e.t.alive {
		if alive && !e.vec.store.has(uint32(ord)) {
			missing = append(missing, e.t.idOf(uint32(ord)))
		}
	}
	e.mu.RUnlock()
	for start := 0; start < len(missing); start += 256 {
		select {
		case <-e.closing:
			return nil
		default:
		}
		ids := missing[start:min(start+256, len(missing))]
		var docs []index.Doc
		err := e.db.View(func(tx *bbolt.Tx) error {
			recs := e.records(tx)
			for _, id := range ids {
				if v := recs.Get(id); v != nil {
					s, err := e.codec.decode(v, partHit, parseNS)
					if err != nil {
						return err
					}
					docs = append(docs, index.Doc{ID: id, Text: s.text})
				}
			}
			return nil
		})
		if err != nil {
			return contract.AsError(err)
		}
		if err := e.embedDocs(ctx, docs); err != nil {
			return err
		}
	}
	return nil
}

// embedDocs embeds the docs without a vector of the model in use and adds
// them (only while the record still exists, so a forget racing the
// embedding leaves no vector behind).
func (e *Engine) embedDocs(ctx context.Context, docs []index.Doc) error {
	if e.vec.store == nil || len(docs) == 0 {
		return nil
	}
	e.useStoredGeneration()
	model := e.embedder.Model()
	var ids, texts []string
	e.mu.Lock()
	// The model in use first: has() answers for it.
	e.vec.store.use(model)
	for i := range docs {
		if ord, alive := e.t.ordOfID(docs[i].ID); alive && !e.vec.store.has(ord) {
			ids = append(ids, docs[i].ID)
			texts = append(texts, docs[i].Text)
		}
	}
	e.mu.Unlock()
	if len(ids) == 0 {
		return nil
	}
	vecs := make([][]float32, 0, len(ids))
	for start := 0; start < len(texts); start += 64 {
		got, err := e.embedder.Embed(ctx, texts[start:min(start+64, len(texts))])
		if err != nil {
			return err
		}
		vecs = append(vecs, got...)
	}
	if len(vecs) != len(ids) {
		return contract.EngineErr("the embedder returned %d vectors for %d texts", len(vecs), len(ids))
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.embedder.Model() != model {
		// A learned generation came into use meanwhile: its re-embedding
		// covers these records.
		return nil
	}
	want := e.embedder.Dim()
	if want == 0 {
		want = e.vec.store.dim
	}
	for i := range ids {
		if len(vecs[i]) == 0 || want > 0 && len(vecs[i]) != want {
			return contract.EngineErr("the embedder returned a vector of length %d, want %d", len(vecs[i]), want)
		}
	}
	for i, id := range ids {
		if ord, alive := e.t.ordOfID(id); alive {
			e.vec.store.upsert(ord, model, vecs[i])
		}
	}
	// A catch-up after a bulk load embeds every record: the waiting vectors
	// are written in batches of their own rather than held until Close.
	if len(e.vec.store.pending) >= maxPendingVectors {
		if err := e.db.Update(func(tx *bbolt.Tx) error { return e.vec.store.writeBlocks(tx, nil, true) }); err != nil {
			e.log.Error("saving vectors failed; they are recomputed at the next open", "err", err)
		}
	}
	return nil
}

// maxPendingVectors is how many embedded vectors wait for a write before
// they are written on their own.
const maxPendingVectors = 4096
