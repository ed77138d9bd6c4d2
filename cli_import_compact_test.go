package main

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// An import that fills an empty store rewrites it with full pages once it
// has settled: the file shrinks, every record reads back, and mnemo check
// finds nothing wrong. An import into a store that held records leaves the
// file as written.
func TestImportIntoEmptyStoreCompacts(t *testing.T) {
	c := newTestCLI(t)
	file := importFile(t, 400)
	importWith := func(min int) string {
		t.Helper()
		var out, errOut bytes.Buffer
		a := newApp(strings.NewReader(""), &out, &errOut)
		a.compactMin = min
		if code := a.execute([]string{"--db", c.db, "import", file}); code != 0 {
			t.Fatalf("import: exit %d, stderr %q", code, errOut.String())
		}
		return errOut.String()
	}
	said := importWith(100)
	if !regexp.MustCompile(`^mnemo import: rewrote the new store with full pages \([\d.]+ [KMG]iB -> [\d.]+ [KMG]iB\) and merged its search index \([\d.]+ [KMG]iB -> [\d.]+ [KMG]iB\) in [\d.]+ s\n$`).MatchString(said) {
		t.Fatalf("stderr %q, want the compaction's sizes", said)
	}
	var check struct {
		OK bool `json:"consistent"`
	}
	if err := json.Unmarshal([]byte(c.ok("", "check", "--json")), &check); err != nil || !check.OK {
		t.Fatalf("check after the compacted import: %v %+v", err, check)
	}
	if n := strings.Count(c.ok("", "export"), "\n"); n != 400 {
		t.Fatalf("export after the compacted import: %d lines, want 400", n)
	}
	// The store now holds records: a second import replays, nothing is rewritten.
	if said := importWith(100); said != "" {
		t.Fatalf("an import into a store with records said %q", said)
	}
}

// A copy that fills a new local store rewrites it with full pages as an
// import does; a copy into a store that holds records leaves it as written.
func TestCopyIntoANewStoreCompacts(t *testing.T) {
	c := newTestCLI(t)
	c.ok("", "import", importFile(t, 400))
	dst := filepath.Join(t.TempDir(), "copy")
	copyTo := func(min int) string {
		t.Helper()
		var out, errOut bytes.Buffer
		a := newApp(strings.NewReader(""), &out, &errOut)
		a.compactMin = min
		if code := a.execute([]string{"copy", c.db, dst}); code != 0 {
			t.Fatalf("copy: exit %d, stderr %q", code, errOut.String())
		}
		return errOut.String()
	}
	said := copyTo(100)
	if !regexp.MustCompile(`^mnemo copy: rewrote the new store with full pages \([\d.]+ [KMG]iB -> [\d.]+ [KMG]iB\) and merged its search index`).MatchString(said) {
		t.Fatalf("stderr %q, want the compaction's sizes", said)
	}
	var check struct {
		OK bool `json:"consistent"`
	}
	if err := json.Unmarshal([]byte(c.ok("", "--db", dst, "check", "--json")), &check); err != nil || !check.OK {
		t.Fatalf("check after the compacted copy: %v %+v", err, check)
	}
	if a, b := c.ok("", "export"), c.ok("", "--db", dst, "export"); a != b || strings.Count(b, "\n") != 400 {
		t.Fatalf("the copy exports %d lines, the source %d; they differ: %v", strings.Count(b, "\n"), strings.Count(a, "\n"), a != b)
	}
	if said := copyTo(100); said != "" {
		t.Fatalf("a copy into a store with records said %q", said)
	}
}
