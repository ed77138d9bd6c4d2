// Package parallel spreads a batch's independent per-item work over the
// cores: the engines prepare a write's records (their ids, JSON and derived
// columns) this way before the part that must run alone.
package parallel

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// Each calls f for every index of [0, n), shared among up to GOMAXPROCS
// goroutines in contiguous runs of at least minRun; a batch smaller than
// two runs is done in the caller's goroutine. f must not depend on the
// order of the calls.
func Each(n, minRun int, f func(i int)) {
	workers := min(runtime.GOMAXPROCS(0), n/max(minRun, 1))
	if workers <= 1 {
		for i := range n {
			f(i)
		}
		return
	}
	var wg sync.WaitGroup
	run := (n + workers - 1) / workers
	for lo := 0; lo < n; lo += run {
		hi := min(lo+run, n)
		wg.Go(func() {
			for i := lo; i < hi; i++ {
				f(i)
			}
		})
	}
	wg.Wait()
}

// EachAfter is Each for work that runs beside a longer step on the same
// cores: until ready is closed only the calling goroutine works, so the
// step keeps a core to itself; once it is, the other goroutines join for
// what is left. A nil or already closed ready is Each. Runs are taken from a
// shared counter, so a late joiner takes its share of what remains.
func EachAfter(n, minRun int, ready <-chan struct{}, f func(i int)) {
	workers := min(runtime.GOMAXPROCS(0), n/max(minRun, 1))
	if ready == nil || workers <= 1 {
		Each(n, minRun, f)
		return
	}
	select {
	case <-ready:
		Each(n, minRun, f)
		return
	default:
	}
	run := max(minRun, 1)
	var next atomic.Int64
	work := func() {
		for {
			lo := int(next.Add(int64(run))) - run
			if lo >= n {
				return
			}
			for i := lo; i < min(lo+run, n); i++ {
				f(i)
			}
		}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	for range workers - 1 {
		wg.Go(func() {
			select {
			case <-ready:
				work()
			case <-done:
			}
		})
	}
	work()
	close(done)
	wg.Wait()
}
