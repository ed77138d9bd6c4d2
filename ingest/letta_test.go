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
	first, ok := got["support.af#agents/agent-7f1e/messages/message-2"]
	if !ok || first.item.RenderText() != "user: My order 1182 never arrived.\nassistant: Sorry! Let me look up order 1182." {
		t.Errorf("first exchange %q", first.item.RenderText())
	}
	second, ok := got["support.af#agents/agent-7f1e/messages/message-6"]
	want := "user: It was due on Monday.\nassistant: Checking the carrier. [tools: track_parcel (call-2)]\ntool: {\"status\": \"OK\", \"message\": \"held at depot\"}"
	if !ok || second.item.RenderText() != want {
		t.Errorf("second exchange %q", second.item.RenderText())
	}
	if contract.Deref(second.item.Meta.ThreadID) != "agent-7f1e" {
		t.Errorf("thread %v", second.item.Meta.ThreadID)
	}
	if len(once.stored) != 5 {
		t.Errorf("want 5 records, got %d", len(once.stored))
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
