package bolt

import (
	"context"
	"time"

	bbolt "go.etcd.io/bbolt"

	"mnemo/contract"
	"mnemo/engine/bolt/internal/index"
	"mnemo/engine/curate"
	"mnemo/engine/retrieval"
)

// minVectorScore leaves out vectors that share nothing with the query.
const minVectorScore = 0.05

type rankedID struct {
	id    string
	score float64
}

// Fetch ranks records for a query in one of the declared modes, the filter
// applied inside the search, and pages the ranking with a cursor bound to
// the query. Every hit is re-read from bbolt, so a forgotten record can never
// come back even if the index has not caught up yet.
func (e *Engine) Fetch(ctx context.Context, req contract.FetchRequest) (contract.FetchPage, error) {
	if err := e.desc.EnsureMode(req.Mode); err != nil {
		return contract.FetchPage{}, err
	}
	if err := req.Validate(); err != nil {
		return contract.FetchPage{}, err
	}
	binding := contract.FetchBinding(req)
	offset, err := contract.DecodeFetchCursor(req.Cursor, binding)
	if err != nil {
		return contract.FetchPage{}, err
	}
	if err := e.enter(ctx); err != nil {
		return contract.FetchPage{}, err
	}
	defer e.leave()
	want := offset + req.Limit + 1
	if req.RefersTo != nil {
		want = max(want, contract.HintWindow)
	}
	ranked, err := e.rank(ctx, req.Mode, req.Query, req.Filter, want)
	if err != nil {
		return contract.FetchPage{}, err
	}
	hits, err := e.hitsFor(ranked, req.Filter)
	if err != nil {
		return contract.FetchPage{}, err
	}
	if req.RefersTo != nil {
		// The hint reorders a fixed head of the ranking, so pages stay disjoint.
		hits = compactHits(hits)
		head := min(len(hits), contract.HintWindow)
		hits = append(hintRanked(req.RefersTo, hits[:head]), hits[head:]...)
	}
	page := contract.FetchPage{Hits: []contract.Hit{}}
	for _, h := range hits[min(offset, len(hits)):min(len(hits), offset+req.Limit)] {
		if h != nil {
			page.Hits = append(page.Hits, *h)
		}
	}
	if len(ranked) > offset+req.Limit {
		page.NextCursor = contract.EncodeFetchCursor(offset+req.Limit, binding)
	}
	return page, nil
}

// rank returns up to want ids in rank order for a mode, filter inside.
func (e *Engine) rank(ctx context.Context, mode contract.FetchMode, q string, f contract.MetaFilter, want int) ([]rankedID, error) {
	if e.idx.rebuilding.Load() {
		return nil, contract.Unavailable("%s", e.rebuildMessage())
	}
	if err := e.waitTable(ctx); err != nil {
		return nil, err
	}
	if err := e.flushIndex(ctx); err != nil {
		return nil, err
	}
	switch mode {
	case contract.ModeKeyword:
		return e.rankKeyword(ctx, q, f, want)
	case contract.ModeVector:
		return e.rankVector(ctx, mode, q, f, want)
	}
	// The two rankings run side by side: on a large store each takes tens
	// of milliseconds of one core (hybrid p50 at 1M: the sum of the two).
	var kw []rankedID
	var kwErr error
	kwDone := make(chan struct{})
	go func() {
		defer close(kwDone)
		kw, kwErr = e.rankKeyword(ctx, q, f, retrieval.HybridWindow)
	}()
	// The vector window's tail beyond the fusion's is the conversation
	// levers' (ConvConfig.VectorPool): one scan gives both.
	vec, err := e.rankVector(ctx, mode, q, f, max(retrieval.HybridVectorWindow, e.convConfig().VectorPool))
	<-kwDone
	if kwErr != nil {
		return nil, kwErr
	}
	if err != nil {
		return nil, err
	}
	head := vec[:min(len(vec), retrieval.HybridVectorWindow)]
	fused := retrieval.Blend(scoredOf(kw), retrieval.MinMax(scoredOf(head)), retrieval.HybridKeywordWeight)
	if fused, err = e.rerankTurns(ctx, q, f, fused, vec[len(head):]); err != nil {
		return nil, err
	}
	out := make([]rankedID, 0, min(len(fused), want))
	for _, x := range fused[:min(len(fused), want)] {
		out = append(out, rankedID{x.ID, x.Score})
	}
	return out, nil
}

// vectorsCover answers unavailable while the records still being embedded
// after open (a store written by another embedder, whose vectors are all
// stale, or one whose vectors were lost) are more than a hundredth of the
// store: a vector ranking of the few already embedded would look like an
// answer. The last few after a crash do not hold a search up. Hybrid ranks
// with the vectors there are (its keyword half covers every record).
func (e *Engine) vectorsCover() error {
	select {
	case <-e.vec.complete:
		return nil
	default:
	}
	e.mu.RLock()
	live, have := e.t.live, e.vec.store.current
	e.mu.RUnlock()
	if missing := live - have; missing > max(100, live/100) {
		return contract.Unavailable("the records are being embedded for vector search (%d of %d done); keyword and hybrid fetch answer meanwhile", have, live)
	}
	return nil
}

func scoredOf(r []rankedID) []retrieval.ScoredID {
	out := make([]retrieval.ScoredID, len(r))
	for i, x := range r {
		out[i] = retrieval.ScoredID{ID: x.id, Score: x.score}
	}
	return out
}

func (e *Engine) rankKeyword(ctx context.Context, q string, f contract.MetaFilter, want int) ([]rankedID, error) {
	return e.keywordWith(f, func(res *index.Residual) ([]index.Scored, error) {
		return e.ix.Keyword(ctx, q, f, true, 0, want, res)
	})
}

// rankKeywordAmong is rankKeyword for a query of many words in a filter that
// admits few records: the filter leads (index.KeywordAmong).
func (e *Engine) rankKeywordAmong(ctx context.Context, q string, f contract.MetaFilter, want int) ([]rankedID, error) {
	return e.keywordWith(f, func(res *index.Residual) ([]index.Scored, error) {
		return e.ix.KeywordAmong(ctx, q, f, true, want, res)
	})
}

// keywordWith runs a keyword search of the index under f: the residual the
// table answers when the index does not hold every clause of f, the locks
// held for the search.
func (e *Engine) keywordWith(f contract.MetaFilter, search func(res *index.Residual) ([]index.Scored, error)) ([]rankedID, error) {
	var res *index.Residual
	if index.NeedsResidual(f) {
		// The table answers the clauses the index does not hold; it is read
		// under its lock for the whole search, as the vector scan does. The
		// table's lock is taken before the index's, as check takes them.
		e.mu.RLock()
		defer e.mu.RUnlock()
		p := e.t.compileFilter(f, true)
		res = &index.Residual{
			Admit: func(id string) bool {
				ord, ok := e.t.ordOfID(id)
				return ok && e.t.matchOrd(&p, ord)
			},
			Sample: func(limit int) ([]string, bool, float64) {
				var ids []string
				scanned := 0
				for ord := range e.t.rows {
					if !e.t.alive[ord] {
						continue
					}
					scanned++
					if e.t.matchOrd(&p, uint32(ord)) {
						if len(ids) == limit {
							return ids, false, float64(len(ids)) / float64(scanned)
						}
						ids = append(ids, e.t.idOf(uint32(ord)))
					}
				}
				return ids, true, float64(len(ids)) / float64(max(scanned, 1))
			},
		}
	}
	// The index is read under its lock: a repair may replace it and Close
	// closes it.
	e.idx.mu.RLock()
	defer e.idx.mu.RUnlock()
	scored, err := search(res)
	if err != nil {
		return nil, contract.AsError(err)
	}
	out := make([]rankedID, len(scored))
	for i, s := range scored {
		out[i] = rankedID{s.ID, s.Score}
	}
	return out, nil
}

func (e *Engine) rankVector(ctx context.Context, mode contract.FetchMode, q string, f contract.MetaFilter, want int) ([]rankedID, error) {
	if e.vec.store == nil {
		return nil, nil
	}
	e.ensureVectors()
	select {
	case <-e.vec.ready:
	case <-ctx.Done():
		return nil, contract.Unavailable("the stored vectors are still loading: %w", ctx.Err())
	case <-e.closing:
		return nil, contract.Unavailable("the store is closed")
	}
	if mode == contract.ModeVector {
		if err := e.vectorsCover(); err != nil {
			return nil, err
		}
	}
	var qv [][]float32
	var err error
	e.mu.RLock()
	stored := e.vec.store.current
	e.mu.RUnlock()
	if qe, ok := e.embedder.(retrieval.QueryEmbedder); ok && stored > sparseQueriesAbove {
		var v []float32
		v, err = qe.EmbedQuery(ctx, q)
		qv = [][]float32{v}
	} else {
		qv, err = e.embedder.Embed(ctx, []string{q})
	}
	if err != nil {
		return nil, contract.AsError(err)
	}
	if len(qv) != 1 {
		return nil, contract.EngineErr("the embedder returned %d vectors for 1 text", len(qv))
	}
	e.mu.RLock()
	defer e.mu.RUnlock()
	p := e.t.compileFilter(f, true)
	admit := func(ord uint32) bool { return e.t.matchOrd(&p, ord) }
	found, err := e.searchVectors(ctx, qv[0], want, admit)
	if err != nil {
		return nil, contract.Unavailable("vector search: %w", err)
	}
	out := make([]rankedID, 0, len(found))
	for _, s := range found {
		if s.score >= minVectorScore {
			out = append(out, rankedID{s.id, s.score})
		}
	}
	return out, nil
}

// hitsFor re-reads ranked ids from bbolt. The result is aligned with ranked,
// with nil where a record no longer exists or no longer passes the filter
// (with fetch's statuses rule), so cursor offsets keep counting ranks.
func (e *Engine) hitsFor(ranked []rankedID, f contract.MetaFilter) ([]*contract.Hit, error) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	p := e.t.compileFilter(f, true)
	hits := make([]*contract.Hit, len(ranked))
	err := e.readView(func(tx *bbolt.Tx, recs *recordReader) error {
		for i, r := range ranked {
			ord, ok := e.t.ordOfID(r.id)
			if !ok || !e.t.matchOrd(&p, ord) {
				continue
			}
			v := recs.Get(r.id)
			if v == nil {
				continue
			}
			s, err := e.codec.decode(v, partHit, e.t.namespaceOf)
			if err != nil {
				return contract.EngineErr("record %s: %w", r.id, err)
			}
			h := s.hit(r.id)
			h.Score = contract.F32(r.score)
			hits[i] = &h
		}
		return nil
	})
	if err != nil {
		return nil, contract.AsError(err)
	}
	return hits, nil
}

func compactHits(hits []*contract.Hit) []*contract.Hit {
	out := hits[:0:0]
	for _, h := range hits {
		if h != nil {
			out = append(out, h)
		}
	}
	return out
}

func hintRanked(hint *contract.TimeHint, hits []*contract.Hit) []*contract.Hit {
	return contract.RankByHintOf(*hint, hits, func(h **contract.Hit) *time.Time { return (*h).Meta.ObservedAt })
}

// Recall gathers up to limit citations with the best ranking the engine has
// (hybrid when vectors are on, keyword otherwise) and asks the answerer.
func (e *Engine) Recall(ctx context.Context, req contract.RecallRequest) (contract.RecallAnswer, error) {
	if err := req.Validate(); err != nil {
		return contract.RecallAnswer{}, err
	}
	hits, err := e.recallHits(ctx, req)
	if err != nil {
		return contract.RecallAnswer{}, err
	}
	cites := make([]contract.Citation, len(hits))
	for i, h := range hits {
		score := h.Score
		cites[i] = contract.Citation{ID: h.ID, Kind: h.Kind, Snippet: h.Text, Meta: h.Meta, Score: &score}
	}
	answer, err := e.answerer.Answer(ctx, retrieval.AnswerRequest{
		Question: req.Question, Instructions: contract.Deref(req.Instructions), Citations: cites,
	})
	if err != nil {
		return contract.RecallAnswer{}, contract.AsError(err)
	}
	return contract.RecallAnswer{Answer: answer, Citations: cites, Model: contract.Ptr(e.answerer.Model())}, nil
}

// recallHits reads the citations' records inside the engine; the answer is
// made outside it, so a Close need not wait for a slow answerer.
func (e *Engine) recallHits(ctx context.Context, req contract.RecallRequest) ([]*contract.Hit, error) {
	if err := e.enter(ctx); err != nil {
		return nil, err
	}
	defer e.leave()
	mode := contract.ModeKeyword
	if e.vec.store != nil {
		mode = contract.ModeHybrid
	}
	want := req.Limit
	if req.RefersTo != nil {
		want = max(want, contract.HintWindow)
	}
	ranked, err := e.rank(ctx, mode, req.Question, req.Filter, want)
	if err != nil {
		return nil, err
	}
	aligned, err := e.hitsFor(ranked, req.Filter)
	if err != nil {
		return nil, err
	}
	hits := compactHits(aligned)
	if req.RefersTo != nil {
		hits = hintRanked(req.RefersTo, hits)
	}
	hits = hits[:min(len(hits), req.Limit)]
	return hits, nil
}

// Consolidate is on demand: beliefs are derived from the clusters of a
// reach when read (engine/curate), so it counts them and completes.
func (e *Engine) Consolidate(ctx context.Context, req contract.ConsolidateRequest) (contract.ConsolidateReceipt, error) {
	return curate.Consolidate(ctx, e, req, curate.DefaultConfig())
}

// Beliefs are derived on read: one learning per cluster of the reach (engine/curate).
func (e *Engine) Beliefs(ctx context.Context, req contract.BeliefsRequest) ([]contract.Hit, error) {
	return curate.Beliefs(ctx, e, req, curate.DefaultConfig())
}
