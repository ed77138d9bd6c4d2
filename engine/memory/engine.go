package memory

import (
	"cmp"
	"context"
	"slices"
	"strconv"
	"sync"
	"time"

	"mnemo/contract"
)

// EngineID is the descriptor id of the reference engine.
const EngineID = "memory"

// Option configures an Engine.
type Option func(*Engine)

// WithClock replaces the wall clock that stamps created_at and updated_at; tests
// use it to make record times deterministic.
func WithClock(now func() time.Time) Option {
	return func(e *Engine) { e.now = now }
}

// WithFetchModes declares (and serves) only the given fetch modes, for hosts that
// want to present a narrower engine; the default is every mode.
func WithFetchModes(modes ...contract.FetchMode) Option {
	return func(e *Engine) { e.desc.FetchModes = slices.Clone(modes) }
}

// WithChangeRetention sets how long the change feed keeps its changes (the
// default keeps 7 days or 1,000,000 changes).
func WithChangeRetention(r contract.ChangeRetention) Option {
	return func(e *Engine) { e.retention = r }
}

// stored is one record as the engine holds it.
type stored struct {
	id           string
	item         contract.StoreItem
	text         string
	scored       scoredText
	status       contract.Status
	created      time.Time
	updated      time.Time
	expires      *time.Time
	supersededBy *string
	// seq is the insertion order, the tie-break of ranked reads.
	seq uint64
}

// Engine is the in-memory reference engine. The zero value is not usable; call New.
type Engine struct {
	desc contract.Descriptor
	now  func() time.Time

	mu      sync.RWMutex
	records map[string]*stored
	nextSeq uint64
	// feed is the change feed (guarded by mu), oldest first; feedSeq is the
	// newest change's seq and pruned the newest seq pruned away.
	feed      []feedEntry
	feedSeq   uint64
	pruned    uint64
	retention contract.ChangeRetention
	signal    contract.ChangeSignal
	notified  uint64
}

var _ contract.Engine = (*Engine)(nil)

// New returns an empty engine.
func New(opts ...Option) *Engine {
	e := &Engine{
		desc: contract.Descriptor{
			ID:            EngineID,
			Label:         "Reference (in-memory)",
			Description:   "Keeps every record in process memory; the exact reference the conformance suite is calibrated on.",
			FetchModes:    slices.Clone(contract.FetchModes()),
			Consolidation: contract.ConsolidationNone,
		},
		now:     time.Now,
		records: map[string]*stored{},
	}
	for _, o := range opts {
		o(e)
	}
	e.retention = e.retention.OrDefault()
	return e
}

// stamp is the current time as records carry it: UTC, millisecond precision.
func (e *Engine) stamp() time.Time { return e.now().UTC().Truncate(time.Millisecond) }

// Descriptor describes the engine.
func (e *Engine) Descriptor() contract.Descriptor {
	d := e.desc
	d.FetchModes = slices.Clone(e.desc.FetchModes)
	return d
}

// Health is always ok: nothing outside the process can fail.
func (e *Engine) Health(context.Context) contract.Health {
	return contract.Health{State: contract.HealthOK}
}

func (s *stored) record() contract.Record {
	r := contract.RecordOf(s.id, &s.item, s.status, s.created, s.updated, clonePtr(s.expires), clonePtr(s.supersededBy))
	r.Meta = cloneMeta(r.Meta)
	return r
}

func (s *stored) hit() contract.Hit {
	h := contract.HitOf(s.id, &s.item)
	h.Meta = cloneMeta(h.Meta)
	return h
}

// StoreWith writes one item with a status and an expiry. A held fingerprint is a
// replay and leaves the held record exactly as it was, whatever its status.
func (e *Engine) StoreWith(ctx context.Context, item contract.StoreItem, opts contract.WriteOptions) (contract.StoreReceipt, error) {
	if err := opts.Validate(); err != nil {
		return contract.StoreReceipt{}, err
	}
	if err := item.Validate(); err != nil {
		return contract.StoreReceipt{}, err
	}
	// The reference engine honours its context like every engine: a call
	// already cancelled does nothing.
	if err := contract.ContextErr(ctx); err != nil {
		return contract.StoreReceipt{}, err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	now := e.stamp()
	r := e.storeLocked(item, opts, now)
	e.commitLocked(now)
	return r, nil
}

// StoreManyWith validates the whole batch, then writes it under one lock; a
// repeat inside the batch is a replay of its first copy.
func (e *Engine) StoreManyWith(ctx context.Context, items []contract.StoreItem, opts contract.WriteOptions) ([]contract.StoreReceipt, error) {
	if err := contract.ValidateMany(items); err != nil {
		return nil, err
	}
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	if err := contract.ContextErr(ctx); err != nil {
		return nil, err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	now := e.stamp()
	out := make([]contract.StoreReceipt, len(items))
	for i := range items {
		out[i] = e.storeLocked(items[i], opts, now)
	}
	e.commitLocked(now)
	return out, nil
}

func (e *Engine) storeLocked(item contract.StoreItem, opts contract.WriteOptions, now time.Time) contract.StoreReceipt {
	id := item.Fingerprint()
	if _, held := e.records[id]; held {
		return contract.StoreReceipt{ID: id, Replayed: true}
	}
	status := opts.Status
	if status == "" {
		status = contract.StatusActive
	}
	var expires *time.Time
	if opts.ExpiresAt != nil {
		t := opts.ExpiresAt.UTC().Truncate(time.Millisecond)
		expires = &t
	}
	kept := cloneItem(item)
	text := kept.RenderText()
	e.records[id] = &stored{id: id, item: kept, text: text, scored: prepare(text), status: status,
		created: now, updated: now, expires: expires, seq: e.nextSeq}
	e.nextSeq++
	e.logLocked(contract.OpStore, e.records[id], now)
	return contract.StoreReceipt{ID: id}
}

// listed returns the records a listing filter admits (every status unless the
// filter names some), newest first then id ascending. Callers hold the lock.
func (e *Engine) listed(f *contract.MetaFilter) []*stored {
	out := make([]*stored, 0, len(e.records))
	for _, s := range e.records {
		if f.AdmitsStatus(s.status, false) && f.Matches(s.item.Type, &s.item.Meta) {
			out = append(out, s)
		}
	}
	slices.SortFunc(out, func(a, b *stored) int {
		if c := b.created.Compare(a.created); c != 0 {
			return c
		}
		return cmp.Compare(a.id, b.id)
	})
	return out
}

// parseOffset reads an offset cursor; anything but a non-negative decimal is refused.
func parseOffset(cursor *string) (int, error) {
	if cursor == nil {
		return 0, nil
	}
	n, err := strconv.Atoi(*cursor)
	if err != nil || n < 0 || strconv.Itoa(n) != *cursor {
		return 0, contract.Invalid("unknown cursor `%s`", *cursor)
	}
	return n, nil
}

// window cuts [start, start+limit) out of total rows and returns the cursor of
// the next page, nil when nothing follows.
func window(total, start, limit int) (lo, hi int, next *string) {
	lo = min(start, total)
	hi = min(lo+limit, total)
	if hi < total {
		c := strconv.Itoa(hi)
		next = &c
	}
	return lo, hi, next
}

// List pages through the records a filter selects, newest first.
func (e *Engine) List(ctx context.Context, req contract.ListRequest) (contract.ListPage, error) {
	items, next, err := listPage(ctx, e, req, (*stored).hit)
	if err != nil {
		return contract.ListPage{}, err
	}
	return contract.ListPage{Items: items, NextCursor: next}, nil
}

// Export pages through the same listing, handing back items exactly as stored.
func (e *Engine) Export(ctx context.Context, req contract.ListRequest) (contract.ExportPage, error) {
	items, next, err := listPage(ctx, e, req, func(s *stored) contract.Exported {
		return contract.Exported{ID: s.id, Item: cloneItem(s.item)}
	})
	if err != nil {
		return contract.ExportPage{}, err
	}
	return contract.ExportPage{Items: items, NextCursor: next}, nil
}

// listPage is one page of the listing List and Export share, each record
// handed back as as makes it.
func listPage[T any](ctx context.Context, e *Engine, req contract.ListRequest, as func(*stored) T) ([]T, *string, error) {
	if err := req.Validate(); err != nil {
		return nil, nil, err
	}
	start, err := parseOffset(req.Cursor)
	if err != nil {
		return nil, nil, err
	}
	if err := contract.ContextErr(ctx); err != nil {
		return nil, nil, err
	}
	e.mu.RLock()
	defer e.mu.RUnlock()
	rows := e.listed(&req.Filter)
	lo, hi, next := window(len(rows), start, req.Limit)
	items := make([]T, 0, hi-lo)
	for _, s := range rows[lo:hi] {
		items = append(items, as(s))
	}
	return items, next, nil
}

// Explore counts exactly, over every record the filter selects.
func (e *Engine) Explore(ctx context.Context, req contract.ExploreRequest) (contract.ExplorePage, error) {
	if err := req.Validate(); err != nil {
		return contract.ExplorePage{}, err
	}
	if err := contract.ContextErr(ctx); err != nil {
		return contract.ExplorePage{}, err
	}
	e.mu.RLock()
	defer e.mu.RUnlock()
	counts := map[string]uint64{}
	var total, missing uint64
	for _, s := range e.records {
		if !req.Filter.AdmitsStatus(s.status, false) || !req.Filter.Matches(s.item.Type, &s.item.Meta) {
			continue
		}
		total++
		vals := req.Facet.Values(s.item.Type, &s.item.Meta, s.status)
		if len(vals) == 0 {
			missing++
		}
		for _, v := range vals {
			counts[v]++
		}
	}
	return contract.ExplorePageOf(req.Facet, counts, req.Limit, total, missing, false), nil
}

// lookup returns the held records named by ids, in request order, each once,
// leaving out ids outside the reach. Callers hold the lock.
func (e *Engine) lookup(req *contract.GetRequest) []*stored {
	seen := make(map[string]bool, len(req.IDs))
	out := make([]*stored, 0, len(req.IDs))
	for _, id := range req.IDs {
		if seen[id] {
			continue
		}
		seen[id] = true
		s, ok := e.records[id]
		if ok && contract.AdmittedBy(req.Reach, s.item.Meta.Namespace) {
			out = append(out, s)
		}
	}
	return out
}

// Get reads listing hits by id.
func (e *Engine) Get(ctx context.Context, req contract.GetRequest) ([]contract.Hit, error) {
	return getAs(ctx, e, req, (*stored).hit)
}

// GetRecords reads whole records, stored item included, by id.
func (e *Engine) GetRecords(ctx context.Context, req contract.GetRequest) ([]contract.Record, error) {
	return getAs(ctx, e, req, func(s *stored) contract.Record {
		r := s.record()
		it := cloneItem(s.item)
		r.Item = &it
		return r
	})
}

// getAs reads the records a get names, each handed back as as makes it.
func getAs[T any](ctx context.Context, e *Engine, req contract.GetRequest, as func(*stored) T) ([]T, error) {
	if err := req.Validate(); err != nil {
		return nil, err
	}
	if err := contract.ContextErr(ctx); err != nil {
		return nil, err
	}
	e.mu.RLock()
	defer e.mu.RUnlock()
	found := e.lookup(&req)
	out := make([]T, len(found))
	for i, s := range found {
		out[i] = as(s)
	}
	return out, nil
}

// rankedRecord is a record with its score for one question.
type rankedRecord struct {
	s     *stored
	score float64
}

func (r rankedRecord) hit() contract.Hit {
	h := r.s.hit()
	h.Score = contract.F32(r.score)
	return h
}

// ranked scores every record the filter admits for ranked reads (active only
// unless the filter names statuses), best first, ties in insertion order; with
// a time hint, records observed on its days move first (contract.TimeHint's
// stable partition). Only the page a caller keeps is turned into hits, so a
// large store pays for its scores, not for copying every match. Callers hold
// the lock.
func (e *Engine) ranked(text string, mode contract.FetchMode, f *contract.MetaFilter, hint *contract.TimeHint) []rankedRecord {
	q := newQuery(text)
	var hits []rankedRecord
	for _, s := range e.records {
		if !f.AdmitsStatus(s.status, true) || !f.Matches(s.item.Type, &s.item.Meta) {
			continue
		}
		if sc, ok := q.score(mode, &s.scored); ok {
			hits = append(hits, rankedRecord{s, sc})
		}
	}
	slices.SortFunc(hits, func(a, b rankedRecord) int {
		if c := cmp.Compare(b.score, a.score); c != 0 {
			return c
		}
		return cmp.Compare(a.s.seq, b.s.seq)
	})
	if hint != nil {
		hits = contract.RankByHintOf(*hint, hits, func(r *rankedRecord) *time.Time { return r.s.item.Meta.ObservedAt })
	}
	return hits
}

// Fetch ranks in one mode and pages with an offset cursor.
func (e *Engine) Fetch(ctx context.Context, req contract.FetchRequest) (contract.FetchPage, error) {
	if err := e.desc.EnsureMode(req.Mode); err != nil {
		return contract.FetchPage{}, err
	}
	if err := req.Validate(); err != nil {
		return contract.FetchPage{}, err
	}
	start, err := parseOffset(req.Cursor)
	if err != nil {
		return contract.FetchPage{}, err
	}
	if err := contract.ContextErr(ctx); err != nil {
		return contract.FetchPage{}, err
	}
	e.mu.RLock()
	defer e.mu.RUnlock()
	ranked := e.ranked(req.Query, req.Mode, &req.Filter, req.RefersTo)
	lo, hi, next := window(len(ranked), start, req.Limit)
	hits := make([]contract.Hit, 0, hi-lo)
	for _, r := range ranked[lo:hi] {
		hits = append(hits, r.hit())
	}
	return contract.FetchPage{Hits: hits, NextCursor: next}, nil
}

// Recall answers from the hybrid ranking's best hits.
func (e *Engine) Recall(ctx context.Context, req contract.RecallRequest) (contract.RecallAnswer, error) {
	if err := req.Validate(); err != nil {
		return contract.RecallAnswer{}, err
	}
	if err := contract.ContextErr(ctx); err != nil {
		return contract.RecallAnswer{}, err
	}
	e.mu.RLock()
	ranked := e.ranked(req.Question, contract.ModeHybrid, &req.Filter, req.RefersTo)
	ranked = ranked[:min(len(ranked), req.Limit)]
	hits := make([]contract.Hit, len(ranked))
	for i, r := range ranked {
		hits[i] = r.hit()
	}
	e.mu.RUnlock()
	model := "reference"
	if len(hits) == 0 {
		return contract.RecallAnswer{Answer: "Nothing stored answers this question.", Citations: []contract.Citation{}, Model: &model}, nil
	}
	citations := make([]contract.Citation, len(hits))
	answer := "From " + strconv.Itoa(len(hits)) + " stored items: "
	for i, h := range hits {
		score := h.Score
		citations[i] = contract.Citation{ID: h.ID, Kind: h.Kind, Snippet: h.Text, Meta: h.Meta, Score: &score}
		if i > 0 {
			answer += " | "
		}
		answer += h.Text
	}
	return contract.RecallAnswer{Answer: answer, Citations: citations, Model: &model}, nil
}

// Forget removes records by id (anywhere, sandboxes included) or by filter, from
// every read path at once.
func (e *Engine) Forget(ctx context.Context, target contract.ForgetTarget) (contract.ForgetReport, error) {
	if err := target.Validate(); err != nil {
		return contract.ForgetReport{}, err
	}
	if err := contract.ContextErr(ctx); err != nil {
		return contract.ForgetReport{}, err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	now := e.stamp()
	defer e.commitLocked(now)
	n := 0
	if target.Filter != nil {
		var gone []*stored
		for _, s := range e.records {
			if target.Filter.AdmitsStatus(s.status, false) && target.Filter.Matches(s.item.Type, &s.item.Meta) {
				gone = append(gone, s)
			}
		}
		// The feed lists a forget by filter in id order.
		slices.SortFunc(gone, func(a, b *stored) int { return cmp.Compare(a.id, b.id) })
		for _, s := range gone {
			delete(e.records, s.id)
			e.logLocked(contract.OpForget, s, now)
			n++
		}
		return contract.ForgetReport{Forgotten: n}, nil
	}
	for _, id := range target.IDs {
		if s, ok := e.records[id]; ok {
			delete(e.records, id)
			e.logLocked(contract.OpForget, s, now)
			n++
		}
	}
	return contract.ForgetReport{Forgotten: n}, nil
}

// Browse answers the browse query over a snapshot of every record.
func (e *Engine) Browse(ctx context.Context, q contract.BrowseQuery) (contract.BrowsePage, error) {
	if err := q.Validate(); err != nil {
		return contract.BrowsePage{}, err
	}
	if err := contract.ContextErr(ctx); err != nil {
		return contract.BrowsePage{}, err
	}
	e.mu.RLock()
	snapshot := make([]contract.Record, 0, len(e.records))
	for _, s := range e.records {
		snapshot = append(snapshot, s.record())
	}
	e.mu.RUnlock()
	return contract.BrowseSlice(q, snapshot)
}

func missingRecord(id string) error { return contract.NotFound("record %s does not exist", id) }

// Review approves a candidate (it becomes active) or rejects it (it is forgotten).
func (e *Engine) Review(ctx context.Context, req contract.ReviewRequest) (contract.ReviewResult, error) {
	if err := req.Validate(); err != nil {
		return contract.ReviewResult{}, err
	}
	if err := contract.ContextErr(ctx); err != nil {
		return contract.ReviewResult{}, err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	s, ok := e.records[req.ID]
	if !ok {
		return contract.ReviewResult{}, missingRecord(req.ID)
	}
	if s.status != contract.StatusCandidate {
		return contract.ReviewResult{}, contract.Conflict("record %s is '%s', not a candidate", req.ID, s.status)
	}
	now := e.stamp()
	defer e.commitLocked(now)
	if req.Action == contract.ReviewReject {
		delete(e.records, req.ID)
		e.logLocked(contract.OpReject, s, now)
		return contract.ReviewResult{Forgotten: 1}, nil
	}
	s.status = contract.StatusActive
	s.updated = now
	e.logLocked(contract.OpApprove, s, now)
	r := s.record()
	return contract.ReviewResult{Record: &r}, nil
}

// Supersede marks a record as superseded by another held record.
func (e *Engine) Supersede(ctx context.Context, req contract.SupersedeRequest) (contract.Record, error) {
	if err := req.Validate(); err != nil {
		return contract.Record{}, err
	}
	if err := contract.ContextErr(ctx); err != nil {
		return contract.Record{}, err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	s, ok := e.records[req.ID]
	if !ok {
		return contract.Record{}, missingRecord(req.ID)
	}
	if req.Undo {
		if s.status != contract.StatusSuperseded || s.supersededBy == nil || *s.supersededBy != req.By {
			return contract.Record{}, contract.NotSupersededBy(req.ID, req.By)
		}
		s.status, s.supersededBy, s.updated = req.UndoStatus(), nil, e.stamp()
		e.logLocked(req.UndoOp(), s, s.updated)
		e.commitLocked(s.updated)
		return s.record(), nil
	}
	if _, ok := e.records[req.By]; !ok {
		return contract.Record{}, missingRecord(req.By)
	}
	s.status = contract.StatusSuperseded
	by := req.By
	s.supersededBy = &by
	s.updated = e.stamp()
	e.logLocked(contract.OpSupersede, s, s.updated)
	e.commitLocked(s.updated)
	return s.record(), nil
}

// Len is the number of records held, every status and namespace included.
func (e *Engine) Len() int {
	e.mu.RLock()
	defer e.mu.RUnlock()
	return len(e.records)
}

// Restore writes whole records as they are (contract.Restorer): item,
// status, times, expiry and successor; a held id, or a repeat in the batch,
// is left as it is and its receipt says replayed. Each record written is one
// restore change.
func (e *Engine) Restore(ctx context.Context, recs []contract.Record) ([]contract.StoreReceipt, error) {
	if err := contract.ValidateRestore(recs); err != nil {
		return nil, err
	}
	if err := contract.ContextErr(ctx); err != nil {
		return nil, err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	now := e.stamp()
	out := make([]contract.StoreReceipt, len(recs))
	for i := range recs {
		r := &recs[i]
		out[i].ID = r.ID
		if _, held := e.records[r.ID]; held {
			out[i].Replayed = true
			continue
		}
		kept := cloneItem(*r.Item)
		text := kept.RenderText()
		s := &stored{id: r.ID, item: kept, text: text, scored: prepare(text), status: r.Status,
			created: r.CreatedAt.UTC().Truncate(time.Millisecond), updated: r.UpdatedAt.UTC().Truncate(time.Millisecond),
			expires: clonePtr(r.ExpiresAt), supersededBy: clonePtr(r.SupersededBy), seq: e.nextSeq}
		if s.expires != nil {
			t := s.expires.UTC().Truncate(time.Millisecond)
			s.expires = &t
		}
		e.records[r.ID] = s
		e.nextSeq++
		e.logLocked(contract.OpRestore, s, now)
	}
	e.commitLocked(now)
	return out, nil
}

// NamespaceCounts counts the records of each namespace, service sandboxes
// included (contract.NamespaceCounter).
func (e *Engine) NamespaceCounts(ctx context.Context) (map[string]int, error) {
	if err := contract.ContextErr(ctx); err != nil {
		return nil, err
	}
	e.mu.RLock()
	defer e.mu.RUnlock()
	out := map[string]int{}
	for _, s := range e.records {
		out[s.item.Meta.Namespace.String()]++
	}
	return out, nil
}
