package postgres

import (
	"runtime"
	"sync"

	"mnemo/contract"
)

// inParallel calls f for every index of [0, n), shared among up to
// GOMAXPROCS goroutines in contiguous runs. A batch's client-side work (its
// fingerprints, JSON, folded text, tsvector and hit: about 90 µs a record)
// runs while the database waits for the statement, so spreading it over the
// cores shortens every write by as much.
func inParallel(n int, f func(i int)) {
	workers := min(runtime.GOMAXPROCS(0), n/8)
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

// derived is what a row's insert computes from its item: the folded text,
// the tsvector literal and the hit column.
type derived struct {
	folded, tsv string
	hit         []byte
}

func derive(r *row) derived {
	text := r.item.RenderText()
	return derived{folded: contract.FoldCase(text), tsv: tsvectorLiteral(r.id, text), hit: encodeHit(text, &r.item.Meta)}
}
