package ingest

import (
	"strings"
	"testing"

	"mnemo/contract"
)

func TestLettaBlocksAndMessages(t *testing.T) {
	once := read(t, Letta{}, "testdata/letta/support.af", "")
	twice := read(t, Letta{}, "testdata/letta/support-twice.json", "")
	if len(once.stored) != len(twice.stored) {
		t.Fatalf("encoded twice: %d records, once: %d", len(twice.stored), len(once.stored))
	}
	got := map[string]stored{}
	for i, s := range once.stored {
		got[s.location] = s
		// The same records, but their location names the other file.
		if twice.stored[i].item.RenderText() != s.item.RenderText() {
			t.Errorf("record %d differs when the file is encoded twice", i)
		}
	}
	human, ok := got["support.af#agents/agent-7f1e/blocks/human"]
	if !ok || human.item.Type != contract.KindDocument || human.item.RenderText() != "# human\n\nName: Ann. Prefers email over phone." ||
		!strings.HasPrefix(human.item.Meta.Namespace.String(), "agent:support-bot-") {
		t.Errorf("human block %+v", human)
	}
	if orphan, ok := got["support.af#blocks/block-orphan"]; !ok || orphan.item.Meta.Namespace.String() != "source:letta" {
		t.Errorf("unattached block %+v", orphan)
	}
	// One record per message, its speaker the observed actor: the agent by
	// its id and name, a tool by its name.
	for _, w := range []turnWant{
		{"support.af#agents/agent-7f1e/messages/message-2", "user: My order 1182 never arrived.", 0, "user", ""},
		{"support.af#agents/agent-7f1e/messages/message-3", "assistant: Sorry! Let me look up order 1182.", 1, "agent-7f1e", "support bot"},
		{"support.af#agents/agent-7f1e/messages/message-6", "user: It was due on Monday.", 2, "user", ""},
		{"support.af#agents/agent-7f1e/messages/message-7", "assistant: Checking the carrier. [tools: track_parcel (call-2)]", 3, "agent-7f1e", "support bot"},
		{"support.af#agents/agent-7f1e/messages/message-8", "tool: {\"status\": \"OK\", \"message\": \"held at depot\"}", 4, "tool", "track_parcel"},
	} {
		w.check(t, got)
	}
	if second := got["support.af#agents/agent-7f1e/messages/message-6"]; contract.Deref(second.item.Meta.ThreadID) != "agent-7f1e" {
		t.Errorf("thread %v", second.item.Meta.ThreadID)
	}
	if len(once.stored) != 8 {
		t.Errorf("want 8 records, got %d", len(once.stored))
	}
	if len(once.skipped) != 1 || once.skipped[0].Location != "support.af#agents/agent-7f1e/block_ids/block-missing" {
		t.Errorf("skipped %+v", once.skipped)
	}
	for _, why := range []string{"login event", "heartbeat event", "send_message tool return", "system message (the agent's prompt)", "empty memory block"} {
		if once.omitted[why] != 1 {
			t.Errorf("omitted %q: %v", why, once.omitted)
		}
	}
	for _, p := range []string{"testdata/letta/support.af", "testdata/letta/support-twice.json"} {
		if src, err := Detect(p); err != nil || src.Name() != "letta" {
			t.Errorf("detect %s: %v %v", p, src, err)
		}
	}
}
