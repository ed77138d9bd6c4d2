package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"mnemo/cliout"
	"mnemo/contract"
	"mnemo/engine/bolt"
	"mnemo/importer"
)

func TestImportReportsMalformedLinesAndStoresTheRest(t *testing.T) {
	c := newTestCLI(t)
	file := c.writeFile("mixed.jsonl", jsonl(
		styleLearning,
		``,
		`{"type":"learning","text":"prefers tabs"`,
		runbookDoc,
		`{"type":"document","body":{"text":"   "}}`,
		`{"id":"`+tabsLearningID+`","item":`+xDocument+`}`,
		`{"id":"`+xDocumentID+`","item":`+xDocument+`,"status":"candidate"}`,
		styleLearning,
		`[1]`,
	))
	r := c.run("", "import", file)
	if r.code != 2 || r.stderr != "" {
		t.Fatalf("exit %d (want 2), stderr %q", r.code, r.stderr)
	}
	want := `{"stored":3,"replayed":1,"failed":4,"errors":[` +
		`{"line":3,"error":"invalid request: invalid JSON: unexpected end of JSON input (at byte 40)"},` +
		`{"line":5,"error":"invalid request: document body must not be empty"},` +
		`{"line":6,"error":"invalid request: id ` + tabsLearningID + ` does not match the item's fingerprint ` + xDocumentID + `"},` +
		`{"line":9,"error":"invalid request: a line must be a JSON object, not array"}]}` + "\n"
	if r.stdout != want {
		t.Errorf("summary\n got %s\nwant %s", r.stdout, want)
	}

	var page contract.BrowsePage
	c.okJSON(&page, "", "browse", "--query", `{"status":"candidate"}`)
	if page.Total != 1 || page.Records[0].ID != xDocumentID {
		t.Errorf("the line's status made a candidate: %+v", page)
	}

	// Running the same file again replays every stored line.
	r = c.run("", "import", file, "--batch", "2")
	if r.code != 2 || !strings.HasPrefix(r.stdout, `{"stored":0,"replayed":4,"failed":4,`) {
		t.Errorf("re-run: exit %d, %s", r.code, r.stdout)
	}
}

func TestImportFromStdinWithDefaultStatus(t *testing.T) {
	c := newTestCLI(t)
	r := c.run(jsonl(styleLearning, runbookDoc, `{"item":`+supportChat+`,"status":"active"}`), "import", "-", "--status", "candidate")
	if r.code != 0 || r.stdout != `{"stored":3,"replayed":0,"failed":0,"errors":[]}`+"\n" {
		t.Fatalf("exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	var page contract.BrowsePage
	c.okJSON(&page, "", "browse", "--query", `{"status":"candidate"}`)
	if page.Total != 2 {
		t.Errorf("--status candidate applies to lines without their own status: %d candidates", page.Total)
	}
	r = c.run("", "import", "-", "--status", "superseded")
	if r.code != 2 || r.stderr != "mnemo: invalid request: --status must be `active` or `candidate`, not `superseded`\n" {
		t.Errorf("bad --status: exit %d, %q", r.code, r.stderr)
	}
}

// TestExportImportRoundTrip exports a store holding every status, an expiry and a
// service sandbox, imports the export into an empty store and exports again: the
// two exports are identical.
func TestExportImportRoundTrip(t *testing.T) {
	c := newTestCLI(t)
	styleID, docID := fingerprintOf(t, styleLearning), fingerprintOf(t, runbookDoc)
	var lines []string
	for i := range 250 {
		lines = append(lines, fmt.Sprintf(`{"type":"learning","text":"fact number %d about the build","kind":"fact","confidence":0.5,"meta":{"namespace":"team:acme","source":{"kind":"agent"}}}`, i))
	}
	lines = append(lines,
		`{"item":`+styleLearning+`,"status":"superseded","superseded_by":"`+docID+`"}`,
		`{"item":`+runbookDoc+`,"expires_at":"2099-12-31T00:00:00Z"}`,
		`{"item":`+supportChat+`,"status":"candidate"}`,
		`{"type":"document","body":{"text":"nightly digest scratch"},"meta":{"namespace":"team:acme/service:nightly","source":{"kind":"agent"}}}`,
	)
	src := c.writeFile("src.jsonl", jsonl(lines...))
	if out := c.ok("", "import", src); out != `{"stored":254,"replayed":0,"failed":0,"errors":[]}`+"\n" {
		t.Fatalf("import: %s", out)
	}

	first := filepath.Join(c.home, "first.jsonl")
	if r := c.run("", "export", "--out", first); r.code != 0 || r.stderr != "mnemo export: left out 1 record in 1 service sandbox (team:acme/service:nightly: 1): the export does not enter service sandboxes; --sandboxes exports them too, mnemo backup keeps the whole store\n" {
		t.Fatalf("export: exit %d, stderr %q", r.code, r.stderr)
	}
	exported := readLines(t, first)
	if len(exported) != 253 {
		t.Fatalf("export without a reach holds %d lines, want 253 (the sandbox is left out)", len(exported))
	}
	byID := map[string]map[string]any{}
	for _, l := range exported {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatal(err)
		}
		byID[m["id"].(string)] = m
	}
	if m := byID[styleID]; m["status"] != "superseded" || m["superseded_by"] != docID {
		t.Errorf("superseded line: %v", m)
	}
	if m := byID[docID]; m["expires_at"] != "2099-12-31T00:00:00.000Z" || m["status"] != nil {
		t.Errorf("expiring active line: %v", m)
	}
	if m := byID[fingerprintOf(t, supportChat)]; m["status"] != "candidate" {
		t.Errorf("candidate line: %v", m)
	}
	sandbox := c.ok("", "export", "--filter", `{"reach":{"at":"team:acme/service:nightly","inherit":false}}`)
	if strings.Count(sandbox, "\n") != 1 || !strings.Contains(sandbox, "nightly digest scratch") {
		t.Errorf("export with the sandbox's reach: %q", sandbox)
	}

	var info cliout.Info
	c.okJSON(&info, "", "info")
	// info counts every record, the service sandbox's included.
	wantRecords := 254
	if info.Records != wantRecords {
		t.Errorf("info counts %d records, want %d", info.Records, wantRecords)
	}

	// Into an empty store and back out.
	c2 := *c
	c2.db = filepath.Join(c.home, "store2")
	if out := c2.ok("", "import", first); out != `{"stored":253,"replayed":0,"failed":0,"errors":[]}`+"\n" {
		t.Fatalf("import of the export: %s", out)
	}
	second := filepath.Join(c.home, "second.jsonl")
	c2.ok("", "export", "--out", second)
	a, b := readLines(t, first), readLines(t, second)
	slices.Sort(a)
	slices.Sort(b)
	if !slices.Equal(a, b) {
		t.Errorf("the round trip changed the export: %d lines vs %d", len(a), len(b))
	}
	// Importing the export again is a pure replay, supersede included.
	if out := c2.ok("", "import", first); out != `{"stored":0,"replayed":253,"failed":0,"errors":[]}`+"\n" {
		t.Errorf("re-import: %s", out)
	}
}

func TestImportOfASupersededLineWhoseSuccessorIsMissing(t *testing.T) {
	c := newTestCLI(t)
	r := c.run(jsonl(`{"item":`+styleLearning+`,"superseded_by":"`+tabsLearningID+`"}`, runbookDoc), "import", "-")
	if r.code != 2 {
		t.Fatalf("exit %d, want 2: %s %s", r.code, r.stdout, r.stderr)
	}
	var summary importer.Summary
	if err := json.Unmarshal([]byte(r.stdout), &summary); err != nil {
		t.Fatal(err)
	}
	if summary.Stored != 1 || summary.Failed != 1 || len(summary.Errors) != 1 || summary.Errors[0].Line != 1 ||
		!strings.HasPrefix(summary.Errors[0].Error, "stored as active, but not superseded: not found: ") {
		t.Errorf("summary: %+v", summary)
	}
}

// TestLockedStore: a process that holds mnemo.db's lock without sharing the
// store (an earlier mnemo, a program of its own) is named, and the command
// exits locked (3) after waiting for it to let go.
func TestLockedStore(t *testing.T) {
	c := newTestCLI(t)
	e, err := bolt.Open(c.db, bolt.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	r := c.run("", "list")
	if r.code != 3 || r.stdout != "" {
		t.Fatalf("exit %d (want 3), stdout %q", r.code, r.stdout)
	}
	want := fmt.Sprintf("mnemo: locked: store %s is locked by process %d, which does not share it (an earlier mnemo, or another program that opened mnemo.db); stop it and try again\n", c.db, os.Getpid())
	if r.stderr != want {
		t.Errorf("stderr %q\nwant   %q", r.stderr, want)
	}
}

func TestForgetDryRunAndConfirmation(t *testing.T) {
	c := newTestCLI(t)
	c.ok(jsonl(styleLearning, runbookDoc, supportChat), "import", "-")
	styleID := fingerprintOf(t, styleLearning)

	var dry cliout.DryRun
	c.okJSON(&dry, "", "forget", "--filter", `{"tags_any":["style","ops"]}`, "--dry-run")
	if !dry.DryRun || dry.WouldForget != 2 {
		t.Errorf("dry run by filter: %+v", dry)
	}
	c.okJSON(&dry, "", "forget", "--ids", styleID, "--ids", "ffffffffffffffffffffffffffffffffffffffff", "--dry-run")
	if dry.WouldForget != 1 || len(dry.IDs) != 1 || dry.IDs[0] != styleID {
		t.Errorf("dry run by ids: %+v", dry)
	}
	c.okJSON(&dry, "", "forget", "--ids", styleID, "--reach", `{"at":"team:acme","inherit":false}`, "--dry-run")
	if dry.WouldForget != 0 {
		t.Errorf("dry run by ids outside the reach: %+v", dry)
	}

	// On a terminal mnemo asks first; declining forgets nothing.
	c.terminal = true
	r := c.run("n\n", "forget", "--filter", `{"tags_any":["style","ops"]}`)
	if r.code != 1 || r.stdout != "" || !strings.HasSuffix(r.stderr, "\nforget 2 records? [y/N] mnemo: aborted: nothing was changed\n") ||
		!strings.Contains(r.stderr, "# Deploy runbook") || !strings.Contains(r.stderr, "prefers tabs over spaces in Go code  team:acme/agent:writer") {
		t.Errorf("declined: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	r = c.run("y\n", "forget", "--filter", `{"tags_any":["style","ops"]}`)
	if r.code != 0 || !strings.HasSuffix(r.stderr, "\nforget 2 records? [y/N] ") || r.stdout != "forgot 2 records\n" {
		t.Errorf("accepted: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	c.terminal = false

	var explored contract.ExplorePage
	c.okJSON(&explored, "", "explore", "kind")
	if explored.Total != 1 || explored.Buckets[0].Value != "conversation" {
		t.Errorf("after forget: %+v", explored)
	}
}

func readLines(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
}

func TestImportDrawsProgressOnATerminal(t *testing.T) {
	c := newTestCLI(t)
	file := c.writeFile("two.jsonl", jsonl(styleLearning, runbookDoc))
	c.terminal = true
	r := c.run("", "import", file)
	if r.code != 0 {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	if !strings.HasPrefix(r.stderr, "\rimporting [") || !strings.HasSuffix(r.stderr, "\r\x1b[K") {
		t.Errorf("progress on stderr: %q", r.stderr)
	}
	if r.stdout != "stored 2 new records, replayed 0 already held, failed 0\nthe store now holds 2 active\n" {
		t.Errorf("summary for a person: %q", r.stdout)
	}
}
