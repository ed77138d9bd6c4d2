// Package parallel spreads a batch's independent per-item work over the
// cores: the engines prepare a write's records (their ids, JSON and derived
// columns) this way before the part that must run alone.
package parallel

import (
	"runtime"
	"sync"
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
