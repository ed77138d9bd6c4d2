package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A copy from a mistyped source path is refused, and creates neither the
// source nor the destination.
func TestCopyFromAMissingSourceCreatesNothing(t *testing.T) {
	c := newTestCLI(t)
	root := t.TempDir()
	src, dst := filepath.Join(root, "typo"), filepath.Join(root, "dst")
	r := c.run("", "copy", src, dst)
	if r.code != exitNotFound || !strings.Contains(r.stderr, "the copy's source "+src+" holds no store") {
		t.Fatalf("copy from a missing source: exit %d, stderr %q", r.code, r.stderr)
	}
	for _, p := range []string{src, dst} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("%s was created: %v", p, err)
		}
	}
}
