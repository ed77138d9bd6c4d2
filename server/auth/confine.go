package auth

import (
	"context"
	"encoding/json"
	"log/slog"
	"slices"
	"time"

	"mnemo/contract"
	"mnemo/engine/curate"
	"mnemo/server/audit"
	"mnemo/server/wire"
)

// Option configures a confined engine.
type Option func(*Confined)

// WithAudit appends every mutation and refusal to log.
func WithAudit(log audit.Log) Option { return func(c *Confined) { c.audit = log } }

// WithVia names where requests come from in the audit log ("http", "ssh").
func WithVia(via string) Option { return func(c *Confined) { c.via = via } }

// WithLogger receives audit-append failures (which never fail the request:
// the mutation already happened).
func WithLogger(l *slog.Logger) Option { return func(c *Confined) { c.log = l } }

// DefaultMaxItemBytes bounds one stored item (its JSON) at the untrusted
// boundary unless WithMaxItemBytes says otherwise: 1 MiB holds a long document
// many times over, while a 24 MB one stalled other tenants' reads.
const DefaultMaxItemBytes = 1 << 20

// WithMaxItemBytes bounds the JSON size of each stored item; 0 keeps
// DefaultMaxItemBytes, a negative n lifts the bound.
func WithMaxItemBytes(n int) Option {
	return func(c *Confined) {
		if n != 0 {
			c.maxItem = n
		}
	}
}

// WithClock stamps audit events (tests).
func WithClock(now func() time.Time) Option { return func(c *Confined) { c.now = now } }

// Confined is an engine bound to one principal (see Confine).
type Confined struct {
	e     contract.Engine
	p     *Principal
	audit audit.Log
	via   string
	log   *slog.Logger
	now   func() time.Time
	// maxItem bounds an item's JSON size (negative: no bound).
	maxItem int
}

var _ contract.Engine = (*Confined)(nil)

// Confine returns e as principal p sees it:
//   - every read (fetch, recall, list, export, explore, browse, beliefs, get,
//     get_records) and every forget runs under the request's reach narrowed by
//     p's bound: the namespaces both admit (contract.Reach.Intersect), never p's
//     whole reach in place of the request's. A request without a reach runs
//     under the bound; a reach sharing no namespace with the bound is refused,
//     naming both;
//   - a page (list, export, fetch, recall, beliefs) holds at most MaxLimit;
//   - readers cannot store, forget, review, supersede, erase or consolidate;
//   - stores land anywhere only for admins, otherwise inside p's reach;
//   - forget by ids goes through forget_within with p's reach, and the ids left
//     alone are counted as skipped; forget by filter needs a field besides the
//     reach;
//   - review and supersede find their records under p's reach first, so an id
//     outside it is "not found", like an id that does not exist;
//   - every mutation and every refusal is appended to the audit log.
//
// The owner (Unlimited) is not bound by a reach but is still audited.
func Confine(e contract.Engine, p *Principal, opts ...Option) *Confined {
	c := &Confined{e: e, p: p, log: slog.New(slog.DiscardHandler), now: time.Now, maxItem: DefaultMaxItemBytes}
	for _, o := range opts {
		o(c)
	}
	return c
}

// Principal is who the engine acts for.
func (c *Confined) Principal() *Principal { return c.p }

// Unwrap returns the engine under the confinement.
func (c *Confined) Unwrap() contract.Engine { return c.e }

// Scope is the reach a request of op runs under: the request's reach narrowed
// by the principal's bound (the namespaces both admit), the bound itself when
// the request names no reach, and a refusal, audited, when the two share no
// namespace. The bound only ever narrows: a request never selects more than it
// asked for, nor anything outside the bound. Unlimited principals keep the
// request's reach.
func (c *Confined) Scope(ctx context.Context, op string, req *contract.Reach) (*contract.Reach, error) {
	if c.p.Unlimited {
		return req, nil
	}
	if req == nil {
		if c.p.Reach == nil {
			return nil, nil
		}
		r := *c.p.Reach
		return &r, nil
	}
	r, ok := req.Intersect(c.p.Bound())
	if !ok {
		asked := *req
		return nil, c.refuse(ctx, audit.Event{Op: op, Reach: &asked},
			Forbidden("the request's reach (%s) and principal `%s`'s reach (%s) share no namespace: it selects nothing here", DescribeReach(*req), c.p.Name, c.p.DescribeBound()))
	}
	return &r, nil
}

// boundReach is the reach forget by ids and the existence checks run under:
// never nil, since forget_within takes a reach.
func (c *Confined) boundReach() contract.Reach {
	return c.p.Bound()
}

// writeScope is Scope for the operations that take a reach by value.
func (c *Confined) writeScope(ctx context.Context, op string, req contract.Reach) (contract.Reach, error) {
	r, err := c.Scope(ctx, op, &req)
	if err != nil {
		return contract.Reach{}, err
	}
	if r == nil {
		return c.boundReach(), nil
	}
	return *r, nil
}

func (c *Confined) filter(ctx context.Context, op string, f contract.MetaFilter) (contract.MetaFilter, error) {
	r, err := c.Scope(ctx, op, f.Reach)
	if err != nil {
		return contract.MetaFilter{}, err
	}
	f = f.Clone()
	f.Reach = r
	return f, nil
}

func (c *Confined) record(ctx context.Context, ev audit.Event) {
	if c.audit == nil {
		return
	}
	ev.At = c.now().UTC()
	ev.Principal, ev.Role, ev.Via = c.p.Name, string(c.p.Role), c.via
	if err := c.audit.AppendAudit(context.WithoutCancel(ctx), ev); err != nil {
		c.log.Error("audit append failed", "op", ev.Op, "err", err)
	}
}

// refuse audits and returns a refusal.
func (c *Confined) refuse(ctx context.Context, ev audit.Event, err *contract.Error) error {
	ev.Refused = err.Message
	c.record(ctx, ev)
	return err
}

// Deny refuses op for the principal with a forbidden error, audited like every
// refusal; servers call it for what they guard themselves (the audit log).
func (c *Confined) Deny(ctx context.Context, op string, format string, args ...any) error {
	return c.refuse(ctx, audit.Event{Op: op}, Forbidden(format, args...))
}

// mayWrite refuses readers.
func (c *Confined) mayWrite(ctx context.Context, op string, ev audit.Event) error {
	if c.p.Role.CanWrite() {
		return nil
	}
	ev.Op = op
	return c.refuse(ctx, ev, Forbidden("principal `%s` is a reader and cannot %s", c.p.Name, verb(op)))
}

func verb(op string) string {
	switch op {
	case wire.OpStore, wire.OpStoreMany, wire.OpRestore:
		return "store"
	case wire.OpForget, wire.OpForgetWithin:
		return "forget"
	}
	return op
}

// MaxLimit is the largest page a confined list, export, fetch, recall or
// beliefs answers, as browse's: at the untrusted boundary one request must not
// answer the whole store; the cursor pages through the rest.
const MaxLimit = contract.BrowseMaxLimit

// capLimit refuses a page larger than MaxLimit, in the contract's words.
func capLimit(op string, n int) error {
	if n > MaxLimit {
		return contract.Invalid("%s limit must be at most %d", op, MaxLimit)
	}
	return nil
}

// Descriptor is the engine's.
func (c *Confined) Descriptor() contract.Descriptor { return c.e.Descriptor() }

// Health is the engine's.
func (c *Confined) Health(ctx context.Context) contract.Health { return c.e.Health(ctx) }

// StoreWith writes one item where the principal may write.
func (c *Confined) StoreWith(ctx context.Context, item contract.StoreItem, opts contract.WriteOptions) (contract.StoreReceipt, error) {
	if err := c.checkStore(ctx, wire.OpStore, []contract.StoreItem{item}); err != nil {
		return contract.StoreReceipt{}, err
	}
	rec, err := c.e.StoreWith(ctx, item, opts)
	if err != nil {
		return rec, err
	}
	c.record(ctx, audit.Event{Op: wire.OpStore, IDs: []string{rec.ID}, Where: where([]contract.StoreItem{item}), Count: stored(rec)})
	return rec, nil
}

// StoreManyWith writes a batch where the principal may write; one item outside
// the principal's reach refuses the whole batch before anything is written.
func (c *Confined) StoreManyWith(ctx context.Context, items []contract.StoreItem, opts contract.WriteOptions) ([]contract.StoreReceipt, error) {
	if err := c.checkStore(ctx, wire.OpStoreMany, items); err != nil {
		return nil, err
	}
	recs, err := c.e.StoreManyWith(ctx, items, opts)
	if err != nil {
		return recs, err
	}
	ids := make([]string, len(recs))
	n := 0
	for i, r := range recs {
		ids[i] = r.ID
		n += stored(r)
	}
	c.record(ctx, audit.Event{Op: wire.OpStoreMany, IDs: ids, Where: where(items), Count: n})
	return recs, nil
}

// Restore writes whole records as they were (contract.Restorer) where the
// principal may write; one record outside its reach refuses the batch before
// anything is written. An engine that cannot answers Unsupported.
func (c *Confined) Restore(ctx context.Context, recs []contract.Record) ([]contract.StoreReceipt, error) {
	if err := contract.ValidateRestore(recs); err != nil {
		return nil, err
	}
	items := make([]contract.StoreItem, len(recs))
	for i := range recs {
		items[i] = *recs[i].Item
	}
	if err := c.checkStore(ctx, wire.OpRestore, items); err != nil {
		return nil, err
	}
	r, ok := c.e.(contract.Restorer)
	if !ok {
		return nil, contract.Unsupported("engine `%s` does not restore whole records", c.e.Descriptor().ID)
	}
	rs, err := r.Restore(ctx, recs)
	if err != nil {
		return rs, err
	}
	ids := make([]string, len(rs))
	n := 0
	for i, x := range rs {
		ids[i] = x.ID
		n += stored(x)
	}
	c.record(ctx, audit.Event{Op: wire.OpRestore, IDs: ids, Where: where(items), Count: n})
	return rs, nil
}

func stored(r contract.StoreReceipt) int {
	if r.Replayed {
		return 0
	}
	return 1
}

func (c *Confined) checkStore(ctx context.Context, op string, items []contract.StoreItem) error {
	if err := c.mayWrite(ctx, op, audit.Event{Where: where(items)}); err != nil {
		return err
	}
	if c.maxItem > 0 {
		for i := range items {
			raw, err := json.Marshal(items[i])
			if err != nil {
				return contract.Invalid("item %d cannot be encoded: %s", i+1, contract.AsError(err).Message)
			}
			if len(raw) > c.maxItem {
				if len(items) == 1 {
					return contract.Invalid("the item is %d bytes; this server stores items of at most %d bytes", len(raw), c.maxItem)
				}
				return contract.Invalid("item %d is %d bytes; this server stores items of at most %d bytes", i+1, len(raw), c.maxItem)
			}
		}
	}
	if c.p.Role == RoleAdmin {
		return nil
	}
	for i := range items {
		ns := items[i].Meta.Namespace
		if !c.p.Admits(ns) {
			return c.refuse(ctx, audit.Event{Op: op, Where: []contract.Namespace{ns}},
				Forbidden("principal `%s` cannot store at `%s`, outside its reach", c.p.Name, ns))
		}
	}
	return nil
}

// where lists the distinct namespaces of items, in order.
func where(items []contract.StoreItem) []contract.Namespace {
	var out []contract.Namespace
	seen := map[string]bool{}
	for i := range items {
		ns := items[i].Meta.Namespace
		if k := ns.String(); !seen[k] {
			seen[k] = true
			out = append(out, ns)
		}
	}
	return out
}

// place finds where the records of ids lie under reach (nil: the contract's
// no reach): their distinct namespaces, and whether every id was found. The
// audit log keeps them, so an entry naming ids can be shown to exactly the
// admins whose reach holds them.
func (c *Confined) place(ctx context.Context, reach *contract.Reach, ids []string) ([]contract.Namespace, bool, error) {
	var out []contract.Namespace
	seen := map[string]bool{}
	found := map[string]bool{}
	recs, err := contract.GetRecordsInChunks(ctx, c.e, ids, reach)
	if err != nil {
		return nil, false, err
	}
	for _, r := range recs {
		found[r.ID] = true
		ns := r.Item.Meta.Namespace
		if k := ns.String(); !seen[k] {
			seen[k] = true
			out = append(out, ns)
		}
	}
	return out, len(found) == distinct(ids), nil
}

// Recall answers under the principal's reach.
func (c *Confined) Recall(ctx context.Context, req contract.RecallRequest) (contract.RecallAnswer, error) {
	if err := capLimit(wire.OpRecall, req.Limit); err != nil {
		return contract.RecallAnswer{}, err
	}
	f, err := c.filter(ctx, wire.OpRecall, req.Filter)
	if err != nil {
		return contract.RecallAnswer{}, err
	}
	req.Filter = f
	return c.e.Recall(ctx, req)
}

// Fetch ranks under the principal's reach.
func (c *Confined) Fetch(ctx context.Context, req contract.FetchRequest) (contract.FetchPage, error) {
	if err := capLimit(wire.OpFetch, req.Limit); err != nil {
		return contract.FetchPage{}, err
	}
	f, err := c.filter(ctx, wire.OpFetch, req.Filter)
	if err != nil {
		return contract.FetchPage{}, err
	}
	req.Filter = f
	return c.e.Fetch(ctx, req)
}

// List lists under the principal's reach.
func (c *Confined) List(ctx context.Context, req contract.ListRequest) (contract.ListPage, error) {
	if err := capLimit(wire.OpList, req.Limit); err != nil {
		return contract.ListPage{}, err
	}
	f, err := c.filter(ctx, wire.OpList, req.Filter)
	if err != nil {
		return contract.ListPage{}, err
	}
	req.Filter = f
	return c.e.List(ctx, req)
}

// Export exports under the principal's reach.
func (c *Confined) Export(ctx context.Context, req contract.ListRequest) (contract.ExportPage, error) {
	if err := capLimit(wire.OpExport, req.Limit); err != nil {
		return contract.ExportPage{}, err
	}
	f, err := c.filter(ctx, wire.OpExport, req.Filter)
	if err != nil {
		return contract.ExportPage{}, err
	}
	req.Filter = f
	return c.e.Export(ctx, req)
}

// Explore counts under the principal's reach.
func (c *Confined) Explore(ctx context.Context, req contract.ExploreRequest) (contract.ExplorePage, error) {
	f, err := c.filter(ctx, wire.OpExplore, req.Filter)
	if err != nil {
		return contract.ExplorePage{}, err
	}
	req.Filter = f
	return c.e.Explore(ctx, req)
}

// Get reads ids under the principal's reach.
func (c *Confined) Get(ctx context.Context, req contract.GetRequest) ([]contract.Hit, error) {
	r, err := c.Scope(ctx, wire.OpGet, req.Reach)
	if err != nil {
		return nil, err
	}
	req.Reach = r
	return c.e.Get(ctx, req)
}

// GetRecords reads whole records under the principal's reach.
func (c *Confined) GetRecords(ctx context.Context, req contract.GetRequest) ([]contract.Record, error) {
	r, err := c.Scope(ctx, wire.OpGetRecords, req.Reach)
	if err != nil {
		return nil, err
	}
	req.Reach = r
	return c.e.GetRecords(ctx, req)
}

// Browse lists under the principal's reach.
func (c *Confined) Browse(ctx context.Context, q contract.BrowseQuery) (contract.BrowsePage, error) {
	f, err := c.filter(ctx, wire.OpBrowse, q.Filter)
	if err != nil {
		return contract.BrowsePage{}, err
	}
	q.Filter = f
	return c.e.Browse(ctx, q)
}

// KeptClusters reads the clusters the store keeps (curate.Kept) within the
// principal's reach; false when the engine keeps none.
func (c *Confined) KeptClusters(ctx context.Context, filter contract.MetaFilter, cfg curate.Config) (curate.KeptAnswer, error) {
	k, ok := c.e.(curate.Kept)
	if !ok {
		return curate.KeptAnswer{}, nil
	}
	f, err := c.filter(ctx, wire.OpClusters, filter)
	if err != nil {
		return curate.KeptAnswer{}, err
	}
	return k.KeptClusters(ctx, f, cfg)
}

// Beliefs reads under the principal's reach.
func (c *Confined) Beliefs(ctx context.Context, req contract.BeliefsRequest) ([]contract.Hit, error) {
	if err := capLimit("a beliefs", req.Limit); err != nil {
		return nil, err
	}
	if !c.p.Unlimited {
		r, err := c.writeScope(ctx, wire.OpBeliefs, req.Reach)
		if err != nil {
			return nil, err
		}
		req.Reach = r
	}
	return contract.Beliefs(ctx, c.e, req)
}

// Forget removes ids inside the principal's reach, or what a filter selects
// inside it.
func (c *Confined) Forget(ctx context.Context, target contract.ForgetTarget) (contract.ForgetReport, error) {
	rep, _, err := c.ForgetCounted(ctx, target)
	return rep, err
}

// ForgetCounted is Forget that also says how many named ids were left alone
// (outside the reach or absent); the HTTP API reports it as "skipped".
func (c *Confined) ForgetCounted(ctx context.Context, target contract.ForgetTarget) (contract.ForgetReport, int, error) {
	ev := audit.Event{Op: wire.OpForget, IDs: target.IDs}
	if target.Filter != nil {
		ev.Filter = target.Filter
	}
	if err := c.mayWrite(ctx, wire.OpForget, ev); err != nil {
		return contract.ForgetReport{}, 0, err
	}
	if err := target.Validate(); err != nil {
		return contract.ForgetReport{}, 0, err
	}
	if target.Filter != nil {
		f, err := c.filter(ctx, wire.OpForget, *target.Filter)
		if err != nil {
			return contract.ForgetReport{}, 0, err
		}
		if !c.p.Unlimited {
			rest := f.Clone()
			rest.Reach = nil
			if rest.IsEmpty() {
				return contract.ForgetReport{}, 0, contract.Invalid("forget by filter needs a field besides the reach, which would mean everything in it")
			}
		}
		rep, err := c.e.Forget(ctx, contract.ForgetFilter(f))
		if err != nil {
			return rep, 0, err
		}
		c.record(ctx, audit.Event{Op: wire.OpForget, Filter: &f, Count: rep.Forgotten})
		return rep, 0, nil
	}
	if c.p.Unlimited {
		// Where only when every id is placed: a sandboxed or absent id must
		// keep the entry from reach-limited admins.
		ns, all, err := c.place(ctx, nil, target.IDs)
		if err != nil {
			return contract.ForgetReport{}, 0, err
		}
		if !all {
			ns = nil
		}
		rep, err := c.e.Forget(ctx, target)
		if err != nil {
			return rep, 0, err
		}
		skipped := max(distinct(target.IDs)-rep.Forgotten, 0)
		c.record(ctx, audit.Event{Op: wire.OpForget, IDs: target.IDs, Where: ns, Count: rep.Forgotten, Skipped: skipped})
		return rep, skipped, nil
	}
	return c.forgetWithin(ctx, wire.OpForget, target.IDs, c.boundReach())
}

// ForgetWithin removes the ids found under the reach narrowed by the
// principal's bound.
func (c *Confined) ForgetWithin(ctx context.Context, ids []string, reach contract.Reach) (contract.ForgetReport, error) {
	rep, _, err := c.ForgetWithinCounted(ctx, ids, reach)
	return rep, err
}

// ForgetWithinCounted is ForgetWithin that also reports the skipped ids' count.
func (c *Confined) ForgetWithinCounted(ctx context.Context, ids []string, reach contract.Reach) (contract.ForgetReport, int, error) {
	if err := c.mayWrite(ctx, wire.OpForgetWithin, audit.Event{IDs: ids, Reach: &reach}); err != nil {
		return contract.ForgetReport{}, 0, err
	}
	if c.p.Unlimited {
		return c.forgetWithin(ctx, wire.OpForgetWithin, ids, reach)
	}
	scope, err := c.writeScope(ctx, wire.OpForgetWithin, reach)
	if err != nil {
		return contract.ForgetReport{}, 0, err
	}
	return c.forgetWithin(ctx, wire.OpForgetWithin, ids, scope)
}

func (c *Confined) forgetWithin(ctx context.Context, op string, ids []string, reach contract.Reach) (contract.ForgetReport, int, error) {
	uniq, err := contract.ForgetWithinIDs(ids)
	if err != nil {
		return contract.ForgetReport{}, 0, err
	}
	ns, _, err := c.place(ctx, &reach, uniq)
	if err != nil {
		return contract.ForgetReport{}, 0, err
	}
	rep, err := contract.ForgetWithin(ctx, c.e, uniq, reach)
	if err != nil {
		return rep, 0, err
	}
	skipped := max(len(uniq)-rep.Forgotten, 0)
	c.record(ctx, audit.Event{Op: op, IDs: uniq, Where: ns, Reach: &reach, Count: rep.Forgotten, Skipped: skipped})
	return rep, skipped, nil
}

func distinct(ids []string) int {
	seen := make(map[string]bool, len(ids))
	for _, id := range ids {
		seen[id] = true
	}
	return len(seen)
}

// visible refuses, as "does not exist", an id outside the principal's reach, so
// a confined caller cannot learn what lies beyond it. It returns where the
// records lie, for the audit log (for the owner, only when every one lies
// outside the sandboxes).
func (c *Confined) visible(ctx context.Context, ids ...string) ([]contract.Namespace, error) {
	if c.p.Unlimited {
		ns, all, err := c.place(ctx, nil, ids)
		if err != nil || !all {
			return nil, err
		}
		return ns, nil
	}
	r := c.boundReach()
	recs, err := c.e.GetRecords(ctx, contract.GetRequest{IDs: ids, Reach: &r})
	if err != nil {
		return nil, err
	}
	found := make(map[string]bool, len(recs))
	var ns []contract.Namespace
	for _, rec := range recs {
		found[rec.ID] = true
		if !slices.ContainsFunc(ns, rec.Item.Meta.Namespace.Equal) {
			ns = append(ns, rec.Item.Meta.Namespace)
		}
	}
	for _, id := range ids {
		if !found[id] {
			return nil, contract.NotFound("record %s does not exist", id)
		}
	}
	return ns, nil
}

// Review approves or rejects a candidate inside the principal's reach.
func (c *Confined) Review(ctx context.Context, req contract.ReviewRequest) (contract.ReviewResult, error) {
	ev := audit.Event{Op: wire.OpReview, IDs: []string{req.ID}, Detail: string(req.Action)}
	if err := c.mayWrite(ctx, wire.OpReview, ev); err != nil {
		return contract.ReviewResult{}, err
	}
	if err := req.Validate(); err != nil {
		return contract.ReviewResult{}, err
	}
	ns, err := c.visible(ctx, req.ID)
	if err != nil {
		return contract.ReviewResult{}, err
	}
	ev.Where = ns
	res, err := c.e.Review(ctx, req)
	if err != nil {
		return res, err
	}
	ev.Count = 1
	c.record(ctx, ev)
	return res, nil
}

// Supersede marks a record superseded, both records inside the principal's reach.
func (c *Confined) Supersede(ctx context.Context, req contract.SupersedeRequest) (contract.Record, error) {
	ev := audit.Event{Op: wire.OpSupersede, IDs: []string{req.ID}, Detail: req.By}
	if err := c.mayWrite(ctx, wire.OpSupersede, ev); err != nil {
		return contract.Record{}, err
	}
	if err := req.Validate(); err != nil {
		return contract.Record{}, err
	}
	ns, err := c.visible(ctx, req.ID, req.By)
	if err != nil {
		return contract.Record{}, err
	}
	ev.Where = ns
	rec, err := c.e.Supersede(ctx, req)
	if err != nil {
		return rec, err
	}
	ev.Count = 1
	c.record(ctx, ev)
	return rec, nil
}

// Erase is for admins, inside their reach.
func (c *Confined) Erase(ctx context.Context, req contract.EraseRequest) (contract.EraseReport, error) {
	ev := audit.Event{Op: wire.OpErase, Reach: &req.Reach}
	if c.p.Role != RoleAdmin {
		return contract.EraseReport{}, c.refuse(ctx, ev, Forbidden("principal `%s` is a %s and cannot erase", c.p.Name, c.p.Role))
	}
	if !c.p.Unlimited && !req.Reach.Within(c.p.Bound()) {
		return contract.EraseReport{}, c.refuse(ctx, ev, Forbidden("principal `%s` cannot erase outside its reach", c.p.Name))
	}
	rep, err := contract.Erase(ctx, c.e, req)
	if err != nil {
		return rep, err
	}
	ev.Count = rep.ErasedScopes
	c.record(ctx, ev)
	return rep, nil
}

// Consolidate runs inside the principal's reach, for curators and admins.
func (c *Confined) Consolidate(ctx context.Context, req contract.ConsolidateRequest) (contract.ConsolidateReceipt, error) {
	ev := audit.Event{Op: wire.OpConsolidate, Reach: &req.Reach}
	if err := c.mayWrite(ctx, wire.OpConsolidate, ev); err != nil {
		return contract.ConsolidateReceipt{}, err
	}
	if !c.p.Unlimited {
		r, err := c.writeScope(ctx, wire.OpConsolidate, req.Reach)
		if err != nil {
			return contract.ConsolidateReceipt{}, err
		}
		req.Reach = r
	}
	rec, err := contract.Consolidate(ctx, c.e, req)
	if err != nil {
		return rec, err
	}
	ev.Reach = &req.Reach
	ev.Count = rec.Scopes
	c.record(ctx, ev)
	return rec, nil
}
