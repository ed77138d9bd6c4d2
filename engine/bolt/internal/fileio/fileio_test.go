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

// ReleaseReadPages gives back only the pages wholly inside its range: they
// read again as the file has them, and a write into the page the range's
// end shares with what follows (an append after a dictionary's values)
// stays.
func TestReleaseReadPagesKeepsWhatWasWritten(t *testing.T) {
	page := os.Getpagesize()
	want := make([]byte, 8*page)
	for i := range want {
		want[i] = byte(i*7 + i/page)
	}
	path := filepath.Join(t.TempDir(), "mapped")
	if err := os.WriteFile(path, want, 0o600); err != nil {
		t.Fatal(err)
	}
	data, err := MapPrivate(path)
	if err != nil {
		t.Fatal(err)
	}
	defer UnmapPrivate(data)
	// The values read: from inside the first page to inside the sixth.
	read := data[100 : 5*page+100]
	end := 5*page + 100
	data[end] = ^want[end] // an append right after them, in their last page
	ReleaseReadPages(read)
	for i := range data {
		w := want[i]
		if i == end {
			w = ^w
		}
		if data[i] != w {
			t.Fatalf("byte %d reads %d after the release, want %d", i, data[i], w)
		}
	}
}
