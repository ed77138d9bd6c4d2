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
)

// applyChunk bounds how many records one Bleve batch carries when the outbox
// or a rebuild has a lot to apply.
const applyChunk = 2000

// catchUpChunk is the Bleve batch when the index is far behind.
const catchUpChunk = 10000

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
			for e.committed.Load()-e.applied.Load() < gatherWrites {
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
	// Queued texts join the content index here, off the write path.
	defer e.drainContent()
	defer e.kickLearn()
	if e.rebuilding.Load() || e.applied.Load() >= e.committed.Load() {
		return nil
	}
	e.idxMu.Lock()
	defer e.idxMu.Unlock()
	if e.rebuilding.Load() || e.closed.Load() && e.ix == nil {
		return nil
	}
	// A large backlog (after a bulk load) is applied in larger Bleve
	// batches: fewer segments to write and to merge.
	chunk := applyChunk
	if e.committed.Load()-e.applied.Load() > 100 {
		chunk = catchUpChunk
	}
	for {
		select {
		case <-e.closing:
			// What is left is replayed from the outbox at the next open.
			return contract.Unavailable("the store is closed")
		default:
		}
		applied := e.applied.Load()
		var docs []index.Doc
		var deletes []string
		var upto uint64
		err := e.db.View(func(tx *bbolt.Tx) error {
			recs := tx.Bucket(bucketRecords)
			seen := map[string]bool{}
			c := tx.Bucket(bucketOutbox).Cursor()
			for k, v := c.Seek(seqKey(applied + 1)); k != nil; k, v = c.Next() {
				for _, id := range strings.Split(string(v), "\n") {
					if seen[id] {
						continue
					}
					seen[id] = true
					rv := recs.Get([]byte(id))
					if rv == nil {
						deletes = append(deletes, id)
						continue
					}
					s, err := decodeRecord(rv, partHit, parseNS)
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
			return nil
		}
		if err := e.ix.Apply(docs, deletes, upto); err != nil {
			e.setIndexErr(err)
			return contract.EngineErr("update the search index: %w", err)
		}
		if err := e.embedDocs(ctx, docs); err != nil {
			e.setIndexErr(err)
			e.log.Error("embedding failed", "err", err)
		} else {
			e.setIndexErr(nil)
		}
		e.applied.Store(upto)
		if chunk == catchUpChunk {
			// A catch-up reads every record once: let their pages go.
			e.releasePages()
		}
	}
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
	e.idxMu.Lock()
	err := e.db.Update(func(tx *bbolt.Tx) error { return tx.Bucket(bucketMeta).Put(keyRebuild, []byte{1}) })
	if err != nil {
		e.idxMu.Unlock()
		return contract.AsError(err)
	}
	total := e.Len()
	e.mu.RLock()
	start := e.seq
	e.rebuildTotal.Store(int64(total))
	e.mu.RUnlock()
	e.rebuildDone.Store(0)
	var after []byte
	for {
		select {
		case <-e.closing:
			e.idxMu.Unlock()
			return nil
		default:
		}
		var docs []index.Doc
		err := e.db.View(func(tx *bbolt.Tx) error {
			c := tx.Bucket(bucketRecords).Cursor()
			k, v := seekAfter(c, after)
			for ; k != nil && len(docs) < applyChunk; k, v = c.Next() {
				s, err := decodeRecord(v, partHit, parseNS)
				if err != nil {
					return contract.EngineErr("record %s: %w", k, err)
				}
				docs = append(docs, docOf(string(k), &s))
				after = append(after[:0], k...)
			}
			return nil
		})
		if err != nil {
			e.idxMu.Unlock()
			return contract.AsError(err)
		}
		e.scanned(len(docs), len(docs) == 0)
		if len(docs) == 0 {
			break
		}
		if err := e.ix.Apply(docs, nil, 0); err != nil {
			e.idxMu.Unlock()
			return contract.EngineErr("rebuild the search index: %w", err)
		}
		e.rebuildDone.Add(int64(len(docs)))
	}
	if err := e.ix.Apply(nil, nil, start); err != nil {
		e.idxMu.Unlock()
		return contract.EngineErr("rebuild the search index: %w", err)
	}
	err = e.db.Update(func(tx *bbolt.Tx) error { return tx.Bucket(bucketMeta).Delete(keyRebuild) })
	if err != nil {
		e.idxMu.Unlock()
		return contract.AsError(err)
	}
	e.applied.Store(start)
	e.rebuilding.Store(false)
	e.idxMu.Unlock()
	e.log.Info("search index rebuilt", "records", e.rebuildDone.Load())
	return e.flushIndex(context.Background())
}

// Vectors are stored as the model id, a zero byte, a float32 scale and one
// int8 per dimension (value = int8 * scale): a quarter of the float32 size,
// with an error far below what separates neighbours in cosine ranking.

func encodeVector(model string, vec []float32) []byte {
	b := make([]byte, 0, len(model)+5+len(vec))
	b = append(b, model...)
	b = append(b, 0)
	var maxAbs float32
	for _, f := range vec {
		maxAbs = max(maxAbs, float32(math.Abs(float64(f))))
	}
	scale := maxAbs / 127
	b = binary.LittleEndian.AppendUint32(b, math.Float32bits(scale))
	for _, f := range vec {
		q := 0.0
		if scale > 0 {
			q = math.Round(float64(f / scale))
		}
		b = append(b, byte(int8(max(-127, min(127, q)))))
	}
	return b
}

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

// loadVectors fills the vector index with the stored vectors of the current
// model, in chunks (no long read transaction, the engine's lock held only to
// check that each chunk's records still exist); records without one are
// embedded by embedMissing.
func (e *Engine) loadVectors() error {
	e.useStoredGeneration()
	model, dim := e.embedder.Model(), e.embedder.Dim()
	var after []byte
	for {
		select {
		case <-e.closing:
			return nil
		default:
		}
		type loaded struct {
			id  string
			vec []float32
		}
		var chunk []loaded
		n := 0
		err := e.db.View(func(tx *bbolt.Tx) error {
			c := tx.Bucket(bucketVectors).Cursor()
			k, v := seekAfter(c, after)
			for ; k != nil && n < 4096; k, v = c.Next() {
				n++
				after = append(after[:0], k...)
				if vec, ok := decodeVector(v, model, dim); ok {
					chunk = append(chunk, loaded{string(k), vec})
				}
			}
			return nil
		})
		if err != nil {
			return contract.AsError(err)
		}
		e.scanned(n, n == 0)
		if n == 0 {
			return nil
		}
		e.mu.RLock()
		for _, l := range chunk {
			if _, alive := e.t.ordOfID(l.id); alive {
				e.vec.Upsert(l.id, l.vec)
			}
		}
		e.mu.RUnlock()
	}
}

// embedMissing embeds every record the vector index lacks (new store after a
// crash, or a changed embedding model), in chunks.
func (e *Engine) embedMissing(ctx context.Context) error {
	e.mu.RLock()
	var missing []string
	for ord, alive := range e.t.alive {
		if id := e.t.idOf(uint32(ord)); alive && !e.vec.Has(id) {
			missing = append(missing, id)
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
			recs := tx.Bucket(bucketRecords)
			for _, id := range ids {
				if v := recs.Get([]byte(id)); v != nil {
					s, err := decodeRecord(v, partHit, parseNS)
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

// embedDocs embeds the docs the vector index lacks, stores their vectors and
// adds them to the index (only while the record still exists, so a forget
// racing the embedding leaves no vector behind).
func (e *Engine) embedDocs(ctx context.Context, docs []index.Doc) error {
	if e.vec == nil || len(docs) == 0 {
		return nil
	}
	e.useStoredGeneration()
	var ids, texts []string
	for i := range docs {
		if !e.vec.Has(docs[i].ID) {
			ids = append(ids, docs[i].ID)
			texts = append(texts, docs[i].Text)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	model := e.embedder.Model()
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
	// The vectors are derived data: they are written by the next write
	// transaction (or at close) instead of paying a commit of their own; a
	// crash before that only means embedMissing recomputes them at open.
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.embedder.Model() != model {
		// A learned generation came into use meanwhile: its re-embedding
		// covers these records.
		return nil
	}
	want := e.embedder.Dim()
	if want == 0 {
		want = e.vec.Dim()
	}
	for i := range ids {
		if len(vecs[i]) == 0 || want > 0 && len(vecs[i]) != want {
			return contract.EngineErr("the embedder returned a vector of length %d, want %d", len(vecs[i]), want)
		}
	}
	for i, id := range ids {
		if _, alive := e.t.ordOfID(id); alive {
			e.vec.Upsert(id, vecs[i])
			e.pendingVec[id] = vecs[i]
		}
	}
	// A catch-up after a bulk load embeds every record: the waiting vectors
	// (float32, 2 KB each) are written in batches of their own rather than
	// held until the next write or Close (at 1M that was 2 GB and a Close of
	// minutes).
	if len(e.pendingVec) >= maxPendingVectors {
		if err := e.db.Update(e.savePendingVectors); err != nil {
			e.log.Error("saving vectors failed; they are recomputed at the next open", "err", err)
		}
	}
	return nil
}

// maxPendingVectors is how many embedded vectors wait for a write before
// they are written on their own.
const maxPendingVectors = 4096

// savePendingVectors writes the vectors embedded since the last write; the
// caller holds mu inside a write transaction.
func (e *Engine) savePendingVectors(tx *bbolt.Tx) error {
	if len(e.pendingVec) == 0 {
		return nil
	}
	model := e.embedder.Model()
	b := tx.Bucket(bucketVectors)
	for id, v := range e.pendingVec {
		if err := b.Put([]byte(id), encodeVector(model, v)); err != nil {
			return err
		}
	}
	clear(e.pendingVec)
	return nil
}
