package ui

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"mnemo/contract"
	"mnemo/ui/uitest"
)

func TestDetailSearch(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 80, 24)
	h.keys("tab", "j", "j", "j", "j", "j", "j", "j", "j", "j", "enter") // a conversation
	h.contains("Transcript")
	h.keys("/", "p", "l", "a", "n")
	h.contains("match 1 of 2 (n/N)")
	h.keys("enter", "n")
	h.contains("match 2 of 2")
	h.keys("N")
	h.contains("match 1 of 2")
	h.keys("esc")
	h.contains("Facets")
}

// TestEditSupersedes: `e` in the detail of a local TUI writes the record's
// item to a private temporary file for the editor; an edited item is stored
// and supersedes the record, an unchanged or broken one stores nothing.
func TestEditSupersedes(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	ctx := context.Background()
	for _, tc := range []struct {
		name   string
		edit   func(string) string
		says   string
		stored bool
	}{
		{"edited", func(s string) string { return strings.Replace(s, "prefers", "now prefers", 1) }, "which supersedes", true},
		{"unchanged", func(s string) string { return s }, "unchanged: nothing stored", false},
		{"emptied", func(string) string { return "" }, "unchanged: nothing stored", false},
		{"broken", func(s string) string { return s[:len(s)/2] }, "not a memory item", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, 80, 24)
			h.keys("tab", "enter")
			id := h.m.detail.ID()
			recs, err := h.m.c.Engine.GetRecords(ctx, contract.GetRequest{IDs: []string{id}})
			if err != nil || len(recs) != 1 {
				t.Fatalf("the record under the cursor: %v %v", recs, err)
			}
			h.keys("e")
			files, _ := filepath.Glob(filepath.Join(tmp, "mnemo-edit-*.json"))
			if len(files) != 1 {
				t.Fatalf("e wrote %v for the editor", files)
			}
			st, err := os.Stat(files[0])
			if err != nil || st.Mode().Perm() != 0o600 {
				t.Fatalf("the file for the editor: %v, mode %v", err, st.Mode())
			}
			data, _ := os.ReadFile(files[0])
			if err := os.WriteFile(files[0], []byte(tc.edit(string(data))), 0o600); err != nil {
				t.Fatal(err)
			}
			before, _ := h.m.c.Engine.List(ctx, contract.ListRequest{Limit: 1000})
			h.send(editDoneMsg{rec: recs[0], path: files[0]})
			h.contains(tc.says)
			if _, err := os.Stat(files[0]); !os.IsNotExist(err) {
				t.Errorf("the editor's file outlived the edit")
			}
			after, _ := h.m.c.Engine.List(ctx, contract.ListRequest{Limit: 1000})
			if grew := len(after.Items) - len(before.Items); grew != map[bool]int{true: 1, false: 0}[tc.stored] {
				t.Errorf("the store grew by %d records", grew)
			}
			old, _ := h.m.c.Engine.GetRecords(ctx, contract.GetRequest{IDs: []string{id}})
			if len(old) != 1 {
				t.Fatalf("the edited record is gone: %v", old)
			}
			if tc.stored && (old[0].Status != contract.StatusSuperseded || old[0].SupersededBy == recs[0].SupersededBy) {
				t.Errorf("after the edit the old record is %s, superseded by %v", old[0].Status, old[0].SupersededBy)
			}
			if !tc.stored && (old[0].Status != recs[0].Status || !reflect.DeepEqual(old[0].SupersededBy, recs[0].SupersededBy)) {
				t.Errorf("an edit that stored nothing changed the record to %s", old[0].Status)
			}
		})
	}
}

// A session that may not write offers no edit: `e` writes no file.
func TestReadOnlyHasNoEdit(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	h := newHarness(t, 80, 24, func(o *Options) { o.ReadOnly = true })
	h.keys("tab", "enter", "e")
	if files, _ := filepath.Glob(filepath.Join(tmp, "*")); len(files) != 0 {
		t.Fatalf("e wrote %v in a read-only session", files)
	}
	w := newHarness(t, 120, 40)
	// typed into help's filter, and the description it finds
	for typed, action := range map[string]string{"scope": "forget scope", "und": "undo", "appro": "approve", "rejec": "reject"} {
		for _, hs := range []*harness{h, w} {
			hs.keys("?")
			for _, r := range typed {
				hs.keys(string(r))
			}
		}
		h.lacks(action)
		w.contains(action) // the same help in a session that writes lists it
		h.keys("esc")
		w.keys("esc")
	}
}

// TestRemoteUserExportCopiesInsteadOfWriting: with RemoteUser (SSH) the
// detail view's `e` copies the JSON over OSC52 and writes no file, even with
// an export directory set.
func TestRemoteUserExportCopiesInsteadOfWriting(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("TMPDIR", dir)
	h := newHarness(t, 80, 24, func(o *Options) { o.RemoteUser = true })
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

// The explore list's filter says so in the footer and esc clears it (a
// second esc widens the scope as before).
func TestExploreFilterClearsWithEsc(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 80, 24)
	h.keys("tab", "/", "w", "a", "t", "e", "r", "enter")
	h.contains("remember to water")
	h.lacks("question 1 about")
	h.contains("esc clear filter")
	h.contains(`all records · contains "water"`)
	h.keys("esc")
	h.contains("question 1 about")
	h.lacks("clear filter")
	h.lacks("contains")
	h.contains("all records")
	// backspace back to an empty filter, then once more: the filter closes
	h.keys("/", "x", "backspace")
	h.contains("contains: ▌")
	h.keys("backspace")
	h.lacks("contains: ")
	h.contains("question 1 about")
}

// In the filter editor j and k move between the checkbox rows, and the
// footer lists the editor's keys.
func TestFilterEditorMovesWithJK(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 80, 24)
	h.keys("2", "f")
	h.contains("▌ status")
	h.contains("enter apply")
	h.keys("j")
	h.contains("▌ kind")
	h.keys("k")
	h.contains("▌ status")
}

// At 80 columns a store whose last path element is long (a temporary
// directory) is cut to the room left: the view names stay.
func TestHeaderKeepsViewNamesWithALongStoreName(t *testing.T) {
	t.Parallel()
	e, err := uitest.Fixture()
	if err != nil {
		t.Fatal(err)
	}
	h := harnessOn(t, e, "/tmp/tmp.Xq3ZkL0pVw-a-long-store-name", 80, 24)
	header := strings.SplitN(h.screen(), "\n", 2)[0]
	for _, want := range []string{"[1 Explore]", "2 Browse", "3 Fetch", "4 Recall", "5 Activity", "6 Curate", "?"} {
		if !strings.Contains(header, want) {
			t.Fatalf("header lacks %q:\n%s", want, header)
		}
	}
	if !strings.Contains(header, "…") {
		t.Fatalf("header does not show the label cut:\n%s", header)
	}
}
