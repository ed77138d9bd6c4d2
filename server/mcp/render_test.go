package mcp

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"mnemo/contract"
	"mnemo/engine/memory"
)

func TestHitRendering(t *testing.T) {
	observed := time.Date(2026, 1, 2, 3, 4, 5, 987_654_321, time.FixedZone("CET", 3600))
	conf := contract.F32(0.8)
	cases := []struct {
		name string
		hit  contract.Hit
		want string
	}{
		{
			name: "learning with every rendered field",
			hit: contract.Hit{ID: "a", Kind: contract.KindLearning, Text: "prefers <tabs> & spaces", Score: 0.123456, Confidence: &conf,
				Meta: contract.MemoryMeta{
					Namespace: contract.MustNamespace("team:acme/agent:writer"),
					Source:    contract.SourceRef{Kind: contract.SourceFile, ID: contract.Ptr("src-1")},
					FilePath:  contract.Ptr("docs/style.md"), URL: contract.Ptr("https://x.test/a?b=1&c=2"), ThreadID: contract.Ptr("t-9"),
					Tags: []string{"style"}, ObservedAt: &observed,
					Workspace: contract.Ptr("ws"), Repo: contract.Ptr("acme/app"), AgentID: contract.Ptr("writer"),
				}},
			want: `{"id":"a","kind":"learning","text":"prefers <tabs> & spaces","score":0.1235,"confidence":0.8,` +
				`"meta":{"source":{"kind":"file","id":"src-1"},"file_path":"docs/style.md","url":"https://x.test/a?b=1&c=2",` +
				`"thread_id":"t-9","tags":["style"],"observed_at":"2026-01-02T02:04:05Z"}}`,
		},
		{
			name: "bare document: absent fields left out, unset source is agent",
			hit:  contract.Hit{ID: "b", Kind: contract.KindDocument, Text: "x", Meta: contract.MemoryMeta{Tags: []string{}}},
			want: `{"id":"b","kind":"document","text":"x","score":0,"meta":{"source":{"kind":"agent"}}}`,
		},
		{
			name: "scores round to four places up to a whole number",
			hit:  contract.Hit{ID: "c", Kind: contract.KindDocument, Text: "x", Score: 0.99996, Meta: contract.MemoryMeta{}},
			want: `{"id":"c","kind":"document","text":"x","score":1,"meta":{"source":{"kind":"agent"}}}`,
		},
		{
			// The f32 0.99995 is 0.99994999..., which rounds down: rounding
			// reads the f32's own value, as the reference does.
			name: "scores round the f32's value, not its shortest decimal",
			hit:  contract.Hit{ID: "d", Kind: contract.KindDocument, Text: "x", Score: 0.99995, Meta: contract.MemoryMeta{}},
			want: `{"id":"d","kind":"document","text":"x","score":0.9999,"meta":{"source":{"kind":"agent"}}}`,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := encode(renderHit(tc.hit))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("\n got: %s\nwant: %s", got, tc.want)
			}
		})
	}
}

func TestRecallRendering(t *testing.T) {
	score := contract.F32(0.016393442)
	a := contract.RecallAnswer{Answer: "Tabs [1].", Model: contract.Ptr("mnemo-extractive"), Citations: []contract.Citation{
		{ID: "a", Kind: contract.KindLearning, Snippet: "prefers tabs", Score: &score, Meta: contract.MemoryMeta{Namespace: contract.MustNamespace("agent:w")}},
		{ID: "b", Kind: contract.KindDocument, Snippet: "doc", Meta: contract.MemoryMeta{}},
	}}
	got, err := encode(renderRecall(a))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"answer":"Tabs [1].","citations":[{"id":"a","kind":"learning","snippet":"prefers tabs","score":0.0164,"meta":{"source":{"kind":"agent"}}},` +
		`{"id":"b","kind":"document","snippet":"doc","meta":{"source":{"kind":"agent"}}}]}`
	if string(got) != want {
		t.Errorf("\n got: %s\nwant: %s", got, want)
	}
}

func TestEmptyResultsRenderEmptyLists(t *testing.T) {
	t.Parallel()
	c := connect(t, New(memory.New(), ScopeAt(placeNS)))
	for _, tc := range []struct{ tool, args, want string }{
		{ToolList, `{}`, `{"items":[]}`},
		{ToolFetch, `{"query":"nothing"}`, `{"hits":[]}`},
		{ToolGet, `{"ids":["a"]}`, `{"items":[],"missing":["a"]}`},
		{ToolExplore, `{"facet":"kind"}`, `{"facet":"kind","buckets":[],"total":0,"missing":0,"more_buckets":0,"truncated":false}`},
		{ToolForget, `{"ids":["a","a"]}`, `{"forgotten":0,"skipped":["a"]}`},
	} {
		if got := c.call(tc.tool, tc.args); got.isError || got.text != tc.want {
			t.Errorf("%s %s = %s, want %s", tc.tool, tc.args, got.text, tc.want)
		}
	}
}

// FuzzCall throws arbitrary arguments at every tool of a placed scope and
// checks the security invariants hold whatever the model sends: nothing
// panics, a host-fixed key anywhere is refused, every store lands at the
// place, and nothing outside the reach is ever removed.
func FuzzCall(f *testing.F) {
	for _, s := range []string{
		`{}`, `null`, `[1]`, `{"question":"tabs?"}`, `{"query":"tabs","mode":"keyword"}`,
		`{"learning":{"text":"x"},"tags":["a"]}`, `{"document":{"text":"y","title":"t"}}`,
		`{"conversation":{"turns":[{"role":"user","text":"hi"}]}}`, `{"ids":["a","b"]}`,
		`{"filter":{"tags_any":["style"]}}`, `{"filter":{"kinds":["learning"],"sources":["agent"]}}`,
		`{"facet":"tag","limit":3}`, `{"foo":{"namespace":"x"}}`, `{"filter":{"reach":{"at":""}}}`,
		`{"question":"q","refers_to":{"from":"2026-01-01","to":"2026-01-03"}}`,
	} {
		for i := range ToolNames() {
			f.Add(uint8(i), s)
		}
	}
	f.Fuzz(func(t *testing.T, which uint8, args string) {
		e := memory.New()
		s := seed(t, e)
		tools := New(e, ScopeAt(placeNS))
		name := ToolNames()[int(which)%len(ToolNames())]
		ctx := context.Background()
		out, err := tools.Call(ctx, name, json.RawMessage(args))

		var tree any
		if json.Unmarshal([]byte(args), &tree) == nil && holdsHostFixedKey(tree) {
			if _, isObj := tree.(map[string]any); isObj && (err == nil || !strings.Contains(err.Error(), "is fixed by the host")) {
				t.Fatalf("%s %s: a host-fixed key was not refused (err %v)", name, args, err)
			}
		}
		if err != nil {
			if ce := contract.AsError(err); ce.Kind != contract.KindInvalidRequest && ce.Kind != contract.KindUnsupported {
				t.Fatalf("%s %s: error of kind %s: %v", name, args, ce.Kind, err)
			}
		}
		if err == nil && name == ToolStore {
			var receipt storeResult
			if jerr := json.Unmarshal(out, &receipt); jerr != nil {
				t.Fatal(jerr)
			}
			recs, gerr := e.GetRecords(ctx, contract.GetRequest{IDs: []string{receipt.ID}})
			if gerr != nil || len(recs) != 1 || !recs[0].Item.Meta.Namespace.Equal(placeNS) {
				t.Fatalf("%s: stored outside the place: %v %v", args, recs, gerr)
			}
		}
		held, gerr := e.Get(ctx, contract.GetRequest{IDs: []string{s.sibling, s.siblingTagged}})
		if gerr != nil || len(held) != 2 {
			t.Fatalf("%s %s: a memory outside the reach was removed", name, args)
		}
	})
}

func holdsHostFixedKey(v any) bool {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if k == "namespace" || k == "reach" || holdsHostFixedKey(e) {
				return true
			}
		}
	case []any:
		for _, e := range x {
			if holdsHostFixedKey(e) {
				return true
			}
		}
	}
	return false
}
