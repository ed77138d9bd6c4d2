package mcp

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"time"

	"mnemo/contract"
)

// ToolScope is where a model's memory tools write and how far they read,
// fixed by the host and never taken from a tool's arguments.
type ToolScope struct {
	// Place is the namespace every stored memory lands at.
	Place contract.Namespace
	// Reach confines every read and every forget. Nil reads every namespace
	// but service sandboxes, which suits only a host serving one tenant.
	Reach *contract.Reach
	// Writes offers memory_store and memory_forget.
	Writes bool
	// Zone is the IANA zone `refers_to` days are read in; empty is UTC.
	Zone string
}

// DefaultScope is the root with no reach and writes on: a single-tenant host.
func DefaultScope() ToolScope { return ToolScope{Writes: true} }

// ScopeAt is an agent's scope at place: stores land there, and reads see place
// and its ancestors (ReachOf), never a sibling. Its caveat, as the reference's:
// forget can then remove memories of the ancestors too; use an exact reach or
// a read-only scope to prevent it.
func ScopeAt(place contract.Namespace) ToolScope {
	r := contract.ReachOf(place)
	return ToolScope{Place: place, Reach: &r, Writes: true}
}

// reach returns a copy of the scope's reach, so an engine cannot change the scope.
func (s ToolScope) reach() *contract.Reach {
	if s.Reach == nil {
		return nil
	}
	r := *s.Reach
	return &r
}

// confine overwrites the filter's reach with the scope's (even with none).
func (s ToolScope) confine(f *contract.MetaFilter) { f.Reach = s.reach() }

// Tools are the memory tools a host offers a model over one engine and one
// scope. They are safe for concurrent use when the engine is.
type Tools struct {
	engine contract.Engine
	scope  ToolScope
	now    func() time.Time
}

// Option adjusts Tools.
type Option func(*Tools)

// WithClock sets the clock stored memories take their observed_at from.
func WithClock(now func() time.Time) Option { return func(t *Tools) { t.now = now } }

// New returns the tools over engine, confined to scope.
func New(engine contract.Engine, scope ToolScope, opts ...Option) *Tools {
	t := &Tools{engine: engine, scope: scope, now: time.Now}
	if scope.Reach != nil {
		r := *scope.Reach
		t.scope.Reach = &r
	}
	for _, o := range opts {
		o(t)
	}
	return t
}

// Scope returns the scope the tools run in.
func (t *Tools) Scope() ToolScope {
	s := t.scope
	s.Reach = t.scope.reach()
	return s
}

// Specs lists the tools to offer the model, reads first: memory_fetch only
// when the engine serves a fetch mode (its mode enum lists exactly those), the
// write tools only when the scope writes.
func (t *Tools) Specs() []ToolSpec { return specs(t.engine.Descriptor().FetchModes, t.scope.Writes) }

// Call runs the tool name with the model's raw JSON arguments and returns its
// compact JSON result. Errors are contract errors with the reference's
// messages: InvalidRequest for an unknown tool and for malformed arguments,
// Unsupported for a write tool on a read-only scope and for memory_fetch on an
// engine with no fetch mode, and whatever the engine answers.
func (t *Tools) Call(ctx context.Context, name string, raw json.RawMessage) (json.RawMessage, error) {
	if !slices.Contains(toolNames[:], name) {
		return nil, contract.Invalid("unknown memory tool `%s`; expected one of %s", name, strings.Join(toolNames[:], ", "))
	}
	if isWriteTool(name) && !t.scope.Writes {
		return nil, contract.Unsupported("%s is not offered: these memory tools are read-only", name)
	}
	if name == ToolFetch && len(t.engine.Descriptor().FetchModes) == 0 {
		return nil, contract.Unsupported("%s: engine `%s` serves no fetch mode", ToolFetch, t.engine.Descriptor().ID)
	}
	obj, err := decodeArguments(name, raw)
	if err != nil {
		return nil, err
	}
	if err := scanHostFixed(name, obj); err != nil {
		return nil, err
	}
	var result any
	switch name {
	case ToolRecall:
		result, err = t.recall(ctx, obj)
	case ToolFetch:
		result, err = t.fetch(ctx, obj)
	case ToolList:
		result, err = t.list(ctx, obj)
	case ToolGet:
		result, err = t.get(ctx, obj)
	case ToolExplore:
		result, err = t.explore(ctx, obj)
	case ToolStore:
		result, err = t.store(ctx, obj)
	case ToolForget:
		result, err = t.forget(ctx, obj)
	}
	if err != nil {
		return nil, err
	}
	return encode(result)
}

func (t *Tools) recall(ctx context.Context, obj map[string]any) (any, error) {
	a, err := parseArgs(ToolRecall, obj, []string{"question", "filter", "limit", "instructions", "refers_to"})
	if err != nil {
		return nil, err
	}
	req := contract.RecallRequest{}
	if req.Filter, err = a.modelFilter("filter"); err != nil {
		return nil, err
	}
	t.scope.confine(&req.Filter)
	if req.Question, err = a.requiredStr("question"); err != nil {
		return nil, err
	}
	if req.Limit, err = a.count("limit", DefaultLimit, MaxLimit); err != nil {
		return nil, err
	}
	if req.Instructions, err = a.str("instructions"); err != nil {
		return nil, err
	}
	if req.RefersTo, err = a.timeHint("refers_to", t.scope.Zone); err != nil {
		return nil, err
	}
	answer, err := t.engine.Recall(ctx, req)
	if err != nil {
		return nil, err
	}
	return renderRecall(answer), nil
}

func (t *Tools) fetch(ctx context.Context, obj map[string]any) (any, error) {
	modes := t.engine.Descriptor().FetchModes
	a, err := parseArgs(ToolFetch, obj, []string{"query", "mode", "filter", "limit", "cursor", "refers_to"})
	if err != nil {
		return nil, err
	}
	req := contract.FetchRequest{}
	if req.Filter, err = a.modelFilter("filter"); err != nil {
		return nil, err
	}
	t.scope.confine(&req.Filter)
	if req.Query, err = a.requiredStr("query"); err != nil {
		return nil, err
	}
	mode, given, err := a.oneOf("mode", stringsOf(modes))
	if err != nil {
		return nil, err
	}
	req.Mode, _ = defaultMode(modes)
	if given {
		req.Mode = contract.FetchMode(mode)
	}
	if req.Limit, err = a.count("limit", DefaultLimit, MaxLimit); err != nil {
		return nil, err
	}
	if req.Cursor, err = a.str("cursor"); err != nil {
		return nil, err
	}
	if req.RefersTo, err = a.timeHint("refers_to", t.scope.Zone); err != nil {
		return nil, err
	}
	page, err := t.engine.Fetch(ctx, req)
	if err != nil {
		return nil, err
	}
	return renderPage("hits", page.Hits, page.NextCursor), nil
}

func (t *Tools) list(ctx context.Context, obj map[string]any) (any, error) {
	a, err := parseArgs(ToolList, obj, []string{"filter", "limit", "cursor"})
	if err != nil {
		return nil, err
	}
	req := contract.ListRequest{}
	if req.Filter, err = a.modelFilter("filter"); err != nil {
		return nil, err
	}
	t.scope.confine(&req.Filter)
	if req.Limit, err = a.count("limit", DefaultLimit, MaxLimit); err != nil {
		return nil, err
	}
	if req.Cursor, err = a.str("cursor"); err != nil {
		return nil, err
	}
	page, err := t.engine.List(ctx, req)
	if err != nil {
		return nil, err
	}
	return renderPage("items", page.Items, page.NextCursor), nil
}

func (t *Tools) get(ctx context.Context, obj map[string]any) (any, error) {
	a, err := parseArgs(ToolGet, obj, []string{"ids"})
	if err != nil {
		return nil, err
	}
	ids, err := a.itemIDs("ids")
	if err != nil {
		return nil, err
	}
	found, err := t.resolve(ctx, ids)
	if err != nil {
		return nil, err
	}
	return getResult{Items: renderHits(found), Missing: notFound(ids, found)}, nil
}

// resolve reads ids under the scope's reach: what comes back is exactly what
// the scope may see.
func (t *Tools) resolve(ctx context.Context, ids []string) ([]contract.Hit, error) {
	return t.engine.Get(ctx, contract.GetRequest{IDs: ids, Reach: t.scope.reach()})
}

// notFound lists the ids, in the order named, that no hit answers.
func notFound(ids []string, hits []contract.Hit) []string {
	seen := make(map[string]bool, len(hits))
	for _, h := range hits {
		seen[h.ID] = true
	}
	out := []string{}
	for _, id := range ids {
		if !seen[id] {
			out = append(out, id)
		}
	}
	return out
}

func (t *Tools) explore(ctx context.Context, obj map[string]any) (any, error) {
	a, err := parseArgs(ToolExplore, obj, []string{"facet", "filter", "limit"})
	if err != nil {
		return nil, err
	}
	facets := exploreFacets()
	name, err := a.requiredStr("facet")
	if err != nil {
		return nil, err
	}
	if !slices.Contains(facets, name) {
		return nil, a.fieldError("facet", "must be one of "+strings.Join(facets, ", "))
	}
	req := contract.ExploreRequest{Facet: contract.Facet(name)}
	if req.Limit, err = a.count("limit", DefaultLimit, MaxLimit); err != nil {
		return nil, err
	}
	if req.Filter, err = a.modelFilter("filter"); err != nil {
		return nil, err
	}
	t.scope.confine(&req.Filter)
	page, err := t.engine.Explore(ctx, req)
	if err != nil {
		return nil, err
	}
	return renderExplore(page), nil
}

// storeShapes are memory_store's three shapes, exactly one per call.
var storeShapes = [...]string{"learning", "document", "conversation"}

func (t *Tools) store(ctx context.Context, obj map[string]any) (any, error) {
	a, err := parseArgs(ToolStore, obj, []string{"learning", "document", "conversation", "tags"})
	if err != nil {
		return nil, err
	}
	var shape string
	given := 0
	for _, s := range storeShapes {
		if a.has(s) {
			shape = s
			given++
		}
	}
	if given != 1 {
		return nil, invalid(ToolStore, "pass exactly one of `learning`, `document` or `conversation`")
	}
	tags, err := a.strs("tags")
	if err != nil {
		return nil, err
	}
	if len(tags) == 0 {
		tags = nil
	}
	now := t.now().UTC()
	meta := contract.MemoryMeta{
		Namespace:  t.scope.Place,
		Source:     contract.SourceRef{Kind: contract.SourceAgent},
		Tags:       tags,
		ObservedAt: &now,
	}
	var item contract.StoreItem
	switch shape {
	case "learning":
		item, err = readLearning(a, meta)
	case "document":
		item, err = readDocument(a, meta)
	default:
		item, err = readConversation(a, meta)
	}
	if err != nil {
		return nil, err
	}
	receipt, err := contract.Store(ctx, t.engine, item)
	if err != nil {
		return nil, err
	}
	return storeResult{ID: receipt.ID, Replayed: receipt.Replayed}, nil
}

func readLearning(a args, meta contract.MemoryMeta) (contract.StoreItem, error) {
	la, _, err := a.object("learning", "learning.", []string{"text", "learning_kind", "confidence", "evidence"})
	if err != nil {
		return contract.StoreItem{}, err
	}
	kindName, err := la.str("learning_kind")
	if err != nil {
		return contract.StoreItem{}, err
	}
	text, err := la.requiredStr("text")
	if err != nil {
		return contract.StoreItem{}, err
	}
	kind := DefaultLearningKind
	if kindName != nil {
		k, ok := contract.ParseLearningKind(*kindName)
		if !ok {
			return contract.StoreItem{}, la.fieldError("learning_kind", "must be one of "+strings.Join(learningKinds(), ", "))
		}
		kind = k
	}
	confidence, err := la.unit("confidence", DefaultConfidence)
	if err != nil {
		return contract.StoreItem{}, err
	}
	evidence, err := la.str("evidence")
	if err != nil {
		return contract.StoreItem{}, err
	}
	item := contract.Learning(text, kind, confidence, meta)
	item.Evidence = evidence
	return item, nil
}

func readDocument(a args, meta contract.MemoryMeta) (contract.StoreItem, error) {
	da, _, err := a.object("document", "document.", []string{"title", "text"})
	if err != nil {
		return contract.StoreItem{}, err
	}
	title, err := da.str("title")
	if err != nil {
		return contract.StoreItem{}, err
	}
	text, err := da.requiredStr("text")
	if err != nil {
		return contract.StoreItem{}, err
	}
	item := contract.Document(text, meta)
	item.Title = title
	return item, nil
}

func readConversation(a args, meta contract.MemoryMeta) (contract.StoreItem, error) {
	ca, _, err := a.object("conversation", "conversation.", []string{"turns"})
	if err != nil {
		return contract.StoreItem{}, err
	}
	raw, err := ca.array("turns")
	if err != nil {
		return contract.StoreItem{}, err
	}
	if len(raw) == 0 {
		return contract.StoreItem{}, ca.fieldError("turns", "must hold at least one turn")
	}
	turns := make([]contract.Turn, 0, len(raw))
	for _, v := range raw {
		ta, err := ca.element("turns", v, "conversation.turns[].", []string{"role", "text"})
		if err != nil {
			return contract.StoreItem{}, err
		}
		roleName, err := ta.requiredStr("role")
		if err != nil {
			return contract.StoreItem{}, err
		}
		role, ok := contract.ParseRole(roleName)
		if !ok {
			return contract.StoreItem{}, ta.fieldError("role", "must be one of "+strings.Join(roles(), ", "))
		}
		text, err := ta.requiredStr("text")
		if err != nil {
			return contract.StoreItem{}, err
		}
		turns = append(turns, contract.Turn{Role: role, Text: text})
	}
	return contract.Conversation(turns, meta), nil
}

func (t *Tools) forget(ctx context.Context, obj map[string]any) (any, error) {
	a, err := parseArgs(ToolForget, obj, []string{"ids", "filter"})
	if err != nil {
		return nil, err
	}
	switch hasIDs, hasFilter := a.has("ids"), a.has("filter"); {
	case hasIDs && !hasFilter:
		return t.forgetIDs(ctx, a)
	case hasFilter && !hasIDs:
		f, err := a.modelFilter("filter")
		if err != nil {
			return nil, err
		}
		// Checked before the reach is added: a reach alone would mean
		// everything the scope sees.
		if f.IsEmpty() {
			return nil, a.fieldError("filter", "must set at least one field; an empty filter would mean everything")
		}
		t.scope.confine(&f)
		report, err := t.engine.Forget(ctx, contract.ForgetFilter(f))
		if err != nil {
			return nil, err
		}
		return forgetResult{Forgotten: report.Forgotten, Skipped: []string{}}, nil
	default:
		return nil, invalid(ToolForget, "pass exactly one of `ids` or `filter`")
	}
}

// forgetIDs reads the ids back under the reach and removes only those found,
// so an id from outside the reach is never removed, only reported as skipped.
func (t *Tools) forgetIDs(ctx context.Context, a args) (any, error) {
	ids, err := a.itemIDs("ids")
	if err != nil {
		return nil, err
	}
	hits, err := t.resolve(ctx, ids)
	if err != nil {
		return nil, err
	}
	skipped := notFound(ids, hits)
	if len(hits) == 0 {
		return forgetResult{Forgotten: 0, Skipped: skipped}, nil
	}
	found := make([]string, len(hits))
	for i, h := range hits {
		found[i] = h.ID
	}
	var report contract.ForgetReport
	if r := t.scope.reach(); r != nil {
		// forget_within checks the reach once more as it removes, so the
		// removal itself is confined, not only the read before it.
		report, err = contract.ForgetWithin(ctx, t.engine, found, *r)
	} else {
		report, err = t.engine.Forget(ctx, contract.ForgetIDs(found...))
	}
	if err != nil {
		return nil, err
	}
	return forgetResult{Forgotten: report.Forgotten, Skipped: skipped}, nil
}
