package ingest

import (
	"strings"
	"testing"

	"mnemo/contract"
)

func TestChatGPTImportsOnlyTheCurrentBranch(t *testing.T) {
	c := read(t, ChatGPT{}, "testdata/chatgpt", "")
	if len(c.stored) != 2 {
		t.Fatalf("want 2 exchanges, got %d: %+v", len(c.stored), c.stored)
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
	want := "user: Which indentation does Go use?\nassistant: gofmt uses tabs.\nuser: And in YAML?\nassistant: spaces only; tabs are refused\n"
	if all != want {
		t.Errorf("got\n%s\nwant\n%s", all, want)
	}
	if got := c.stored[0].location; got != "conversations.json#conv-edit/u1" {
		t.Errorf("location %q", got)
	}
	if got := *c.stored[1].item.Meta.Source.ID; got != "chatgpt:conversations.json#conv-edit/u2" {
		t.Errorf("source id %q", got)
	}
	if at := c.stored[0].item.Turns[0].At; at == nil || contract.FormatTime(*at) != "2024-05-29T16:26:41.250Z" {
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
