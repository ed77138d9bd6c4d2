package sections

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// write saves the sections put writes into a new file and returns its bytes.
func write(t *testing.T, put func(w *Writer)) []byte {
	t.Helper()
	path := filepath.Join(t.TempDir(), "snap")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := NewWriter(f)
	put(w)
	if err := w.Finish(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

type pair struct {
	A uint32
	B int64
}

// Arrays come back as they were written, in order, each at a page boundary
// with room to grow, and scalars as themselves.
func TestSectionsReadBackWhatWasWritten(t *testing.T) {
	rows := []pair{{1, -2}, {3, 1 << 40}, {5, 6}}
	words := []uint32{7, 8, 9, 10}
	data := write(t, func(w *Writer) {
		Put(w, rows)
		Put(w, []uint64{42})
		Put(w, []byte{})
		Put(w, words)
	})
	r := NewReader(data)
	gotRows := Next[pair](r)
	scalar := One[uint64](r)
	empty := Next[byte](r)
	gotWords := Next[uint32](r)
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	if err := r.Verify(); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(gotRows, rows) || scalar != 42 || len(empty) != 0 || !slices.Equal(gotWords, words) {
		t.Fatalf("read %v %d %v %v", gotRows, scalar, empty, gotWords)
	}
	if cap(gotWords) <= len(gotWords) || cap(gotRows) <= len(gotRows) {
		t.Errorf("no room to grow: cap %d for %d words, %d for %d rows", cap(gotWords), len(gotWords), cap(gotRows), len(gotRows))
	}
	if len(data)%Align != 0 {
		t.Errorf("the file is %d bytes, not whole pages", len(data))
	}
}

// A flipped byte in a section is found by Verify; a file cut short, or a
// section read as elements it does not divide into, fails the read, and
// every read after a failure is empty.
func TestSectionsRefuseDamage(t *testing.T) {
	data := write(t, func(w *Writer) {
		Put(w, []uint32{1, 2, 3})
		Put(w, []uint64{9})
	})
	flipped := slices.Clone(data)
	flipped[Align+head] ^= 0xff
	r := NewReader(flipped)
	Next[uint32](r)
	One[uint64](r)
	if r.Err() != nil {
		t.Fatalf("a flipped byte is not a read error: %v", r.Err())
	}
	if err := r.Verify(); err == nil || !strings.Contains(err.Error(), "checksum") {
		t.Errorf("Verify of a flipped byte: %v", err)
	}

	cut := NewReader(data[:Align+10])
	if v := Next[uint32](cut); v != nil || cut.Err() == nil {
		t.Errorf("a file cut inside a section's head: %v %v", v, cut.Err())
	}
	if v := One[uint64](cut); v != 0 {
		t.Errorf("a read after a failure gave %d", v)
	}

	odd := NewReader(data)
	if v := Next[pair](odd); v != nil || odd.Err() == nil {
		t.Errorf("12 bytes read as 16-byte elements: %v %v", v, odd.Err())
	}

	two := NewReader(data)
	if v := One[uint32](two); v != 0 || two.Err() == nil {
		t.Errorf("three values read as one: %d %v", v, two.Err())
	}

	failed := NewReader(data)
	failed.Fail(os.ErrInvalid)
	failed.Fail(os.ErrClosed)
	if failed.Err() != os.ErrInvalid || Next[uint32](failed) != nil {
		t.Errorf("Fail keeps the first error and stops reads: %v", failed.Err())
	}
}
