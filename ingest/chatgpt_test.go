package ingest

import (
	"strings"
	"testing"

	"mnemo/contract"
)

func TestChatGPTImportsOnlyTheCurrentBranch(t *testing.T) {
	c := read(t, ChatGPT{}, "testdata/chatgpt", "")
	if len(c.stored) != 5 {
		t.Fatalf("want 5 turns, got %d: %+v", len(c.stored), c.stored)
	}
	all := ""
	for _, s := range c.stored {
		all += texts(s.item) + "\n"
		if s.item.Type != contract.KindConversation || contract.Deref(s.item.Meta.ThreadID) != "conv-edit" {
			t.Errorf("%s: want a conversation of thread conv-edit, got %+v", s.location, s.item)
		}
		if s.item.Meta.Namespace.String() != "source:chatgpt" {
			t.Errorf("namespace %s", s.item.Meta.Namespace)
		}
	}
	if strings.Contains(all, "EDITED AWAY") {
		t.Errorf("an edited-away branch was imported:\n%s", all)
	}
	// One record per turn, the author as its observed actor.
	got := byLocation(c)
	for _, w := range []turnWant{
		{"conversations.json#conv-edit/u1", "user: Which indentation does Go use?", 0, "user", ""},
		{"conversations.json#conv-edit/a1", "assistant: gofmt uses tabs.", 1, "assistant", "ChatGPT"},
		{"conversations.json#conv-edit/u2", "user: And in YAML?", 2, "user", ""},
		{"conversations.json#conv-edit/t2", "tool: yaml.safe_load('a:\\n\\tb') -> ScannerError: found character '\\t'", 3, "tool", "python"},
		{"conversations.json#conv-edit/a2", "assistant: spaces only; tabs are refused", 4, "assistant", "ChatGPT"},
	} {
		w.check(t, got)
	}
	if got := *c.stored[2].item.Meta.Source.ID; got != "chatgpt:conversations.json#conv-edit/u2" {
		t.Errorf("source id %q", got)
	}
	if at := c.stored[0].item.Meta.ObservedAt; at == nil || contract.FormatTime(*at) != "2024-05-29T16:26:41.250Z" {
		t.Errorf("first turn time %v", at)
	}
	if len(c.skipped) != 2 || c.skipped[0].Location != "conversations.json#conv-broken" || c.skipped[1].Location != "conversations.json$[2]" {
		t.Errorf("skipped %+v", c.skipped)
	}
}

func TestChatGPTPlaceAndDetect(t *testing.T) {
	c := read(t, ChatGPT{}, "testdata/chatgpt/conversations.json", "team:acme")
	if got := c.stored[0].item.Meta.Namespace.String(); got != "team:acme/source:chatgpt" {
		t.Errorf("placed namespace %s", got)
	}
	src, err := Detect("testdata/chatgpt/conversations.json")
	if err != nil || src.Name() != "chatgpt" {
		t.Errorf("detect: %v %v", src, err)
	}
}
