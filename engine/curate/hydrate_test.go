package curate

import (
	"context"
	"testing"

	"mnemo/contract"
	"mnemo/engine/memory"
)

// Between the lean pass and the members' read, a member forgotten or
// superseded leaves its cluster, which is renamed by the members it keeps;
// a cluster left with one member goes.
func TestHydrateDropsMembersGoneSinceTheRead(t *testing.T) {
	ctx := context.Background()
	e := memory.New()
	meta := contract.MemoryMeta{Source: contract.SourceRef{Kind: contract.SourceAgent}}
	store := func(text string, agent string) string {
		m := meta
		m.AgentID = contract.Ptr(agent)
		r, err := contract.Store(ctx, e, contract.Learning(text, contract.LearningKinds()[0], 0.8, m))
		if err != nil {
			t.Fatal(err)
		}
		return r.ID
	}
	const three = "The worker runs as a systemd unit with Restart=on-failure and a RestartSec of five seconds."
	const two = "Billing exports run nightly at two in the morning from the reporting replica of the database."
	a1, a2, a3 := store(three, "a"), store(three, "b"), store(three, "c")
	b1, b2 := store(two, "a"), store(two, "b")

	ix := NewIndex(DefaultConfig())
	ix.lean = true
	records, err := Scope(ctx, e, contract.MetaFilter{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range records {
		ix.enter(r)
	}
	lean := ix.join()
	if len(lean) != 2 {
		t.Fatalf("%d clusters before, want 2", len(lean))
	}
	oldKey := ""
	for _, c := range lean {
		if len(c.Members) == 3 {
			oldKey = c.Key
		}
	}

	if _, err := e.Forget(ctx, contract.ForgetTarget{IDs: []string{a3}}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Supersede(ctx, contract.SupersedeRequest{ID: b2, By: b1}); err != nil {
		t.Fatal(err)
	}
	got, err := hydrate(ctx, e, nil, lean, DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 {
		t.Fatalf("%d clusters after, want the one of three left with two", len(got))
	}
	c := got[0]
	ids := c.IDs()
	if len(ids) != 2 || !(ids[0] == a1 || ids[1] == a1) || !(ids[0] == a2 || ids[1] == a2) {
		t.Fatalf("members %v, want %s and %s", ids, a1, a2)
	}
	if c.Key == oldKey || c.Key != KeyOf(ids) {
		t.Errorf("key %s, want the members' own (not %s)", c.Key, oldKey)
	}
	if c.Members[0].Text != three {
		t.Errorf("a member without its text: %q", c.Members[0].Text)
	}
}
