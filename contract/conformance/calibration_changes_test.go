package conformance_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"mnemo/contract"
	"mnemo/contract/conformance"
	"mnemo/engine/memory"
)

// brokenFeed wraps the reference engine with one deliberate change-feed
// fault, so each test proves the named check notices it.
type brokenFeed struct {
	*memory.Engine
	fault string
}

func (b brokenFeed) Changes(ctx context.Context, req contract.ChangesRequest) (contract.ChangesPage, error) {
	switch b.fault {
	case "feed ignores reach":
		req.Reach = nil
	case "feed never waits":
		req.Wait = 0
	case "feed skips a seq":
		req.Since /= 2 // the seqs it hands out are doubled
	case "feed accepts a since past its head":
		if p, err := b.Engine.Changes(ctx, contract.ChangesRequest{FromNow: true, Limit: 1}); err == nil && req.Since > p.Head {
			return contract.ChangesPage{Changes: []contract.Change{}, Next: req.Since, Head: p.Head}, nil
		}
	}
	p, err := b.Engine.Changes(ctx, req)
	if err != nil {
		return p, err
	}
	switch b.fault {
	case "feed leaves out forgets":
		p.Changes = slices.DeleteFunc(p.Changes, func(c contract.Change) bool { return c.Op == contract.OpForget })
	case "feed repeats a change":
		if len(p.Changes) > 0 {
			p.Changes = append(p.Changes, p.Changes[len(p.Changes)-1])
		}
	case "forget carries content":
		for i := range p.Changes {
			if p.Changes[i].Op.Removes() {
				rec := contract.Record{ID: p.Changes[i].ID, Text: "the forgotten text", Status: p.Changes[i].Status,
					CreatedAt: time.Now(), UpdatedAt: time.Now()}
				p.Changes[i].Record = &rec
			}
		}
	case "feed skips a seq":
		for i := range p.Changes {
			p.Changes[i].Seq *= 2
		}
		p.Next *= 2
		p.Head *= 2
	}
	return p, nil
}

func TestEachFeedFaultIsCaughtByItsCheck(t *testing.T) {
	cases := []struct{ fault, check string }{
		{"feed leaves out forgets", "changes_order"},
		{"feed repeats a change", "changes_order"},
		{"forget carries content", "changes_order"},
		{"feed skips a seq", "changes_order"},
		{"feed ignores reach", "changes_reach"},
		{"feed never waits", "changes_wait"},
		{"feed accepts a since past its head", "changes_validation"},
	}
	for _, c := range cases {
		t.Run(c.fault, func(t *testing.T) {
			rep := conformance.Run(context.Background(), brokenFeed{Engine: memory.New(), fault: c.fault})
			if failed := rep.Failed(); !slices.Contains(failed, c.check) {
				logReport(t, rep)
				t.Fatalf("the fault %q was not caught by `%s` (failed: %v)", c.fault, c.check, failed)
			}
		})
	}
}

func TestMemoryFeedRetentionAndExpiry(t *testing.T) {
	e := memory.New(memory.WithChangeRetention(contract.ChangeRetention{MaxAge: time.Nanosecond, MaxChanges: 5}))
	if err := conformance.CheckChangesRetention(context.Background(), e, 5); err != nil {
		t.Fatal(err)
	}
	if e.Len() != 0 {
		t.Fatalf("the retention check left %d records", e.Len())
	}
}

func TestFeedGapIsCaughtAsAGap(t *testing.T) {
	rep := conformance.Run(context.Background(), brokenFeed{Engine: memory.New(), fault: "feed skips a seq"})
	for _, r := range rep.Results {
		if r.Name == "changes_order" && !strings.Contains(r.Detail, "no gap") {
			t.Fatalf("changes_order failed with %q; want the gap named", r.Detail)
		}
	}
}
