package ui

import (
	"context"
	"fmt"
	"testing"

	tea "charm.land/bubbletea/v2"

	"mnemo/contract"
	"mnemo/engine/memory"
	"mnemo/ui/uitest"
	"mnemo/views/browse"
)

func TestBrowsePagesThroughContinuations(t *testing.T) {
	e := memory.New(memory.WithClock(uitest.Now))
	ctx := context.Background()
	var batch []contract.StoreItem
	for i := 0; i < 450; i++ {
		batch = append(batch, contract.Learning(fmt.Sprintf("learning number %03d", i), contract.LearningFact, 0.5, contract.MemoryMeta{}))
		if len(batch) == contract.MaxStoreMany {
			if _, err := e.StoreMany(ctx, batch); err != nil {
				t.Fatal(err)
			}
			batch = nil
		}
	}
	if _, err := e.StoreMany(ctx, batch); err != nil {
		t.Fatal(err)
	}
	m := newModel(Options{Engine: e, StoreLabel: "paging", Keys: uitest.Keys(), Now: uitest.Now, Timer: uitest.Timer})
	h := &harness{t: t, m: m}
	h.send(tea.WindowSizeMsg{Width: 80, Height: 24})
	h.pump(m.Init())
	h.keys("2")
	b := m.views[1].pane.(*browse.Model)
	if len(b.Records()) != 200 || b.Total() != 450 {
		t.Fatalf("first page: %d loaded of %d", len(b.Records()), b.Total())
	}
	h.contains("200 loaded of 450 matching")
	h.keys("G") // the end of the loaded rows asks for the next page
	if len(b.Records()) != 400 {
		t.Fatalf("after G: %d loaded", len(b.Records()))
	}
	h.keys("G")
	if len(b.Records()) != 450 || b.Total() != 450 {
		t.Fatalf("after the last page: %d loaded of %d", len(b.Records()), b.Total())
	}
	seen := map[string]bool{}
	for _, r := range b.Records() {
		if seen[r.ID] {
			t.Fatalf("record %s loaded twice", r.ID)
		}
		seen[r.ID] = true
	}
	h.keys("r") // head refresh
	if len(b.Records()) != 200 {
		t.Fatalf("refresh reloads from the head: %d loaded", len(b.Records()))
	}
}

func TestNamespaceTreeNarrowsToSubtree(t *testing.T) {
	h := newHarness(t, 80, 24)
	h.keys("G", "k", "enter") // expand namespace
	h.contains("team:acme       25")
	h.keys("j", "enter", "enter") // the first enter unfolds team:acme, the second narrows to its subtree
	h.contains("namespace within team:acme")
	h.contains("25 of 36")
	h.keys("backspace")
	h.contains("36 of 36")
}
