package main

import (
	"bytes"
	"encoding/json"
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
