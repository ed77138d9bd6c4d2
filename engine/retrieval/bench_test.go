package retrieval

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"

	"mnemo/contract"
)

// benchTexts are memory-note-sized texts drawn from a fixed vocabulary.
func benchTexts(n int) []string {
	vocab := strings.Fields(`the cache stores rendered pages in redis with a five minute expiry database index
postgres query plan sequential scan bread dough starter flour water oven crust kubernetes pod restart
liveness probe memory limit train ticket booking lisbon kyoto temple morning sunlight scattering blue
compiler goroutine channel context deadline error wrapping python virtual environment package install
garden tomato watering compost slug lettuce photo aperture shutter exposure guitar chord metronome`)
	r := rand.New(rand.NewPCG(1, 2))
	out := make([]string, n)
	for i := range out {
		k := 15 + r.IntN(40)
		ws := make([]string, k)
		for j := range ws {
			ws[j] = vocab[r.IntN(len(vocab))]
		}
		out[i] = strings.Join(ws, " ")
	}
	return out
}

func BenchmarkHashEmbed(b *testing.B) {
	texts := benchTexts(1000)
	bytes := 0
	for _, t := range texts {
		bytes += len(t)
	}
	e := NewHashEmbedder()
	b.ReportAllocs()
	b.ResetTimer()
	reportCPU(b, func() {
		for b.Loop() {
			if _, err := e.Embed(context.Background(), texts); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.SetBytes(int64(bytes))
	b.ReportMetric(float64(len(texts)*b.N)/b.Elapsed().Seconds(), "texts/s")
}

// BenchmarkVectorSearch100k is top-10 exact search over 100,000 random
// vectors of the default embedder's dimension. Random Gaussian vectors cost
// the same to scan as real embeddings; quality is measured in the eval
// package on real text.
func BenchmarkVectorSearch100k(b *testing.B) {
	const n, dim = 100_000, 512
	_, vecs := randomVectors(n, dim, 42)
	_, queries := randomVectors(64, dim, 7)
	// A short query's hashed n-grams touch 10 to 60 of the 512 dimensions
	// (the bench's queries: 8 to 51); a paragraph touches most of them.
	_, short := randomVectors(64, dim, 8)
	for _, q := range short {
		for j := range q {
			if j%12 != 0 {
				q[j] = 0
			}
		}
	}
	for _, variant := range []struct {
		name string
		opts []VectorOption
	}{
		{"float32", nil},
		{"int8", []VectorOption{WithInt8()}},
		{"float32/1worker", []VectorOption{WithWorkers(1)}},
		{"int8/1worker", []VectorOption{WithInt8(), WithWorkers(1)}},
	} {
		idx := NewVectorIndex(dim, variant.opts...)
		for i, v := range vecs {
			idx.Upsert(fmt.Sprintf("id%06d", i), v)
		}
		b.Run(variant.name, func(b *testing.B) {
			i := 0
			reportCPU(b, func() {
				for b.Loop() {
					if got := idx.Search(context.Background(), queries[i%len(queries)], 10, nil); len(got) != 10 {
						b.Fatalf("got %d results", len(got))
					}
					i++
				}
			})
		})
		b.Run(variant.name+"/short-query", func(b *testing.B) {
			i := 0
			reportCPU(b, func() {
				for b.Loop() {
					if got := idx.Search(context.Background(), short[i%len(short)], 10, nil); len(got) != 10 {
						b.Fatalf("got %d results", len(got))
					}
					i++
				}
			})
		})
		b.Run(variant.name+"/filter10pct", func(b *testing.B) {
			admit := func(id string) bool { return id[len(id)-1] == '7' }
			i := 0
			reportCPU(b, func() {
				for b.Loop() {
					if got := idx.Search(context.Background(), queries[i%len(queries)], 10, admit); len(got) != 10 {
						b.Fatalf("got %d results", len(got))
					}
					i++
				}
			})
		})
	}
}

func BenchmarkRRF(b *testing.B) {
	kw, vec := make([]string, HybridWindow), make([]string, HybridWindow)
	for i := range kw {
		kw[i] = fmt.Sprintf("k%03d", i)
		vec[i] = fmt.Sprintf("k%03d", (i*7)%(2*HybridWindow))
	}
	for b.Loop() {
		RRF(RRFK, kw, vec)
	}
}

func BenchmarkExtractiveAnswer(b *testing.B) {
	texts := benchTexts(10)
	cs := make([]contract.Citation, len(texts))
	for i, t := range texts {
		cs[i] = contract.Citation{ID: fmt.Sprint(i), Snippet: strings.ReplaceAll(t, " oven ", ". Oven ")}
	}
	a := NewExtractive()
	req := AnswerRequest{Question: "how hot should the oven be for bread dough?", Citations: cs}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := a.Answer(context.Background(), req); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLearnedQueryScan is the int8 scan over learned-embedder vectors
// (512 hashed + 256 learned dimensions) by how many of the query's learned
// dimensions are kept (LearnConfig.QueryDims), beside a hashed-only query;
// MNEMO_BENCH_VECTORS vectors (default 100,000).
func BenchmarkLearnedQueryScan(b *testing.B) {
	n, _ := strconv.Atoi(os.Getenv("MNEMO_BENCH_VECTORS"))
	if n == 0 {
		n = 100_000
	}
	const hashed, learned = 512, 256
	r := rand.New(rand.NewPCG(5, 6))
	idx := NewVectorIndex(hashed+learned, WithInt8())
	v := make([]float32, hashed+learned)
	for i := range n {
		for j := range v {
			v[j] = float32(r.NormFloat64())
		}
		idx.Upsert(fmt.Sprintf("id%07d", i), v)
	}
	for _, keep := range []int{0, 32, 64, 96, 256} {
		q := make([]float32, hashed+learned)
		for j := 0; j < hashed; j += 12 { // a short query's ~40 hashed dimensions
			q[j] = float32(r.NormFloat64())
		}
		for j := hashed; j < hashed+keep; j++ {
			q[j] = float32(r.NormFloat64())
		}
		b.Run(fmt.Sprintf("learned-dims-%d", keep), func(b *testing.B) {
			reportCPU(b, func() {
				for b.Loop() {
					if got := idx.Search(context.Background(), q, 10, nil); len(got) != 10 {
						b.Fatalf("got %d results", len(got))
					}
				}
			})
		})
	}
}

// BenchmarkLearnedEmbed embeds the bench corpus's records (their rendered
// text, as a store embeds them) with a model learned from them, 256 a call
// as a re-embedding reads them: the largest part of `mnemo import`'s CPU
// after the writing (114 of 708 s at 1M).
func BenchmarkLearnedEmbed(b *testing.B) {
	texts := embedGoldenTexts()[:600]
	m, err := Learn(context.Background(), texts, 1, DefaultLearnConfig())
	if err != nil {
		b.Fatal(err)
	}
	e := NewLearnedEmbedder(DefaultLearnConfig())
	if err := e.Use(m); err != nil {
		b.Fatal(err)
	}
	n := 0
	for b.Loop() {
		for lo := 0; lo < len(texts); lo += 256 {
			if _, err := e.Embed(context.Background(), texts[lo:min(lo+256, len(texts))]); err != nil {
				b.Fatal(err)
			}
		}
		n += len(texts)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(n)/1000, "µs/text")
}
