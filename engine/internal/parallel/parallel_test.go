package parallel

import (
	"sync/atomic"
	"testing"
)

// TestEachCallsEveryIndexOnce: every index of [0, n) is called exactly
// once, whether the batch is split among goroutines or not.
func TestEachCallsEveryIndexOnce(t *testing.T) {
	for _, n := range []int{0, 1, 7, 8, 63, 64, 1000, 1001} {
		for _, minRun := range []int{0, 1, 8, 64} {
			calls := make([]atomic.Int32, n)
			Each(n, minRun, func(i int) { calls[i].Add(1) })
			for i := range calls {
				if c := calls[i].Load(); c != 1 {
					t.Fatalf("n %d, minRun %d: index %d called %d times", n, minRun, i, c)
				}
			}
		}
	}
}
