package ui

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"mnemo/contract"
	"mnemo/ui/common"
	"mnemo/ui/uitest"
	"mnemo/views/fetch"
)

func TestTooSmallTerminalSaysSo(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 60, 20)
	h.contains("mnemo needs 80x24; this terminal is 60x20")
	h.lacks("Facets")
	h.send(tea.WindowSizeMsg{Width: 80, Height: 24})
	h.contains("Facets")
}

func TestFirstFrameBeforeData(t *testing.T) {
	t.Parallel()
	e, err := uitest.Fixture()
	if err != nil {
		t.Fatal(err)
	}
	m := newModel(Options{Engine: e, StoreLabel: "store", Keys: DefaultKeyMap(), Now: uitest.Now, Timer: uitest.Timer})
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	screen := m.View().Content
	if !strings.Contains(screen, "Facets") || !strings.Contains(screen, "loading") {
		t.Fatalf("first frame should draw the layout and say it is loading:\n%s", screen)
	}
}

func TestDrillDownNarrowsAndWidens(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 80, 24)
	h.contains("36 of 36")
	h.keys("enter") // expand kind
	h.contains("learning        12")
	h.keys("j", "j", "enter") // narrow to kind=learning (second bucket)
	h.contains("kind=learning")
	h.contains("12 of 36")
	if got := h.m.exploreView().Total(); got != 12 {
		t.Fatalf("records in scope = %d, want 12", got)
	}
	// second level: status (the last facet), its largest bucket
	h.keys("G", "enter")
	h.contains("candidate")
	h.keys("j", "enter")
	h.contains("kind=learning › status=active")
	h.contains("8 of 36")
	if got := h.m.exploreView().Total(); got != 8 {
		t.Fatalf("after the second narrow the scope holds %d, want 8", got)
	}
	h.keys("backspace")
	h.contains("kind=learning")
	h.lacks("status=")
	h.contains("12 of 36")
	h.keys("esc")
	h.contains("all records")
	h.contains("36 of 36")
	h.keys("esc") // esc at the root does nothing harmful
	h.contains("36 of 36")
}

func TestFacetCountsChangeUnderScope(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 80, 24)
	h.contains("▸ thread                   3")
	h.m.c.Scope, _ = h.m.c.Scope.Narrow(common.Crumb{Facet: contract.FacetKind, Value: "document"})
	h.m.c.ScopeGen++
	h.pump(h.m.activate())
	h.contains("▸ thread                   —")
	h.contains("16 of 36")
}

func TestForgetDialogCancelsByDefault(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 80, 24)
	h.keys("tab", "d")
	h.contains("Forget \"prefers spaces over tabs\"")
	h.contains("Cancel")
	h.keys("enter") // Cancel is focused: enter cancels
	h.lacks("Forget \"")
	h.contains("36 records")
	h.keys("d", "n")
	h.lacks("Forget \"")
	h.contains("forget cancelled")
	h.contains("36 records")
}

func TestForgetAndUndo(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 80, 24)
	h.keys("tab", "j", "d", "y")
	h.contains("forgot 1 record")
	h.contains("35 records")
	h.lacks("note 8: remember")
	h.keys("u")
	h.contains("restored 1 record")
	h.contains("36 records")
	h.contains("note 8: remember")
}

func TestForgetScopeNamesFilterAndCount(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 80, 24)
	h.keys("D")
	h.contains("narrow the scope first")
	h.keys("enter", "j", "j", "enter") // kind=learning
	h.keys("D")
	h.contains("Forget 12 records matching kind=learning?")
	h.keys("1", "3") // a wrong count cancels
	h.lacks("Forget 12 records")
	h.contains("12 of 36")
	h.keys("D", "1", "2")
	h.contains("forgot 12 records")
	h.contains("24 records")
	h.keys("u")
	h.contains("36 records")
}

func TestReadOnlyHidesForget(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 80, 24, func(o *Options) { o.ReadOnly = true })
	h.keys("tab", "d")
	h.lacks("Forget \"")
	h.lacks("d forget")
	h.contains("read-only")
}

func TestKeysFromConfigTakeEffect(t *testing.T) {
	t.Parallel()
	b := DefaultBindings()
	b["forget"] = []string{"X"}
	b["down"] = []string{"down", "J"}
	km, err := NewKeyMap(b)
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, 80, 24, func(o *Options) { o.Keys = km })
	h.keys("tab", "d")
	h.lacks("Forget \"")
	h.keys("J", "X")
	h.contains("Forget \"note 8")
	h.keys("esc")
	h.keys("?", "f", "o", "r", "g", "e", "t")
	h.contains("X                     forget")
}

func TestConflictingBindingsRefused(t *testing.T) {
	t.Parallel()
	b := DefaultBindings()
	b["forget"] = []string{"s"}
	_, err := NewKeyMap(b)
	if err == nil || err.Error() != `key "s" is bound to both "forget" and "sort" in the browse view` {
		t.Fatalf("err = %v", err)
	}
	b = DefaultBindings()
	b["frobnicate"] = []string{"z"}
	if _, err := NewKeyMap(b); err == nil || !strings.Contains(err.Error(), `"frobnicate"`) {
		t.Fatalf("unknown action: err = %v", err)
	}
}

func TestStaleFetchRepliesDropped(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 80, 24)
	h.keys("3", "t", "a", "b", "s")
	f := h.m.fetchView()
	if len(f.Hits()) == 0 {
		t.Fatal("no hits for tabs")
	}
	stale := fetch.ResultMsg{Gen: f.Gen() - 1, Query: "stale", Page: contract.FetchPage{Hits: []contract.Hit{{ID: "zz", Text: "stale answer"}}}}
	h.send(stale)
	h.lacks("stale answer")
	if f.Hits()[0].ID == "zz" {
		t.Fatal("a stale reply replaced the results")
	}
}

func TestFetchOffersOnlyDeclaredModes(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 80, 24)
	h.keys("3")
	h.contains("[keyword]")
	f := h.m.fetchView()
	for _, md := range f.Modes() {
		if !h.m.c.Descriptor.Supports(md) {
			t.Fatalf("mode %s offered but not declared", md)
		}
	}
	h.keys("tab")
	h.contains("[vector]")
}

func TestBrowseSortKeysCapped(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 80, 24)
	h.keys("2")
	b := h.m.browseView()
	h.keys("S")           // status
	h.keys("l", "S")      // kind
	h.keys("l", "S")      // namespace
	h.keys("l", "l", "S") // confidence: the fourth key
	h.contains("at most 3 sort keys")
	if got := len(b.Order()); got != 3 {
		t.Fatalf("order has %d keys, want 3", got)
	}
	h.keys("s") // sort by confidence alone
	if o := b.Order(); len(o) != 1 || o[0].Field != "confidence" || o[0].Dir != "desc" {
		t.Fatalf("order = %+v", o)
	}
	if r := b.Records()[0]; r.Confidence == nil || float32(*r.Confidence) != 1.0 {
		t.Fatalf("first record under confidence desc = %+v", r)
	}
}

func TestBrowseApproveAndRejectCandidates(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 80, 24)
	h.keys("2")
	b := h.m.browseView()
	candidate := func() int {
		return slices.IndexFunc(b.Records(), func(r contract.Record) bool { return r.Status == contract.StatusCandidate })
	}
	idx := candidate()
	if idx < 0 {
		t.Fatal("browse shows no candidate; the fixture has candidates")
	}
	for i := 0; i < idx; i++ {
		h.keys("j")
	}
	h.keys("a")
	h.contains("approved 1 record")
	// approving the same (now active) record again reports the failure per row
	h.keys("g")
	for i := 0; i < idx; i++ {
		h.keys("j")
	}
	h.keys("space", "k", "space", "a")
	h.contains("1 failed")
	h.keys("!")
	// a conflict, said as one, with the record's reason
	h.contains("conflict: approved 0, 1 failed")
	h.contains("is 'active', not a")
	h.keys("esc")
	// reject with confirmation: x then n cancels, x then y rejects
	idx = candidate()
	if idx < 0 {
		t.Fatal("no candidate left to reject; the fixture has more than one")
	}
	before, id := len(b.Records()), b.Records()[idx].ID
	h.keys("g")
	for i := 0; i < idx; i++ {
		h.keys("j")
	}
	h.keys("x", "n")
	h.contains("reject cancelled")
	if len(b.Records()) != before {
		t.Fatalf("a cancelled reject left %d records, want %d", len(b.Records()), before)
	}
	h.keys("x", "y")
	if len(b.Records()) != before-1 {
		t.Fatalf("reject left %d records, want %d", len(b.Records()), before-1)
	}
	if slices.ContainsFunc(b.Records(), func(r contract.Record) bool { return r.ID == id }) {
		t.Fatalf("the rejected record %s is still listed", id)
	}
}

func TestWelcomeOnEmptyStore(t *testing.T) {
	t.Parallel()
	e := memoryEngine()
	loaded := false
	h := harnessOn(t, e, "empty", 80, 24, func(o *Options) {
		o.LoadDemo = func(ctx context.Context) error {
			loaded = true
			_, err := contract.Store(ctx, e, contract.Learning("demo learning", contract.LearningFact, 0.9, contract.MemoryMeta{}))
			return err
		}
	})
	h.contains("mnemo import FILE.jsonl")
	h.keys("L")
	if !loaded {
		t.Fatal("L did not load the demo")
	}
	h.contains("1 record")
	h.contains("demo learning")
}

func TestPaletteRunsActions(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 80, 24)
	h.keys(":", "b", "r", "o", "w", "s", "e", "enter")
	h.contains("[2 Browse]")
}

func TestHelpFilters(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 80, 24)
	h.keys("?", "a", "p", "p", "r")
	h.contains("approve")
	h.lacks("export")
	h.keys("esc")
	h.contains("Facets")
}

// An expired record still counts in explore (explore has no clock), so the
// scope line must count it too: narrowing by a bucket shows that bucket's count.
func TestScopeCountMatchesTheBucketWithExpiredRecords(t *testing.T) {
	t.Parallel()
	past := uitest.Now().Add(-time.Hour)
	h := newHarness(t, 80, 24, func(o *Options) {
		item := contract.Learning("an expired learning", contract.LearningFact, 0.5, contract.MemoryMeta{})
		if _, err := o.Engine.StoreWith(context.Background(), item, contract.WriteOptions{ExpiresAt: &past}); err != nil {
			t.Fatal(err)
		}
	})
	h.contains("37 of 37")
	h.keys("enter")
	h.contains("learning        13")
	h.keys("j", "j", "enter")
	h.contains("kind=learning")
	h.contains("13 of 37")
}

// esc leaves the query line; pressing it again must not trap the user back
// in the input, so a view key typed next switches the view.
func TestEscTwiceInFetchThenSwitchView(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 80, 24)
	h.keys("3", "t", "a", "b", "s", "esc", "esc", "4")
	h.contains("[4 Recall]")
	h.keys("esc", "esc", "3") // recall opens on its question line: the same rule
	h.contains("[3 Fetch]")
	h.contains("query: tabs")
}
