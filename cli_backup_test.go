package main

import (
	"path/filepath"
	"strings"
	"testing"

	"mnemo/contract"
)

// sandboxed is a record in a service sandbox, which reads never enter
// without a reach naming it.
const sandboxed = `{"type":"document","body":{"text":"nightly digest: 3 deploys, 1 rollback"},"meta":{"namespace":"team:acme/service:nightly-digest","source":{"kind":"agent"}}}`

func TestExportSaysWhatItLeavesOut(t *testing.T) {
	c := newTestCLI(t)
	c.ok(jsonl(styleLearning, runbookDoc, sandboxed), "import", "-")
	r := c.run("", "export")
	if r.code != 0 || strings.Count(r.stdout, "\n") != 2 {
		t.Fatalf("export: exit %d, %d lines, stderr %q", r.code, strings.Count(r.stdout, "\n"), r.stderr)
	}
	want := "left out 1 record in 1 service sandbox (team:acme/service:nightly-digest: 1)"
	if !strings.Contains(r.stderr, want) || !strings.Contains(r.stderr, "--sandboxes") {
		t.Fatalf("export's stderr %q; want it to say %q and name --sandboxes", r.stderr, want)
	}
	all := c.ok("", "export", "--sandboxes")
	if strings.Count(all, "\n") != 3 || !strings.Contains(all, "nightly-digest") {
		t.Fatalf("export --sandboxes:\n%s", all)
	}
	// The whole export imports into a new store with every record.
	other := newTestCLI(t)
	other.ok(all, "import", "-")
	var info struct{ Records int }
	other.okJSON(&info, "", "info")
	if info.Records != 3 {
		t.Fatalf("the import of export --sandboxes holds %d records; want 3", info.Records)
	}
	if r := c.run("", "export", "--sandboxes", "--filter", `{"reach":{"at":"team:acme"}}`); r.code != 2 || !strings.Contains(r.stderr, "already names what to walk") {
		t.Fatalf("--sandboxes with a reach: exit %d, %q", r.code, r.stderr)
	}
}

func TestBackupAndRestore(t *testing.T) {
	c := newTestCLI(t)
	c.ok(jsonl(styleLearning, runbookDoc, supportChat, sandboxed), "import", "-")
	c.ok("", "supersede", fingerprintOf(t, runbookDoc), "--by", fingerprintOf(t, supportChat))
	file := filepath.Join(c.home, "store.backup")
	var info struct {
		Format  string `json:"format"`
		Records int    `json:"records"`
	}
	c.okJSON(&info, "", "backup", file)
	if info.Format != "bolt" || info.Records != 4 {
		t.Fatalf("backup answered %+v; want bolt, 4 records", info)
	}
	restored := newTestCLI(t)
	var rep struct {
		Backup struct{ Records int } `json:"backup"`
		Check  struct{ Consistent bool }
	}
	restored.okJSON(&rep, "", "restore", file)
	if rep.Backup.Records != 4 || !rep.Check.Consistent {
		t.Fatalf("restore answered %+v", rep)
	}
	reach := `{"at":"team:acme/service:nightly-digest"}`
	for _, args := range [][]string{{"export", "--sandboxes"}, {"export", "--filter", `{"reach":` + reach + `}`}} {
		if a, b := c.ok("", args...), restored.ok("", args...); a != b {
			t.Fatalf("mnemo %v differs after restore:\n%s\n%s", args, a, b)
		}
	}
	// Browse shows every record with its times, status and successor.
	var got, want contract.BrowsePage
	c.okJSON(&want, "", "browse", "--query", `{"limit":10}`)
	restored.okJSON(&got, "", "browse", "--query", `{"limit":10}`)
	if len(want.Records) != 3 || !strings.Contains(c.ok("", "browse", "--query", `{"limit":10}`), `"superseded_by"`) {
		t.Fatalf("the source browses as %+v", want)
	}
	if a, b := c.ok("", "browse", "--query", `{"limit":10}`), restored.ok("", "browse", "--query", `{"limit":10}`); a != b {
		t.Fatalf("browse differs after restore:\n%s\n%s", a, b)
	}
	if r := restored.run("", "restore", file); r.code != 2 || !strings.Contains(r.stderr, "is not empty") || !strings.Contains(r.stderr, "restore into a new directory") {
		t.Fatalf("restore into a store that exists: exit %d, %q", r.code, r.stderr)
	}
	if r := restored.run("", "restore", filepath.Join(c.home, "missing.backup")); r.code != 2 || !strings.Contains(r.stderr, "does not exist") {
		t.Fatalf("restore of a missing file: exit %d, %q", r.code, r.stderr)
	}
}
