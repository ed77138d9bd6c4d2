package mcp

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"mnemo/contract"
	"mnemo/engine/bolt"
	"mnemo/engine/memory"
)

// fixedNow is the clock stored memories take their observed_at from in tests.
var fixedNow = time.Date(2026, 3, 4, 5, 6, 7, 891_000_000, time.UTC)

// Namespaces of the seeded corpus: the agent's place, its team (an ancestor),
// a sibling agent and the root.
var (
	placeNS   = contract.MustNamespace("team:acme/agent:writer")
	teamNS    = contract.MustNamespace("team:acme")
	siblingNS = contract.MustNamespace("team:acme/agent:spy")
)

// engines are the engines every session test runs on: the reference engine
// and the product's bbolt + Bleve store in a temporary directory.
func engines(t *testing.T) map[string]func(t *testing.T) contract.Engine {
	t.Helper()
	return map[string]func(t *testing.T) contract.Engine{
		"memory": func(t *testing.T) contract.Engine { return memory.New() },
		"bolt": func(t *testing.T) contract.Engine {
			e, err := bolt.Open(t.TempDir(), bolt.Options{})
			if err != nil {
				t.Fatalf("open bolt: %v", err)
			}
			t.Cleanup(func() { _ = e.Close() })
			return e
		},
	}
}

// client is one MCP client session connected to a server over the SDK's
// in-memory transport.
type client struct {
	t  *testing.T
	cs *sdk.ClientSession
}

func connect(t *testing.T, tools *Tools) *client {
	t.Helper()
	ctx := context.Background()
	serverT, clientT := sdk.NewInMemoryTransports()
	ss, err := NewServer(tools, ServerOptions{Version: "test"}).Connect(ctx, serverT, nil)
	if err != nil {
		t.Fatalf("server connect: %v", err)
	}
	c := sdk.NewClient(&sdk.Implementation{Name: "mcp-test", Version: "1"}, nil)
	cs, err := c.Connect(ctx, clientT, nil)
	if err != nil {
		t.Fatalf("client connect: %v", err)
	}
	t.Cleanup(func() {
		_ = cs.Close()
		_ = ss.Wait()
	})
	return &client{t: t, cs: cs}
}

// toolResult is one tool call's answer: its text, and whether it is an error.
type toolResult struct {
	text    string
	isError bool
	// structured is the structured content, nil for errors.
	structured any
}

// call sends a tools/call with args written as raw JSON.
func (c *client) call(name, args string) toolResult {
	c.t.Helper()
	params := &sdk.CallToolParams{Name: name}
	if args != "" {
		params.Arguments = json.RawMessage(args)
	}
	res, err := c.cs.CallTool(context.Background(), params)
	if err != nil {
		c.t.Fatalf("%s %s: protocol error %v", name, args, err)
	}
	if len(res.Content) != 1 {
		c.t.Fatalf("%s %s: %d content blocks, want 1", name, args, len(res.Content))
	}
	tc, ok := res.Content[0].(*sdk.TextContent)
	if !ok {
		c.t.Fatalf("%s %s: content is %T, want text", name, args, res.Content[0])
	}
	return toolResult{text: tc.Text, isError: res.IsError, structured: res.StructuredContent}
}

// ok calls a tool that must succeed and decodes its JSON result.
func (c *client) ok(name, args string) map[string]any {
	c.t.Helper()
	r := c.call(name, args)
	if r.isError {
		c.t.Fatalf("%s %s: %s", name, args, r.text)
	}
	var out map[string]any
	if err := json.Unmarshal([]byte(r.text), &out); err != nil {
		c.t.Fatalf("%s %s: result is not a JSON object: %v\n%s", name, args, err, r.text)
	}
	if r.structured == nil {
		c.t.Fatalf("%s %s: no structured content", name, args)
	}
	return out
}

// refused calls a tool that must fail and returns the error text.
func (c *client) refused(name, args string) string {
	c.t.Helper()
	r := c.call(name, args)
	if !r.isError {
		c.t.Fatalf("%s %s: succeeded with %s, want a refusal", name, args, r.text)
	}
	return r.text
}

func (c *client) toolNames() []string {
	c.t.Helper()
	res, err := c.cs.ListTools(context.Background(), nil)
	if err != nil {
		c.t.Fatalf("tools/list: %v", err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	slices.Sort(names)
	return names
}

// seeded is a corpus stored straight into the engine, one memory per namespace
// plus a few at the place, with the ids the tests address.
type seeded struct {
	place, team, root, sibling, siblingTagged string
}

func seed(t *testing.T, e contract.Engine) seeded {
	t.Helper()
	ctx := context.Background()
	store := func(item contract.StoreItem) string {
		r, err := contract.Store(ctx, e, item)
		if err != nil {
			t.Fatalf("seed: %v", err)
		}
		return r.ID
	}
	meta := func(ns contract.Namespace, tags ...string) contract.MemoryMeta {
		return contract.MemoryMeta{Namespace: ns, Source: contract.SourceRef{Kind: contract.SourceAgent}, Tags: tags}
	}
	return seeded{
		place:         store(contract.Learning("the writer prefers tabs for indentation", contract.LearningPreference, 0.9, meta(placeNS, "style"))),
		team:          store(contract.Document("acme ships tabs in every repository", meta(teamNS, "style"))),
		root:          store(contract.Learning("tabs render as four columns by default", contract.LearningFact, 0.75, meta(contract.Root()))),
		sibling:       store(contract.Learning("the spy prefers tabs and secret plans", contract.LearningPreference, 0.9, meta(siblingNS, "style"))),
		siblingTagged: store(contract.Document("secret launch codes for the spy", meta(siblingNS, "secret"))),
	}
}

// ids lists the ids of a result's hits ("items" or "hits").
func ids(t *testing.T, result map[string]any, key string) []string {
	t.Helper()
	list, ok := result[key].([]any)
	if !ok {
		t.Fatalf("result has no %q list: %v", key, result)
	}
	var out []string
	for _, h := range list {
		out = append(out, h.(map[string]any)["id"].(string))
	}
	return out
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
