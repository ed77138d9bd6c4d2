package mcp

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"mnemo/contract"
	"mnemo/engine/memory"
)

func placedTools(e contract.Engine) *Tools {
	return New(e, ScopeAt(placeNS), WithClock(func() time.Time { return fixedNow }))
}

func TestStoreLandsAtThePlaceWithHostMetadata(t *testing.T) {
	for name, open := range engines(t) {
		t.Run(name, func(t *testing.T) {
			e := open(t)
			c := connect(t, placedTools(e))

			first := c.ok(ToolStore, `{"learning":{"text":"the writer likes short sentences"},"tags":["style","tone"]}`)
			if first["replayed"] != false {
				t.Fatalf("first store replayed: %v", first)
			}
			again := c.ok(ToolStore, `{"learning":{"text":"the writer likes short sentences"},"tags":["style","tone"]}`)
			if again["replayed"] != true || again["id"] != first["id"] {
				t.Fatalf("second store of the same memory = %v, want a replay of %v", again, first["id"])
			}

			recs, err := e.GetRecords(context.Background(), contract.GetRequest{IDs: []string{first["id"].(string)}})
			if err != nil || len(recs) != 1 {
				t.Fatalf("stored record not found: %v %v", recs, err)
			}
			item := recs[0].Item
			if !item.Meta.Namespace.Equal(placeNS) {
				t.Errorf("namespace = %s, want the place %s", item.Meta.Namespace, placeNS)
			}
			if item.Meta.SourceKindOf() != contract.SourceAgent || item.Meta.Source.ID != nil {
				t.Errorf("source = %+v, want agent without id", item.Meta.Source)
			}
			if !slices.Equal(item.Meta.Tags, []string{"style", "tone"}) {
				t.Errorf("tags = %v", item.Meta.Tags)
			}
			if item.Meta.ObservedAt == nil || !item.Meta.ObservedAt.Equal(fixedNow) {
				t.Errorf("observed_at = %v, want %v", item.Meta.ObservedAt, fixedNow)
			}
			if item.Kind != contract.LearningFact || item.Confidence != 0.8 || item.Evidence != nil {
				t.Errorf("learning = %s %v %v, want the defaults fact 0.8 and no evidence", item.Kind, item.Confidence, item.Evidence)
			}

			doc := c.ok(ToolStore, `{"document":{"title":"Style guide","text":"Use tabs."}}`)
			conv := c.ok(ToolStore, `{"conversation":{"turns":[{"role":"user","text":"tabs?"},{"role":"assistant","text":"tabs."}]}}`)
			learn := c.ok(ToolStore, `{"learning":{"text":"deploys need a review","learning_kind":"procedure","confidence":0.55,"evidence":"postmortem 12"}}`)
			got := c.ok(ToolGet, fmt.Sprintf(`{"ids":[%q,%q,%q]}`, doc["id"], conv["id"], learn["id"]))
			items := got["items"].([]any)
			if len(items) != 3 {
				t.Fatalf("get after store = %v", got)
			}
			texts := []string{}
			for _, it := range items {
				texts = append(texts, it.(map[string]any)["text"].(string))
			}
			want := []string{"# Style guide\n\nUse tabs.", "user: tabs?\nassistant: tabs.", "deploys need a review"}
			if !slices.Equal(texts, want) {
				t.Errorf("stored texts = %q, want %q", texts, want)
			}
			if conf := items[2].(map[string]any)["confidence"]; conf != 0.55 {
				t.Errorf("confidence renders as %v, want 0.55 (rounded from the f32)", conf)
			}
		})
	}
}

func TestReadsAreConfinedToTheReach(t *testing.T) {
	for name, open := range engines(t) {
		t.Run(name, func(t *testing.T) {
			e := open(t)
			s := seed(t, e)
			c := connect(t, placedTools(e))
			inReach := []string{s.place, s.team, s.root}

			list := c.ok(ToolList, `{"limit":50}`)
			got := ids(t, list, "items")
			slices.Sort(got)
			want := slices.Clone(inReach)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("list ids = %v, want exactly the place, its ancestors and the root %v", got, want)
			}
			if strings.Contains(mustJSON(t, list), "namespace") {
				t.Errorf("a listing renders a namespace: %v", list)
			}

			fetch := c.ok(ToolFetch, `{"query":"tabs secret spy","mode":"keyword","limit":50}`)
			for _, id := range ids(t, fetch, "hits") {
				if id == s.sibling || id == s.siblingTagged {
					t.Errorf("fetch returned the sibling's memory %s", id)
				}
			}
			if len(ids(t, fetch, "hits")) == 0 {
				t.Errorf("fetch found nothing in reach: %v", fetch)
			}

			recall := c.ok(ToolRecall, `{"question":"what does the spy prefer?"}`)
			if _, has := recall["model"]; has {
				t.Errorf("recall renders the model: %v", recall)
			}
			for _, cit := range recall["citations"].([]any) {
				id := cit.(map[string]any)["id"].(string)
				if id == s.sibling || id == s.siblingTagged {
					t.Errorf("recall cites the sibling's memory %s", id)
				}
			}

			get := c.ok(ToolGet, fmt.Sprintf(`{"ids":[%q,%q,%q,"nope"]}`, s.place, s.sibling, s.place))
			if g := ids(t, get, "items"); !slices.Equal(g, []string{s.place}) {
				t.Errorf("get items = %v, want only the place's memory", g)
			}
			if m := mustJSON(t, get["missing"]); m != fmt.Sprintf(`[%q,"nope"]`, s.sibling) {
				t.Errorf("get missing = %s, want the sibling's id and the unknown one", m)
			}

			explore := c.ok(ToolExplore, `{"facet":"tag"}`)
			if explore["total"] != 3.0 || mustJSON(t, explore["buckets"]) != `[{"count":2,"value":"style"}]` {
				t.Errorf("explore tag = %v, want 2 style memories of 3 in reach", explore)
			}
		})
	}
}

func TestAFilterCannotWidenTheReach(t *testing.T) {
	t.Parallel()
	e := memory.New()
	s := seed(t, e)
	c := connect(t, placedTools(e))
	list := c.ok(ToolList, `{"filter":{"tags_any":["secret"]}}`)
	if got := ids(t, list, "items"); len(got) != 0 {
		t.Errorf("a tag filter reached the sibling: %v", got)
	}
	_ = s
	// The model cannot name a namespace anywhere, so it cannot ask for one.
	for _, args := range []string{
		`{"filter":{"reach":{"at":"team:acme/agent:spy"}}}`,
		`{"namespace":"team:acme/agent:spy"}`,
	} {
		if msg := c.refused(ToolList, args); !strings.Contains(msg, "is fixed by the host") {
			t.Errorf("%s: %s", args, msg)
		}
	}
}

func TestForgetByIDsSkipsWhatTheScopeCannotSee(t *testing.T) {
	for name, open := range engines(t) {
		t.Run(name, func(t *testing.T) {
			e := open(t)
			s := seed(t, e)
			c := connect(t, placedTools(e))

			got := c.ok(ToolForget, fmt.Sprintf(`{"ids":[%q,%q,"unknown-id"]}`, s.place, s.sibling))
			if got["forgotten"] != 1.0 || mustJSON(t, got["skipped"]) != fmt.Sprintf(`[%q,"unknown-id"]`, s.sibling) {
				t.Fatalf("forget = %v, want 1 forgotten and the sibling's and the unknown id skipped", got)
			}
			left, err := e.Get(context.Background(), contract.GetRequest{IDs: []string{s.place, s.sibling}})
			if err != nil {
				t.Fatal(err)
			}
			if len(left) != 1 || left[0].ID != s.sibling {
				t.Errorf("after forget the engine holds %v, want only the sibling's memory", left)
			}

			none := c.ok(ToolForget, fmt.Sprintf(`{"ids":[%q]}`, s.siblingTagged))
			if none["forgotten"] != 0.0 || mustJSON(t, none["skipped"]) != fmt.Sprintf(`[%q]`, s.siblingTagged) {
				t.Errorf("forget of an id out of reach = %v", none)
			}
		})
	}
}

func TestForgetByFilterStaysInReach(t *testing.T) {
	for name, open := range engines(t) {
		t.Run(name, func(t *testing.T) {
			e := open(t)
			s := seed(t, e)
			c := connect(t, placedTools(e))

			got := c.ok(ToolForget, `{"filter":{"tags_any":["style"]}}`)
			if got["forgotten"] != 2.0 || mustJSON(t, got["skipped"]) != `[]` {
				t.Fatalf("forget by filter = %v, want the 2 style memories in reach", got)
			}
			left, err := e.Get(context.Background(), contract.GetRequest{IDs: []string{s.place, s.team, s.sibling, s.root}})
			if err != nil {
				t.Fatal(err)
			}
			var leftIDs []string
			for _, h := range left {
				leftIDs = append(leftIDs, h.ID)
			}
			if !slices.Equal(leftIDs, []string{s.sibling, s.root}) {
				t.Errorf("left %v, want the sibling's style memory and the untagged root one", leftIDs)
			}
		})
	}
}

func TestForgetByIDsWithoutAReachUsesPlainForget(t *testing.T) {
	t.Parallel()
	e := memory.New()
	s := seed(t, e)
	c := connect(t, New(e, DefaultScope()))
	got := c.ok(ToolForget, fmt.Sprintf(`{"ids":[%q,%q]}`, s.sibling, s.root))
	if got["forgotten"] != 2.0 || mustJSON(t, got["skipped"]) != `[]` {
		t.Errorf("forget with no reach = %v, want both removed", got)
	}
}

func TestReadOnlyNeitherListsNorRunsWrites(t *testing.T) {
	t.Parallel()
	e := memory.New()
	s := seed(t, e)
	scope := ScopeAt(placeNS)
	scope.Writes = false
	c := connect(t, New(e, scope))

	names := c.toolNames()
	if slices.Contains(names, ToolStore) || slices.Contains(names, ToolForget) || len(names) != 5 {
		t.Errorf("read-only tools/list = %v, want the five reads", names)
	}
	if msg := c.refused(ToolForget, fmt.Sprintf(`{"ids":[%q]}`, s.place)); msg != "unsupported: memory_forget is not offered: these memory tools are read-only" {
		t.Errorf("forget on read-only: %s", msg)
	}
	// Refused before the arguments are read, however wrong they are.
	if msg := c.refused(ToolStore, `[1,2]`); msg != "unsupported: memory_store is not offered: these memory tools are read-only" {
		t.Errorf("store on read-only: %s", msg)
	}
	if hits, _ := e.Get(context.Background(), contract.GetRequest{IDs: []string{s.place}}); len(hits) != 1 {
		t.Errorf("a read-only forget removed a memory")
	}
	c.ok(ToolList, `{}`)
}

func TestFetchOffersExactlyTheEnginesModes(t *testing.T) {
	t.Parallel()
	keyword := memory.New(memory.WithFetchModes(contract.ModeKeyword))
	seed(t, keyword)
	c := connect(t, New(keyword, ScopeAt(placeNS)))
	if got := c.ok(ToolFetch, `{"query":"tabs"}`); len(ids(t, got, "hits")) == 0 {
		t.Errorf("fetch with the default mode (the only one, keyword) found nothing: %v", got)
	}
	if msg := c.refused(ToolFetch, `{"query":"tabs","mode":"hybrid"}`); msg != "invalid request: memory_fetch: `mode` must be one of keyword" {
		t.Errorf("unserved mode: %s", msg)
	}

	none := memory.New(memory.WithFetchModes())
	c = connect(t, New(none, ScopeAt(placeNS)))
	if slices.Contains(c.toolNames(), ToolFetch) {
		t.Errorf("memory_fetch listed for an engine with no fetch mode")
	}
	if msg := c.refused(ToolFetch, `{"query":"tabs"}`); msg != "unsupported: memory_fetch: engine `memory` serves no fetch mode" {
		t.Errorf("fetch on an engine without modes: %s", msg)
	}
}

func TestPagingThroughListWithTheCursor(t *testing.T) {
	t.Parallel()
	e := memory.New()
	s := seed(t, e)
	c := connect(t, placedTools(e))
	var seen []string
	args := `{"limit":1}`
	for range 10 {
		page := c.ok(ToolList, args)
		seen = append(seen, ids(t, page, "items")...)
		next, ok := page["next_cursor"].(string)
		if !ok {
			break
		}
		args = fmt.Sprintf(`{"limit":1,"cursor":%q}`, next)
	}
	slices.Sort(seen)
	want := []string{s.place, s.team, s.root}
	slices.Sort(want)
	if !slices.Equal(seen, want) {
		t.Errorf("walked %v, want %v", seen, want)
	}
}

func TestRefersToRanksTheDaysFirst(t *testing.T) {
	t.Parallel()
	e := memory.New()
	ctx := context.Background()
	day := func(d int) *time.Time {
		at := time.Time(fixedNow.AddDate(0, 0, d))
		return &at
	}
	meta := func(at *time.Time) contract.MemoryMeta {
		return contract.MemoryMeta{Namespace: placeNS, Source: contract.SourceRef{Kind: contract.SourceAgent}, ObservedAt: at}
	}
	older, _ := contract.Store(ctx, e, contract.Document("standup notes about tabs and spaces, long and detailed about tabs", meta(day(-3))))
	onDay, _ := contract.Store(ctx, e, contract.Document("standup notes", meta(day(-1))))
	c := connect(t, placedTools(e))
	from := fixedNow.AddDate(0, 0, -1).Format("2006-01-02")
	got := ids(t, c.ok(ToolFetch, fmt.Sprintf(`{"query":"standup notes tabs","mode":"keyword","refers_to":{"from":%q}}`, from)), "hits")
	if len(got) != 2 || got[0] != onDay.ID || got[1] != older.ID {
		t.Errorf("fetch with refers_to = %v, want the memory observed that day first (%s)", got, onDay.ID)
	}
}
