package curate

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"mnemo/bench/corpus"
	"mnemo/contract"
)

// corpusRecords turns the bench corpus (the records `mnemo bench` stores)
// into records as a scope's browse would read them.
func corpusRecords(n int) []contract.Record {
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	out := make([]contract.Record, 0, n)
	for i, e := range corpus.Generate(n, 3) {
		it := e.Item
		out = append(out, contract.RecordOf(fmt.Sprintf("r%07d", i), &it, contract.StatusActive, at.Add(time.Duration(i)*time.Second), at, nil, nil))
	}
	return out
}

// BenchmarkFind clusters a scope from scratch: what `mnemo clusters` does
// after reading the scope's records (10k), and a whole-store pass (100k).
func BenchmarkFind(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		records := corpusRecords(n)
		b.Run(fmt.Sprintf("records=%d", n), func(b *testing.B) {
			var clusters []Cluster
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			cpu0 := cpuTime()
			for b.Loop() {
				clusters = Find(records, DefaultConfig())
			}
			b.ReportMetric(float64((cpuTime()-cpu0).Milliseconds())/float64(b.N), "cpu-ms/op")
			runtime.ReadMemStats(&after)
			b.ReportMetric(float64(len(clusters)), "clusters")
			b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/float64(b.N)/(1<<20), "MiB-alloc/op")
		})
	}
}

// BenchmarkIndexAdd is the background upkeep: one new record joining the
// clusters of a 100k-record index.
func BenchmarkIndexAdd(b *testing.B) {
	records := corpusRecords(100_000 + 1000)
	ix := NewIndex(DefaultConfig())
	for _, r := range records[:100_000] {
		ix.Add(r)
	}
	extra := records[100_000:]
	i := 0
	cpu0 := cpuTime()
	for b.Loop() {
		r := extra[i%len(extra)]
		ix.Add(r) // a record already there is replaced: the index stays at 100k+1000
		i++
	}
	b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/float64(b.N), "cpu-µs/op")
}
