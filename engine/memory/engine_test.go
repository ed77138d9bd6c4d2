package memory

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"mnemo/contract"
)

// fixedClock starts at a known instant and moves one second per reading, so
// record times are distinct and predictable.
func fixedClock() func() time.Time {
	var mu sync.Mutex
	t := time.Date(2026, 1, 2, 3, 4, 5, 678_900_000, time.UTC)
	return func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		now := t
		t = t.Add(time.Second)
		return now
	}
}

func doc(text string, tags ...string) contract.StoreItem {
	return contract.Document(text, contract.MemoryMeta{Source: contract.SourceRef{Kind: contract.SourceAgent}, Tags: tags})
}

func mustStore(t *testing.T, e *Engine, it contract.StoreItem, opts contract.WriteOptions) string {
	t.Helper()
	r, err := e.StoreWith(context.Background(), it, opts)
	if err != nil {
		t.Fatalf("store: %v", err)
	}
	return r.ID
}

func wantErr(t *testing.T, err error, kind contract.ErrorKind, msg string) {
	t.Helper()
	var ce *contract.Error
	if !errors.As(err, &ce) {
		t.Fatalf("want %s error %q, got %v", kind, msg, err)
	}
	if ce.Kind != kind || ce.Message != msg {
		t.Fatalf("want %s: %s, got %s: %s", kind, msg, ce.Kind, ce.Message)
	}
}

func TestDescriptor(t *testing.T) {
	d := New().Descriptor()
	if d.ID != "memory" || d.Label != "Reference (in-memory)" || d.Consolidation != contract.ConsolidationNone {
		t.Fatalf("descriptor %+v", d)
	}
	if len(d.FetchModes) != 3 {
		t.Fatalf("modes %v", d.FetchModes)
	}
	if h := New().Health(context.Background()); h.State != contract.HealthOK {
		t.Fatalf("health %+v", h)
	}
}

func TestStoreReplayKeepsHeldRecord(t *testing.T) {
	ctx := context.Background()
	e := New(WithClock(fixedClock()))
	it := doc("prefers tabs")
	id := mustStore(t, e, it, contract.WriteOptions{Status: contract.StatusCandidate})
	if id != it.Fingerprint() {
		t.Fatalf("id %s is not the fingerprint", id)
	}
	r, err := contract.Store(ctx, e, it)
	if err != nil || !r.Replayed || r.ID != id {
		t.Fatalf("replay: %+v %v", r, err)
	}
	recs, err := e.GetRecords(ctx, contract.GetRequest{IDs: []string{id}})
	if err != nil || len(recs) != 1 {
		t.Fatalf("get records: %v %v", recs, err)
	}
	if recs[0].Status != contract.StatusCandidate {
		t.Fatalf("replay changed the status to %s", recs[0].Status)
	}
	if got := contract.FormatMillis(recs[0].CreatedAt); got != "2026-01-02T03:04:05.678Z" {
		t.Fatalf("created_at %s", got)
	}
	if recs[0].Item == nil || recs[0].Item.Fingerprint() != id {
		t.Fatalf("record item missing or different")
	}
}

func TestStoreManyBatchDuplicatesReplayFirstCopy(t *testing.T) {
	ctx := context.Background()
	e := New()
	a, b := doc("alpha"), doc("beta")
	rs, err := contract.StoreMany(ctx, e, []contract.StoreItem{a, b, a})
	if err != nil {
		t.Fatal(err)
	}
	want := []contract.StoreReceipt{{ID: a.Fingerprint()}, {ID: b.Fingerprint()}, {ID: a.Fingerprint(), Replayed: true}}
	for i := range want {
		if rs[i] != want[i] {
			t.Fatalf("receipt %d: %+v want %+v", i, rs[i], want[i])
		}
	}
	_, err = contract.StoreMany(ctx, e, []contract.StoreItem{doc("gamma"), doc("  ")})
	wantErr(t, err, contract.KindInvalidRequest, "document body must not be empty")
	page, _ := e.List(ctx, contract.ListRequest{Limit: 10})
	if len(page.Items) != 2 {
		t.Fatalf("a refused batch wrote %d items", len(page.Items)-2)
	}
	_, err = contract.StoreMany(ctx, e, nil)
	wantErr(t, err, contract.KindInvalidRequest, "store_many takes between 1 and 100 items")
}

func TestListOrderAndCursor(t *testing.T) {
	ctx := context.Background()
	e := New(WithClock(fixedClock()))
	var ids []string
	for i := range 5 {
		ids = append(ids, mustStore(t, e, doc(fmt.Sprintf("item %d", i)), contract.WriteOptions{}))
	}
	var got []string
	var cursor *string
	for {
		p, err := e.List(ctx, contract.ListRequest{Limit: 2, Cursor: cursor})
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range p.Items {
			if h.Score != 0 {
				t.Fatalf("listing score %v", h.Score)
			}
			got = append(got, h.ID)
		}
		if p.NextCursor == nil {
			break
		}
		cursor = p.NextCursor
	}
	for i := range ids {
		if got[i] != ids[len(ids)-1-i] {
			t.Fatalf("order %v, want newest first %v", got, ids)
		}
	}
	for _, bad := range []string{"x", "-1", "01", ""} {
		_, err := e.List(ctx, contract.ListRequest{Limit: 2, Cursor: &bad})
		wantErr(t, err, contract.KindInvalidRequest, fmt.Sprintf("unknown cursor `%s`", bad))
	}
	_, err := e.List(ctx, contract.ListRequest{})
	wantErr(t, err, contract.KindInvalidRequest, "list limit must be positive")
}

func TestListSameInstantOrdersByID(t *testing.T) {
	ctx := context.Background()
	frozen := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	e := New(WithClock(func() time.Time { return frozen }))
	for i := range 6 {
		mustStore(t, e, doc(fmt.Sprintf("same instant %d", i)), contract.WriteOptions{})
	}
	p, _ := e.List(ctx, contract.ListRequest{Limit: 10})
	for i := 1; i < len(p.Items); i++ {
		if p.Items[i-1].ID >= p.Items[i].ID {
			t.Fatalf("ties not in id order: %s then %s", p.Items[i-1].ID, p.Items[i].ID)
		}
	}
}

func TestFetchScoringModes(t *testing.T) {
	ctx := context.Background()
	e := New()
	tabs := mustStore(t, e, doc("the user prefers tabs over spaces"), contract.WriteOptions{})
	mustStore(t, e, doc("deploys happen on friday"), contract.WriteOptions{})
	kw, err := e.Fetch(ctx, contract.FetchRequest{Query: "Tabs, spaces!", Mode: contract.ModeKeyword, Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(kw.Hits) != 1 || kw.Hits[0].ID != tabs || kw.Hits[0].Score != 1 {
		t.Fatalf("keyword hits %+v", kw.Hits)
	}
	half, _ := e.Fetch(ctx, contract.FetchRequest{Query: "tabs gardening", Mode: contract.ModeKeyword, Limit: 10})
	if len(half.Hits) != 1 || half.Hits[0].Score != 0.5 {
		t.Fatalf("half keyword %+v", half.Hits)
	}
	vec, _ := e.Fetch(ctx, contract.FetchRequest{Query: "prefers tab", Mode: contract.ModeVector, Limit: 10})
	if len(vec.Hits) == 0 || vec.Hits[0].ID != tabs || vec.Hits[0].Score < 0.2 {
		t.Fatalf("vector hits %+v", vec.Hits)
	}
	hyb, _ := e.Fetch(ctx, contract.FetchRequest{Query: "tabs", Mode: contract.ModeHybrid, Limit: 10})
	if len(hyb.Hits) == 0 || hyb.Hits[0].ID != tabs {
		t.Fatalf("hybrid hits %+v", hyb.Hits)
	}
	none, _ := e.Fetch(ctx, contract.FetchRequest{Query: "zzqx", Mode: contract.ModeKeyword, Limit: 10})
	if len(none.Hits) != 0 {
		t.Fatalf("unrelated query hit %+v", none.Hits)
	}
	_, err = e.Fetch(ctx, contract.FetchRequest{Query: " ", Mode: contract.ModeKeyword, Limit: 10})
	wantErr(t, err, contract.KindInvalidRequest, "fetch query must not be empty")

	narrow := New(WithFetchModes(contract.ModeHybrid))
	_, err = narrow.Fetch(ctx, contract.FetchRequest{Query: "", Mode: contract.ModeVector, Limit: 0})
	wantErr(t, err, contract.KindUnsupported, "engine `memory` does not offer vector fetch")
}

func TestFetchPagingAndTimeHint(t *testing.T) {
	ctx := context.Background()
	e := New()
	var ids []string
	for i := range 5 {
		it := doc(fmt.Sprintf("note number %d", i))
		if i == 3 {
			at := time.Date(2025, 3, 4, 12, 0, 0, 0, time.UTC)
			it.Meta.ObservedAt = &at
		}
		ids = append(ids, mustStore(t, e, it, contract.WriteOptions{}))
	}
	hint := &contract.TimeHint{From: "2025-03-04", To: "2025-03-04"}
	var got []string
	var cursor *string
	for {
		p, err := e.Fetch(ctx, contract.FetchRequest{Query: "note", Mode: contract.ModeKeyword, Limit: 2, Cursor: cursor, RefersTo: hint})
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range p.Hits {
			got = append(got, h.ID)
		}
		if p.NextCursor == nil {
			break
		}
		cursor = p.NextCursor
	}
	want := []string{ids[3], ids[0], ids[1], ids[2], ids[4]}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("hinted order %v want %v", got, want)
	}
}

func TestStatusesHiddenFromRankedReads(t *testing.T) {
	ctx := context.Background()
	e := New()
	cand := mustStore(t, e, doc("candidate about tabs"), contract.WriteOptions{Status: contract.StatusCandidate})
	act := mustStore(t, e, doc("active about tabs"), contract.WriteOptions{})
	for _, m := range contract.FetchModes() {
		p, _ := e.Fetch(ctx, contract.FetchRequest{Query: "tabs", Mode: m, Limit: 10})
		for _, h := range p.Hits {
			if h.ID == cand {
				t.Fatalf("%s fetch returned a candidate", m)
			}
		}
	}
	ans, _ := e.Recall(ctx, contract.RecallRequest{Question: "tabs", Limit: 5})
	if len(ans.Citations) != 1 || ans.Citations[0].ID != act {
		t.Fatalf("recall citations %+v", ans.Citations)
	}
	if ans.Answer != "From 1 stored items: active about tabs" || *ans.Model != "reference" {
		t.Fatalf("answer %q", ans.Answer)
	}
	asked, _ := e.Fetch(ctx, contract.FetchRequest{Query: "tabs", Mode: contract.ModeKeyword, Limit: 10,
		Filter: contract.MetaFilter{Statuses: []contract.Status{contract.StatusCandidate}}})
	if len(asked.Hits) != 1 || asked.Hits[0].ID != cand {
		t.Fatalf("statuses filter %+v", asked.Hits)
	}
	listed, _ := e.List(ctx, contract.ListRequest{Limit: 10})
	if len(listed.Items) != 2 {
		t.Fatalf("list hides candidates: %d", len(listed.Items))
	}
	nothing, _ := e.Recall(ctx, contract.RecallRequest{Question: "wombat", Limit: 5})
	if nothing.Answer != "Nothing stored answers this question." || len(nothing.Citations) != 0 {
		t.Fatalf("empty recall %+v", nothing)
	}
}

func TestExploreCountsStatusesExactly(t *testing.T) {
	ctx := context.Background()
	e := New()
	mustStore(t, e, doc("one", "x"), contract.WriteOptions{Status: contract.StatusCandidate})
	mustStore(t, e, doc("two", "x", "y"), contract.WriteOptions{})
	mustStore(t, e, doc("three"), contract.WriteOptions{})
	p, err := e.Explore(ctx, contract.ExploreRequest{Facet: contract.FacetStatus, Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if p.Total != 3 || p.Missing != 0 || p.Truncated || len(p.Buckets) != 2 ||
		p.Buckets[0] != (contract.FacetBucket{Value: "active", Count: 2}) {
		t.Fatalf("status facet %+v", p)
	}
	tags, _ := e.Explore(ctx, contract.ExploreRequest{Facet: contract.FacetTag, Limit: 1, ScanLimit: contract.Ptr(1)})
	if tags.Total != 3 || tags.Missing != 1 || tags.MoreBuckets != 1 || tags.Buckets[0] != (contract.FacetBucket{Value: "x", Count: 2}) || tags.Truncated {
		t.Fatalf("tag facet %+v", tags)
	}
	_, err = e.Explore(ctx, contract.ExploreRequest{Facet: contract.FacetTag, Limit: 1, ScanLimit: contract.Ptr(0)})
	wantErr(t, err, contract.KindInvalidRequest, "explore scan_limit must be between 1 and 50000")
}

func TestGetOrderAndReach(t *testing.T) {
	ctx := context.Background()
	e := New()
	team := contract.MustNamespace("team:acme")
	flow := contract.MustNamespace("team:acme/service:flow")
	a := doc("at team")
	a.Meta.Namespace = team
	b := doc("in sandbox")
	b.Meta.Namespace = flow
	c := doc("at root")
	ia, ib, ic := mustStore(t, e, a, contract.WriteOptions{}), mustStore(t, e, b, contract.WriteOptions{}), mustStore(t, e, c, contract.WriteOptions{})
	hits, _ := e.Get(ctx, contract.GetRequest{IDs: []string{ic, "nope", ib, ia, ic}})
	if len(hits) != 2 || hits[0].ID != ic || hits[1].ID != ia {
		t.Fatalf("no reach: %+v", hits)
	}
	r := contract.ReachExact(flow)
	hits, _ = e.Get(ctx, contract.GetRequest{IDs: []string{ia, ib}, Reach: &r})
	if len(hits) != 1 || hits[0].ID != ib {
		t.Fatalf("exact sandbox: %+v", hits)
	}
	_, err := e.Get(ctx, contract.GetRequest{IDs: []string{" "}})
	wantErr(t, err, contract.KindInvalidRequest, "an id must not be blank")
	rep, _ := contract.ForgetWithin(ctx, e, []string{ia, ib}, contract.ReachOf(contract.MustNamespace("team:acme/agent:w")))
	if rep.Forgotten != 1 {
		t.Fatalf("forget_within %+v", rep)
	}
}

func TestReviewAndSupersede(t *testing.T) {
	ctx := context.Background()
	e := New(WithClock(fixedClock()))
	cand := mustStore(t, e, doc("maybe true"), contract.WriteOptions{Status: contract.StatusCandidate})
	other := mustStore(t, e, doc("to reject"), contract.WriteOptions{Status: contract.StatusCandidate})
	act := mustStore(t, e, doc("already true"), contract.WriteOptions{})

	res, err := e.Review(ctx, contract.ReviewRequest{ID: cand, Action: contract.ReviewApprove})
	if err != nil || res.Record == nil || res.Record.Status != contract.StatusActive {
		t.Fatalf("approve %+v %v", res, err)
	}
	if !res.Record.UpdatedAt.After(res.Record.CreatedAt) {
		t.Fatalf("approve kept updated_at %v", res.Record.UpdatedAt)
	}
	_, err = e.Review(ctx, contract.ReviewRequest{ID: cand, Action: contract.ReviewApprove})
	wantErr(t, err, contract.KindConflict, fmt.Sprintf("record %s is 'active', not a candidate", cand))
	res, err = e.Review(ctx, contract.ReviewRequest{ID: other, Action: contract.ReviewReject})
	if err != nil || res.Forgotten != 1 || res.Record != nil {
		t.Fatalf("reject %+v %v", res, err)
	}
	_, err = e.Review(ctx, contract.ReviewRequest{ID: other, Action: contract.ReviewReject})
	wantErr(t, err, contract.KindNotFound, fmt.Sprintf("record %s does not exist", other))

	rec, err := e.Supersede(ctx, contract.SupersedeRequest{ID: act, By: cand})
	if err != nil || rec.Status != contract.StatusSuperseded || *rec.SupersededBy != cand {
		t.Fatalf("supersede %+v %v", rec, err)
	}
	_, err = e.Supersede(ctx, contract.SupersedeRequest{ID: act, By: "missing"})
	wantErr(t, err, contract.KindNotFound, "record missing does not exist")
	_, err = e.Review(ctx, contract.ReviewRequest{ID: act, Action: contract.ReviewReject})
	wantErr(t, err, contract.KindConflict, fmt.Sprintf("record %s is 'superseded', not a candidate", act))
	p, _ := e.Fetch(ctx, contract.FetchRequest{Query: "true", Mode: contract.ModeKeyword, Limit: 10})
	if len(p.Hits) != 1 || p.Hits[0].ID != cand {
		t.Fatalf("superseded record ranked: %+v", p.Hits)
	}
}

func TestForgetRemovesFromEveryReadPath(t *testing.T) {
	ctx := context.Background()
	e := New()
	id := mustStore(t, e, doc("secret token here"), contract.WriteOptions{})
	_, err := e.Forget(ctx, contract.ForgetIDs())
	wantErr(t, err, contract.KindInvalidRequest, "forget needs at least one id")
	_, err = e.Forget(ctx, contract.ForgetFilter(contract.MetaFilter{}))
	wantErr(t, err, contract.KindInvalidRequest, "forget refuses an empty filter, which would mean everything")
	rep, err := e.Forget(ctx, contract.ForgetIDs(id, id, "unknown"))
	if err != nil || rep.Forgotten != 1 {
		t.Fatalf("forget %+v %v", rep, err)
	}
	if p, _ := e.List(ctx, contract.ListRequest{Limit: 5}); len(p.Items) != 0 {
		t.Fatal("listed after forget")
	}
	if p, _ := e.Fetch(ctx, contract.FetchRequest{Query: "secret", Mode: contract.ModeHybrid, Limit: 5}); len(p.Hits) != 0 {
		t.Fatal("fetched after forget")
	}
	if h, _ := e.Get(ctx, contract.GetRequest{IDs: []string{id}}); len(h) != 0 {
		t.Fatal("got after forget")
	}
	if x, _ := e.Explore(ctx, contract.ExploreRequest{Facet: contract.FacetKind, Limit: 5}); x.Total != 0 {
		t.Fatal("counted after forget")
	}
}

func TestReturnedValuesDoNotAliasEngineState(t *testing.T) {
	ctx := context.Background()
	e := New()
	it := doc("alias check", "keep")
	id := mustStore(t, e, it, contract.WriteOptions{})
	it.Meta.Tags[0] = "caller changed its copy"
	p, _ := e.Export(ctx, contract.ListRequest{Limit: 5})
	p.Items[0].Item.Meta.Tags[0] = "changed the export"
	hits, _ := e.Get(ctx, contract.GetRequest{IDs: []string{id}})
	if hits[0].Meta.Tags[0] != "keep" {
		t.Fatalf("engine state aliased: %v", hits[0].Meta.Tags)
	}
}

func TestUnsupportedDefaults(t *testing.T) {
	ctx := context.Background()
	e := New()
	_, err := contract.Erase(ctx, e, contract.EraseRequest{Reach: contract.ReachExact(contract.Root())})
	wantErr(t, err, contract.KindUnsupported, "engine `memory` does not erase")
	_, err = contract.Consolidate(ctx, e, contract.ConsolidateRequest{})
	wantErr(t, err, contract.KindUnsupported, "engine `memory` does not consolidate memory")
	b, err := contract.Beliefs(ctx, e, contract.BeliefsRequest{Limit: 3})
	if err != nil || len(b) != 0 {
		t.Fatalf("beliefs %v %v", b, err)
	}
}

func TestConcurrentUse(t *testing.T) {
	ctx := context.Background()
	e := New()
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 50 {
				r, err := contract.Store(ctx, e, doc(fmt.Sprintf("worker %d item %d", w, i)))
				if err != nil {
					t.Error(err)
					return
				}
				_, _ = e.Fetch(ctx, contract.FetchRequest{Query: "item", Mode: contract.ModeHybrid, Limit: 3})
				_, _ = e.List(ctx, contract.ListRequest{Limit: 3})
				_, _ = e.Explore(ctx, contract.ExploreRequest{Facet: contract.FacetKind, Limit: 3})
				if i%2 == 0 {
					_, _ = e.Forget(ctx, contract.ForgetIDs(r.ID))
				}
			}
		}()
	}
	wg.Wait()
	x, _ := e.Explore(ctx, contract.ExploreRequest{Facet: contract.FacetKind, Limit: 3})
	if x.Total != 100 {
		t.Fatalf("after concurrent work total %d want 100", x.Total)
	}
}
