package contract_test

import (
	"context"
	"slices"
	"strconv"
	"testing"
	"time"

	"mnemo/contract"
	"mnemo/engine/memory"
)

func TestCountRecordsSaysWhatAScopeHolds(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	e := memory.New(memory.WithClock(func() time.Time { return now.Add(-time.Hour) }))
	doc := func(i int, ns string) contract.StoreItem {
		return contract.Document("note "+strconv.Itoa(i), contract.MemoryMeta{Namespace: contract.MustNamespace(ns)})
	}
	past := now.Add(-time.Minute)
	var active []contract.StoreItem
	for i := range 5 {
		active = append(active, doc(i, "team:acme"))
	}
	must := func(_ any, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(contract.StoreMany(ctx, e, active))
	must(e.StoreManyWith(ctx, []contract.StoreItem{doc(10, "team:acme"), doc(11, "team:acme")}, contract.WriteOptions{Status: contract.StatusCandidate}))
	must(e.StoreManyWith(ctx, []contract.StoreItem{doc(20, "team:acme"), doc(21, "team:acme")}, contract.WriteOptions{ExpiresAt: &past}))
	must(e.StoreManyWith(ctx, []contract.StoreItem{doc(22, "team:acme")}, contract.WriteOptions{Status: contract.StatusCandidate, ExpiresAt: &past}))
	must(e.Supersede(ctx, contract.SupersedeRequest{ID: active[0].Fingerprint(), By: active[1].Fingerprint()}))
	must(contract.StoreMany(ctx, e, []contract.StoreItem{doc(30, "team:acme/service:digest"), doc(31, "team:acme/service:digest/agent:x"), doc(32, "team:acme/service:digest/service:inner")}))

	c, err := contract.CountRecords(ctx, e, contract.MetaFilter{}, now)
	if err != nil {
		t.Fatal(err)
	}
	want := contract.RecordCounts{Active: 4, ToReview: 2, Superseded: 1, Expired: 3, InSandboxes: 3}
	if c != want {
		t.Fatalf("counts %+v; want %+v", c, want)
	}
	if got := c.Words(strconv.Itoa); got != "4 active · 2 to review · 1 superseded · 3 expired · 3 in service sandboxes" {
		t.Fatalf("words %q", got)
	}
	if c.Total() != 10 {
		t.Fatalf("total %d; want 10 (sandboxes apart)", c.Total())
	}
	// The same scope, browsed with every status and no now, lists Total.
	p, err := e.Browse(ctx, contract.BrowseQuery{Limit: 1})
	if err != nil || p.Total != c.Total() {
		t.Fatalf("browse total %d (%v); counts total %d", p.Total, err, c.Total())
	}
	// A reach naming the sandbox counts what it sees, and no sandboxes apart.
	r := contract.ReachSubtree(contract.MustNamespace("team:acme/service:digest"))
	c, err = contract.CountRecords(ctx, e, contract.MetaFilter{Reach: &r}, now)
	if err != nil || c != (contract.RecordCounts{Active: 2}) {
		t.Fatalf("sandbox counts %+v %v", c, err)
	}
	if got := (contract.RecordCounts{}).Words(strconv.Itoa); got != "0 active" {
		t.Fatalf("empty words %q", got)
	}
}

func TestSandboxesGroupByTheLastServiceSegment(t *testing.T) {
	got := contract.Sandboxes(map[string]int{
		"root": 4, "team:acme": 3, "team:acme/service:digest": 2, "team:acme/service:digest/agent:x": 1,
		"team:acme/service:digest/service:inner": 5, "service:top": 0,
	})
	var names []string
	var counts []int
	for _, s := range got {
		names = append(names, s.At.String())
		counts = append(counts, s.Records)
	}
	if !slices.Equal(names, []string{"team:acme/service:digest", "team:acme/service:digest/service:inner"}) || !slices.Equal(counts, []int{3, 5}) {
		t.Fatalf("sandboxes %v %v", names, counts)
	}
	if note := contract.SandboxNote(got); note != "8 records in 2 service sandboxes (team:acme/service:digest: 3, team:acme/service:digest/service:inner: 5)" {
		t.Fatalf("note %q", note)
	}
}
