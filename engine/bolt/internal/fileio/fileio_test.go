package fileio

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// A write that fails leaves the old file as it was and no temporary file
// beside it; one that succeeds replaces it whole.
func TestWriteAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "table.snap")
	if err := os.WriteFile(path, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	if err := WriteAtomic(path, func(f *os.File) error {
		_, _ = f.WriteString("half")
		return boom
	}); !errors.Is(err, boom) {
		t.Fatalf("a failed write: %v", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "old" {
		t.Fatalf("after a failed write the file holds %q", b)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Fatalf("a failed write left %d files", len(entries))
	}
	if err := WriteAtomic(path, func(f *os.File) error { _, err := f.WriteString("new"); return err }); err != nil {
		t.Fatal(err)
	}
	data, unmap, err := MapFile(path)
	if err != nil || string(data) != "new" {
		t.Fatalf("mapped %q, %v", data, err)
	}
	ReleaseMapped(data)
	if err := unmap(); err != nil {
		t.Fatal(err)
	}
}
