package trigram

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/RoaringBitmap/roaring/v2"

	"mnemo/bench/corpus"
	"mnemo/contract"
)

// BenchmarkTrigramAddBatch measures the content index's share of a
// store_many of 100 corpus records.
func BenchmarkTrigramAddBatch(b *testing.B) {
	var batches [][]Text
	var cur []Text
	ord := uint32(0)
	corpus.Each(5000, 1, func(_ int, e corpus.Entry) bool {
		cur = append(cur, Text{ord, contract.FoldCase(e.Item.RenderText())})
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

// BenchmarkTrigramBuild builds the postings of records met in random
// ordinal order, as a build reading records by id meets them: 20,000 fit
// in one chunk, 200,000 take seven, each merged into postings the chunks
// before filled.
func BenchmarkTrigramBuild(b *testing.B) {
	for _, n := range []int{20_000, 200_000} {
		var texts []Text
		corpus.Each(n, 1, func(i int, e corpus.Entry) bool {
			texts = append(texts, Text{uint32(i), e.Item.RenderText()})
			return true
		})
		rand.New(rand.NewPCG(1, 2)).Shuffle(len(texts), func(i, j int) { texts[i], texts[j] = texts[j], texts[i] })
		b.Run(fmt.Sprintf("records=%d", n), func(b *testing.B) {
			for b.Loop() {
				post := map[uint32]*roaring.Bitmap{}
				var chunk []Text
				for i, t := range texts {
					chunk = append(chunk, t)
					if len(chunk) == buildChunk || i == len(texts)-1 {
						addChunk(post, chunk)
						chunk = chunk[:0]
					}
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/record")
		})
	}
}
