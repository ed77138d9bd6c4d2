package bolt

import (
	"context"
	"sync/atomic"
	"time"
)

// settleEmbedAbove is how many records written by this process make Settle
// embed them and learn: below it the records are embedded by the next
// process that searches by vector, as any late record is, and a short
// command's exit waits for nothing more than its index flush.
const settleEmbedAbove = 100

// settleQuiet is how long Settle works before it says what it waits for.
const settleQuiet = 2 * time.Second

// WrittenHere counts the changes this process committed since it opened the
// store.
func (e *Engine) WrittenHere() uint64 {
	return e.committed.Load() - e.openedSeq
}

// Settle finishes the background work this process's writes started, so the
// next process finds the store as a long-lived one would have left it: the
// search index and the content index caught up (a bulk load defers both),
// and after a larger load every record embedded with the generation of the
// learned embedder the store's text calls for. It is what the process
// holding a store does before it lets go when no other process is attached
// to take the work over (server/local). progress, when set, is told what is
// being waited for, about once a second once it has taken settleQuiet, and
// "" when it is done.
func (e *Engine) Settle(ctx context.Context, progress func(what string)) error {
	written := e.WrittenHere()
	if written == 0 {
		return nil
	}
	select {
	case e.hurry <- struct{}{}:
	default:
	}
	stop, done := make(chan struct{}), make(chan struct{})
	var told atomic.Bool
	defer func() {
		close(stop)
		<-done
		if told.Load() {
			progress("")
		}
	}()
	if progress == nil {
		close(done)
	} else {
		go func() {
			defer close(done)
			// A settle shorter than settleQuiet says nothing.
			t := time.NewTicker(time.Second)
			defer t.Stop()
			start := time.Now()
			for {
				select {
				case <-stop:
					return
				case <-t.C:
					if time.Since(start) >= settleQuiet {
						told.Store(true)
						progress(e.settleWhat())
					}
				}
			}
		}()
	}
	if err := e.WaitIndex(ctx); err != nil {
		return err
	}
	if written < settleEmbedAbove && !e.vectorsLoaded() {
		return nil
	}
	return e.WaitEmbedder(ctx)
}

// settleWhat says what Settle is waiting for, for a person.
func (e *Engine) settleWhat() string {
	switch st := e.IndexStatus(); {
	case st.State != "ready":
		return "search index " + st.State
	case e.committed.Load() > e.idx.applied.Load():
		return "search index catching up"
	case e.learn != nil && e.learn.busy.Load():
		return "learning the embedder"
	}
	return "embedding records for vector search"
}

// vectorsLoaded tells whether this process has loaded the stored vectors.
func (e *Engine) vectorsLoaded() bool {
	if e.vec.store == nil {
		return false
	}
	select {
	case <-e.vec.ready:
		return true
	default:
		return false
	}
}
