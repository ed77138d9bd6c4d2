package trigram

import (
	"testing"

	"github.com/RoaringBitmap/roaring/v2"

	"mnemo/contract"
)

// Postings built chunk by chunk from records met in any ordinal order
// (addChunk, as a build reads records by id) hold exactly each record's
// trigrams, repeats within a record and across chunks included.
func TestAddChunkHoldsEveryTrigramOfEveryRecord(t *testing.T) {
	texts := []string{"Kim prefers tabs", "tabs tabs tabs", "PgBouncer pool of 39", "ünïcode ÄÖÜ", "ab", "", "pool of 39 at billing-db"}
	var recs []Text
	for i := 0; i < 300; i++ {
		recs = append(recs, Text{uint32((i * 7919) % 300), texts[i%len(texts)] + " " + string(rune('a'+i%26))})
	}
	want := map[uint32]*roaring.Bitmap{}
	for _, r := range recs {
		for _, g := range Grams(contract.FoldCase(r.Text)) {
			if want[g] == nil {
				want[g] = roaring.New()
			}
			want[g].Add(r.Ord)
		}
	}
	got := map[uint32]*roaring.Bitmap{}
	for lo := 0; lo < len(recs); lo += 70 {
		addChunk(got, append([]Text(nil), recs[lo:min(lo+70, len(recs))]...))
	}
	if len(got) != len(want) {
		t.Fatalf("%d trigrams, want %d", len(got), len(want))
	}
	for g, b := range want {
		if !b.Equals(got[g]) {
			t.Fatalf("trigram %06x: %v, want %v", g, got[g].ToArray(), b.ToArray())
		}
	}
}

func build(t *testing.T, x *Index, save bool, pos Position, texts ...string) {
	t.Helper()
	b := x.BeginBuild()
	for i, s := range texts {
		b.Add(uint32(i), s)
	}
	installed, err := b.Finish(save, pos, func() bool { return false })
	if err != nil || !installed {
		t.Fatalf("finish: installed %v, %v", installed, err)
	}
}

func ords(t *testing.T, x *Index, needle string) []uint32 {
	t.Helper()
	c, ok := x.Candidates(contract.FoldCase(needle))
	if !ok {
		t.Fatalf("%q: the index did not narrow", needle)
	}
	return c.ToArray()
}

func equal(a, b []uint32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// A needle's candidates are the records holding all its trigrams; a text
// queued by a writer and not yet drained is a candidate of every needle,
// and after the drain only of its own.
func TestCandidatesNarrowAndQueuedTextsAreCandidates(t *testing.T) {
	x := New(t.TempDir()+"/content", nil)
	if _, ok := x.Candidates("pelican"); ok {
		t.Fatal("an index not built narrowed a needle")
	}
	build(t, x, false, Position{}, "The Pelican migrates", "a heron waits", "pelicans and herons")
	if got := ords(t, x, "pelican"); !equal(got, []uint32{0, 2}) {
		t.Fatalf("pelican: %v", got)
	}
	if _, ok := x.Candidates("pe"); ok {
		t.Fatal("a needle shorter than a trigram was narrowed")
	}
	x.Add([]Text{{Ord: 3, Text: "nothing alike"}})
	if got := ords(t, x, "heron"); !equal(got, []uint32{1, 2, 3}) {
		t.Fatalf("heron with a queued text: %v", got)
	}
	x.Drain()
	if got := ords(t, x, "heron"); !equal(got, []uint32{1, 2}) {
		t.Fatalf("heron after the drain: %v", got)
	}
	if got := ords(t, x, "alike"); !equal(got, []uint32{3}) {
		t.Fatalf("alike after the drain: %v", got)
	}
	x.Suspend()
	if x.Ready() {
		t.Fatal("ready after a suspension")
	}
}

// A build saved to the file is read back by a new index's replay, which
// adds the records the feed names after the file's position; a rewrite
// then leaves the forgotten ordinals out of the file.
func TestSavedBuildReplaysAndRewrites(t *testing.T) {
	path := t.TempDir() + "/content"
	x := New(path, nil)
	build(t, x, true, Position{FeedSeq: 3, NextOrd: 3}, "The Pelican migrates", "a heron waits", "pelicans and herons")
	x.Close()

	y := New(path, nil)
	r, err := y.BeginBuild().Replay()
	if err != nil || r == nil {
		t.Fatalf("replay: %v %v", r, err)
	}
	if r.FeedSeq() != 3 {
		t.Fatalf("file at %d, want 3", r.FeedSeq())
	}
	if !r.Fits(5, 0, 5) {
		t.Fatal("a file two changes behind does not fit")
	}
	r.Add(3, "one more pelican")
	r.Forgot()
	if !r.Finish() {
		t.Fatal("replay not installed")
	}
	if got := ords(t, y, "pelican"); !equal(got, []uint32{0, 2, 3}) {
		t.Fatalf("pelican after the replay: %v", got)
	}
	if !y.RewriteDue() {
		t.Fatal("a file naming a forgotten record is not due for a rewrite")
	}
	release := y.HoldFile()
	w, err := y.BeginRewrite()
	if err != nil {
		t.Fatal(err)
	}
	gone := roaring.BitmapOf(0)
	if err := w.Finish(Position{FeedSeq: 5, NextOrd: 4}, gone, func() bool { return false }); err != nil {
		t.Fatal(err)
	}
	release()
	if y.RewriteDue() {
		t.Fatal("still due after the rewrite")
	}
	y.Close()

	z := New(path, nil)
	r, err = z.BeginBuild().Replay()
	if err != nil || r == nil || r.FeedSeq() != 5 {
		t.Fatalf("replay of the rewritten file: %v %v", r, err)
	}
	if r.Fits(4, 0, 4) {
		t.Fatal("a file ahead of the store fits")
	}
	r, _ = z.BeginBuild().Replay()
	if !r.Fits(5, 0, 4) || !r.Finish() {
		t.Fatal("the rewritten file does not install")
	}
	if got := ords(t, z, "pelican"); !equal(got, []uint32{2, 3}) {
		t.Fatalf("pelican from the rewritten file: %v", got)
	}
	z.Close()
}
