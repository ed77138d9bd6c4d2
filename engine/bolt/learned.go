package bolt

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	bbolt "go.etcd.io/bbolt"

	"mnemo/contract"
	"mnemo/engine/bolt/internal/vecblock"
	"mnemo/engine/retrieval"
)

// The default embedder learns from the store's own text
// (retrieval.LearnedEmbedder): a generation is learned in the background
// once the store has vectors, stored in bucketLearned, put in use, and every
// record re-embedded with it while the previous vectors keep answering (the
// generations share one space, so the mix in between still ranks sensibly);
// keyword search never waits for any of it. At the next open the stored
// generation is put in use before the vectors load or anything is embedded,
// so vectors of an older one are re-embedded by embedMissing like those of
// any changed model.

var (
	bucketLearned   = []byte("learned")
	keyLearnedModel = []byte("model")
	keyLearnedFrom  = []byte("records")
)

const (
	// learnMinRecords is the smallest store that learns: below it the
	// hashed part alone embeds.
	learnMinRecords = 100
	// learnQuiet is the pause in writes a generation waits for (an import
	// learns once at its end, not at every batch), learnMaxWait the longest
	// it waits for one.
	learnQuiet   = 250 * time.Millisecond
	learnMaxWait = 30 * time.Second
	// learnSmallStore: up to this many records a generation is relearned
	// when the record count has moved by a tenth since the last; above it,
	// by a half (each generation re-embeds every record).
	learnSmallStore = 50000
	// learnTextBytes bounds the text of one record a generation reads.
	learnTextBytes = 8 << 10
	// sparseQueriesAbove: in a store with more vectors a query keeps only
	// its largest learned dimensions (retrieval.LearnedEmbedder.EmbedQuery).
	// The exact int8 scan costs one pass over the vectors per non-zero query
	// dimension; a full learned query has about 300 of them (the hashed
	// part about 40): hybrid p50 16 ms at 100k on this machine's two cores
	// (budget 25), and a scan of 216 ms of CPU at 1M against 92 ms with 64
	// kept (BenchmarkLearnedQueryScan). Kept to 64 (LearnConfig.QueryDims),
	// it ranks within 0.013 MRR of the full query on the evaluation sets.
	sparseQueriesAbove = 50000
)

// learnState is the learner's state (Engine.learn, nil without a learned
// embedder).
type learnState struct {
	emb  *retrieval.LearnedEmbedder
	kick chan struct{}
	// from is the record count the model in use learned at (0: none).
	from atomic.Int64
	// busy is set while a generation is learned or re-embedded.
	busy atomic.Bool
	// learned counts generations learned by this process.
	learned atomic.Int64
	// load reads the stored generation (useStoredGeneration).
	load sync.Once
	// failed is the last generation's failure, nil after a success.
	failed atomic.Pointer[string]
}

// openLearned starts the learner; it runs in init. The stored generation is
// read when vectors are first needed (useStoredGeneration), so a process
// that only browses never reads it.
func (e *Engine) openLearned() error {
	emb, ok := e.embedder.(*retrieval.LearnedEmbedder)
	if !ok || e.vec.store == nil {
		return nil
	}
	e.learn = &learnState{emb: emb, kick: make(chan struct{}, 1)}
	// The learned embedder gives a text the same vector every time, so a
	// search can score its best hits exactly from their texts: a large
	// store keeps its vectors as codes (vectors.go).
	e.vec.store.codesAt = vectorCodesAt
	if e.opts.vectorCodesAt > 0 {
		e.vec.store.codesAt = e.opts.vectorCodesAt
	}
	e.vec.store.live = func() int { return e.t.live } // read under e.mu, as the store is
	e.goBackground(e.learnWorker)
	return nil
}

// useStoredGeneration puts the stored generation in use, once, before any
// vector is loaded or embedded.
func (e *Engine) useStoredGeneration() {
	if e.learn == nil {
		return
	}
	l := e.learn
	l.load.Do(func() {
		var raw []byte
		var from int64
		err := e.db.View(func(tx *bbolt.Tx) error {
			if b := tx.Bucket(bucketLearned); b != nil {
				raw = append(raw, b.Get(keyLearnedModel)...)
				from, _ = strconv.ParseInt(string(b.Get(keyLearnedFrom)), 10, 64)
			}
			return nil
		})
		if err != nil || len(raw) == 0 {
			return
		}
		m, err := retrieval.UnmarshalLearnedModel(raw)
		if err == nil {
			err = l.emb.Use(m)
		}
		if errors.Is(err, retrieval.ErrOldLearnedModel) {
			// An upgrade: the new version is learned and the records re-embedded.
			e.log.Info("the stored learned embedder is of an earlier version; it is learned again")
			return
		}
		if err != nil {
			// Derived data: learned again from the records.
			e.log.Warn("the stored learned embedder is unusable; it is learned again", "err", err)
			return
		}
		l.from.Store(from)
	})
}

// kickLearn tells the learner the store may have changed.
func (e *Engine) kickLearn() {
	if e.learn == nil {
		return
	}
	select {
	case e.learn.kick <- struct{}{}:
	default:
	}
}

// learnDue reports whether the store has moved far enough from the model in
// use to learn a new generation.
func (e *Engine) learnDue() bool {
	if e.bulk.Load() || e.idx.rebuilding.Load() {
		return false
	}
	return learnDueAt(e.learn.from.Load(), int64(e.Len()))
}

// learnDueAt tells whether a store of n records, whose model in use learned
// at from records (0: none), learns a new generation.
func learnDueAt(from, n int64) bool {
	if from == 0 {
		return n >= learnMinRecords
	}
	step := from / 10
	if from > learnSmallStore {
		step = from / 2
	}
	return n >= learnMinRecords && (n-from >= step || from-n >= step)
}

// EmbeddingDue tells, reading one counter and loading nothing, whether the
// store has grown or shrunk past the generation of the learned embedder it
// keeps (or has none and is large enough to learn one): work a process that
// holds the store starts on its own (server/local), rather than leaving it
// to the first vector query.
func (e *Engine) EmbeddingDue() bool {
	if e.learn == nil || e.opts.ReadOnly || e.closed.Load() {
		return false
	}
	var from int64
	_ = e.db.View(func(tx *bbolt.Tx) error {
		if b := tx.Bucket(bucketLearned); b != nil {
			from, _ = strconv.ParseInt(string(b.Get(keyLearnedFrom)), 10, 64)
		}
		return nil
	})
	return learnDueAt(from, int64(e.Len()))
}

// learnWorker learns generations while the engine is open. It starts once
// every record has a vector (a process that only browses never learns).
func (e *Engine) learnWorker() {
	select {
	case <-e.vec.complete:
	case <-e.closing:
		return
	}
	ctx, cancel := e.untilClosed(context.Background())
	defer cancel()
	for {
		if e.learnDue() && e.learn.busy.CompareAndSwap(false, true) {
			if e.waitQuiet() {
				err := e.learnGeneration(ctx)
				if ctx.Err() == nil {
					e.setLearnFailure(err)
				}
			}
			e.learn.busy.Store(false)
		}
		select {
		case <-e.learn.kick:
		case <-e.closing:
			return
		}
	}
}

// setLearnFailure records how learning a generation ended: err, or nil for
// a success (WaitEmbedder reports a failure).
func (e *Engine) setLearnFailure(err error) {
	if err == nil {
		e.learn.failed.Store(nil)
		return
	}
	e.log.Error("learning the embedder failed", "err", err)
	msg := err.Error()
	e.learn.failed.Store(&msg)
}

// waitQuiet waits until no write has been committed for learnQuiet (at most
// learnMaxWait); false when the engine closes.
func (e *Engine) waitQuiet() bool {
	deadline := time.Now().Add(learnMaxWait)
	for seen := e.committed.Load(); ; {
		select {
		case <-e.closing:
			return false
		case <-time.After(learnQuiet):
		}
		now := e.committed.Load()
		if now == seen || time.Now().After(deadline) {
			return true
		}
		seen = now
	}
}

// learnGeneration learns the next generation from a sample of the records'
// text, stores it, puts it in use and re-embeds every record.
func (e *Engine) learnGeneration(ctx context.Context) error {
	model, err := e.learnModel(ctx)
	if err != nil {
		return err
	}
	return e.reembed(ctx, model)
}

// learnModel learns the next generation from a sample of the records'
// text, stores it and puts it in use; it answers its model id.
func (e *Engine) learnModel(ctx context.Context) (string, error) {
	l := e.learn
	cfg := l.emb.Config()
	sample := retrieval.NewLearnSample(cfg.MaxDocs)
	// The count the next generation is judged against is learnDue's.
	count := e.Len()
	records := 0
	var after []byte
	for {
		if err := ctx.Err(); err != nil {
			return "", err
		}
		n := 0
		err := e.db.View(func(tx *bbolt.Tx) error {
			recs := e.records(tx)
			c := recs.Cursor()
			k, v := seekAfter(c, after)
			for ; k != nil && n < applyChunk; k, v = c.Next() {
				n++
				after = append(after[:0], k...)
				s, err := e.codec.decode(v, partHit, parseNS)
				if err != nil {
					return contract.EngineErr("record %s: %w", recs.id(k), err)
				}
				text := s.text
				if len(text) > learnTextBytes {
					text = text[:learnTextBytes]
				}
				sample.Add(text)
			}
			return nil
		})
		if err != nil {
			return "", contract.AsError(err)
		}
		records += n
		e.scanned(n, n == 0)
		if n == 0 {
			break
		}
	}
	gen := uint64(1)
	if cur := l.emb.Current(); cur != nil {
		gen = cur.Generation() + 1
	}
	t0 := time.Now()
	m, err := retrieval.Learn(ctx, sample.Texts(), gen, cfg)
	if err != nil {
		return "", err
	}
	raw, err := m.MarshalBinary()
	if err != nil {
		return "", err
	}
	err = e.db.Update(func(tx *bbolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists(bucketLearned)
		if err != nil {
			return err
		}
		if err := b.Put(keyLearnedModel, raw); err != nil {
			return err
		}
		return b.Put(keyLearnedFrom, []byte(strconv.Itoa(count)))
	})
	if err != nil {
		return "", contract.AsError(err)
	}
	if err := l.emb.Use(m); err != nil {
		return "", err
	}
	l.from.Store(int64(max(count, 1)))
	l.learned.Add(1)
	e.log.Info("embedder learned", "model", m.ID(), "records", records, "sampled", m.Docs(),
		"vocabulary", m.Vocabulary(), "took", time.Since(t0))
	return m.ID(), nil
}

// LearnFirst learns the store's next generation of the learned embedder
// now, when the store calls for one, and puts it in use without embedding
// anything: the index's catch-up and the vectors' load that follow then
// embed the records once, with it. It is for a process that takes over a
// store whose records are not embedded yet (mnemo import's finisher): left
// to the learner, which waits for every record to hold a vector, a 100k
// import's records were embedded twice, with no generation and then with
// the one learned after (the store settled 52 s after a 100k import began,
// against 46-47 s with this). A vector embedded meanwhile with no
// generation is embedded again when the vectors load.
func (e *Engine) LearnFirst(ctx context.Context) error {
	if e.learn == nil {
		return nil
	}
	if err := e.enter(ctx); err != nil {
		return err
	}
	defer e.leave()
	if err := e.waitTable(ctx); err != nil {
		return err
	}
	e.useStoredGeneration()
	if !e.learn.busy.CompareAndSwap(false, true) {
		return nil // the learner is at it
	}
	defer e.learn.busy.Store(false)
	if !e.learnDue() {
		return nil
	}
	ctx, cancel := e.untilClosed(ctx)
	defer cancel()
	_, err := e.learnModel(ctx)
	if ctx.Err() == nil {
		e.setLearnFailure(err)
	}
	return err
}

// reembed embeds every record again with the model in use, replacing its
// vector; it stops when the model changes again. A record that already
// holds a vector of that model is left as it is: the embedder gives a text
// the same vector every time, and the index's catch-up after a bulk load
// embeds with the new generation once it is in use, while this runs (left:
// 10,064 of the 100,000 records of an import that counted them).
func (e *Engine) reembed(ctx context.Context, model string) error {
	tag := vecblock.ModelTag(model)
	e.mu.RLock()
	ids := make([]string, 0, e.t.live)
	for ord, alive := range e.t.alive {
		if alive && !e.vec.store.holds(uint32(ord), tag) {
			ids = append(ids, e.t.idOf(uint32(ord)))
		}
	}
	e.mu.RUnlock()
	for start := 0; start < len(ids); start += 256 {
		if err := ctx.Err(); err != nil {
			return err
		}
		var chunk []string
		e.mu.RLock()
		for _, id := range ids[start:min(start+256, len(ids))] {
			if ord, alive := e.t.ordOfID(id); alive && !e.vec.store.holds(ord, tag) {
				chunk = append(chunk, id)
			}
		}
		e.mu.RUnlock()
		var live, texts []string
		err := e.db.View(func(tx *bbolt.Tx) error {
			recs := e.records(tx)
			for _, id := range chunk {
				if v := recs.Get(id); v != nil {
					s, err := e.codec.decode(v, partHit, parseNS)
					if err != nil {
						return err
					}
					live, texts = append(live, id), append(texts, s.text)
				}
			}
			return nil
		})
		if err != nil {
			return contract.AsError(err)
		}
		if len(texts) == 0 {
			continue
		}
		vecs, err := e.embedder.Embed(ctx, texts)
		if err != nil {
			return err
		}
		if len(vecs) != len(live) {
			return contract.EngineErr("the embedder returned %d vectors for %d texts", len(vecs), len(live))
		}
		e.mu.Lock()
		if e.embedder.Model() != model {
			e.mu.Unlock()
			return nil
		}
		for i, id := range live {
			if ord, alive := e.t.ordOfID(id); alive && len(vecs[i]) == e.vec.store.dim {
				e.vec.store.upsert(ord, model, vecs[i])
			}
		}
		var saveErr error
		if len(e.vec.store.pending) >= maxPendingVectors {
			saveErr = e.db.Update(func(tx *bbolt.Tx) error { return e.vec.store.writeBlocks(tx, nil, true) })
		}
		e.mu.Unlock()
		if saveErr != nil {
			e.log.Error("saving vectors failed; they are recomputed at the next open", "err", saveErr)
		}
	}
	return nil
}

// WaitEmbedder waits until the vectors are complete and embedded with the
// generation the store's text calls for: what the learned embedder would
// have after the store has been left alone (tests and the evaluation wait on
// it). It loads the vectors of a large store if they are not loaded.
func (e *Engine) WaitEmbedder(ctx context.Context) error {
	if err := e.WaitIndex(ctx); err != nil {
		return err
	}
	if e.vec.store == nil {
		return nil
	}
	e.ensureVectors()
	select {
	case <-e.vec.complete:
	case <-ctx.Done():
		return ctx.Err()
	case <-e.closing:
		return contract.Unavailable("the store is closed")
	}
	if e.learn == nil {
		return nil
	}
	for e.learn.busy.Load() || e.learnDue() {
		if msg := e.learn.failed.Load(); msg != nil && !e.learn.busy.Load() {
			return contract.EngineErr("learning the embedder: %s", *msg)
		}
		e.kickLearn()
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-e.closing:
			return contract.Unavailable("the store is closed")
		case <-time.After(5 * time.Millisecond):
		}
	}
	return nil
}

// EmbedderModel is the model id the vectors are embedded with now (with the
// learned embedder, the generation in use), "" without vectors.
func (e *Engine) EmbedderModel() string {
	if e.embedder == nil || e.vec.store == nil {
		return ""
	}
	e.useStoredGeneration()
	return e.embedder.Model()
}
