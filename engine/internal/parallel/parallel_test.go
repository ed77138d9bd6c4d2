package parallel

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
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

func TestEachAfterCallsEveryIndexOnce(t *testing.T) {
	closed := make(chan struct{})
	close(closed)
	for name, ready := range map[string]func() chan struct{}{
		"nil":          func() chan struct{} { return nil },
		"closed":       func() chan struct{} { return closed },
		"never closed": func() chan struct{} { return make(chan struct{}) },
	} {
		for _, n := range []int{0, 1, 7, 63, 64, 1000, 1001} {
			for _, minRun := range []int{0, 1, 32} {
				calls := make([]atomic.Int32, n)
				EachAfter(n, minRun, ready(), func(i int) { calls[i].Add(1) })
				for i := range calls {
					if c := calls[i].Load(); c != 1 {
						t.Fatalf("%s, n %d, minRun %d: index %d called %d times", name, n, minRun, i, c)
					}
				}
			}
		}
	}
}

// Until ready is closed the caller works alone: the step it waits for keeps
// a core.
func TestEachAfterWorksAloneUntilReady(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	var inFlight, most atomic.Int32
	EachAfter(2000, 1, make(chan struct{}), func(int) {
		now := inFlight.Add(1)
		for m := most.Load(); now > m && !most.CompareAndSwap(m, now); m = most.Load() {
		}
		runtime.Gosched()
		inFlight.Add(-1)
	})
	if m := most.Load(); m != 1 {
		t.Fatalf("%d calls ran at once before ready was closed, want 1", m)
	}
}

// Once ready is closed the other goroutines join for what is left.
func TestEachAfterOthersJoinOnceReady(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	ready, joined := make(chan struct{}), make(chan struct{})
	var once sync.Once
	var calls atomic.Int32
	EachAfter(100, 1, ready, func(i int) {
		calls.Add(1)
		switch {
		case i == 0:
			close(ready)
		case i == 1:
			// The caller waits here; only a goroutine that joined can
			// take the next index.
			select {
			case <-joined:
			case <-time.After(10 * time.Second):
				t.Error("no other goroutine took an index after ready was closed")
			}
		default:
			once.Do(func() { close(joined) })
		}
	})
	if c := calls.Load(); c != 100 {
		t.Fatalf("%d calls, want 100", c)
	}
}
