package mcp

import (
	"context"
	"slices"
	"testing"

	"mnemo/contract"
)

// TestSupersededRecordsLeaveRecallAndFetch: once a person resolves a
// repeat or conflict, memory_fetch and memory_recall stop answering the
// retired record (fetch and recall read active records only, the contract's
// default when a filter names no status), while memory_list still lists it.
func TestSupersededRecordsLeaveRecallAndFetch(t *testing.T) {
	for name, open := range engines(t) {
		t.Run(name, func(t *testing.T) {
			e := open(t)
			c := connect(t, placedTools(e))
			old := c.ok(ToolStore, `{"learning":{"text":"billing-api uses a PgBouncer pool of 39 connections"}}`)["id"].(string)
			kept := c.ok(ToolStore, `{"learning":{"text":"billing-api uses a PgBouncer pool of 20 connections"}}`)["id"].(string)
			before := ids(t, c.ok(ToolFetch, `{"query":"PgBouncer pool","mode":"keyword"}`), "hits")
			if !slices.Contains(before, old) || !slices.Contains(before, kept) {
				t.Fatalf("fetch before resolving = %v, want both", before)
			}
			if _, err := e.Supersede(context.Background(), contract.SupersedeRequest{ID: old, By: kept}); err != nil {
				t.Fatal(err)
			}
			if got := ids(t, c.ok(ToolFetch, `{"query":"PgBouncer pool","mode":"keyword"}`), "hits"); !slices.Equal(got, []string{kept}) {
				t.Errorf("fetch after resolving = %v, want only the kept record %s", got, kept)
			}
			for _, cit := range c.ok(ToolRecall, `{"question":"how big is the PgBouncer pool?"}`)["citations"].([]any) {
				if cit.(map[string]any)["id"] == old {
					t.Errorf("recall cites the superseded record %s", old)
				}
			}
			if got := ids(t, c.ok(ToolList, `{}`), "items"); !slices.Contains(got, old) {
				t.Errorf("list = %v, want the superseded record still listed", got)
			}
		})
	}
}
