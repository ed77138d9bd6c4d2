package ui

import (
	"context"
	"fmt"
	"testing"

	"mnemo/contract"
	"mnemo/engine/memory"
	"mnemo/ui/uitest"
)

func TestBrowsePagesThroughContinuations(t *testing.T) {
	t.Parallel()
	e := memory.New(memory.WithClock(uitest.Now))
	ctx := context.Background()
	var batch []contract.StoreItem
	for i := 0; i < 450; i++ {
		batch = append(batch, contract.Learning(fmt.Sprintf("learning number %03d", i), contract.LearningFact, 0.5, contract.MemoryMeta{}))
		if len(batch) == contract.MaxStoreMany {
			if _, err := contract.StoreMany(ctx, e, batch); err != nil {
				t.Fatal(err)
			}
			batch = nil
		}
	}
	if _, err := contract.StoreMany(ctx, e, batch); err != nil {
		t.Fatal(err)
	}
	h := harnessOn(t, e, "paging", 80, 24)
	m := h.m
	h.keys("2")
	b := m.browseView()
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
	t.Parallel()
	h := newHarness(t, 80, 24)
	h.keys("G", "k", "enter") // expand namespace
	h.contains("team:acme       25")
	h.keys("j", "enter", "enter") // the first enter unfolds team:acme, the second narrows to its subtree
	h.contains("namespace within team:acme")
	h.contains("25 of 36")
	h.keys("backspace")
	h.contains("36 of 36")
}

func TestExploreRecordsPageAsTheCursorMoves(t *testing.T) {
	t.Parallel()
	e := memory.New(memory.WithClock(uitest.Now))
	ctx := context.Background()
	for start := 0; start < 250; start += contract.MaxStoreMany {
		var batch []contract.StoreItem
		for i := start; i < min(250, start+contract.MaxStoreMany); i++ {
			batch = append(batch, contract.Document(fmt.Sprintf("document %03d", i), contract.MemoryMeta{Tags: []string{fmt.Sprintf("t%d", i%60)}}))
		}
		if _, err := contract.StoreMany(ctx, e, batch); err != nil {
			t.Fatal(err)
		}
	}
	h := harnessOn(t, e, "paging", 80, 24)
	m := h.m
	if n := len(m.exploreView().Records()); n != 100 {
		t.Fatalf("first page holds %d records, want 100", n)
	}
	h.contains("Records 100 of 250 loaded")
	h.keys("tab", "pgdown", "pgdown", "pgdown", "pgdown", "pgdown")
	if n := len(m.exploreView().Records()); n != 200 {
		t.Fatalf("after paging down %d records are loaded, want 200", n)
	}
	// the tag facet has 60 values: 50 buckets and a more row, which loads more
	h.keys("tab", "G", "k", "k", "enter", "G", "k", "k")
	h.contains("10 more")
	h.keys("enter", "G", "k", "k")
	h.lacks("10 more")
	h.contains("t59")
}

func TestFetchScopeChip(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 80, 24)
	h.keys("enter", "j", "j", "enter") // kind=learning
	h.keys("3")
	h.contains("in: kind=learning")
	h.keys("r", "e", "l", "e", "a", "s", "e")
	f := h.m.fetchView()
	if len(f.Hits()) == 0 {
		t.Fatal("the scoped search found nothing; the fixture has learnings about releases")
	}
	for _, hit := range f.Hits() {
		if hit.Kind != contract.KindLearning {
			t.Fatalf("a %s escaped the scope", hit.Kind)
		}
	}
	scoped := len(f.Hits())
	for range "release" {
		h.keys("backspace")
	}
	h.keys("backspace") // on the empty query: clears the chip
	h.lacks("in: kind=learning")
	h.keys("r", "e", "l", "e", "a", "s", "e")
	if len(f.Hits()) <= scoped {
		t.Fatalf("unscoped search found %d, scoped %d", len(f.Hits()), scoped)
	}
}
