package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"mnemo/contract"
	"mnemo/importer"
	"mnemo/ingest/ingesttest"
)

// importFromRun imports a source fixture and decodes the summary.
func importFromRun(t *testing.T, c *testCLI, wantCode int, args ...string) importer.Summary {
	t.Helper()
	r := c.run("", append([]string{"import"}, args...)...)
	if r.code != wantCode || r.stderr != "" {
		t.Fatalf("import %v: exit %d (want %d), stdout %s, stderr %q", args, r.code, wantCode, r.stdout, r.stderr)
	}
	var sum importer.Summary
	if err := json.Unmarshal([]byte(r.stdout), &sum); err != nil {
		t.Fatalf("summary %q: %v", r.stdout, err)
	}
	return sum
}

func TestImportFromIsAReplayAndReportsSkips(t *testing.T) {
	c := newTestCLI(t)
	path := "ingest/testdata/chatgpt/conversations.json"
	sum := importFromRun(t, c, 2, path, "--from", "chatgpt", "--place", "team:acme")
	if sum.Stored != 2 || sum.Failed != 0 || len(sum.Skipped) != 2 || sum.Skipped[0].Location != "conversations.json#conv-broken" {
		t.Fatalf("first import: %+v", sum)
	}
	// Detected without --from, the same records replay and nothing is new.
	sum = importFromRun(t, c, 2, path, "--place", "team:acme")
	if sum.Stored != 0 || sum.Replayed != 2 {
		t.Fatalf("second import stored something new: %+v", sum)
	}
	var page contract.BrowsePage
	c.okJSON(&page, "", "browse", "--query", `{}`)
	if page.Total != 2 {
		t.Fatalf("want 2 records, got %d", page.Total)
	}
	for _, r := range page.Records {
		if !strings.HasPrefix(contract.Deref(r.Meta.Source.ID), "chatgpt:conversations.json#conv-edit/") ||
			r.Meta.Namespace.String() != "team:acme/source:chatgpt" {
			t.Errorf("record %s: source %+v namespace %s", r.ID, r.Meta.Source, r.Meta.Namespace)
		}
	}
}

func TestImportFromDryRunStoresNothing(t *testing.T) {
	c := newTestCLI(t)
	r := c.run("", "import", "--from", "chatgpt", "--dry-run", "ingest/testdata/chatgpt")
	if r.code != 0 {
		t.Fatalf("exit %d: %s %s", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{`"records":2`, `"counts":[{"kind":"conversation","namespace":"source:chatgpt","count":2}]`, `"location":"conversations.json#conv-broken"`} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("dry run lacks %s:\n%s", want, r.stdout)
		}
	}
	// A dry run does not even create the store.
	if r := c.run("", "browse", "--query", `{}`); r.code != 4 || !strings.Contains(r.stderr, "no store") {
		t.Errorf("after a dry run: exit %d, %s", r.code, r.stderr)
	}
}

func TestImportHelpListsTheSources(t *testing.T) {
	c := newTestCLI(t)
	r := c.run("", "import", "--help")
	for _, name := range []string{"chatgpt"} {
		if !strings.Contains(r.stdout, "  "+name+" ") {
			t.Errorf("help lacks %s:\n%s", name, r.stdout)
		}
	}
}

func TestImportFromMem0HistorySupersedesEarlierVersions(t *testing.T) {
	c := newTestCLI(t)
	path := ingesttest.SQLite(t, "ingest/testdata/mem0/history.sql", "history.db")
	sum := importFromRun(t, c, 2, path) // detected; h7 has no text, so exit 2
	if sum.Stored != 4 || sum.Failed != 0 || len(sum.Skipped) != 1 || sum.Skipped[0].Location != "history.db#history/h7" {
		t.Fatalf("first import %+v", sum)
	}
	sum = importFromRun(t, c, 2, path, "--from", "mem0")
	if sum.Stored != 0 || sum.Replayed != 4 || sum.Failed != 0 {
		t.Fatalf("re-import %+v", sum)
	}
	var page contract.BrowsePage
	c.okJSON(&page, "", "browse", "--query", `{"status":"superseded"}`)
	if page.Total != 2 {
		t.Errorf("want the 2 earlier versions superseded, got %d", page.Total)
	}
	c.okJSON(&page, "", "browse", "--query", `{"status":"active"}`)
	if page.Total != 2 {
		t.Errorf("want 2 active memories, got %d", page.Total)
	}
}

// Every source replays: a second import of the same data stores nothing new,
// and every record names where it came from.
func TestImportFromEverySourceIsAReplay(t *testing.T) {
	cases := []struct{ from, path string }{
		{"chatgpt", "ingest/testdata/chatgpt"},
		{"claude-code", "ingest/testdata/claude-code"},
		{"basic-memory", "ingest/testdata/basic-memory/coffee"},
		{"letta", "ingest/testdata/letta/support.af"},
		{"letta", "ingest/testdata/letta/support-twice.json"},
		{"mem0", "ingest/testdata/mem0/pages"},
	}
	for _, tc := range cases {
		t.Run(tc.from+" "+filepath.Base(tc.path), func(t *testing.T) {
			c := newTestCLI(t)
			first := importFromRun(t, c, 2, "--from", tc.from, tc.path)
			if first.Stored == 0 || first.Failed != 0 || len(first.Skipped) == 0 {
				t.Fatalf("first import %+v (each fixture has a bad entry)", first)
			}
			again := importFromRun(t, c, 2, "--from", tc.from, tc.path)
			if again.Stored != 0 || again.Replayed != first.Stored || len(again.Skipped) != len(first.Skipped) {
				t.Fatalf("second import %+v after %+v", again, first)
			}
			var page contract.BrowsePage
			c.okJSON(&page, "", "browse", "--query", `{"limit":100}`)
			if page.Total != first.Stored {
				t.Errorf("store holds %d records, the import stored %d", page.Total, first.Stored)
			}
			for _, r := range page.Records {
				if r.Meta.Source.Kind != contract.SourceImport || !strings.HasPrefix(contract.Deref(r.Meta.Source.ID), tc.from+":") {
					t.Errorf("record %s does not trace back: %+v", r.ID, r.Meta.Source)
				}
			}
		})
	}
}

func TestImportFromLangGraphIsAReplay(t *testing.T) {
	url := ingesttest.Postgres(t, "ingest/testdata/langgraph/store.sql")
	c := newTestCLI(t)
	first := importFromRun(t, c, 2, url, "--place", "team:acme")
	if first.Stored != 3 || len(first.Skipped) != 1 {
		t.Fatalf("first import %+v", first)
	}
	again := importFromRun(t, c, 2, url, "--place", "team:acme")
	if again.Stored != 0 || again.Replayed != 3 {
		t.Fatalf("second import %+v", again)
	}
	var page contract.BrowsePage
	c.okJSON(&page, "", "browse", "--query", `{"limit":100}`)
	expiring := 0
	for _, r := range page.Records {
		if r.ExpiresAt != nil {
			expiring++
		}
	}
	if page.Total != 3 || expiring != 1 {
		t.Errorf("records %d, with expiry %d", page.Total, expiring)
	}
}

func TestImportFromTextNamesSkipsByLocation(t *testing.T) {
	c := newTestCLI(t)
	r := c.run("", "import", "-o", "text", "--from", "letta", "ingest/testdata/letta/support.af")
	if r.code != 2 {
		t.Fatalf("exit %d: %s %s", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{"stored 5", "skipped 1", "support.af#agents/agent-7f1e/block_ids/block-missing", "names a block"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("text summary lacks %q:\n%s", want, r.stdout)
		}
	}
}

func TestImportDetection(t *testing.T) {
	c := newTestCLI(t)
	dir := t.TempDir()
	// A folder holding a CLAUDE.md and basic-memory notes fits two sources.
	for name, text := range map[string]string{"CLAUDE.md": "# Rules\n\nBe brief.\n",
		"note.md": "---\ntitle: Note\npermalink: note\n---\n\n- [fact] water boils at 100C\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	r := c.run("", "import", dir)
	if r.code != 2 || !strings.Contains(r.stderr, "fits more than one source; name it with --from claude-code or --from basic-memory") {
		t.Errorf("ambiguous folder: exit %d, %s", r.code, r.stderr)
	}
	empty := t.TempDir()
	r = c.run("", "import", empty)
	if r.code != 2 || !strings.Contains(r.stderr, "cannot tell which system") {
		t.Errorf("folder of nothing: exit %d, %s", r.code, r.stderr)
	}
	r = c.run("", "import", "--dry-run", "some.jsonl")
	if r.code != 2 || !strings.Contains(r.stderr, "--place and --dry-run go with --from") {
		t.Errorf("dry run of JSONL: exit %d, %s", r.code, r.stderr)
	}
}
