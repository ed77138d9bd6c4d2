package bolt

import (
	"context"
	"testing"

	"github.com/RoaringBitmap/roaring/v2"

	"mnemo/contract"
	"mnemo/engine/bolt/internal/contentfile"
)

// A content index file that is sound on disk but says the wrong thing
// (written by a bug: here, no postings at all, at the store's position) is
// found by check and rebuilt from the records by repair, not read back.
func TestCheckRepairsAWrongContentFile(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	e, err := Open(dir, Options{SyncRebuildBelow: -1})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 50 {
		it := contract.Document("a note about the pelican migration number "+string(rune('a'+i%26))+string(rune('a'+i/26)), contract.MemoryMeta{})
		if _, err := contract.Store(ctx, e, it); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.WaitIndex(ctx); err != nil {
		t.Fatal(err)
	}
	feedSeq, nextOrd := e.feed.Seq(), e.nextOrd
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	empty := contentfile.Snapshot{FeedSeq: feedSeq, NextOrd: nextOrd, MaxOrd: nextOrd - 1,
		Posting: func(uint32) (*roaring.Bitmap, error) { return nil, nil }}
	if err := contentfile.Write(contentfile.Path(dir), empty); err != nil {
		t.Fatal(err)
	}
	e, err = Open(dir, Options{SyncRebuildBelow: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	rep, err := e.Check(ctx, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Consistent {
		t.Fatal("check found a content file without postings consistent")
	}
	if rep, err := e.Check(ctx, true, nil); err != nil || !rep.Consistent {
		t.Fatalf("after repair: %+v %v", rep.Checks, err)
	}
	page, err := e.Browse(ctx, contract.BrowseQuery{Limit: 100, Filters: []contract.BrowseFilter{{Field: "content", Op: "contains", Text: "pelican"}}})
	if err != nil || page.Total != 50 {
		t.Fatalf("contains after repair: %d %v", page.Total, err)
	}
}

// Postings built chunk by chunk from records met in any ordinal order
// (addChunk, as a build reads records by id) hold exactly each record's
// trigrams, repeats within a record and across chunks included.
func TestAddChunkHoldsEveryTrigramOfEveryRecord(t *testing.T) {
	texts := []string{"Kim prefers tabs", "tabs tabs tabs", "PgBouncer pool of 39", "ünïcode ÄÖÜ", "ab", "", "pool of 39 at billing-db"}
	var recs []pendingText
	for i := 0; i < 300; i++ {
		recs = append(recs, pendingText{uint32((i * 7919) % 300), texts[i%len(texts)] + " " + string(rune('a'+i%26))})
	}
	want := map[uint32]*roaring.Bitmap{}
	for _, r := range recs {
		for _, g := range trigramsOf(contract.FoldCase(r.text)) {
			if want[g] == nil {
				want[g] = roaring.New()
			}
			want[g].Add(r.ord)
		}
	}
	got := map[uint32]*roaring.Bitmap{}
	for lo := 0; lo < len(recs); lo += 70 {
		addChunk(got, append([]pendingText(nil), recs[lo:min(lo+70, len(recs))]...))
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
