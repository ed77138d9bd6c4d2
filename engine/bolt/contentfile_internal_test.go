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
