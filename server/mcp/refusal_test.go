package mcp

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"mnemo/contract"
	"mnemo/engine/memory"
)

// TestRefusals checks every refusal's exact text as a model reads it over MCP.
// Several arguments here break the advertised schema (limit 0, a missing
// required field, an unknown property): the answers show the SDK validates
// nothing before the tools read the arguments themselves.
func TestRefusals(t *testing.T) {
	t.Parallel()
	e := memory.New()
	s := seed(t, e)
	c := connect(t, placedTools(e))
	const inv = "invalid request: "
	hostFixed := "is fixed by the host and cannot be passed to a memory tool"
	tooMany := `{"ids":[` + strings.TrimSuffix(strings.Repeat(`"x",`, 201), ",") + `]}`
	_ = s

	cases := []struct {
		name, tool, args, want string
	}{
		{"unknown tool", "memory_bogus", `{}`, inv + "unknown memory tool `memory_bogus`; expected one of memory_recall, memory_fetch, memory_list, memory_get, memory_explore, memory_store, memory_forget"},
		{"arguments an array", ToolList, `[1,2]`, inv + "memory_list: arguments must be a json object"},
		{"arguments a string", ToolGet, `"abc"`, inv + "memory_get: arguments must be a json object"},
		{"arguments a number", ToolRecall, `3`, inv + "memory_recall: arguments must be a json object"},

		{"namespace at the top", ToolList, `{"namespace":"team:acme"}`, inv + "memory_list: `namespace` " + hostFixed},
		{"reach at the top", ToolRecall, `{"question":"q","reach":{"at":"team:acme"}}`, inv + "memory_recall: `reach` " + hostFixed},
		{"reach in the filter", ToolFetch, `{"query":"q","filter":{"reach":{"at":""}}}`, inv + "memory_fetch: `filter.reach` " + hostFixed},
		{"namespace in the forget filter", ToolForget, `{"filter":{"namespace":"team:acme/agent:spy"}}`, inv + "memory_forget: `filter.namespace` " + hostFixed},
		{"namespace in a learning", ToolStore, `{"learning":{"text":"x","namespace":"team:acme"}}`, inv + "memory_store: `learning.namespace` " + hostFixed},
		{"namespace in a document", ToolStore, `{"document":{"text":"x","namespace":"team:acme"}}`, inv + "memory_store: `document.namespace` " + hostFixed},
		{"reach in a turn", ToolStore, `{"conversation":{"turns":[{"role":"user","text":"x","reach":{}}]}}`, inv + "memory_store: `conversation.turns[].reach` " + hostFixed},
		{"namespace in refers_to", ToolRecall, `{"question":"q","refers_to":{"from":"2026-01-01","namespace":"x"}}`, inv + "memory_recall: `refers_to.namespace` " + hostFixed},
		{"namespace under an unknown key", ToolList, `{"foo":{"namespace":"team:acme"}}`, inv + "memory_list: `foo.namespace` " + hostFixed},
		{"reach deep under unknown keys", ToolGet, `{"ids":["a"],"x":{"y":[[{"reach":1}]]}}`, inv + "memory_get: `x.y[][].reach` " + hostFixed},
		{"host-fixed before unknown", ToolList, `{"aaa":1,"filter":{"namespace":"x"}}`, inv + "memory_list: `filter.namespace` " + hostFixed},
		{"shallowest host-fixed first", ToolList, `{"filter":{"reach":{}},"namespace":"x"}`, inv + "memory_list: `namespace` " + hostFixed},

		{"unknown top key", ToolList, `{"limit":5,"bogus":1}`, inv + "memory_list: `bogus` is not an argument of this tool"},
		{"unknown keys in byte order", ToolList, `{"zeta":1,"alpha":2}`, inv + "memory_list: `alpha` is not an argument of this tool"},
		{"filter field outside the subset", ToolList, `{"filter":{"language":"go"}}`, inv + "memory_list: `filter.language` is not an argument of this tool"},
		{"statuses are not the model's", ToolList, `{"filter":{"statuses":["candidate"]}}`, inv + "memory_list: `filter.statuses` is not an argument of this tool"},
		{"unknown learning key", ToolStore, `{"learning":{"text":"x","kind":"fact"}}`, inv + "memory_store: `learning.kind` is not an argument of this tool"},
		{"unknown turn key", ToolStore, `{"conversation":{"turns":[{"role":"user","text":"x","at":"2026-01-01T00:00:00Z"}]}}`, inv + "memory_store: `conversation.turns[].at` is not an argument of this tool"},
		{"mime is not offered", ToolStore, `{"document":{"text":"x","mime":"text/plain"}}`, inv + "memory_store: `document.mime` is not an argument of this tool"},
		{"fetch takes no question", ToolFetch, `{"question":"q"}`, inv + "memory_fetch: `question` is not an argument of this tool"},

		{"filter not an object", ToolList, `{"filter":[]}`, inv + "memory_list: `filter` must be an object"},
		{"learning not an object", ToolStore, `{"learning":"prefers tabs"}`, inv + "memory_store: `learning` must be an object"},
		{"refers_to not an object", ToolFetch, `{"query":"q","refers_to":"yesterday"}`, inv + "memory_fetch: `refers_to` must be an object"},
		{"turn not an object", ToolStore, `{"conversation":{"turns":["hi"]}}`, inv + "memory_store: `conversation.turns` must hold only objects"},
		{"question not a string", ToolRecall, `{"question":42}`, inv + "memory_recall: `question` must be a string"},
		{"cursor not a string", ToolList, `{"cursor":7}`, inv + "memory_list: `cursor` must be a string"},
		{"filter field not a string", ToolList, `{"filter":{"repo":["a"]}}`, inv + "memory_list: `filter.repo` must be a string"},
		{"question missing", ToolRecall, `{}`, inv + "memory_recall: `question` is required and must not be blank"},
		{"question blank", ToolRecall, `{"question":"  "}`, inv + "memory_recall: `question` is required and must not be blank"},
		{"question null is absent", ToolRecall, `{"question":null}`, inv + "memory_recall: `question` is required and must not be blank"},
		{"query missing", ToolFetch, `{"mode":"keyword"}`, inv + "memory_fetch: `query` is required and must not be blank"},
		{"learning text blank", ToolStore, `{"learning":{"text":""}}`, inv + "memory_store: `learning.text` is required and must not be blank"},
		{"document text missing", ToolStore, `{"document":{"title":"t"}}`, inv + "memory_store: `document.text` is required and must not be blank"},
		{"turn role missing", ToolStore, `{"conversation":{"turns":[{"text":"x"}]}}`, inv + "memory_store: `conversation.turns[].role` is required and must not be blank"},
		{"turn text blank", ToolStore, `{"conversation":{"turns":[{"role":"user","text":" "}]}}`, inv + "memory_store: `conversation.turns[].text` is required and must not be blank"},
		{"facet missing", ToolExplore, `{}`, inv + "memory_explore: `facet` is required and must not be blank"},
		{"limit zero", ToolList, `{"limit":0}`, inv + "memory_list: `limit` must be an integer from 1 to 50"},
		{"limit too big", ToolFetch, `{"query":"q","limit":51}`, inv + "memory_fetch: `limit` must be an integer from 1 to 50"},
		{"limit negative", ToolRecall, `{"question":"q","limit":-1}`, inv + "memory_recall: `limit` must be an integer from 1 to 50"},
		{"limit fractional", ToolExplore, `{"facet":"tag","limit":2.5}`, inv + "memory_explore: `limit` must be an integer from 1 to 50"},
		{"limit as a string", ToolList, `{"limit":"10"}`, inv + "memory_list: `limit` must be an integer from 1 to 50"},
		{"confidence above 1", ToolStore, `{"learning":{"text":"x","confidence":1.5}}`, inv + "memory_store: `learning.confidence` must be a number from 0 to 1"},
		{"confidence a string", ToolStore, `{"learning":{"text":"x","confidence":"high"}}`, inv + "memory_store: `learning.confidence` must be a number from 0 to 1"},
		{"tags not strings", ToolStore, `{"learning":{"text":"x"},"tags":["a",1]}`, inv + "memory_store: `tags` must be an array of strings"},
		{"tags_any a string", ToolList, `{"filter":{"tags_any":"style"}}`, inv + "memory_list: `filter.tags_any` must be an array of strings"},
		{"ids a string", ToolGet, `{"ids":"abc"}`, inv + "memory_get: `ids` must be an array of strings"},
		{"turns not an array", ToolStore, `{"conversation":{"turns":{"role":"user"}}}`, inv + "memory_store: `conversation.turns` must be an array"},
		{"unknown item kind", ToolList, `{"filter":{"kinds":["learning","memo"]}}`, inv + "memory_list: `filter.kinds` `memo` is not an item kind"},
		{"unknown source kind", ToolRecall, `{"question":"q","filter":{"sources":["email"]}}`, inv + "memory_recall: `filter.sources` `email` is not a source kind"},
		{"facet outside the list", ToolExplore, `{"facet":"namespace"}`, inv + "memory_explore: `facet` must be one of kind, source, source_id, workspace, folder, file_path, language, repo, url, thread, agent, tool_call, tag, status"},
		{"unknown mode", ToolFetch, `{"query":"q","mode":"semantic"}`, inv + "memory_fetch: `mode` must be one of keyword, vector, hybrid"},
		{"unknown learning kind", ToolStore, `{"learning":{"text":"x","learning_kind":"opinion"}}`, inv + "memory_store: `learning.learning_kind` must be one of preference, fact, procedure, correction, other"},
		{"unknown role", ToolStore, `{"conversation":{"turns":[{"role":"robot","text":"x"}]}}`, inv + "memory_store: `conversation.turns[].role` must be one of user, assistant, system, tool"},
		{"bad timestamp", ToolList, `{"filter":{"observed_after":"yesterday"}}`, inv + "memory_list: `filter.observed_after` must be an rfc 3339 timestamp"},
		{"timestamp without zone", ToolForget, `{"filter":{"observed_before":"2026-01-01T00:00:00"}}`, inv + "memory_forget: `filter.observed_before` must be an rfc 3339 timestamp"},
		{"no ids", ToolGet, `{"ids":[]}`, inv + "memory_get: `ids` must list from 1 to 200 ids"},
		{"ids missing", ToolGet, `{}`, inv + "memory_get: `ids` must list from 1 to 200 ids"},
		{"too many ids", ToolForget, tooMany, inv + "memory_forget: `ids` must list from 1 to 200 ids"},
		{"blank id", ToolGet, `{"ids":["a"," "]}`, inv + "memory_get: `ids` must not hold a blank id"},
		{"no turns", ToolStore, `{"conversation":{"turns":[]}}`, inv + "memory_store: `conversation.turns` must hold at least one turn"},
		{"turns missing", ToolStore, `{"conversation":{}}`, inv + "memory_store: `conversation.turns` must hold at least one turn"},
		{"refers_to day malformed", ToolRecall, `{"question":"q","refers_to":{"from":"3 March"}}`, inv + "memory_recall: `refers_to.from` must be a date as YYYY-MM-DD"},
		{"refers_to to malformed", ToolFetch, `{"query":"q","refers_to":{"from":"2026-03-03","to":"2026-3-4"}}`, inv + "memory_fetch: `refers_to.to` must be a date as YYYY-MM-DD"},
		{"refers_to without from", ToolRecall, `{"question":"q","refers_to":{"to":"2026-03-03"}}`, inv + "memory_recall: `refers_to.from` is required"},
		{"refers_to backwards", ToolRecall, `{"question":"q","refers_to":{"from":"2026-03-03","to":"2026-03-02"}}`, inv + "memory_recall: `refers_to.to` must not be before `from`"},
		{"no store shape", ToolStore, `{"tags":["a"]}`, inv + "memory_store: pass exactly one of `learning`, `document` or `conversation`"},
		{"two store shapes", ToolStore, `{"learning":{"text":"x"},"document":{"text":"y"}}`, inv + "memory_store: pass exactly one of `learning`, `document` or `conversation`"},
		{"null shapes are absent", ToolStore, `{"learning":null,"document":null}`, inv + "memory_store: pass exactly one of `learning`, `document` or `conversation`"},
		{"forget neither", ToolForget, `{}`, inv + "memory_forget: pass exactly one of `ids` or `filter`"},
		{"forget both", ToolForget, `{"ids":["a"],"filter":{"repo":"r"}}`, inv + "memory_forget: pass exactly one of `ids` or `filter`"},
		{"forget empty filter", ToolForget, `{"filter":{}}`, inv + "memory_forget: `filter` must set at least one field; an empty filter would mean everything"},
		{"forget filter of empty lists", ToolForget, `{"filter":{"tags_any":[],"kinds":[],"repo":null}}`, inv + "memory_forget: `filter` must set at least one field; an empty filter would mean everything"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := c.refused(tc.tool, tc.args); got != tc.want {
				t.Errorf("%s %s\n got: %s\nwant: %s", tc.tool, tc.args, got, tc.want)
			}
		})
	}

	// Nothing refused above touched the store.
	list, err := e.List(context.Background(), contract.ListRequest{Limit: 50, Filter: contract.MetaFilter{Reach: &contract.Reach{Descendants: true}}})
	if err != nil || len(list.Items) != 5 {
		t.Errorf("after the refusals the engine holds %d memories (%v), want the 5 seeded", len(list.Items), err)
	}
}

// TestNullArgumentsReadAsNone checks absent and null arguments are an empty
// object, and an explicit null field is an absent one.
func TestNullArgumentsReadAsNone(t *testing.T) {
	t.Parallel()
	e := memory.New()
	seed(t, e)
	c := connect(t, placedTools(e))
	for _, args := range []string{``, `null`, `{}`, `{"filter":null,"limit":null,"cursor":null}`} {
		if got := ids(t, c.ok(ToolList, args), "items"); len(got) != 3 {
			t.Errorf("list %q = %d items, want the 3 in reach", args, len(got))
		}
	}
}

// TestEngineFailuresAreScrubbed checks a model never reads an engine
// failure's own text, which can name files or internals.
func TestEngineFailuresAreScrubbed(t *testing.T) {
	t.Parallel()
	e := failing{Engine: memory.New(), err: contract.EngineErr("open /home/alice/.local/share/mnemo/index: permission denied")}
	c := connect(t, placedTools(e))
	got := c.refused(ToolList, `{}`)
	if strings.Contains(got, "/home/alice") || got != "engine error: "+engineFailure {
		t.Errorf("engine failure reads %q", got)
	}
	// A contract refusal from the engine keeps its message.
	e.err = contract.Invalid("list cursor `zz` is not valid")
	c = connect(t, placedTools(e))
	if got := c.refused(ToolList, `{}`); got != "invalid request: list cursor `zz` is not valid" {
		t.Errorf("engine refusal reads %q", got)
	}
}

// failing is an engine whose List fails with err.
type failing struct {
	contract.Engine
	err error
}

func (f failing) List(context.Context, contract.ListRequest) (contract.ListPage, error) {
	return contract.ListPage{}, f.err
}

func ExampleTools_Call() {
	tools := New(memory.New(), ScopeAt(contract.MustNamespace("agent:writer")))
	ctx := context.Background()
	stored, _ := tools.Call(ctx, ToolStore, []byte(`{"learning":{"text":"prefers tabs","learning_kind":"preference"}}`))
	fmt.Println(string(stored))
	_, err := tools.Call(ctx, ToolList, []byte(`{"filter":{"namespace":"agent:other"}}`))
	fmt.Println(err)
	// Output:
	// {"id":"ae8b7950c2e802b3c5955b70b3bccba0fe127f45","replayed":false}
	// invalid request: memory_list: `filter.namespace` is fixed by the host and cannot be passed to a memory tool
}
