package contentfile

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/RoaringBitmap/roaring/v2"
)

func snapshot(post map[uint32][]uint32, commons []uint32) Snapshot {
	var grams []uint32
	for g := range post {
		grams = append(grams, g)
	}
	slices.Sort(grams)
	return Snapshot{FeedSeq: 42, NextOrd: 100, MaxOrd: 99, Commons: commons, Grams: grams,
		Posting: func(g uint32) (*roaring.Bitmap, error) { return roaring.BitmapOf(post[g]...), nil }}
}

// A file written from a snapshot opens with its position, its commons and
// every posting as written; a trigram it lacks has none; an empty posting
// is left out.
func TestWriteThenOpen(t *testing.T) {
	path := Path(t.TempDir())
	post := map[uint32][]uint32{0x616263: {1, 5, 99}, 0x626364: {5}, 0x636465: {}}
	if err := Write(path, snapshot(post, []uint32{0x202020})); err != nil {
		t.Fatal(err)
	}
	f, err := Open(path)
	if err != nil || f == nil {
		t.Fatalf("open: %v %v", f, err)
	}
	defer f.Close()
	if f.FeedSeq() != 42 || f.NextOrd() != 100 || f.MaxOrd() != 99 || !slices.Equal(f.Commons(), []uint32{0x202020}) || f.Grams() != 2 {
		t.Fatalf("header: seq %d next %d max %d commons %v grams %d", f.FeedSeq(), f.NextOrd(), f.MaxOrd(), f.Commons(), f.Grams())
	}
	var grams []uint32
	f.EachGram(func(g uint32) bool { grams = append(grams, g); return true })
	if !slices.Equal(grams, []uint32{0x616263, 0x626364}) {
		t.Fatalf("grams %x", grams)
	}
	b, err := f.Posting(0x616263)
	if err != nil || !slices.Equal(b.ToArray(), []uint32{1, 5, 99}) || f.Card(0x616263) != 3 {
		t.Fatalf("posting abc: %v %v card %d", b, err, f.Card(0x616263))
	}
	if b, err := f.Posting(0x787878); b != nil || err != nil || f.Card(0x787878) != 0 {
		t.Fatalf("absent trigram: %v %v", b, err)
	}
	f.Release(0)
	if missing, err := Open(Path(t.TempDir())); missing != nil || err != nil {
		t.Fatalf("a missing file: %v %v, want nil, nil", missing, err)
	}
}

// A damaged file is refused at open (its directory or trailer) or at the
// posting read (its blob), never read; a write told to stop leaves no file.
func TestDamageIsRefused(t *testing.T) {
	dir := t.TempDir()
	path := Path(dir)
	if err := Write(path, snapshot(map[uint32][]uint32{0x616263: {1, 2, 3}, 0x626364: {7}}, nil)); err != nil {
		t.Fatal(err)
	}
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for name, at := range map[string]int{"trailer": len(good) - 10, "directory": len(good) - 64 - 3} {
		bad := slices.Clone(good)
		bad[at] ^= 0xff
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, bad, 0o600); err != nil {
			t.Fatal(err)
		}
		if f, err := Open(p); err == nil {
			f.Close()
			t.Errorf("%s damaged: opened", name)
		}
	}
	bad := slices.Clone(good)
	bad[0] ^= 0xff // the first posting's bytes
	p := filepath.Join(dir, "blob")
	if err := os.WriteFile(p, bad, 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Posting(0x616263); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("a damaged posting: %v, want ErrCorrupt", err)
	}
	s := snapshot(map[uint32][]uint32{0x616263: {1}}, nil)
	s.Stop = func() bool { return true }
	stopped := filepath.Join(dir, "stopped")
	if err := Write(stopped, s); !errors.Is(err, ErrStopped) {
		t.Fatalf("a stopped write: %v", err)
	}
	if _, err := os.Stat(stopped); !os.IsNotExist(err) {
		t.Fatalf("a stopped write left %s: %v", stopped, err)
	}
}
