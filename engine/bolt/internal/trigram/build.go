package trigram

import (
	"errors"
	"maps"
	"os"
	"slices"

	"github.com/RoaringBitmap/roaring/v2"

	"mnemo/contract"
	"mnemo/engine/bolt/internal/contentfile"
)

var errFileVanished = errors.New("the file vanished")

// Build fills the index from the records, which the engine reads in chunks
// (never one long read transaction) and hands to Add; records written
// meanwhile are queued by Index.Add and merged once the build is installed.
type Build struct {
	x      *Index
	gen    int
	post   map[uint32]*roaring.Bitmap
	maxOrd uint32
	// Records come in id order, so their ordinals in no order; a chunk of
	// them sorted by ordinal goes into the bitmaps a sorted run a trigram
	// (addChunk), where one Add a trigram and record cost three times more.
	chunk []Text
}

// BeginBuild starts a build: from now on writers' texts are queued for it.
// A Suspend before the build is installed drops it.
func (x *Index) BeginBuild() *Build {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.building = true
	x.pending = nil
	return &Build{x: x, gen: x.gen, post: map[uint32]*roaring.Bitmap{}}
}

// Add adds a record's text (not yet folded) to the build.
func (b *Build) Add(ord uint32, text string) {
	b.chunk = append(b.chunk, Text{ord, text})
	b.maxOrd = max(b.maxOrd, ord)
	if len(b.chunk) >= buildChunk {
		b.flush()
	}
}

func (b *Build) flush() {
	addChunk(b.post, b.chunk)
	b.chunk = b.chunk[:0]
}

// Finish installs the build. With save (a large store) the common trigrams
// are left out and the postings written to the file at pos, read in place
// from then on; a failed write is returned as err, the postings then stay in
// the heap. installed is false when a Suspend came meanwhile (a later build
// takes over); stop is polled while writing.
func (b *Build) Finish(save bool, pos Position, stop func() bool) (installed bool, err error) {
	x := b.x
	b.flush()
	post := b.post
	var base *contentfile.File
	common := map[uint32]bool{}
	if save {
		limit := commonLimit(b.maxOrd)
		for g, bm := range post {
			if bm.GetCardinality() > limit {
				common[g] = true
				delete(post, g)
			}
		}
		snap := contentfile.Snapshot{FeedSeq: pos.FeedSeq, NextOrd: pos.NextOrd, MaxOrd: b.maxOrd,
			Commons: sortedKeys(common), Grams: slices.Sorted(maps.Keys(post)),
			Posting: func(g uint32) (*roaring.Bitmap, error) { return post[g], nil }, Stop: stop}
		if base, err = x.persist(snap); err == nil {
			post = map[uint32]*roaring.Bitmap{}
		}
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.gen != b.gen {
		_ = base.Close()
		return false, err
	}
	for g, bm := range post {
		if cur := x.post[g]; cur != nil {
			bm.Or(cur)
		}
		x.post[g] = bm
	}
	maps.Copy(x.common, common)
	x.base = base
	x.maxOrd = max(x.maxOrd, b.maxOrd)
	x.pruneCommon(x.grams())
	x.building = false
	x.ready = true
	return true, err
}

// Replay takes the index from its file and replays the changes after the
// file's position into the heap overlay: every record a change names that
// still exists joins it (a superset, whatever the op), and forgets are
// counted so the file is rewritten without them.
type Replay struct {
	x       *Index
	gen     int
	f       *contentfile.File
	overlay map[uint32]*roaring.Bitmap
	commons map[uint32]bool
	added   int
	dead    int
	maxOrd  uint32
}

// Replay opens the index file for the build. It returns nil when there is
// no file; a file that fails its checks is removed and its error returned.
func (b *Build) Replay() (*Replay, error) {
	f, err := contentfile.Open(b.x.path)
	if err != nil {
		_ = os.Remove(b.x.path)
		return nil, err
	}
	if f == nil {
		return nil, nil
	}
	r := &Replay{x: b.x, gen: b.gen, f: f, overlay: map[uint32]*roaring.Bitmap{}, commons: map[uint32]bool{}, maxOrd: f.MaxOrd()}
	for _, g := range f.Commons() {
		r.commons[g] = true
	}
	return r, nil
}

// replayLimit is how many changes after its file's position an open replays
// before it rebuilds the content index from the records instead.
func replayLimit(f *contentfile.File) uint64 { return max(100_000, uint64(f.NextOrd())/4) }

// FeedSeq is the change-feed position the file describes: the replay reads
// the changes after it.
func (r *Replay) FeedSeq() uint64 { return r.f.FeedSeq() }

// Fits tells whether the file can be brought up to the store's state (the
// feed at head, its entries before pruned gone, nextOrd the next ordinal)
// by a replay, not too long; when not, the file is closed and the Replay
// must not be used.
func (r *Replay) Fits(head, pruned uint64, nextOrd uint32) bool {
	f := r.f
	if f.FeedSeq() > head || f.FeedSeq() < pruned || f.NextOrd() > nextOrd || head-f.FeedSeq() > replayLimit(f) {
		_ = f.Close()
		return false
	}
	return true
}

// Forgot counts a forget the replay met.
func (r *Replay) Forgot() { r.dead++ }

// Add adds the text (not yet folded) of a record a change names.
func (r *Replay) Add(ord uint32, text string) {
	r.added++
	r.maxOrd = max(r.maxOrd, ord)
	for _, g := range Grams(contract.FoldCase(text)) {
		if r.commons[g] {
			continue
		}
		b := r.overlay[g]
		if b == nil {
			b = roaring.New()
			r.overlay[g] = b
		}
		b.Add(ord)
	}
}

// Abandon closes the file without installing it.
func (r *Replay) Abandon() { _ = r.f.Close() }

// Finish installs the file and the overlay; false when a Suspend came
// meanwhile (the file is closed).
func (r *Replay) Finish() bool {
	x := r.x
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.gen != r.gen {
		_ = r.f.Close()
		return false
	}
	x.base, x.post, x.common = r.f, r.overlay, r.commons
	x.maxOrd, x.added, x.dead = max(x.maxOrd, r.maxOrd), r.added, r.dead
	x.pruneCommon(x.grams())
	x.building = false
	x.ready = true
	return true
}

// Rewrite is a rewrite of the file from the old one and the overlay,
// leaving out the records no longer in the store, begun by BeginRewrite and
// written by Finish, both inside HoldFile.
type Rewrite struct {
	x       *Index
	old     *contentfile.File
	gen     int
	overlay map[uint32]*roaring.Bitmap
	commons []uint32
	added   int
	dead    int
	maxOrd  uint32
}

// HoldFile keeps the file mapped (Suspend and Close wait) until the
// returned func is called; a rewrite runs inside it.
func (x *Index) HoldFile() (release func()) {
	x.fileMu.Lock()
	return x.fileMu.Unlock
}

// BeginRewrite drains the queue and copies the overlay. The engine calls it
// inside HoldFile and under its own read lock, so nothing committed is left
// queued and the position it reads in the same lock is the one the copy
// describes; the write (Finish) runs after that lock is let go, beside
// writers and readers. Without a file or a ready index it returns
// contentfile.ErrStopped.
func (x *Index) BeginRewrite() (*Rewrite, error) {
	x.Drain()
	x.mu.RLock()
	defer x.mu.RUnlock()
	if x.base == nil || !x.ready {
		return nil, contentfile.ErrStopped
	}
	w := &Rewrite{x: x, old: x.base, gen: x.gen, overlay: make(map[uint32]*roaring.Bitmap, len(x.post)),
		commons: sortedKeys(x.common), added: x.added, dead: x.dead, maxOrd: x.maxOrd}
	for g, b := range x.post {
		w.overlay[g] = b.Clone()
	}
	return w, nil
}

// Finish writes the new file for the store at pos, without the ordinals in
// gone, and swaps it in; contentfile.ErrStopped when stop said so or a
// Suspend came meanwhile.
func (w *Rewrite) Finish(pos Position, gone *roaring.Bitmap, stop func() bool) error {
	x := w.x
	old, overlay := w.old, w.overlay
	grams := make([]uint32, 0, old.Grams()+len(overlay))
	old.EachGram(func(g uint32) bool { grams = append(grams, g); return true })
	for g := range overlay {
		grams = append(grams, g)
	}
	slices.Sort(grams)
	grams = slices.Compact(grams)
	isCommon := map[uint32]bool{}
	for _, g := range w.commons {
		isCommon[g] = true
	}
	grams = slices.DeleteFunc(grams, func(g uint32) bool { return isCommon[g] })
	snap := contentfile.Snapshot{FeedSeq: pos.FeedSeq, NextOrd: pos.NextOrd, MaxOrd: w.maxOrd, Commons: w.commons, Grams: grams,
		Stop: stop,
		Posting: func(g uint32) (*roaring.Bitmap, error) {
			b, err := old.Posting(g)
			if err != nil {
				return nil, err
			}
			if o := overlay[g]; o != nil {
				if b == nil {
					b = o
				} else {
					b.Or(o)
				}
			}
			if b != nil {
				b.AndNot(gone)
			}
			return b, nil
		}}
	f, err := x.persist(snap)
	if err != nil {
		return err
	}
	x.mu.Lock()
	if x.gen != w.gen || x.base != old {
		x.mu.Unlock()
		_ = f.Close()
		return contentfile.ErrStopped
	}
	x.base = f
	for g, b := range overlay {
		if cur := x.post[g]; cur != nil {
			cur.AndNot(b)
			if cur.IsEmpty() {
				delete(x.post, g)
			}
		}
	}
	x.added -= w.added
	x.dead -= w.dead
	x.mu.Unlock()
	return old.Close()
}

// SaveGrown writes the index of a store that opened small and grew large
// to its file at pos, as a build on a large store would have: the common
// trigrams left out, the ordinals in gone removed. The engine calls it once
// no writer or background work runs, after a Drain, so the postings are
// read without a copy. An index with a file, or not ready, writes nothing.
func (x *Index) SaveGrown(pos Position, gone *roaring.Bitmap) error {
	x.mu.RLock()
	defer x.mu.RUnlock()
	if !x.ready || x.building || x.base != nil {
		return nil
	}
	limit := commonLimit(x.maxOrd)
	common := maps.Clone(x.common)
	grams := make([]uint32, 0, len(x.post))
	for g, b := range x.post {
		if b.GetCardinality() > limit {
			common[g] = true
		} else if !common[g] {
			grams = append(grams, g)
		}
	}
	slices.Sort(grams)
	snap := contentfile.Snapshot{FeedSeq: pos.FeedSeq, NextOrd: pos.NextOrd, MaxOrd: x.maxOrd,
		Commons: sortedKeys(common), Grams: grams,
		Posting: func(g uint32) (*roaring.Bitmap, error) {
			return roaring.AndNot(x.post[g], gone), nil
		}}
	return contentfile.Write(x.path, snap)
}
