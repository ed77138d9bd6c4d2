package bolt_test

import (
	"context"
	"os"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"mnemo/contract"
	"mnemo/engine/bolt"
	"mnemo/engine/curate"
)

func cpuNow() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// TestMeasureKeptClusters measures the store's clustering on a copy of a
// bench store (MNEMO_KEPT_DIR; it writes the clusters into it): the first
// pass's wall and CPU time, a scope's clusters read from what is kept, and
// one new record's upkeep. Figures: docs/curation.md.
func TestMeasureKeptClusters(t *testing.T) {
	dir := os.Getenv("MNEMO_KEPT_DIR")
	if dir == "" {
		t.Skip("MNEMO_KEPT_DIR names a copy of a bench store to measure")
	}
	ctx := context.Background()
	e, err := bolt.Open(dir, bolt.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	cfg := curate.DefaultConfig()
	start, cpu := time.Now(), cpuNow()
	e.KeepClusters(cfg)
	done := make(chan error, 1)
	go func() { done <- e.WaitClusters(ctx) }()
	for waiting := true; waiting; {
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
			waiting = false
		case <-time.After(15 * time.Second):
			t.Logf("%s: %+v", time.Since(start).Round(time.Second), e.ClusterStatus())
		}
	}
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	status, _ := os.ReadFile("/proc/self/status")
	var rss string
	for _, l := range strings.Split(string(status), "\n") {
		if strings.HasPrefix(l, "VmRSS") || strings.HasPrefix(l, "RssAnon") || strings.HasPrefix(l, "RssFile") {
			rss += strings.Join(strings.Fields(l), " ") + "; "
		}
	}
	t.Logf("first pass (or load): wall %s, CPU %s, peak RSS %d MB, Go heap in use after it %d MB, now %s%+v", time.Since(start).Round(time.Millisecond), (cpuNow() - cpu).Round(time.Millisecond), ru.Maxrss>>10, ms.HeapInuse>>20, rss, e.ClusterStatus())
	scope, err := curate.RecentScope(ctx, e, 10_000)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []struct {
		name string
		f    contract.MetaFilter
	}{{"whole store", contract.MetaFilter{}}, {"10k most recent", scope}} {
		for i := 0; i < 3; i++ {
			t0 := time.Now()
			a, err := e.KeptClusters(ctx, f.f, cfg)
			if err != nil || !a.Kept {
				t.Fatal(err, a)
			}
			cs, n := a.Clusters, a.Records
			t.Logf("KeptClusters %s: %d records, %d clusters in %s", f.name, n, len(cs), time.Since(t0).Round(time.Microsecond))
		}
	}
	var lat []time.Duration
	for i := 0; i < 50; i++ {
		t0 := time.Now()
		_, err := contract.StoreMany(ctx, e, []contract.StoreItem{contract.Learning("Measured upkeep: the billing replica lags behind the primary by a few seconds at peak", contract.LearningFact, 0.7, contract.MemoryMeta{})})
		if err != nil {
			t.Fatal(err)
		}
		if err := e.WaitClusters(ctx); err != nil {
			t.Fatal(err)
		}
		lat = append(lat, time.Since(t0))
	}
	t.Logf("store + upkeep, one record at a time: %v", lat)
}
