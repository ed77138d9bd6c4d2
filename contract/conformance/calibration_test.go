package conformance_test

import (
	"context"
	"encoding/json"
	"slices"
	"sync"
	"testing"
	"time"

	"mnemo/contract"
	"mnemo/contract/conformance"
	"mnemo/engine/memory"
)

// broken wraps the reference engine with one deliberate fault, so each test
// proves the named check notices it.
type broken struct {
	*memory.Engine
	fault string

	mu     sync.Mutex
	issued map[string]contract.BrowseQuery
	ghosts map[string]contract.Hit
}

func newBroken(fault string) *broken {
	return &broken{Engine: memory.New(), fault: fault, issued: map[string]contract.BrowseQuery{}, ghosts: map[string]contract.Hit{}}
}

func (b *broken) Descriptor() contract.Descriptor {
	d := b.Engine.Descriptor()
	if b.fault == "declares only hybrid" {
		d.FetchModes = []contract.FetchMode{contract.ModeHybrid}
	}
	return d
}

func (b *broken) Health(ctx context.Context) contract.Health {
	if b.fault == "health down" {
		return contract.Health{State: contract.HealthDown, Reason: "deliberately down"}
	}
	return b.Engine.Health(ctx)
}

func (b *broken) unreplay(r contract.StoreReceipt) contract.StoreReceipt {
	if b.fault == "never replays" {
		r.Replayed = false
	}
	return r
}

func (b *broken) Store(ctx context.Context, it contract.StoreItem) (contract.StoreReceipt, error) {
	return b.StoreWith(ctx, it, contract.WriteOptions{})
}

func (b *broken) StoreWith(ctx context.Context, it contract.StoreItem, o contract.WriteOptions) (contract.StoreReceipt, error) {
	r, err := b.Engine.StoreWith(ctx, it, o)
	if b.fault == "accepted store returns a wrong id" && o.Wait == contract.WaitAccepted {
		r.ID = "0000000000000000000000000000000000000000"
	}
	return b.unreplay(r), err
}

func (b *broken) StoreMany(ctx context.Context, items []contract.StoreItem) ([]contract.StoreReceipt, error) {
	return b.StoreManyWith(ctx, items, contract.WriteOptions{})
}

func (b *broken) StoreManyWith(ctx context.Context, items []contract.StoreItem, o contract.WriteOptions) ([]contract.StoreReceipt, error) {
	rs, err := b.Engine.StoreManyWith(ctx, items, o)
	for i := range rs {
		rs[i] = b.unreplay(rs[i])
	}
	if b.fault == "store_many receipts reversed" {
		slices.Reverse(rs)
	}
	return rs, err
}

func (b *broken) Fetch(ctx context.Context, req contract.FetchRequest) (contract.FetchPage, error) {
	switch b.fault {
	case "fetch ignores filter":
		req.Filter = contract.MetaFilter{}
	case "fetch returns candidates":
		if len(req.Filter.Statuses) == 0 {
			req.Filter.Statuses = slices.Clone(contract.Statuses())
		}
	}
	p, err := b.Engine.Fetch(ctx, req)
	if b.fault == "forget leaves a ghost in fetch" && err == nil {
		b.mu.Lock()
		for _, h := range b.ghosts {
			p.Hits = append(p.Hits, h)
		}
		b.mu.Unlock()
	}
	return p, err
}

func (b *broken) Recall(ctx context.Context, req contract.RecallRequest) (contract.RecallAnswer, error) {
	a, err := b.Engine.Recall(ctx, req)
	if b.fault == "citations with unknown ids" {
		for i := range a.Citations {
			a.Citations[i].ID = "unknown-" + a.Citations[i].ID
		}
	}
	return a, err
}

func (b *broken) List(ctx context.Context, req contract.ListRequest) (contract.ListPage, error) {
	if b.fault == "list ignores reach" {
		req.Filter.Reach = nil
	}
	return b.Engine.List(ctx, req)
}

func (b *broken) Explore(ctx context.Context, req contract.ExploreRequest) (contract.ExplorePage, error) {
	p, err := b.Engine.Explore(ctx, req)
	if b.fault == "explore undercounts" {
		for i := range p.Buckets {
			p.Buckets[i].Count--
		}
	}
	return p, err
}

func (b *broken) Get(ctx context.Context, req contract.GetRequest) ([]contract.Hit, error) {
	if b.fault == "get ignores reach" {
		req.Reach = nil
	}
	hits, err := b.Engine.Get(ctx, req)
	if b.fault == "get reorders" {
		slices.Reverse(hits)
	}
	return hits, err
}

func (b *broken) ForgetWithin(ctx context.Context, ids []string, reach contract.Reach) (contract.ForgetReport, error) {
	return contract.ForgetWithinByGet(ctx, b, ids, reach)
}

func (b *broken) Forget(ctx context.Context, t contract.ForgetTarget) (contract.ForgetReport, error) {
	if b.fault == "accepts empty forget" && t.Validate() != nil {
		return contract.ForgetReport{}, nil
	}
	if b.fault == "forget leaves a ghost in fetch" && t.Filter == nil && len(t.IDs) > 0 {
		hits, err := b.Engine.Get(ctx, contract.GetRequest{IDs: t.IDs})
		if err == nil {
			b.mu.Lock()
			for _, h := range hits {
				h.Score = 1
				b.ghosts[h.ID] = h
			}
			b.mu.Unlock()
		}
	}
	return b.Engine.Forget(ctx, t)
}

func (b *broken) Browse(ctx context.Context, q contract.BrowseQuery) (contract.BrowsePage, error) {
	if b.fault == "cursor ignores the query" && q.Cursor != "" {
		b.mu.Lock()
		orig, ok := b.issued[q.Cursor]
		b.mu.Unlock()
		if ok {
			// Re-anchor the cursor's position in whatever query it came with.
			orig.Cursor = q.Cursor
			if pos, err := orig.DecodeCursor(); err == nil && pos != nil {
				recs, err := b.Engine.GetRecords(ctx, contract.GetRequest{IDs: []string{pos.ID}})
				if err == nil && len(recs) == 1 {
					q.Cursor = contract.EncodeCursor(q, &recs[0])
				}
			}
		}
	}
	p, err := b.Engine.Browse(ctx, q)
	if err != nil {
		return p, err
	}
	switch b.fault {
	case "browse total counts only the page":
		p.Total = len(p.Records)
	case "cursor ignores the query":
		if p.Continuation != nil {
			issuer := q
			issuer.Cursor, issuer.Offset = "", 0
			b.mu.Lock()
			b.issued[*p.Continuation] = issuer
			b.mu.Unlock()
		}
	}
	return p, nil
}

func TestEachFaultIsCaughtByItsCheck(t *testing.T) {
	cases := []struct{ fault, check string }{
		{"fetch ignores filter", "fetch_filters"},
		{"never replays", "replay"},
		{"accepts empty forget", "empty_forget"},
		{"declares only hybrid", "unsupported_modes"},
		{"citations with unknown ids", "recall"},
		{"health down", "health"},
		{"explore undercounts", "explore"},
		{"get reorders", "get"},
		{"store_many receipts reversed", "store_many"},
		{"list ignores reach", "namespaces"},
		{"get ignores reach", "namespaces"},
		{"accepted store returns a wrong id", "store_with"},
		{"browse total counts only the page", "browse_walk"},
		{"cursor ignores the query", "browse_cursor"},
		{"forget leaves a ghost in fetch", "forget_no_ghost"},
		{"fetch returns candidates", "statuses_hidden"},
	}
	for _, c := range cases {
		t.Run(c.fault, func(t *testing.T) {
			e := newBroken(c.fault)
			rep := conformance.Run(context.Background(), e)
			failed := rep.Failed()
			if !slices.Contains(failed, c.check) {
				logReport(t, rep)
				t.Fatalf("the fault %q was not caught by `%s` (failed: %v)", c.fault, c.check, failed)
			}
			t.Logf("caught by %v", failed)
			if rep.Err() == nil {
				t.Fatal("Err() is nil on a failing report")
			}
		})
	}
}

func TestChecksListsTheReportInOrder(t *testing.T) {
	rep := conformance.Run(context.Background(), memory.New())
	var names []string
	for _, r := range rep.Results {
		names = append(names, r.Name)
	}
	if !slices.Equal(names, conformance.Checks()) {
		t.Fatalf("report %v, Checks %v", names, conformance.Checks())
	}
	if conformance.Checks()[0] != "health" || conformance.Checks()[len(names)-1] != "cleanup" {
		t.Fatalf("order %v", names)
	}
}

// foreignItems are data the suite must not touch, including look-alikes of its
// own fixtures: a neighbouring conformance workspace, its tags, a sandbox, a
// candidate, and an item that expires.
func foreignItems() ([]contract.StoreItem, []contract.WriteOptions) {
	ws := "mnemo-conformance/someone-else"
	meta := func(ns string, tags ...string) contract.MemoryMeta {
		return contract.MemoryMeta{Namespace: contract.MustNamespace(ns), Workspace: &ws, Source: contract.SourceRef{Kind: contract.SourceAgent}, Tags: tags}
	}
	observed := time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)
	probeLike := meta("root", "namespaces", "erase", "roundtrip")
	probeLike.ObservedAt = &observed
	items := []contract.StoreItem{
		contract.Document("foreign note about tabs", contract.MemoryMeta{Source: contract.SourceRef{Kind: contract.SourceAgent}}),
		contract.Learning("foreign learning tmconf shared fact", contract.LearningFact, 0.5, meta("agent:other")),
		contract.Learning("foreign candidate", contract.LearningPreference, 0.75, meta("team:acme/agent:writer")),
		contract.Document("foreign sandboxed job", meta("agent:other/service:job")),
		contract.Document("foreign probe look-alike", probeLike),
		contract.Conversation([]contract.Turn{{Role: contract.RoleUser, Text: "foreign question"}}, meta("root", "browse")),
	}
	expires := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	opts := []contract.WriteOptions{{}, {}, {Status: contract.StatusCandidate}, {}, {}, {ExpiresAt: &expires}}
	return items, opts
}

func TestSuiteLeavesForeignDataAlone(t *testing.T) {
	ctx := context.Background()
	e := memory.New()
	items, opts := foreignItems()
	var ids []string
	for i, it := range items {
		r, err := e.StoreWith(ctx, it, opts[i])
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, r.ID)
	}
	if _, err := e.Supersede(ctx, contract.SupersedeRequest{ID: ids[0], By: ids[1]}); err != nil {
		t.Fatal(err)
	}
	snapshot := func() string {
		recs, err := e.GetRecords(ctx, contract.GetRequest{IDs: ids, Reach: &contract.Reach{At: contract.MustNamespace("agent:other/service:job"), Inherit: true}})
		if err != nil {
			t.Fatal(err)
		}
		all, err := e.GetRecords(ctx, contract.GetRequest{IDs: ids})
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(append(recs, all...))
		return string(b)
	}
	before := snapshot()
	for round := range 2 {
		rep := conformance.Run(ctx, e)
		if err := rep.Err(); err != nil {
			logReport(t, rep)
			t.Fatalf("round %d: %v", round+1, err)
		}
		if e.Len() != len(items) {
			t.Fatalf("round %d left %d records; want only the %d foreign ones", round+1, e.Len(), len(items))
		}
		if after := snapshot(); after != before {
			t.Fatalf("round %d changed the foreign records:\nbefore %s\nafter  %s", round+1, before, after)
		}
	}
}

func TestSuiteRecordsEngineErrors(t *testing.T) {
	rep := conformance.Run(context.Background(), failing{memory.New()})
	if rep.Err() == nil {
		t.Fatal("an engine that fails every call passed")
	}
	// These checks store nothing, so a store outage cannot fail them.
	writeFree := []string{"health", "unsupported_modes", "empty_forget", "browse_validation", "changes_validation", "cleanup"}
	for _, r := range rep.Results {
		if slices.Contains(writeFree, r.Name) {
			continue
		}
		if r.Passed {
			t.Errorf("%s passed against an engine whose stores fail", r.Name)
		}
	}
	want := "conformance check `round_trip` failed: the engine returned an error: unavailable: storage is offline"
	for _, r := range rep.Results {
		if r.Name == "round_trip" && r.Detail != want {
			t.Fatalf("detail %q, want %q", r.Detail, want)
		}
	}
}

// failing refuses every write, like an engine whose storage went away.
type failing struct{ *memory.Engine }

func (f failing) Store(context.Context, contract.StoreItem) (contract.StoreReceipt, error) {
	return contract.StoreReceipt{}, contract.Unavailable("storage is offline")
}

func (f failing) StoreWith(context.Context, contract.StoreItem, contract.WriteOptions) (contract.StoreReceipt, error) {
	return contract.StoreReceipt{}, contract.Unavailable("storage is offline")
}

func (f failing) StoreMany(context.Context, []contract.StoreItem) ([]contract.StoreReceipt, error) {
	return nil, contract.Unavailable("storage is offline")
}

func (f failing) StoreManyWith(context.Context, []contract.StoreItem, contract.WriteOptions) ([]contract.StoreReceipt, error) {
	return nil, contract.Unavailable("storage is offline")
}

func (f failing) Restore(context.Context, []contract.Record) ([]contract.StoreReceipt, error) {
	return nil, contract.Unavailable("storage is offline")
}
