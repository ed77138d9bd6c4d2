package ui

import (
	"context"
	"slices"
	"testing"

	"mnemo/contract"
	"mnemo/ui/common"
)

// shows tells which of the session's views still hold the record.
func shows(m *model, id string) []string {
	var out []string
	has := func(name string, ok bool) {
		if ok {
			out = append(out, name)
		}
	}
	has("explore", slices.ContainsFunc(m.exploreView().Records(), func(r contract.Record) bool { return r.ID == id }))
	has("browse", slices.ContainsFunc(m.browseView().Records(), func(r contract.Record) bool { return r.ID == id }))
	has("fetch", slices.ContainsFunc(m.fetchView().Hits(), func(h contract.Hit) bool { return h.ID == id }))
	if a := m.recallView().Answer(); a != nil {
		has("recall", slices.ContainsFunc(a.Citations, func(c contract.Citation) bool { return c.ID == id }) && !m.recallView().Gone(id))
	}
	return out
}

// A record forgotten from the Fetch view disappears from every view that
// showed it: fetch drops the hit where it stands, recall marks its citation,
// explore and browse reload when shown.
func TestForgottenRecordLeavesEveryView(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 80, 24)
	h.keys("2")                                            // browse loads its first page
	h.keys("4", "t", "a", "b", "s", "enter", "esc", "esc") // recall answers about tabs
	h.keys("3", "t", "a", "b", "s", "esc")                 // fetch finds tabs
	f := h.m.fetchView()
	if len(f.Hits()) == 0 {
		t.Fatalf("fetch found %d hits for tabs, want some", len(f.Hits()))
	}
	id, text, before := f.Hits()[0].ID, common.OneLine(f.Hits()[0].Text), len(f.Hits())
	if got := shows(h.m, id); !slices.Equal(got, []string{"explore", "browse", "fetch", "recall"}) {
		t.Fatalf("before the forget the record is in %v, want every view (pick another fixture record)", got)
	}
	h.keys("d", "y")
	h.contains("forgot 1 record")
	if got := len(f.Hits()); got != before-1 {
		t.Fatalf("fetch holds %d hits after the forget, want %d", got, before-1)
	}
	h.lacks(common.Cut(text, 30))
	for _, v := range []string{"1", "2", "4"} {
		h.keys(v)
	}
	if got := shows(h.m, id); len(got) != 0 {
		t.Fatalf("the forgotten record is still shown by %v", got)
	}
	h.contains("(forgotten)")
	// undo brings it back to the views that reload
	h.keys("1", "u")
	h.contains("restored 1 record")
	h.keys("2", "3", "4")
	if got := shows(h.m, id); !slices.Equal(got, []string{"explore", "browse", "fetch", "recall"}) {
		t.Fatalf("after undo the record is shown by %v, want every view again", got)
	}
	h.lacks("(forgotten)")
}

// A change pushed from outside the session (another writer; the live stream of
// a later issue) reaches every view through the same message: the view on
// screen reloads at once, the others when shown.
func TestDataChangedFromOutsideReloadsViews(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 80, 24)
	h.keys("4", "t", "a", "b", "s", "enter", "esc", "esc")
	h.keys("3", "t", "a", "b", "s", "esc")
	f := h.m.fetchView()
	if len(f.Hits()) == 0 {
		t.Fatal("fetch found nothing for tabs")
	}
	id := f.Hits()[0].ID
	if _, err := h.m.c.Engine.Forget(context.Background(), contract.ForgetIDs(id)); err != nil {
		t.Fatal(err)
	}
	h.send(common.DataChangedMsg{Cause: common.ChangeLive}) // not known record by record
	if slices.ContainsFunc(f.Hits(), func(h contract.Hit) bool { return h.ID == id }) {
		t.Fatal("the fetch view on screen kept a record forgotten by another writer")
	}
	h.contains("35 records")
	h.keys("4")
	if !h.m.recallView().Gone(id) {
		t.Fatal("recall still cites a record forgotten by another writer")
	}
	h.keys("1")
	if got := shows(h.m, id); len(got) != 0 {
		t.Fatalf("the forgotten record is still shown by %v", got)
	}
}
