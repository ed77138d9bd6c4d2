package index

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"mnemo/contract"
)

// benchRecords sizes the benchmark corpus: MNEMO_BENCH_RECORDS, default 10000
// so a plain -bench run stays quick; set 100000 for the budget figures.
func benchRecords(b *testing.B) int {
	if s := os.Getenv("MNEMO_BENCH_RECORDS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n <= 0 {
			b.Fatalf("MNEMO_BENCH_RECORDS=%q is not a positive number", s)
		}
		return n
	}
	return 10000
}

// corpus generates records whose words follow a Zipf law over a 20k-word
// vocabulary, so BM25 meets both very common and rare terms.
type corpus struct {
	r     *rand.Rand
	zipf  *rand.Zipf
	vocab []string
}

func newCorpus(seed uint64) *corpus {
	r := rand.New(rand.NewPCG(seed, seed+1))
	vocab := make([]string, 20000)
	for i := range vocab {
		vocab[i] = fmt.Sprintf("w%x", i*2654435761%1000003)
	}
	return &corpus{r: r, zipf: rand.NewZipf(r, 1.1, 2, uint64(len(vocab)-1)), vocab: vocab}
}

func (c *corpus) words(n int) string {
	var sb strings.Builder
	for i := range n {
		if i > 0 {
			sb.WriteByte(' ')
		}
		sb.WriteString(c.vocab[c.zipf.Uint64()])
	}
	return sb.String()
}

var benchNamespaces = []string{"root", "team:acme", "team:acme/agent:scout", "team:acme/agent:writer",
	"user:ann", "user:ann/agent:helper", "team:acme/service:jobs"}

func (c *corpus) doc(i int) Doc {
	r := c.r
	ws := fmt.Sprintf("ws%d", r.IntN(20))
	folder := fmt.Sprintf("/src/pkg%d/sub%d", r.IntN(50), r.IntN(10))
	thread := fmt.Sprintf("thread-%d", r.IntN(5000))
	m := contract.MemoryMeta{
		Namespace: contract.MustNamespace(benchNamespaces[r.IntN(len(benchNamespaces))]),
		Workspace: &ws, Folder: &folder, ThreadID: &thread,
		Source: contract.SourceRef{Kind: contract.SourceKinds()[r.IntN(len(contract.SourceKinds()))]},
		Tags:   []string{fmt.Sprintf("tag%d", r.IntN(100)), fmt.Sprintf("tag%d", r.IntN(100))},
	}
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Minute)
	m.ObservedAt = &at
	d := Doc{
		ID:        fmt.Sprintf("%040x", i),
		Kind:      contract.ItemKinds()[r.IntN(3)],
		Text:      c.words(40 + r.IntN(120)),
		Meta:      m,
		Status:    contract.StatusActive,
		CreatedAt: at, UpdatedAt: at,
	}
	if d.Kind == contract.KindLearning {
		conf := float32(r.IntN(101)) / 100
		d.Confidence = &conf
	}
	return d
}

func (c *corpus) docs(n int) []Doc {
	out := make([]Doc, n)
	for i := range out {
		out[i] = c.doc(i)
	}
	return out
}

// fill applies docs in batches and returns the wall time and the process CPU
// time it took (analysis workers, merger and persister included).
func fill(b *testing.B, ix *Index, docs []Doc, batch int) (wall, cpu time.Duration) {
	cpu0 := processCPU()
	start := time.Now()
	for lo := 0; lo < len(docs); lo += batch {
		hi := min(lo+batch, len(docs))
		if err := ix.Apply(docs[lo:hi], nil, uint64(hi)); err != nil {
			b.Fatal(err)
		}
	}
	return time.Since(start), processCPU() - cpu0
}

func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkApply measures indexing throughput through Apply, each iteration
// indexing benchRecords documents into a fresh index in batches.
func BenchmarkApply(b *testing.B) {
	n := benchRecords(b)
	for _, batch := range []int{100, 1000, 5000} {
		b.Run(fmt.Sprintf("batch=%d", batch), func(b *testing.B) {
			docs := newCorpus(7).docs(n)
			var total, cpu time.Duration
			iterations := 0
			for b.Loop() {
				b.StopTimer()
				dir := filepath.Join(b.TempDir(), fmt.Sprintf("index%d", iterations))
				ix, err := Open(dir)
				if err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				wall, used := fill(b, ix, docs, batch)
				total += wall
				cpu += used
				b.StopTimer()
				if err := ix.Close(); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				iterations++
			}
			b.ReportMetric(float64(n*iterations)/total.Seconds(), "docs/s")
			// Docs per CPU second of the whole process is steadier than
			// wall time on a shared machine.
			b.ReportMetric(float64(n*iterations)/cpu.Seconds(), "docs/cpu-s")
		})
	}
}

// BenchmarkKeyword measures a top-10 keyword page over benchRecords
// documents, unfiltered and with a reach and kind filter, and reports p50/p95.
func BenchmarkKeyword(b *testing.B) {
	n := benchRecords(b)
	// MNEMO_BENCH_INDEX keeps the built corpus between runs (it is reused
	// when it holds exactly n documents).
	dir := os.Getenv("MNEMO_BENCH_INDEX")
	if dir == "" {
		dir = filepath.Join(b.TempDir(), "index")
	}
	ix, err := Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	defer ix.Close()
	if have, err := ix.DocCount(); err != nil || have != uint64(n) {
		if have != 0 {
			b.Fatalf("%s holds %d documents, not %d", dir, have, n)
		}
		took, used := fill(b, ix, newCorpus(11).docs(n), 1000)
		b.Logf("indexed %d docs in %v (%.0f docs/s, %.0f docs/cpu-s)", n, took, float64(n)/took.Seconds(), float64(n)/used.Seconds())
	}
	reach := contract.ReachOf(contract.MustNamespace("team:acme/agent:scout"))
	filters := map[string]contract.MetaFilter{
		"nofilter":    {},
		"reach+kind":  {Reach: &reach, Kinds: []contract.ItemKind{contract.KindLearning, contract.KindDocument}},
		"folder+tags": {Folder: contract.Ptr("/src/pkg7"), TagsAny: []string{"tag3", "tag4", "tag5"}},
	}
	names := []string{"nofilter", "reach+kind", "folder+tags"}
	ctx := context.Background()
	for _, name := range names {
		f := filters[name]
		b.Run(name, func(b *testing.B) {
			qc := newCorpus(99)
			var lat []time.Duration
			cpu0 := processCPU()
			for b.Loop() {
				q := qc.words(3)
				start := time.Now()
				hits, err := ix.Keyword(ctx, q, f, true, 0, 10, nil)
				lat = append(lat, time.Since(start))
				if err != nil {
					b.Fatal(err)
				}
				_ = hits
			}
			b.ReportMetric(float64((processCPU()-cpu0).Microseconds())/1000/float64(len(lat)), "cpu-ms/op")
			sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(lat[len(lat)*95/100].Microseconds())/1000, "p95-ms")
		})
	}
	b.Run("count-reach+kind", func(b *testing.B) {
		f := filters["reach+kind"]
		for b.Loop() {
			if _, err := ix.Count(ctx, f); err != nil {
				b.Fatal(err)
			}
		}
	})

}
