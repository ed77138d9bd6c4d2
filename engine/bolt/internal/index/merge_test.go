package index

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"mnemo/contract"
)

// Merge leaves one segment that answers every search as the segments it
// replaced did, with applied_seq and the statistics kept. An index that is missing or of another mapping version
// is left as it is.
func TestMergeLeavesOneSegmentThatAnswersTheSame(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "index")
	// Scorch's merger folds small segments together whenever it runs (its
	// default plan budgets one segment for a few hundred documents), so
	// the segments are written with a plan under which no segment is small
	// enough to merge: each batch stays the segment it was written as.
	neverMerge := map[string]interface{}{"scorchMergePlanOptions": map[string]interface{}{"MaxSegmentSize": 2}}
	ix, err := openWith(dir, neverMerge)
	if err != nil {
		t.Fatal(err)
	}
	words := []string{"alpha", "beta", "gamma", "delta", "epsilon", "zeta"}
	for batch := range 6 {
		var docs []Doc
		for i := range 25 {
			n := batch*25 + i
			docs = append(docs, doc(fmt.Sprintf("d%03d", n), fmt.Sprintf("%s %s note %d", words[n%6], words[(n/6)%6], n)))
		}
		if err := ix.Apply(docs, []string{fmt.Sprintf("d%03d", batch*7)}, uint64(batch+1)); err != nil {
			t.Fatal(err)
		}
		if err := ix.Close(); err != nil {
			t.Fatal(err)
		}
		if ix, err = openWith(dir, neverMerge); err != nil {
			t.Fatal(err)
		}
	}
	search := func(ix *Index) [][]string {
		t.Helper()
		var out [][]string
		for _, q := range []string{"alpha", "beta gamma", "note zeta", "epsilon delta alpha"} {
			hits, err := ix.Keyword(ctx, q, contract.MetaFilter{}, false, 0, 20, nil)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, ids(hits))
		}
		return out
	}
	before := search(ix)
	if err := ix.Close(); err != nil {
		t.Fatal(err)
	}
	segments := Segments(dir)
	if segments != 6 {
		t.Fatalf("the index was written as %d segments; the test wrote 6", segments)
	}
	sizeBefore, sizeAfter, err := Merge(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	if sizeAfter <= 0 || sizeBefore <= 0 {
		t.Fatalf("merge reported %d bytes -> %d", sizeBefore, sizeAfter)
	}
	again, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	if n := again.SegmentCount(); n != 1 {
		t.Fatalf("merged %d segments into %d", segments, n)
	}
	if again.NeedsRebuild() {
		t.Fatal("the merged index was taken for an unusable one")
	}
	if seq, err := again.AppliedSeq(); err != nil || seq != 6 {
		t.Fatalf("applied_seq after the merge: %d, %v", seq, err)
	}
	if got := search(again); !slices.EqualFunc(got, before, slices.Equal[[]string]) {
		t.Fatalf("after the merge the searches answer\n%v\nbefore\n%v", got, before)
	}

	// Nothing to merge: a missing index, and one of another mapping version.
	missing := filepath.Join(t.TempDir(), "none")
	if b, a, err := Merge(ctx, missing); err != nil || b != 0 || a != 0 {
		t.Fatalf("merge of a missing index: %d %d %v", b, a, err)
	}
	if _, err := os.Stat(missing); !os.IsNotExist(err) {
		t.Fatal("merge of a missing index created one")
	}
	if err := again.idx.SetInternal([]byte(keyMappingVersion), []byte("0")); err != nil {
		t.Fatal(err)
	}
	_ = again.Close()
	if b, a, err := Merge(ctx, dir); err != nil || a != b {
		t.Fatalf("merge of an index of another version: %d -> %d, %v", b, a, err)
	}
}
