package bolt

import (
	"testing"

	"github.com/RoaringBitmap/roaring/v2"

	"mnemo/bench/corpus"
	"mnemo/contract"
)

// BenchmarkTrigramAddBatch measures the content index's share of a
// store_many of 100 corpus records.
func BenchmarkTrigramAddBatch(b *testing.B) {
	var batches [][]pendingText
	var cur []pendingText
	ord := uint32(0)
	corpus.Each(5000, 1, func(_ int, e corpus.Entry) bool {
		cur = append(cur, pendingText{ord, contract.FoldCase(e.Item.RenderText())})
		ord++
		if len(cur) == 100 {
			batches = append(batches, cur)
			cur = nil
		}
		return true
	})
	for b.Loop() {
		post := map[uint32]*roaring.Bitmap{}
		for _, batch := range batches {
			grams, groups := groupTrigrams(batch)
			addGroups(post, grams, groups)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*5000), "ns/record")
}
