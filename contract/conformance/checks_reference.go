package conformance

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"mnemo/contract"
)

// The checks of tinymemory's suite (tinymemory-contract.md section 12.2), in order.

func checkHealth(r *run) error {
	h := r.e.Health(r.ctx)
	if !h.IsServing() {
		return fail("the engine reports %s: %s", h.State, h.Reason)
	}
	return nil
}

// roundTripItems sets every optional field of each item kind.
func (r *run) roundTripItems() []contract.StoreItem {
	at := time.Date(2025, 5, 6, 7, 8, 9, 0, time.UTC)
	docMeta := r.taggedMeta("roundtrip")
	doc := contract.StoreItem{Type: contract.KindDocument, Title: contract.Ptr("Round trip"),
		Body: contract.TextBody(r.marker + " document body"), Mime: contract.Ptr("text/markdown"), Meta: docMeta}
	convMeta := r.meta()
	convMeta.Source = contract.SourceRef{Kind: contract.SourceConversation, ID: contract.Ptr(r.marker + "-thread")}
	conv := contract.Conversation([]contract.Turn{
		{Role: contract.RoleUser, Text: r.marker + " what is in the plan", At: &at},
		{Role: contract.RoleAssistant, Text: "the plan has three steps", At: &at,
			ToolCalls: []contract.ToolCallRef{{Name: "read_plan", ID: contract.Ptr("call-1")}}},
	}, convMeta)
	learn := contract.Learning(r.marker+" the user prefers short answers", contract.LearningPreference, 0.75, r.meta())
	learn.Evidence = contract.Ptr("said so twice")
	return []contract.StoreItem{doc, conv, learn}
}

func checkRoundTrip(r *run) error {
	for _, it := range r.roundTripItems() {
		rec, err := r.store(it)
		if err != nil {
			return err
		}
		if rec.Replayed {
			return fail("storing a new %s reported a replay", it.Type)
		}
		f := r.filter()
		f.Kinds = []contract.ItemKind{it.Type}
		hits, err := r.listAll(f)
		if err != nil {
			return err
		}
		if n := count(hitIDs(hits), rec.ID); n != 1 {
			return fail("the %s `%s` was listed %d times after store; want once", it.Type, rec.ID, n)
		}
		for _, h := range hits {
			if h.Kind != it.Type {
				return fail("a listing filtered to %s returned a %s", it.Type, h.Kind)
			}
			if h.ID != rec.ID {
				continue
			}
			if got, want := wireJSON(h.Meta), wireJSON(it.Meta); got != want {
				return fail("the %s came back with meta %s; stored %s", it.Type, got, want)
			}
			if !confEqual(h.Confidence, it.ConfidenceOf()) {
				return fail("the %s came back with confidence %v; stored %v", it.Type, h.Confidence, it.ConfidenceOf())
			}
			if h.Text != it.RenderText() {
				return fail("the %s came back with text %q; want %q", it.Type, h.Text, it.RenderText())
			}
		}
	}
	return nil
}

func checkExport(r *run) error {
	items := r.roundTripItems()
	for _, it := range items {
		if _, err := r.store(it); err != nil {
			return err
		}
	}
	exported, err := r.exportAll(r.filter())
	if errors.Is(err, contract.ErrUnsupported) {
		return skip("the engine does not export: %v", err)
	}
	if err != nil {
		return err
	}
	for _, ex := range exported {
		if fp := ex.Item.Fingerprint(); ex.ID != fp {
			return fail("export named `%s` for an item whose fingerprint is `%s`", ex.ID, fp)
		}
	}
	for _, it := range items {
		fp := it.Fingerprint()
		var found []contract.Exported
		for _, ex := range exported {
			if ex.ID == fp {
				found = append(found, ex)
			}
		}
		if len(found) != 1 {
			return fail("the %s `%s` was exported %d times; want once", it.Type, fp, len(found))
		}
		if got, want := wireJSON(found[0].Item), wireJSON(it); got != want {
			return fail("the %s was exported as %s; stored %s", it.Type, got, want)
		}
		rec, err := r.store(found[0].Item)
		if err != nil {
			return err
		}
		if !rec.Replayed || rec.ID != fp {
			return fail("storing an exported %s again answered %+v; want a replay of `%s`", it.Type, rec, fp)
		}
	}
	return nil
}

func checkErase(r *run) error {
	erased := r.ns("agent:" + r.marker + "-erased")
	child := r.ns("agent:" + r.marker + "-erased/agent:child")
	kept := r.ns("agent:" + r.marker + "-kept")
	mk := func(ns contract.Namespace, label string) contract.StoreItem {
		m := r.taggedMeta("erase")
		m.Namespace = ns
		return contract.Learning(r.marker+" erase "+label, contract.LearningFact, 0.5, m)
	}
	node, below, sibling := mk(erased, "node"), mk(child, "child"), mk(kept, "sibling")
	if _, err := r.storeNew(node, below, sibling); err != nil {
		return err
	}
	_, err := contract.Erase(r.ctx, r.e, contract.EraseRequest{Reach: contract.ReachSubtree(contract.Root())})
	if err == nil || !(errors.Is(err, contract.ErrInvalidRequest) || errors.Is(err, contract.ErrUnsupported)) {
		return fail("erasing the whole tree without whole_tree answered %v; want invalid request or unsupported", err)
	}
	_, err = contract.Erase(r.ctx, r.e, contract.EraseRequest{Reach: contract.ReachSubtree(erased)})
	if errors.Is(err, contract.ErrUnsupported) {
		return skip("the engine does not erase: %v", err)
	}
	if err != nil {
		return engineErr(err)
	}
	f := r.tagFilter("erase")
	f.Kinds = []contract.ItemKind{contract.KindLearning}
	hits, err := r.listAll(f)
	if err != nil {
		return err
	}
	if ids := hitIDs(hits); !slices.Equal(ids, []string{sibling.Fingerprint()}) {
		return fail("after erasing a subtree the erase items are %v; want only the sibling `%s`", ids, sibling.Fingerprint())
	}
	for _, it := range []contract.StoreItem{node, below} {
		rec, err := r.store(it)
		if err != nil {
			return err
		}
		if rec.Replayed {
			return fail("storing an erased item again reported a replay")
		}
	}
	hits, err = r.listAll(f)
	if err != nil {
		return err
	}
	if len(hits) != 3 {
		return fail("after storing the erased items again %d erase items are listed; want 3", len(hits))
	}
	return nil
}

func checkReplay(r *run) error {
	it := r.document("replay", r.meta())
	first, err := r.store(it)
	if err != nil {
		return err
	}
	second, err := r.store(it)
	if err != nil {
		return err
	}
	if !second.Replayed {
		return fail("storing the same item twice did not report a replay")
	}
	if first.ID != second.ID {
		return fail("storing the same item twice gave two ids: `%s` and `%s`", first.ID, second.ID)
	}
	hits, err := r.listAll(r.filter())
	if err != nil {
		return err
	}
	if n := count(hitIDs(hits), first.ID); n != 1 {
		return fail("a replayed item is listed %d times; want once", n)
	}
	return nil
}

func checkExplore(r *run) error {
	listed, err := r.listAll(r.filter())
	if err != nil {
		return err
	}
	page, err := r.e.Explore(r.ctx, contract.ExploreRequest{Facet: contract.FacetKind, Filter: r.filter(), Limit: 10})
	if err != nil {
		return engineErr(err)
	}
	if page.Facet != contract.FacetKind {
		return fail("explore by kind answered facet `%s`", page.Facet)
	}
	if page.Truncated {
		return fail("explore by kind over %d items was truncated", len(listed))
	}
	if page.Total != uint64(len(listed)) {
		return fail("explore by kind counted %d items; the listing holds %d", page.Total, len(listed))
	}
	perKind := map[string]uint64{}
	for _, h := range listed {
		perKind[string(h.Kind)]++
	}
	got := map[string]uint64{}
	for i, b := range page.Buckets {
		got[b.Value] = b.Count
		if i > 0 && b.Count > page.Buckets[i-1].Count {
			return fail("explore buckets are not ordered by count: %v", page.Buckets)
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(perKind) {
		return fail("explore by kind answered %v; the listing counts %v", got, perKind)
	}
	for _, b := range page.Buckets {
		narrowed, err := contract.FacetKind.Narrow(r.filter(), b.Value)
		if err != nil {
			return fail("narrowing by kind `%s`: %v", b.Value, err)
		}
		hits, err := r.listAll(narrowed)
		if err != nil {
			return err
		}
		if uint64(len(hits)) != b.Count {
			return fail("the kind bucket `%s` counts %d but narrowing to it lists %d", b.Value, b.Count, len(hits))
		}
	}
	ws, err := r.e.Explore(r.ctx, contract.ExploreRequest{Facet: contract.FacetWorkspace, Filter: r.filter(), Limit: 10})
	if err != nil {
		return engineErr(err)
	}
	if len(ws.Buckets) != 1 || ws.Buckets[0].Value != r.workspace || ws.Buckets[0].Count != uint64(len(listed)) || ws.Missing != 0 {
		return fail("explore by workspace answered %+v; want one bucket `%s` of %d and none missing", ws, r.workspace, len(listed))
	}
	_, err = r.e.Explore(r.ctx, contract.ExploreRequest{Facet: contract.FacetKind, Limit: 0})
	return wantKind(err, contract.KindInvalidRequest, "explore with limit 0")
}

func checkGet(r *run) error {
	listed, err := r.listAll(r.filter())
	if err != nil {
		return err
	}
	if len(listed) == 0 {
		return fail("the run lists no items to get")
	}
	listed = listed[:min(len(listed), contract.MaxGetIDs-1)]
	byID := map[string]contract.Hit{}
	var known []string
	for i := len(listed) - 1; i >= 0; i-- {
		byID[listed[i].ID] = listed[i]
		known = append(known, listed[i].ID)
	}
	ids := slices.Insert(slices.Clone(known), min(1, len(known)), r.marker+"-missing")
	hits, err := r.e.Get(r.ctx, contract.GetRequest{IDs: ids})
	if err != nil {
		return engineErr(err)
	}
	if got := hitIDs(hits); !slices.Equal(got, known) {
		return fail("get answered ids %v; want the known ids in the order asked %v", got, known)
	}
	for _, h := range hits {
		l := byID[h.ID]
		if h.Kind != l.Kind || h.Text != l.Text || wireJSON(h.Meta) != wireJSON(l.Meta) {
			return fail("get answered `%s` differently from its listing", h.ID)
		}
	}
	_, err = r.e.Get(r.ctx, contract.GetRequest{IDs: []string{}})
	return wantKind(err, contract.KindInvalidRequest, "get with no ids")
}

func checkStoreMany(r *run) error {
	items := []contract.StoreItem{r.document("bulk-0", r.meta()), r.document("bulk-1", r.meta()), r.document("bulk-2", r.meta())}
	recs, err := r.storeMany(items)
	if err != nil {
		return err
	}
	if len(recs) != len(items) {
		return fail("store_many of 3 items answered %d receipts", len(recs))
	}
	for i, rec := range recs {
		if rec.Replayed {
			return fail("store_many reported a new item as a replay")
		}
		if fp := items[i].Fingerprint(); rec.ID != fp {
			return fail("store_many receipt %d names `%s`; item %d's fingerprint is `%s`", i, rec.ID, i, fp)
		}
	}
	hits, err := r.listAll(r.filter())
	if err != nil {
		return err
	}
	for _, rec := range recs {
		if count(hitIDs(hits), rec.ID) != 1 {
			return fail("the store_many item `%s` is not listed on return", rec.ID)
		}
	}
	again, err := r.storeMany(items)
	if err != nil {
		return err
	}
	for i, rec := range again {
		if !rec.Replayed || rec.ID != recs[i].ID {
			return fail("store_many of a held batch answered %+v for item %d; want a replay", rec, i)
		}
	}
	_, err = contract.StoreMany(r.ctx, r.e, nil)
	return wantKind(err, contract.KindInvalidRequest, "store_many of no items")
}

func checkStoreWith(r *run) error {
	visible := r.document("store with visible", r.meta())
	rec, err := r.storeWith(visible, contract.WriteOptions{Wait: contract.WaitVisible})
	if err != nil {
		return err
	}
	if rec.ID != visible.Fingerprint() {
		return fail("a visible store answered id `%s`; the fingerprint is `%s`", rec.ID, visible.Fingerprint())
	}
	hits, err := r.listAll(r.filter())
	if err != nil {
		return err
	}
	if count(hitIDs(hits), rec.ID) != 1 {
		return fail("a visible store is not listed on return")
	}
	again, err := r.storeWith(visible, contract.WriteOptions{Wait: contract.WaitVisible})
	if err != nil {
		return err
	}
	if !again.Replayed {
		return fail("a visible store of a held item did not report a replay")
	}
	accepted := r.document("store with accepted", r.meta())
	rec, err = r.storeWith(accepted, contract.WriteOptions{Wait: contract.WaitAccepted})
	if err != nil {
		return err
	}
	if rec.ID != accepted.Fingerprint() {
		return fail("an accepted store answered id `%s`; the fingerprint is `%s`", rec.ID, accepted.Fingerprint())
	}
	return nil
}

// probe is one filter field of fetch_filters: an item only that field's filter selects.
type probe struct {
	name   string
	item   contract.StoreItem
	filter contract.MetaFilter
}

func (r *run) probes() []probe {
	m := r.marker
	meta := func() contract.MemoryMeta {
		ws := r.probeWorkspace
		return contract.MemoryMeta{Workspace: &ws, Source: contract.SourceRef{Kind: contract.SourceAgent}}
	}
	pf := r.probeFilter
	doc := func(label string, set func(*contract.MemoryMeta), narrow func(*contract.MetaFilter)) probe {
		mm := meta()
		set(&mm)
		f := pf()
		narrow(&f)
		return probe{name: label, item: r.document(label, mm), filter: f}
	}
	conv := func(label, question string, set func(*contract.MemoryMeta), narrow func(*contract.MetaFilter)) probe {
		mm := meta()
		set(&mm)
		f := pf()
		narrow(&f)
		it := contract.Conversation([]contract.Turn{
			{Role: contract.RoleUser, Text: m + " " + question},
			{Role: contract.RoleAssistant, Text: label + " answer"},
		}, mm)
		return probe{name: label, item: it, filter: f}
	}
	observed := time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)
	after := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
	before := time.Date(2002, 1, 1, 0, 0, 0, 0, time.UTC)
	kindsMeta := meta()
	kindsFilter := pf()
	kindsFilter.Kinds = []contract.ItemKind{contract.KindLearning}
	return []probe{
		doc("folder", func(x *contract.MemoryMeta) { x.Folder = contract.Ptr("/" + m + "/src/app") },
			func(f *contract.MetaFilter) { f.Folder = contract.Ptr("/" + m + "/src") }),
		doc("file_path", func(x *contract.MemoryMeta) { x.FilePath = contract.Ptr("/" + m + "/docs/guide.md") },
			func(f *contract.MetaFilter) { f.FilePath = contract.Ptr("/" + m + "/docs") }),
		doc("language", func(x *contract.MemoryMeta) { x.Language = contract.Ptr(m + "-lang") },
			func(f *contract.MetaFilter) { f.Language = contract.Ptr(m + "-lang") }),
		doc("repo", func(x *contract.MemoryMeta) { x.Repo = contract.Ptr("owner/" + m) },
			func(f *contract.MetaFilter) { f.Repo = contract.Ptr("owner/" + m) }),
		doc("commit", func(x *contract.MemoryMeta) { x.Commit = contract.Ptr(m + "c0ffee") },
			func(f *contract.MetaFilter) { f.Commit = contract.Ptr(m + "c0ffee") }),
		doc("url", func(x *contract.MemoryMeta) { x.URL = contract.Ptr("https://" + m + ".test/a") },
			func(f *contract.MetaFilter) { f.URL = contract.Ptr("https://" + m + ".test/a") }),
		conv("thread", "thread question", func(x *contract.MemoryMeta) { x.ThreadID = contract.Ptr(m + "-t1") },
			func(f *contract.MetaFilter) { f.ThreadID = contract.Ptr(m + "-t1") }),
		conv("turns", "turns question", func(x *contract.MemoryMeta) { x.Turns = &contract.TurnRange{First: 4, Last: 5} },
			func(f *contract.MetaFilter) { f.Turns = &contract.TurnRange{First: 4, Last: 5} }),
		doc("agent_id", func(x *contract.MemoryMeta) { x.AgentID = contract.Ptr(m + "-agent") },
			func(f *contract.MetaFilter) { f.AgentID = contract.Ptr(m + "-agent") }),
		doc("tool_call", func(x *contract.MemoryMeta) { x.ToolCall = &contract.ToolCallRef{Name: m + "_tool"} },
			func(f *contract.MetaFilter) { f.ToolCall = contract.Ptr(m + "_tool") }),
		doc("source_id", func(x *contract.MemoryMeta) {
			x.Source = contract.SourceRef{Kind: contract.SourceFile, ID: contract.Ptr(m + "-src")}
		}, func(f *contract.MetaFilter) { f.SourceID = contract.Ptr(m + "-src") }),
		// rss is a source kind no other probe uses (tinymemory-contract.md 17.4).
		doc("sources", func(x *contract.MemoryMeta) { x.Source = contract.SourceRef{Kind: contract.SourceRSS} },
			func(f *contract.MetaFilter) { f.Sources = []contract.SourceKind{contract.SourceRSS} }),
		doc("tags_any", func(x *contract.MemoryMeta) { x.Tags = []string{m + "-tag"} },
			func(f *contract.MetaFilter) { f.TagsAny = []string{m + "-none", m + "-tag"} }),
		{name: "kinds", item: contract.Learning(m+" kinds learning", contract.LearningFact, 0.5, kindsMeta), filter: kindsFilter},
		doc("observed_at", func(x *contract.MemoryMeta) { x.ObservedAt = &observed },
			func(f *contract.MetaFilter) { f.ObservedAfter, f.ObservedBefore = &after, &before }),
	}
}

func checkFetchFilters(r *run) error {
	probes := r.probes()
	ids := make([]string, len(probes))
	for i, p := range probes {
		rec, err := r.store(p.item)
		if err != nil {
			return err
		}
		ids[i] = rec.ID
	}
	for i, p := range probes {
		for _, mode := range r.desc.FetchModes {
			page, err := r.e.Fetch(r.ctx, contract.FetchRequest{Query: r.marker, Mode: mode, Filter: p.filter, Limit: 50})
			if err != nil {
				return engineErr(err)
			}
			if got := hitIDs(page.Hits); !sameSet(got, ids[i:i+1]) {
				return fail("%s fetch filtered by the %s probe answered %s; want only `%s`", mode, p.name, setString(got), ids[i])
			}
		}
		hits, err := r.listAll(p.filter)
		if err != nil {
			return err
		}
		if got := hitIDs(hits); !sameSet(got, ids[i:i+1]) {
			return fail("the listing filtered by the %s probe answered %s; want only `%s`", p.name, setString(got), ids[i])
		}
	}
	for _, mode := range r.desc.FetchModes {
		page, err := r.e.Fetch(r.ctx, contract.FetchRequest{Query: r.marker, Mode: mode, Filter: r.probeFilter(), Limit: 50})
		if err != nil {
			return engineErr(err)
		}
		got := hitIDs(page.Hits)
		for i, id := range ids {
			if !slices.Contains(got, id) {
				return fail("%s fetch of the marker over every probe missed the %s probe `%s`", mode, probes[i].name, id)
			}
		}
	}
	return nil
}

func checkUnsupportedModes(r *run) error {
	for _, mode := range contract.FetchModes() {
		if r.desc.Supports(mode) {
			continue
		}
		_, err := r.e.Fetch(r.ctx, contract.FetchRequest{Query: r.marker, Mode: mode, Limit: 5})
		if err == nil || !errors.Is(err, contract.ErrUnsupported) {
			return fail("%s fetch, which the engine does not declare, answered %v; want unsupported", mode, err)
		}
	}
	return nil
}

func checkEmptyForget(r *run) error {
	before, err := r.listAll(r.filter())
	if err != nil {
		return err
	}
	_, err = r.e.Forget(r.ctx, contract.ForgetIDs())
	if e := wantKind(err, contract.KindInvalidRequest, "forget of no ids"); e != nil {
		return e
	}
	_, err = r.e.Forget(r.ctx, contract.ForgetFilter(contract.MetaFilter{}))
	if e := wantKind(err, contract.KindInvalidRequest, "forget of the empty filter"); e != nil {
		return e
	}
	after, err := r.listAll(r.filter())
	if err != nil {
		return err
	}
	if len(after) != len(before) {
		return fail("refused forgets changed the run from %d to %d items", len(before), len(after))
	}
	return nil
}

func checkForgetByID(r *run) error {
	ids, err := r.storeNew(r.document("forget by id", r.meta()))
	if err != nil {
		return err
	}
	before, err := r.listAll(r.filter())
	if err != nil {
		return err
	}
	rep, err := r.e.Forget(r.ctx, contract.ForgetIDs(ids[0]))
	if err != nil {
		return engineErr(err)
	}
	if rep.Forgotten != 1 {
		return fail("forgetting one held id reported %d forgotten", rep.Forgotten)
	}
	after, err := r.listAll(r.filter())
	if err != nil {
		return err
	}
	if slices.Contains(hitIDs(after), ids[0]) {
		return fail("a forgotten id is still listed")
	}
	if len(after) != len(before)-1 {
		return fail("forgetting one id changed the run from %d to %d items", len(before), len(after))
	}
	rep, err = r.e.Forget(r.ctx, contract.ForgetIDs(ids[0]))
	if err != nil {
		return engineErr(err)
	}
	if rep.Forgotten != 0 {
		return fail("forgetting a forgotten id again reported %d forgotten", rep.Forgotten)
	}
	return nil
}

func checkForgetByFilter(r *run) error {
	tag := r.marker + "-drop"
	if _, err := r.storeNew(r.document("drop one", r.taggedMeta(tag)), r.document("drop two", r.taggedMeta(tag))); err != nil {
		return err
	}
	before, err := r.listAll(r.filter())
	if err != nil {
		return err
	}
	rep, err := r.e.Forget(r.ctx, contract.ForgetFilter(r.tagFilter(tag)))
	if err != nil {
		return engineErr(err)
	}
	if rep.Forgotten != 2 {
		return fail("forgetting by a tag two items hold reported %d forgotten", rep.Forgotten)
	}
	left, err := r.listAll(r.tagFilter(tag))
	if err != nil {
		return err
	}
	if len(left) != 0 {
		return fail("%d items survived a forget by their tag", len(left))
	}
	after, err := r.listAll(r.filter())
	if err != nil {
		return err
	}
	if len(after) != len(before)-2 {
		return fail("forgetting two items changed the run from %d to %d items", len(before), len(after))
	}
	return nil
}

func checkRecall(r *run) error {
	ans, err := r.e.Recall(r.ctx, contract.RecallRequest{Question: r.marker, Filter: r.filter(), Limit: 5})
	if err != nil {
		return engineErr(err)
	}
	if len(ans.Answer) == 0 || len(trimmed(ans.Answer)) == 0 {
		return fail("recall answered a blank answer")
	}
	if len(ans.Citations) == 0 {
		return fail("recall of the marker cited nothing")
	}
	if len(ans.Citations) > 5 {
		return fail("recall with limit 5 cited %d items", len(ans.Citations))
	}
	listed, err := r.listAll(r.filter())
	if err != nil {
		return err
	}
	kinds := map[string]contract.ItemKind{}
	for _, h := range listed {
		kinds[h.ID] = h.Kind
	}
	for _, c := range ans.Citations {
		k, ok := kinds[c.ID]
		if !ok {
			return fail("recall cited `%s`, which the run's listing does not hold", c.ID)
		}
		if k != c.Kind {
			return fail("recall cited `%s` as a %s; it is listed as a %s", c.ID, c.Kind, k)
		}
	}
	return nil
}

func checkConsolidate(r *run) error {
	node := r.ns("agent:" + r.marker + "-beliefs")
	m := r.meta()
	m.Namespace = node
	if _, err := r.store(contract.Document(r.marker+" consolidate. A fact to build on. note", m)); err != nil {
		return err
	}
	reach := contract.ReachExact(node)
	_, err := contract.Consolidate(r.ctx, r.e, contract.ConsolidateRequest{Reach: reach, Kinds: []contract.ItemKind{contract.KindDocument, contract.KindDocument}})
	if e := wantKind(err, contract.KindInvalidRequest, "consolidate naming a kind twice"); e != nil {
		return e
	}
	rec, err := contract.Consolidate(r.ctx, r.e, contract.ConsolidateRequest{Reach: reach, Kinds: []contract.ItemKind{contract.KindDocument}})
	switch r.desc.Consolidation {
	case contract.ConsolidationNone:
		if e := wantKind(err, contract.KindUnsupported, "consolidate on an engine that declares none"); e != nil {
			return e
		}
	case contract.ConsolidationOnDemand, contract.ConsolidationAutomatic:
		if err != nil {
			return engineErr(err)
		}
		if rec.Status != contract.ConsolidateStarted && rec.Status != contract.ConsolidateCompleted {
			return fail("an engine that consolidates %s answered `%s`; want started or completed", r.desc.Consolidation, rec.Status)
		}
	case contract.ConsolidationScheduled:
		if err != nil {
			return engineErr(err)
		}
		if rec.Status != contract.ConsolidateScheduled {
			return fail("an engine that consolidates on a schedule answered `%s`; want scheduled", rec.Status)
		}
	}
	_, err = contract.Beliefs(r.ctx, r.e, contract.BeliefsRequest{Reach: reach, Limit: 0})
	if e := wantKind(err, contract.KindInvalidRequest, "beliefs with limit 0"); e != nil {
		return e
	}
	hits, err := contract.Beliefs(r.ctx, r.e, contract.BeliefsRequest{Reach: reach, Limit: 10, Query: contract.Ptr("A fact to build on")})
	if err != nil {
		return engineErr(err)
	}
	if len(hits) > 10 {
		return fail("beliefs with limit 10 answered %d hits", len(hits))
	}
	for _, h := range hits {
		if h.Kind != contract.KindLearning || !slices.Contains(h.Meta.Tags, contract.BeliefTag) || !reach.Admits(h.Meta.Namespace) {
			return fail("beliefs answered `%s`, which is not a learning tagged belief inside the reach", h.ID)
		}
	}
	return nil
}

func checkCleanup(r *run) error {
	for start := 0; start < len(r.stored); start += 100 {
		end := min(start+100, len(r.stored))
		if _, err := r.e.Forget(r.ctx, contract.ForgetIDs(r.stored[start:end]...)); err != nil {
			return engineErr(err)
		}
	}
	for _, f := range []contract.MetaFilter{r.filter(), r.probeFilter()} {
		if _, err := r.e.Forget(r.ctx, contract.ForgetFilter(f)); err != nil {
			return engineErr(err)
		}
		left, err := r.listAll(f)
		if err != nil {
			return err
		}
		if len(left) > 0 {
			return fail("%d items survived a forget by workspace filter", len(left))
		}
	}
	return nil
}
