package main

import (
	"flag"
	"os"
	"regexp"
	"strings"
	"testing"
)

// updateGoldens is the one switch that rewrites this package's goldens:
// the commands' JSON (TestJSONGoldens), the README's screens and the
// generated CLI reference (go test . -update).
var updateGoldens = flag.Bool("update", false, "rewrite the goldens, the README's screens and docs/cli from the current code")

// readmeScreen is a screen the README shows, copied from a TUI golden
// between its markers, so the README's screens are the tested ones.
var readmeScreen = regexp.MustCompile("(?s)<!-- screen: ([^ ]+) -->\n```text\n(.*?)```\n<!-- end screen -->")

// TestREADMEScreensAreTheGoldens: every screen in the README is the golden
// it names, byte for byte (go test . -update copies them in).
func TestREADMEScreensAreTheGoldens(t *testing.T) {
	data, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(data)
	matches := readmeScreen.FindAllStringSubmatch(readme, -1)
	if len(matches) == 0 {
		t.Fatal("the README shows no screen between <!-- screen: PATH --> markers")
	}
	updated := readme
	for _, m := range matches {
		golden, err := os.ReadFile(m[1])
		if err != nil {
			t.Fatalf("the README shows %s: %v", m[1], err)
		}
		want := strings.TrimRight(string(golden), "\n") + "\n"
		if m[2] == want {
			continue
		}
		if *updateGoldens {
			updated = strings.Replace(updated, m[0], "<!-- screen: "+m[1]+" -->\n```text\n"+want+"```\n<!-- end screen -->", 1)
			continue
		}
		t.Errorf("the README's copy of %s is stale: go test . -run TestREADMEScreens -update", m[1])
	}
	if updated != readme {
		if err := os.WriteFile("README.md", []byte(updated), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
