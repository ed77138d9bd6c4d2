package bolt

import (
	"errors"

	"github.com/RoaringBitmap/roaring/v2"
	bbolt "go.etcd.io/bbolt"

	"mnemo/contract"
	"mnemo/engine/bolt/internal/contentfile"
	"mnemo/engine/bolt/internal/feed"
	"mnemo/engine/bolt/internal/trigram"
)

// The content index (package trigram) is fed here: a build reads the
// records, an open replays the change feed after its file's position, a
// rewrite takes the store's position; the index itself holds the postings.

// buildTrigrams fills the content index: on a large store from its file when
// that describes a recent enough state of the store (openTrigrams), else from
// the records in chunks (never one long read transaction, which would hold
// back bbolt's remapping), writing the file for the next process. Records
// written meanwhile are queued by trigram.Index.Add and merged at the end.
func (e *Engine) buildTrigrams() error {
	b := e.tri.BeginBuild()
	if e.largeStore {
		if done, err := e.openTrigrams(b); done || err != nil {
			return err
		}
	}
	// Every record whose change is at or before the position is read below
	// or queued, so the file written from this build describes it.
	e.mu.RLock()
	pos := trigram.Position{FeedSeq: e.feed.Seq(), NextOrd: e.nextOrd}
	e.mu.RUnlock()
	var after []byte
	for {
		select {
		case <-e.closing:
			return nil
		default:
		}
		n := 0
		err := e.db.View(func(tx *bbolt.Tx) error {
			c := tx.Bucket(bucketRecords).Cursor()
			k, v := seekAfter(c, after)
			for ; k != nil && n < 2000; k, v = c.Next() {
				s, err := e.codec.decode(v, partHit, parseNS)
				if err != nil {
					return err
				}
				b.Add(s.ord, s.text)
				after = append(after[:0], k...)
				n++
			}
			return nil
		})
		if err != nil {
			return contract.EngineErr("build content index: %w", err)
		}
		e.scanned(n, n == 0)
		if n == 0 {
			break
		}
	}
	installed, err := b.Finish(e.largeStore, pos, e.closed.Load)
	if err != nil {
		e.log.Error("writing the content index file failed; the next open rebuilds it", "err", err)
	}
	if installed {
		e.drainContent()
	}
	return nil
}

// openTrigrams takes the content index from its file and replays the changes
// after the file's position (trigram.Replay). It reports false when the
// file is missing, unreadable or too far behind; a file that fails its
// checks is removed.
func (e *Engine) openTrigrams(b *trigram.Build) (bool, error) {
	r, err := b.Replay()
	if err != nil {
		e.log.Warn("the content index file is unusable; rebuilding it from the records", "err", err)
		return false, nil
	}
	if r == nil {
		return false, nil
	}
	e.mu.RLock()
	head, nextOrd := e.feed.Seq(), e.nextOrd
	e.mu.RUnlock()
	if !r.Fits(head, e.feed.Pruned(), nextOrd) {
		return false, nil
	}
	after := r.FeedSeq()
	for {
		select {
		case <-e.closing:
			r.Abandon()
			return true, nil
		default:
		}
		n := 0
		err := e.db.View(func(tx *bbolt.Tx) error {
			recs := e.records(tx)
			return e.feed.Scan(tx, after, parseNS, func(seq uint64, c feed.Entry) (bool, error) {
				if n == 2000 {
					return false, nil
				}
				after = seq
				n++
				if c.Op == contract.OpForget {
					r.Forgot()
					return true, nil
				}
				rv := recs.Get(c.ID)
				if rv == nil {
					return true, nil
				}
				s, err := e.codec.decode(rv, partHit, parseNS)
				if err != nil {
					return false, err
				}
				r.Add(s.ord, s.text)
				return true, nil
			})
		})
		if err != nil {
			r.Abandon()
			return true, contract.EngineErr("replay the content index: %w", err)
		}
		if n == 0 {
			break
		}
	}
	if r.Finish() {
		e.drainContent()
	}
	return true, nil
}

// drainContent folds queued texts into the content index and starts a
// rewrite of its file when one is due.
func (e *Engine) drainContent() {
	e.tri.Drain()
	e.kickContentRewrite()
}

// kickContentRewrite starts rewriting the content index file in the
// background when one is due and none is running.
func (e *Engine) kickContentRewrite() {
	if !e.largeStore || !e.tri.RewriteDue() {
		return
	}
	e.startOnce(e.tri.Rewriting(), func() bool {
		if err := e.rewriteContent(); err != nil {
			if !errors.Is(err, contentfile.ErrStopped) {
				e.log.Error("rewriting the content index file failed", "err", err)
			}
			return false
		}
		// Forgets or records that came during the rewrite.
		return e.tri.RewriteDue()
	})
}

// rewriteContent writes the file anew from the old one and the overlay,
// leaving out the records no longer in the table, then swaps it in. Only the
// copy is taken under the locks; the write runs beside writers and readers.
func (e *Engine) rewriteContent() error {
	release := e.tri.HoldFile()
	defer release()
	e.mu.RLock()
	if !e.tables.loaded.Load() {
		e.mu.RUnlock()
		return contentfile.ErrStopped // the next drain after the load starts it
	}
	// Writers wait on mu, so after the drain in BeginRewrite nothing
	// committed is queued.
	w, err := e.tri.BeginRewrite()
	if err != nil {
		e.mu.RUnlock()
		return err
	}
	pos, gone := e.contentPosition()
	e.mu.RUnlock()
	return w.Finish(pos, gone, e.closed.Load)
}

// contentPosition is the store's position for a content index file, and
// the ordinals below nextOrd whose records are no longer in the table: a
// file is written without them. The caller holds mu.
func (e *Engine) contentPosition() (trigram.Position, *roaring.Bitmap) {
	gone := roaring.New()
	for ord := range min(int(e.nextOrd), len(e.t.alive)) {
		if !e.t.alive[ord] {
			gone.Add(uint32(ord))
		}
	}
	return trigram.Position{FeedSeq: e.feed.Seq(), NextOrd: e.nextOrd}, gone
}

// saveGrownContent writes the content index of a store that opened small
// and grew large to its file, as a build on a large store would have.
// Close calls it once no writer or background work runs.
func (e *Engine) saveGrownContent() error {
	e.tri.Drain()
	// The engine's lock before the index's, as everywhere.
	e.mu.RLock()
	pos, gone := e.contentPosition()
	e.mu.RUnlock()
	return e.tri.SaveGrown(pos, gone)
}

// contentCorrupt rebuilds the content index from the records after a posting
// of its file failed its checksum; content filters scan meanwhile. It runs
// on its own goroutine: it is called under the index's read lock, inside a
// call that Close may be waiting for.
func (e *Engine) contentCorrupt() {
	e.log.Error("the content index file failed a checksum; rebuilding it from the records")
	go func() {
		e.closeMu.Lock()
		defer e.closeMu.Unlock()
		if e.closed.Load() {
			return
		}
		e.goBackground(func() {
			e.tri.Discard()
			if err := e.buildTrigrams(); err != nil {
				e.log.Error("content index build failed", "err", err)
			}
		})
	}()
}
