package bolt_test

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"mnemo/bench/corpus"
	"mnemo/contract"
	"mnemo/engine/bolt"
)

// The benchmarks time every row of docs/spec/design.md §8 that the storage engine
// answers, on the generated corpus. MNEMO_BENCH_RECORDS picks the size
// (default 10000 so a plain `go test -bench` stays quick). Each row reports
// the median and p95 latency of its iterations besides ns/op.

func benchRecords() int {
	if s := os.Getenv("MNEMO_BENCH_RECORDS"); s != "" {
		if n, err := strconv.Atoi(s); err == nil && n > 0 {
			return n
		}
	}
	return 10000
}

type benchStore struct {
	e         *bolt.Engine
	dir       string
	records   int
	importRPS float64
	// importCPURPS is records per second of process CPU time, which the
	// machine's load does not inflate the way it inflates wall time.
	importCPURPS float64
	err          error
}

var (
	benchOnce sync.Once
	shared    benchStore
)

type batchKey struct {
	status  contract.Status
	expires string
}

// importCorpus loads n corpus entries through StoreManyWith in batches of
// 100 (grouped by status and expiry), supersedes what the corpus marks, and
// waits for the index: the end-to-end import. The corpus is generated before
// the clock starts. It returns the wall time and the process CPU time spent.
func importCorpus(ctx context.Context, e *bolt.Engine, n int, seed int64) (time.Duration, time.Duration, error) {
	type batch struct {
		items []contract.StoreItem
		opts  contract.WriteOptions
	}
	var batches []batch
	open := map[batchKey]int{}
	var supersede [][2]string
	lastSuperseded := ""
	corpus.Each(n, seed, func(_ int, en corpus.Entry) bool {
		st := en.Status
		if st == contract.StatusSuperseded {
			st = contract.StatusActive
		}
		k := batchKey{status: st}
		o := contract.WriteOptions{Status: st}
		if en.ExpiresAt != nil {
			k.expires = en.ExpiresAt.String()
			o.ExpiresAt = en.ExpiresAt
		}
		bi, ok := open[k]
		if !ok || len(batches[bi].items) == contract.MaxStoreMany {
			batches = append(batches, batch{opts: o})
			bi = len(batches) - 1
			open[k] = bi
		}
		batches[bi].items = append(batches[bi].items, en.Item)
		// A superseded entry is superseded by the entry right after it.
		if lastSuperseded != "" {
			supersede = append(supersede, [2]string{lastSuperseded, en.Item.Fingerprint()})
			lastSuperseded = ""
		}
		if en.Status == contract.StatusSuperseded {
			lastSuperseded = en.Item.Fingerprint()
		}
		return true
	})
	cpu0 := cpuTime()
	start := time.Now()
	for _, b := range batches {
		if _, err := e.StoreManyWith(ctx, b.items, b.opts); err != nil {
			return 0, 0, err
		}
	}
	for _, s := range supersede {
		if _, err := e.Supersede(ctx, contract.SupersedeRequest{ID: s[0], By: s[1]}); err != nil {
			return 0, 0, err
		}
	}
	stored := time.Since(start)
	if err := e.WaitIndex(ctx); err != nil {
		return 0, 0, err
	}
	took := time.Since(start)
	fmt.Fprintf(os.Stderr, "import: stored in %v, index caught up after %v\n", stored.Round(time.Millisecond), took.Round(time.Millisecond))
	return took, cpuTime() - cpu0, nil
}

// cpuTime is the process's user plus system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func sharedStore(b *testing.B) *benchStore {
	benchOnce.Do(func() {
		n := benchRecords()
		dir, err := os.MkdirTemp("", "mnemo-bench-")
		if err != nil {
			shared.err = err
			return
		}
		opts := bolt.Options{}
		if os.Getenv("MNEMO_BENCH_RECORD_CACHE") == "off" {
			// Every browse page decoded from bbolt, as on a first visit.
			opts.RecordCache = -1
		}
		e, err := bolt.Open(dir, opts)
		if err != nil {
			shared.err = err
			return
		}
		took, cpu, err := importCorpus(context.Background(), e, n, 1)
		shared = benchStore{e: e, dir: dir, records: n, importRPS: float64(n) / took.Seconds(),
			importCPURPS: float64(n) / cpu.Seconds(), err: err}
		fmt.Fprintf(os.Stderr, "bench store: %d records imported in %v (%.0f records/s; %v CPU, %.0f records per CPU second)\n",
			n, took.Round(time.Millisecond), shared.importRPS, cpu.Round(time.Millisecond), shared.importCPURPS)
	})
	if shared.err != nil {
		b.Fatal(shared.err)
	}
	return &shared
}

// TestMain removes the shared benchmark store after the run.
func TestMain(m *testing.M) {
	code := m.Run()
	if shared.e != nil {
		_ = shared.e.Close()
		_ = os.RemoveAll(shared.dir)
	}
	os.Exit(code)
}

// percentile is the nearest-rank percentile (the ceil(p*n)-th smallest).
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	rank := int(float64(len(sorted))*p + 0.999999)
	rank = min(max(rank, 1), len(sorted))
	return sorted[rank-1]
}

func TestPercentile(t *testing.T) {
	d := func(ms ...int) []time.Duration {
		out := make([]time.Duration, len(ms))
		for i, m := range ms {
			out[i] = time.Duration(m) * time.Millisecond
		}
		return out
	}
	twenty := d(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20)
	for _, c := range []struct {
		in   []time.Duration
		p    float64
		want time.Duration
	}{
		{twenty, 0.95, 19 * time.Millisecond},
		{twenty, 0.5, 10 * time.Millisecond},
		{d(7), 0.95, 7 * time.Millisecond},
		{nil, 0.5, 0},
	} {
		if got := percentile(c.in, c.p); got != c.want {
			t.Errorf("percentile(%v, %v) = %v, want %v", c.in, c.p, got, c.want)
		}
	}
}

// timed runs op per iteration and reports p50 and p95 in milliseconds.
func timed(b *testing.B, op func(i int) error) {
	b.Helper()
	var lat []time.Duration
	i := 0
	for b.Loop() {
		t0 := time.Now()
		if err := op(i); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(t0))
		i++
	}
	slices.Sort(lat)
	b.ReportMetric(float64(percentile(lat, 0.5).Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(percentile(lat, 0.95).Microseconds())/1000, "p95-ms")
}

func browseOp(b *testing.B, e *bolt.Engine, q contract.BrowseQuery, wantMin int) func(int) error {
	return func(int) error {
		page, err := e.Browse(context.Background(), q)
		if err != nil {
			return err
		}
		if page.Total < wantMin {
			return fmt.Errorf("browse total %d < %d", page.Total, wantMin)
		}
		return nil
	}
}

func BenchmarkBrowseDefault200(b *testing.B) {
	s := sharedStore(b)
	timed(b, browseOp(b, s.e, contract.BrowseQuery{Limit: 200}, 1))
}

func BenchmarkBrowseStatusActive200(b *testing.B) {
	s := sharedStore(b)
	q := contract.BrowseQuery{Limit: 200, Filters: []contract.BrowseFilter{{Field: "status", Op: "in", Values: []string{"active"}}}}
	timed(b, browseOp(b, s.e, q, 1))
}

func BenchmarkBrowseHeadRefresh1000(b *testing.B) {
	s := sharedStore(b)
	timed(b, browseOp(b, s.e, contract.BrowseQuery{Limit: 1000}, 1))
}

func BenchmarkBrowseConfidenceDesc200(b *testing.B) {
	s := sharedStore(b)
	q := contract.BrowseQuery{Limit: 200, OrderBy: []contract.SortKey{{Field: "confidence", Dir: "desc"}}}
	timed(b, browseOp(b, s.e, q, 1))
}

func BenchmarkBrowseRareNeedle200(b *testing.B) {
	s := sharedStore(b)
	q := contract.BrowseQuery{Limit: 200, Filters: []contract.BrowseFilter{{Field: "content", Op: "contains", Text: corpus.RareNeedle}}}
	want := corpus.NeedleCount(s.records)
	timed(b, func(int) error {
		page, err := s.e.Browse(context.Background(), q)
		if err != nil {
			return err
		}
		if page.Total < want*8/10 || page.Total > want {
			return fmt.Errorf("needle total %d, corpus planted %d", page.Total, want)
		}
		return nil
	})
}

func BenchmarkBrowsePage2Cursor(b *testing.B) {
	s := sharedStore(b)
	first, err := s.e.Browse(context.Background(), contract.BrowseQuery{Limit: 200})
	if err != nil || first.Continuation == nil {
		b.Fatalf("page 1: %v", err)
	}
	timed(b, browseOp(b, s.e, contract.BrowseQuery{Limit: 200, Cursor: *first.Continuation}, 1))
}

func BenchmarkExploreRoot(b *testing.B) {
	s := sharedStore(b)
	timed(b, func(i int) error {
		f := contract.Facets()[i%len(contract.Facets())]
		_, err := s.e.Explore(context.Background(), contract.ExploreRequest{Facet: f, Limit: 50})
		return err
	})
}

func BenchmarkExploreTwoNarrows(b *testing.B) {
	s := sharedStore(b)
	ctx := context.Background()
	f, err := contract.FacetKind.Narrow(contract.MetaFilter{}, "learning")
	if err != nil {
		b.Fatal(err)
	}
	tags, err := s.e.Explore(ctx, contract.ExploreRequest{Facet: contract.FacetTag, Filter: f, Limit: 1})
	if err != nil || len(tags.Buckets) == 0 {
		b.Fatalf("tags: %v", err)
	}
	f, err = contract.FacetTag.Narrow(f, tags.Buckets[0].Value)
	if err != nil {
		b.Fatal(err)
	}
	timed(b, func(i int) error {
		facet := contract.Facets()[i%len(contract.Facets())]
		_, err := s.e.Explore(ctx, contract.ExploreRequest{Facet: facet, Filter: f, Limit: 50})
		return err
	})
}

func BenchmarkKeywordFetchTop10(b *testing.B) {
	s := sharedStore(b)
	queries := corpus.Queries(200, 3)
	timed(b, func(i int) error {
		_, err := s.e.Fetch(context.Background(), contract.FetchRequest{Query: queries[i%len(queries)], Mode: contract.ModeKeyword, Limit: 10})
		return err
	})
}

func BenchmarkHybridFetchTop10(b *testing.B) {
	s := sharedStore(b)
	queries := corpus.Queries(200, 4)
	timed(b, func(i int) error {
		_, err := s.e.Fetch(context.Background(), contract.FetchRequest{Query: queries[i%len(queries)], Mode: contract.ModeHybrid, Limit: 10})
		return err
	})
}

// BenchmarkImport reports the shared store's end-to-end import throughput
// (StoreManyWith batches of 100, supersedes, index caught up).
func BenchmarkImport(b *testing.B) {
	s := sharedStore(b)
	for b.Loop() {
	}
	b.ReportMetric(s.importRPS, "records/s")
	b.ReportMetric(s.importCPURPS, "records/cpu-s")
	b.ReportMetric(float64(peakRSS())/(1<<20), "peak-rss-MB")
}

// peakRSS reads the process's high-water resident set from /proc (0 elsewhere).
func peakRSS() int64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// BenchmarkBrowsePeakRSS measures the resident set while browsing: after the
// import's garbage is returned to the OS, the kernel's high-water mark is reset
// (Linux /proc/self/clear_refs) and every browse shape runs; peak-rss-MB is the
// new high-water mark (it includes the pages of bbolt's and Bleve's files the
// process touched, and the engine's in-memory table, vectors and content index).
func BenchmarkBrowsePeakRSS(b *testing.B) {
	s := sharedStore(b)
	ctx := context.Background()
	runtime.GC()
	debug.FreeOSMemory()
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		b.Skipf("cannot reset the resident high-water mark: %v", err)
	}
	queries := []contract.BrowseQuery{
		{Limit: 200}, {Limit: 1000},
		{Limit: 200, Filters: []contract.BrowseFilter{{Field: "status", Op: "in", Values: []string{"active"}}}},
		{Limit: 200, OrderBy: []contract.SortKey{{Field: "confidence", Dir: "desc"}}},
		{Limit: 200, Filters: []contract.BrowseFilter{{Field: "content", Op: "contains", Text: corpus.RareNeedle}}},
	}
	for b.Loop() {
		for _, q := range queries {
			page, err := s.e.Browse(ctx, q)
			if err != nil {
				b.Fatal(err)
			}
			if page.Continuation != nil {
				q.Cursor = *page.Continuation
				if _, err := s.e.Browse(ctx, q); err != nil {
					b.Fatal(err)
				}
			}
		}
	}
	b.ReportMetric(float64(peakRSS())/(1<<20), "peak-rss-MB")
}

// BenchmarkReopen closes the shared store and opens it again: the time until
// list, get, browse and explore answer (the table is loaded; the content index
// may still be filling in the background). It runs last (it replaces the
// shared engine).
func BenchmarkReopen(b *testing.B) {
	s := sharedStore(b)
	var lat []time.Duration
	for b.Loop() {
		b.StopTimer()
		if err := s.e.Close(); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		t0 := time.Now()
		e, err := bolt.Open(s.dir, bolt.Options{})
		if err != nil {
			b.Fatal(err)
		}
		s.e = e
		if _, err := e.Browse(context.Background(), contract.BrowseQuery{Limit: 50}); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(t0))
	}
	slices.Sort(lat)
	b.ReportMetric(float64(percentile(lat, 0.5).Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(percentile(lat, 0.95).Microseconds())/1000, "p95-ms")
}

// BenchmarkVectorFetchInASmallNamespace is vector fetch top 10 within the
// reach of the store's smallest namespace (a filter that admits few
// records, as a conversation's or an agent's reach does).
func BenchmarkVectorFetchInASmallNamespace(b *testing.B) {
	s := sharedStore(b)
	page, err := s.e.Explore(context.Background(), contract.ExploreRequest{Facet: contract.FacetNamespace, Limit: 500})
	if err != nil || len(page.Buckets) == 0 {
		b.Fatalf("namespaces: %v %v", page, err)
	}
	small := page.Buckets[len(page.Buckets)-1]
	ns, err := contract.ParseNamespace(small.Value)
	if err != nil {
		b.Fatal(err)
	}
	reach := contract.ReachOf(ns)
	b.Logf("namespace %s: %d records", small.Value, small.Count)
	queries := corpus.Queries(200, 4)
	timed(b, func(i int) error {
		_, err := s.e.Fetch(context.Background(), contract.FetchRequest{Query: queries[i%len(queries)], Mode: contract.ModeVector, Limit: 10,
			Filter: contract.MetaFilter{Reach: &reach}})
		return err
	})
}
