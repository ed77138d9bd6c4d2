package ui

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"mnemo/contract"
)

func TestDetailSearchAndExport(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	h := newHarness(t, 80, 24, func(o *Options) { o.ExportDir = dir })
	h.keys("tab", "j", "j", "j", "j", "j", "j", "j", "j", "j", "enter") // a conversation
	h.contains("Transcript")
	h.keys("/", "p", "l", "a", "n")
	h.contains("match 1 of 2 (n/N)")
	h.keys("enter", "n")
	h.contains("match 2 of 2")
	h.keys("N")
	h.contains("match 1 of 2")
	h.keys("e")
	h.contains("exported to /")
	files, _ := filepath.Glob(filepath.Join(dir, "mnemo-*.json"))
	if len(files) != 1 {
		t.Fatalf("export wrote %v", files)
	}
	data, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	var rec contract.Record
	if err := json.Unmarshal(data, &rec); err != nil {
		t.Fatal(err)
	}
	if rec.Item == nil || rec.Item.Type != contract.KindConversation {
		t.Fatalf("exported record lacks its conversation item: %s", data)
	}
	h.keys("esc")
	h.contains("Facets")
}

// TestRemoteUserExportCopiesInsteadOfWriting: with RemoteUser (SSH) the
// detail view's `e` copies the JSON over OSC52 and writes no file, even with
// an export directory set.
func TestRemoteUserExportCopiesInsteadOfWriting(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	h := newHarness(t, 80, 24, func(o *Options) { o.ExportDir, o.RemoteUser = dir, true })
	h.keys("tab", "enter")
	h.contains("copy JSON")
	h.keys("e")
	h.contains("as JSON")
	if files, _ := filepath.Glob(filepath.Join(dir, "*")); len(files) != 0 {
		t.Fatalf("export wrote %v", files)
	}
	copied := h.clipboard()
	var rec contract.Record
	if len(copied) != 1 || json.Unmarshal([]byte(copied[0]), &rec) != nil || rec.ID != h.m.detail.ID() {
		t.Fatalf("e copied %q, want the JSON of record %s", copied, h.m.detail.ID())
	}
}

// y and Y put the id and the text of the record under the cursor on the
// clipboard through OSC52 (tea.SetClipboard), which works over SSH too.
func TestCopyUsesTheClipboard(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 80, 24)
	h.keys("tab", "y")
	h.contains("copied id")
	rec := h.m.exploreView().Records()[0]
	if got := h.clipboard(); !slices.Equal(got, []string{rec.ID}) {
		t.Fatalf("y wrote %q to the clipboard, want the id %q", got, rec.ID)
	}
	h.keys("Y")
	h.contains("copied text")
	if got := h.clipboard(); len(got) != 2 || got[1] != rec.Text {
		t.Fatalf("Y wrote %q to the clipboard, want the text %q", got, rec.Text)
	}
}

func TestBrowseFilterEditor(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 80, 24)
	h.keys("2", "f")
	h.contains("Browse filters")
	h.keys("down", "down") // content
	h.keys("t", "a", "b", "s", "enter")
	b := h.m.browseView()
	if got := b.Total(); got != 2 {
		t.Fatalf("content contains tabs matches %d records, want 2", got)
	}
	h.contains("content contains tabs")
	// a bad operand is refused in the editor with a message, not a crash
	h.keys("f", "down", "down", "down", "down", "x", "enter")
	h.contains("confidence gt needs a number")
	h.keys("esc")
	if got := b.Total(); got != 2 {
		t.Fatalf("cancelled editor changed the query: %d", got)
	}
	// status set: candidates only (after clearing the content filter, with
	// which no candidate matches)
	h.keys("f", "down", "down", "backspace", "backspace", "backspace", "backspace", "up", "up", "space", "enter")
	h.contains("[status in candidate]")
	if len(b.Records()) == 0 {
		t.Fatal("the candidates filter found no records; the fixture has candidates")
	}
	for _, r := range b.Records() {
		if r.Status != contract.StatusCandidate {
			t.Fatalf("status filter let through %s", r.Status)
		}
	}
}

func TestErrorsShowInFooterAndPopup(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 80, 24)
	h.send(errorMsg("browse", contract.Unavailable("server at 127.0.0.1:7077 does not answer")))
	h.contains("connection lost")
	h.contains("(r retries)")
	h.keys("!")
	h.contains("does not answer")
	h.keys("x")
	h.lacks("any key closes")
	h.keys("r")
	h.lacks("connection lost")
}
