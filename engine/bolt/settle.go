package bolt

import (
	"context"
	"time"
)

// settleEmbedAbove is how many records written by this process make Settle
// embed them and learn: below it the records are embedded by the next
// process that searches by vector, as any late record is, and a short
// command's exit waits for nothing more than its index flush.
const settleEmbedAbove = 100

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
// being waited for, about once a second.
func (e *Engine) Settle(ctx context.Context, progress func(what string)) error {
	written := e.WrittenHere()
	if written == 0 {
		return nil
	}
	stop := make(chan struct{})
	defer close(stop)
	if progress != nil {
		go func() {
			t := time.NewTicker(time.Second)
			defer t.Stop()
			for {
				select {
				case <-stop:
					return
				case <-t.C:
					progress(e.settleWhat())
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
	case e.committed.Load() > e.applied.Load():
		return "search index catching up"
	case e.learn != nil && e.learn.busy.Load():
		return "learning the embedder"
	}
	return "embedding records for vector search"
}

// vectorsLoaded tells whether this process has loaded the stored vectors.
func (e *Engine) vectorsLoaded() bool {
	if e.vectors == nil {
		return false
	}
	select {
	case <-e.vecReady:
		return true
	default:
		return false
	}
}
