package ingest

import (
	"strings"
	"testing"

	"mnemo/contract"
)

func TestClaudeCodeMemoryFilesAndTranscripts(t *testing.T) {
	c := read(t, ClaudeCode{}, "testdata/claude-code", "")
	got := map[string]stored{}
	for _, s := range c.stored {
		got[s.location] = s
	}
	wantDocs := map[string]string{
		"shop/CLAUDE.md#shop":                                  "# Shop\n\nMonorepo of the shop's web front and its API.",
		"shop/CLAUDE.md#commands":                              "# Commands\n\n- `make test` runs every test\n- `make lint` before a commit\n\n```sh\n# not a heading: inside a fence\nmake all\n```",
		"shop/CLAUDE.md#style":                                 "# Style\n\nTabs in Go, two spaces in YAML.",
		"shop/.claude/rules/testing.md#top":                    "# testing.md\n\nTests talk to a real PostgreSQL, never a mock.",
		"projects/-home-ann-src-shop/memory/MEMORY.md#learned": "# Learned\n\nThe staging database is reset every Sunday.",
	}
	for loc, text := range wantDocs {
		s, ok := got[loc]
		if !ok {
			t.Errorf("no record at %s", loc)
			continue
		}
		if s.item.Type != contract.KindDocument || s.item.RenderText() != text {
			t.Errorf("%s: got %s %q", loc, s.item.Type, s.item.RenderText())
		}
	}
	if ns := got["shop/CLAUDE.md#shop"].item.Meta.Namespace.String(); ns != "agent:claude-code/project:shop" {
		t.Errorf("memory file namespace %s", ns)
	}
	const session = "projects/-home-ann-src-shop/5d1c7a2e-1111-4222-8333-444455556666.jsonl"
	// One record per turn, its speaker the observed actor.
	for _, w := range []turnWant{
		{session + ":2", "user: Why does the checkout test fail on CI?", 0, "user", ""},
		{session + ":3", "assistant: Let me read the test.\n\nRead {\"file_path\":\"/home/ann/src/shop/checkout_test.go\"} [tools: Read (toolu_01)]", 1, "assistant", "Claude"},
		{session + ":4", "tool: func TestCheckout(t *testing.T) { time.Sleep(2 * time.Second) }", 2, "tool", "Read"},
		{session + ":5", "assistant: It sleeps two seconds; CI times out at one.", 3, "assistant", "Claude"},
		{session + ":9", "user: Remove the sleep then.", 4, "user", ""},
		{session + ":10", "assistant: Done: the test now uses a fake clock.", 5, "assistant", "Claude"},
	} {
		w.check(t, got)
	}
	m := got[session+":2"].item.Meta
	if m.Namespace.String() != "agent:claude-code/project:home-ann-src-shop" || contract.Deref(m.ThreadID) != "5d1c7a2e-1111-4222-8333-444455556666" ||
		contract.Deref(m.Folder) != "/home/ann/src/shop" || m.ObservedAt == nil {
		t.Errorf("first turn meta %+v", m)
	}
	if len(c.skipped) != 1 || c.skipped[0].Location != session+":8" {
		t.Errorf("skipped %+v", c.skipped)
	}
	for _, why := range []string{"summary line", "system line", "meta message (command caveats and the like)", "memory file heading without text"} {
		if c.omitted[why] != 1 {
			t.Errorf("omitted %q %d times, want once: %v", why, c.omitted[why], c.omitted)
		}
	}
	if len(c.stored) != 11 {
		t.Errorf("want 11 records, got %d: %v", len(c.stored), keys(got))
	}
}

func TestClaudeCodeDetect(t *testing.T) {
	for _, p := range []string{"testdata/claude-code/shop", "testdata/claude-code/shop/CLAUDE.md",
		"testdata/claude-code/projects/-home-ann-src-shop/5d1c7a2e-1111-4222-8333-444455556666.jsonl"} {
		src, err := Detect(p)
		if err != nil || src.Name() != "claude-code" {
			t.Errorf("detect %s: %v %v", p, src, err)
		}
	}
}

func keys(m map[string]stored) string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return strings.Join(out, " ")
}
