package bolt

import (
	"cmp"
	"errors"
	"maps"
	"os"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/RoaringBitmap/roaring/v2"
	bbolt "go.etcd.io/bbolt"

	"mnemo/contract"
	"mnemo/engine/bolt/internal/contentfile"
	"mnemo/engine/bolt/internal/feed"
)

// trigramIndex maps every byte trigram of a record's case-folded rendered
// text to the ordinals holding it. It is a prefilter for content filters: the
// candidates it returns are a superset (ordinals of forgotten records stay
// until the postings are next written, which costs nothing since ordinals are
// never reused and browse verifies every candidate against the snapshot's
// text).
//
// On a large store the postings live in a file (base, contentfile.go), read
// in place, and post holds only the records added since the file was
// written; on a small one everything is in post. Writers only queue their
// texts (pending); the index worker folds them into post off the write path
// (drain). Until then a queued record is a candidate of every needle, so the
// superset rule holds at every moment.
type trigramIndex struct {
	// fileMu keeps base mapped while a rewrite reads it outside mu; suspend
	// and close take it before unmapping.
	fileMu sync.Mutex
	// drainMu lets one drain run at a time (it takes the queue's prefix).
	drainMu  sync.Mutex
	mu       sync.RWMutex
	ready    bool
	building bool
	base     *contentfile.File
	post     map[uint32]*roaring.Bitmap
	pending  []pendingText
	// gen counts suspensions, so a build that began before one is dropped.
	gen int
	// common holds the trigrams found in more than commonShare of the
	// records: their postings are dropped (they narrow nothing and held most
	// of the index's memory), and a needle made only of them is not narrowed.
	common map[uint32]bool
	maxOrd uint32
	// added counts the ordinals post holds beside base, dead the forgotten
	// records base still names: together they say when base is rewritten.
	added, dead int
	// corrupt is set when a posting of base failed its checksum; the
	// engine's onCorrupt rebuilds the index from the records.
	corrupt   atomic.Bool
	onCorrupt func()
}

// commonShare: a trigram in more than 1/commonShare of the records (and in
// at least commonFloor) is common.
const (
	commonShare = 32
	commonFloor = 2048
)

// pruneCommon moves the touched trigrams that became common out of the
// postings; the caller holds mu.
func (x *trigramIndex) pruneCommon(touched []uint32) {
	limit := uint64(max(commonFloor, int(x.maxOrd)/commonShare))
	for _, g := range touched {
		if b := x.post[g]; b != nil && b.GetCardinality()+x.base.Card(g) > limit {
			delete(x.post, g)
			x.common[g] = true
		}
	}
}

func (x *trigramIndex) grams() []uint32 {
	out := make([]uint32, 0, len(x.post))
	for g := range x.post {
		out = append(out, g)
	}
	return out
}

// pendingText is a record's rendered text, not yet folded.
type pendingText struct {
	ord  uint32
	text string
}

func newTrigramIndex() *trigramIndex {
	return &trigramIndex{post: map[uint32]*roaring.Bitmap{}, common: map[uint32]bool{}}
}

func trigramsOf(folded string) []uint32 {
	if len(folded) < 3 {
		return nil
	}
	out := make([]uint32, 0, len(folded)-2)
	for i := 0; i+3 <= len(folded); i++ {
		out = append(out, uint32(folded[i])<<16|uint32(folded[i+1])<<8|uint32(folded[i+2]))
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// buildChunk is how many records a build reads before it adds their
// trigrams to the postings, sorted by ordinal (a few tens of MB of text).
const buildChunk = 32 << 10

// addChunk adds records' trigrams to the postings: sorted by ordinal, each
// trigram's ordinals go in as one sorted run.
func addChunk(post map[uint32]*roaring.Bitmap, chunk []pendingText) {
	slices.SortFunc(chunk, func(a, b pendingText) int { return cmp.Compare(a.ord, b.ord) })
	grams, groups := groupTrigrams(chunk)
	addGroups(post, grams, groups)
}

// addBatch queues new records' texts; writers call it under the engine's
// write lock, and it costs an append.
func (x *trigramIndex) addBatch(batch []pendingText) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.ready || x.building {
		x.pending = append(x.pending, batch...)
	}
}

func (x *trigramIndex) isReady() bool {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.ready
}

// suspend drops the postings: content filters scan until buildTrigrams
// runs again.
func (x *trigramIndex) suspend() {
	x.fileMu.Lock()
	defer x.fileMu.Unlock()
	x.drainMu.Lock()
	defer x.drainMu.Unlock()
	x.mu.Lock()
	defer x.mu.Unlock()
	x.ready, x.building = false, false
	x.gen++
	x.post, x.pending, x.common, x.maxOrd = map[uint32]*roaring.Bitmap{}, nil, map[uint32]bool{}, 0
	_ = x.base.Close()
	x.base, x.added, x.dead = nil, 0, 0
	x.corrupt.Store(false)
}

// drain folds the queued texts into the postings. The grouping runs outside
// the lock; only the bitmap updates hold it.
func (x *trigramIndex) drain() {
	x.drainMu.Lock()
	defer x.drainMu.Unlock()
	x.mu.Lock()
	if !x.ready || x.building || len(x.pending) == 0 {
		x.mu.Unlock()
		return
	}
	batch := x.pending
	x.mu.Unlock()
	grams, groups := groupTrigrams(batch)
	x.mu.Lock()
	defer x.mu.Unlock()
	for _, p := range batch {
		x.maxOrd = max(x.maxOrd, p.ord)
	}
	kept := grams[:0:0]
	keptGroups := groups[:0:0]
	for k, g := range grams {
		if !x.common[g] {
			kept, keptGroups = append(kept, g), append(keptGroups, groups[k])
		}
	}
	addGroups(x.post, kept, keptGroups)
	x.pruneCommon(kept)
	if x.base != nil {
		x.added += len(batch)
	}
	// Writers may have queued more meanwhile; only the drained prefix goes.
	x.pending = append(x.pending[:0:0], x.pending[len(batch):]...)
}

// groupTrigrams folds each text and groups the ordinals by trigram in one
// pass: the batch comes in ordinal order, so each group is already sorted,
// and a record's repeated trigrams are the group's last entry. This replaced
// a sort of every (trigram, ordinal) pair, which cost more than the bitmaps.
func groupTrigrams(batch []pendingText) ([]uint32, [][]uint32) {
	slot := make(map[uint32]int32, 1024)
	var grams []uint32
	var groups [][]uint32
	for _, p := range batch {
		f := contract.FoldCase(p.text)
		for i := 0; i+3 <= len(f); i++ {
			g := uint32(f[i])<<16 | uint32(f[i+1])<<8 | uint32(f[i+2])
			k, ok := slot[g]
			if !ok {
				k = int32(len(groups))
				slot[g] = k
				grams = append(grams, g)
				groups = append(groups, nil)
			}
			ords := groups[k]
			if n := len(ords); n > 0 && ords[n-1] == p.ord {
				continue
			}
			groups[k] = append(ords, p.ord)
		}
	}
	return grams, groups
}

func addGroups(post map[uint32]*roaring.Bitmap, grams []uint32, groups [][]uint32) {
	for k, g := range grams {
		b := post[g]
		if b == nil {
			b = roaring.New()
			post[g] = b
		}
		b.AddMany(groups[k])
	}
}

// candidates returns the ordinals whose text may contain the folded needle,
// and false when the index cannot narrow it (not built, a needle shorter
// than a trigram, or a posting of the file that failed its checksum). The
// result is the caller's own: nothing in it refers to the file.
func (x *trigramIndex) candidates(foldedNeedle string) (*roaring.Bitmap, bool) {
	grams := trigramsOf(foldedNeedle)
	if len(grams) == 0 {
		return nil, false
	}
	x.mu.RLock()
	defer x.mu.RUnlock()
	if !x.ready || x.corrupt.Load() {
		return nil, false
	}
	out := roaring.New()
	bms := make([]*roaring.Bitmap, 0, len(grams))
	narrowing := false
	for _, g := range grams {
		if x.common[g] {
			continue
		}
		narrowing = true
		b, err := x.base.Posting(g)
		if err != nil {
			if !x.corrupt.Swap(true) && x.onCorrupt != nil {
				x.onCorrupt()
			}
			return nil, false
		}
		if o := x.post[g]; o != nil {
			if b == nil {
				b = o.Clone()
			} else {
				b.Or(o)
			}
		}
		if b == nil {
			bms = nil
			break
		}
		bms = append(bms, b)
	}
	if !narrowing {
		return nil, false
	}
	if len(bms) > 0 {
		slices.SortFunc(bms, func(a, b *roaring.Bitmap) int { return int(a.GetCardinality()) - int(b.GetCardinality()) })
		out = bms[0]
		for _, b := range bms[1:] {
			out.And(b)
			if out.IsEmpty() {
				break
			}
		}
	}
	for _, p := range x.pending {
		out.Add(p.ord)
	}
	// Postings read leave their pages mapped; let them go, as the store's
	// own pages go (releasePages).
	x.base.Release(releaseMappedEvery)
	return out, true
}

// releaseMappedEvery is how many posting bytes are read between two
// releases of the file's pages.
const releaseMappedEvery = 16 << 20

// buildTrigrams fills the index: on a large store from its file when that
// describes a recent enough state of the store (openTrigrams), else from the
// records in chunks (never one long read transaction, which would hold back
// bbolt's remapping), writing the file for the next process. Records written
// meanwhile are queued by addBatch and merged at the end.
func (e *Engine) buildTrigrams() error {
	x := e.tri
	x.mu.Lock()
	x.building = true
	x.pending = nil
	gen := x.gen
	x.mu.Unlock()
	if e.largeStore {
		if done, err := e.openTrigrams(gen); done || err != nil {
			return err
		}
	}
	// Every record whose change is at or before feedSeq is read below or
	// queued, so the file written from this build describes feedSeq.
	e.mu.RLock()
	feedSeq, nextOrd := e.feed.Seq(), e.nextOrd
	e.mu.RUnlock()
	post := map[uint32]*roaring.Bitmap{}
	var after []byte
	var maxOrd uint32
	// Records come in id order, so their ordinals in no order; a chunk of
	// them sorted by ordinal goes into the bitmaps a sorted run a trigram
	// (addChunk), where one Add a trigram and record cost three times more.
	var chunk []pendingText
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
				s, err := decodeRecord(v, partHit, parseNS)
				if err != nil {
					return err
				}
				chunk = append(chunk, pendingText{s.ord, s.text})
				maxOrd = max(maxOrd, s.ord)
				after = append(after[:0], k...)
				n++
			}
			return nil
		})
		if err != nil {
			return contract.EngineErr("build content index: %w", err)
		}
		e.scanned(n, n == 0)
		if len(chunk) >= buildChunk || n == 0 {
			addChunk(post, chunk)
			chunk = chunk[:0]
		}
		if n == 0 {
			break
		}
	}
	var base *contentfile.File
	common := map[uint32]bool{}
	if e.largeStore {
		limit := uint64(max(commonFloor, int(maxOrd)/commonShare))
		for g, b := range post {
			if b.GetCardinality() > limit {
				common[g] = true
				delete(post, g)
			}
		}
		snap := contentfile.Snapshot{FeedSeq: feedSeq, NextOrd: nextOrd, MaxOrd: maxOrd,
			Commons: slices.Sorted(maps.Keys(common)), Grams: slices.Sorted(maps.Keys(post)),
			Posting: func(g uint32) (*roaring.Bitmap, error) { return post[g], nil }, Stop: e.closed.Load}
		var err error
		if base, err = e.persistContent(snap); err != nil {
			e.log.Error("writing the content index file failed; the next open rebuilds it", "err", err)
		} else {
			post = map[uint32]*roaring.Bitmap{}
		}
	}
	x.mu.Lock()
	if x.gen != gen {
		// Suspended meanwhile (a bulk load began): a later build takes over.
		x.mu.Unlock()
		_ = base.Close()
		return nil
	}
	for g, b := range post {
		if cur := x.post[g]; cur != nil {
			b.Or(cur)
		}
		x.post[g] = b
	}
	maps.Copy(x.common, common)
	x.base = base
	x.maxOrd = max(x.maxOrd, maxOrd)
	x.pruneCommon(x.grams())
	x.building = false
	x.ready = true
	x.mu.Unlock()
	e.drainContent()
	return nil
}

// persistContent writes the content index file and maps it back.
func (e *Engine) persistContent(s contentfile.Snapshot) (*contentfile.File, error) {
	path := contentfile.Path(e.dir)
	if err := contentfile.Write(path, s); err != nil {
		return nil, err
	}
	f, err := contentfile.Open(path)
	if err == nil && f == nil {
		err = errors.New("the file vanished")
	}
	return f, err
}

// replayLimit is how many changes after its file's position an open replays
// before it rebuilds the content index from the records instead.
func replayLimit(f *contentfile.File) uint64 { return max(100_000, uint64(f.NextOrd())/4) }

// openTrigrams takes the content index from its file and replays the changes
// after the file's position into the overlay: every record a change names
// that still exists joins it (a superset, whatever the op), and forgets are
// counted so the file is rewritten without them. It reports false when the
// file is missing, unreadable or too far behind; a file that fails its checks
// is removed.
func (e *Engine) openTrigrams(gen int) (bool, error) {
	x := e.tri
	path := contentfile.Path(e.dir)
	f, err := contentfile.Open(path)
	if err != nil {
		e.log.Warn("the content index file is unusable; rebuilding it from the records", "err", err)
		_ = os.Remove(path)
		return false, nil
	}
	if f == nil {
		return false, nil
	}
	e.mu.RLock()
	head, nextOrd := e.feed.Seq(), e.nextOrd
	e.mu.RUnlock()
	if f.FeedSeq() > head || f.FeedSeq() < e.feed.Pruned() || f.NextOrd() > nextOrd || head-f.FeedSeq() > replayLimit(f) {
		_ = f.Close()
		return false, nil
	}
	overlay := map[uint32]*roaring.Bitmap{}
	added, dead, maxOrd := 0, 0, f.MaxOrd()
	commons := map[uint32]bool{}
	for _, g := range f.Commons() {
		commons[g] = true
	}
	after := f.FeedSeq()
	for {
		select {
		case <-e.closing:
			_ = f.Close()
			return true, nil
		default:
		}
		n := 0
		err := e.db.View(func(tx *bbolt.Tx) error {
			recs := tx.Bucket(bucketRecords)
			return e.feed.Scan(tx, after, parseNS, func(seq uint64, c feed.Entry) (bool, error) {
				if n == 2000 {
					return false, nil
				}
				after = seq
				n++
				if c.Op == contract.OpForget {
					dead++
					return true, nil
				}
				rv := recs.Get([]byte(c.ID))
				if rv == nil {
					return true, nil
				}
				s, err := decodeRecord(rv, partHit, parseNS)
				if err != nil {
					return false, err
				}
				added++
				maxOrd = max(maxOrd, s.ord)
				for _, g := range trigramsOf(contract.FoldCase(s.text)) {
					if commons[g] {
						continue
					}
					b := overlay[g]
					if b == nil {
						b = roaring.New()
						overlay[g] = b
					}
					b.Add(s.ord)
				}
				return true, nil
			})
		})
		if err != nil {
			_ = f.Close()
			return true, contract.EngineErr("replay the content index: %w", err)
		}
		if n == 0 {
			break
		}
	}
	x.mu.Lock()
	if x.gen != gen {
		x.mu.Unlock()
		_ = f.Close()
		return true, nil
	}
	x.base, x.post, x.common = f, overlay, commons
	x.maxOrd, x.added, x.dead = max(x.maxOrd, maxOrd), added, dead
	x.pruneCommon(x.grams())
	x.building = false
	x.ready = true
	x.mu.Unlock()
	e.drainContent()
	return true, nil
}

// drainContent folds queued texts into the content index and starts a
// rewrite of its file when one is due.
func (e *Engine) drainContent() {
	e.tri.drain()
	e.kickContentRewrite()
}

// contentRewriteDue: the file names forgotten records (a forget must not
// leave their trigrams on disk longer than a rewrite takes), or the overlay
// has grown past a thirty-second of the file.
func (x *trigramIndex) contentRewriteDue() bool {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.ready && !x.building && x.base != nil && !x.corrupt.Load() &&
		(x.dead > 0 || x.added >= max(4096, int(x.base.NextOrd())/32))
}

// forgot notes that n records left the store.
func (x *trigramIndex) forgot(n int) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.base != nil {
		x.dead += n
	}
}

// kickContentRewrite starts rewriting the content index file in the
// background when one is due and none is running.
func (e *Engine) kickContentRewrite() {
	if !e.largeStore || !e.tri.contentRewriteDue() {
		return
	}
	e.startOnce(&e.contentRewriting, func() bool {
		if err := e.rewriteContent(); err != nil {
			if !errors.Is(err, contentfile.ErrStopped) {
				e.log.Error("rewriting the content index file failed", "err", err)
			}
			return false
		}
		// Forgets or records that came during the rewrite.
		return e.tri.contentRewriteDue()
	})
}

// rewriteContent writes the file anew from the old one and the overlay,
// leaving out the records no longer in the table, then swaps it in. Only the
// snapshot is taken under the locks; the write runs beside writers and
// readers.
func (e *Engine) rewriteContent() error {
	x := e.tri
	x.fileMu.Lock()
	defer x.fileMu.Unlock()
	e.mu.RLock()
	if !e.tables.loaded.Load() {
		e.mu.RUnlock()
		return contentfile.ErrStopped // the next drain after the load starts it
	}
	// Writers wait on mu, so after this drain nothing committed is queued.
	x.drain()
	x.mu.RLock()
	old, gen := x.base, x.gen
	if old == nil || !x.ready {
		x.mu.RUnlock()
		e.mu.RUnlock()
		return contentfile.ErrStopped
	}
	overlay := make(map[uint32]*roaring.Bitmap, len(x.post))
	for g, b := range x.post {
		overlay[g] = b.Clone()
	}
	commons := slices.Sorted(maps.Keys(x.common))
	added, dead, maxOrd := x.added, x.dead, x.maxOrd
	x.mu.RUnlock()
	feedSeq, nextOrd := e.feed.Seq(), e.nextOrd
	gone := e.goneOrdinals()
	e.mu.RUnlock()
	grams := make([]uint32, 0, old.Grams()+len(overlay))
	old.EachGram(func(g uint32) bool { grams = append(grams, g); return true })
	for g := range overlay {
		grams = append(grams, g)
	}
	slices.Sort(grams)
	grams = slices.Compact(grams)
	isCommon := map[uint32]bool{}
	for _, g := range commons {
		isCommon[g] = true
	}
	grams = slices.DeleteFunc(grams, func(g uint32) bool { return isCommon[g] })
	snap := contentfile.Snapshot{FeedSeq: feedSeq, NextOrd: nextOrd, MaxOrd: maxOrd, Commons: commons, Grams: grams,
		Stop: e.closed.Load,
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
	f, err := e.persistContent(snap)
	if err != nil {
		return err
	}
	x.mu.Lock()
	if x.gen != gen || x.base != old {
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
	x.added -= added
	x.dead -= dead
	x.mu.Unlock()
	return old.Close()
}

// goneOrdinals are the ordinals below nextOrd whose records are no longer in
// the table: a content index file is written without them. The caller holds
// mu.
func (e *Engine) goneOrdinals() *roaring.Bitmap {
	gone := roaring.New()
	for ord := range min(int(e.nextOrd), len(e.t.alive)) {
		if !e.t.alive[ord] {
			gone.Add(uint32(ord))
		}
	}
	return gone
}

// saveGrownContent writes the content index of a store that opened small
// and grew large to its file, as a build on a large store would have: the
// common trigrams left out, the forgotten records' ordinals removed. Close
// calls it once no writer or background work runs, so the postings are read
// without a copy.
func (e *Engine) saveGrownContent() error {
	x := e.tri
	x.drain()
	// The engine's lock before the index's, as everywhere.
	e.mu.RLock()
	feedSeq, nextOrd := e.feed.Seq(), e.nextOrd
	gone := e.goneOrdinals()
	e.mu.RUnlock()
	x.mu.RLock()
	defer x.mu.RUnlock()
	if !x.ready || x.building || x.base != nil {
		return nil
	}
	limit := uint64(max(commonFloor, int(x.maxOrd)/commonShare))
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
	snap := contentfile.Snapshot{FeedSeq: feedSeq, NextOrd: nextOrd, MaxOrd: x.maxOrd,
		Commons: slices.Sorted(maps.Keys(common)), Grams: grams,
		Posting: func(g uint32) (*roaring.Bitmap, error) {
			return roaring.AndNot(x.post[g], gone), nil
		}}
	return contentfile.Write(contentfile.Path(e.dir), snap)
}

// close unmaps the file; the engine calls it once no call or background
// work can read the index.
func (x *trigramIndex) close() {
	x.fileMu.Lock()
	defer x.fileMu.Unlock()
	x.mu.Lock()
	defer x.mu.Unlock()
	_ = x.base.Close()
	x.base, x.ready = nil, false
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
			e.tri.suspend()
			_ = os.Remove(contentfile.Path(e.dir))
			if err := e.buildTrigrams(); err != nil {
				e.log.Error("content index build failed", "err", err)
			}
		})
	}()
}
