package ui

import (
	"context"
	"strings"
	"testing"

	"mnemo/contract"
	"mnemo/engine/memory"
	"mnemo/ui/common"
)

// A record's text is data: escape sequences stored in it (a title for the
// terminal's window, blinking text) are drawn as text in the detail view,
// markdown or not, and in the Explore preview, never sent to the terminal.
func TestStoredEscapeSequencesAreDrawnAsText(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := memory.New()
	const hostile = "before \x1b]0;pwned\x07 and \x1b[5mblinking\x1b[0m after"
	var ids []string
	doc := func(mime string) contract.StoreItem {
		it := contract.Document(hostile, contract.MemoryMeta{})
		it.Title, it.Mime = contract.Ptr("notes "+mime), contract.Ptr(mime)
		return it
	}
	for _, it := range []contract.StoreItem{
		doc("text/markdown"), doc("text/plain"),
		contract.Learning(hostile, contract.LearningKinds()[0], 0.5, contract.MemoryMeta{}),
	} {
		r, err := contract.Store(ctx, e, it)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, r.ID)
	}
	h := harnessOn(t, e, "mem", 100, 40)
	for _, id := range ids {
		h.send(common.OpenRecordMsg{ID: id})
		h.contains("blinking")
		h.contains("]0;pwned")
		raw := h.m.View().Content
		for _, seq := range []string{"\x1b]0;pwned", "\x1b[5m", "\x07"} {
			if strings.Contains(raw, seq) {
				t.Fatalf("record %s: the frame sends %q to the terminal", id, seq)
			}
		}
	}
}
