package trigram

import (
	"cmp"
	"maps"
	"os"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/RoaringBitmap/roaring/v2"

	"mnemo/contract"
	"mnemo/engine/bolt/internal/contentfile"
)

// Index is a store's content index. It is safe for concurrent use.
type Index struct {
	// path is the index file's path (contentfile.Path of the store's dir).
	path string
	// fileMu keeps base mapped while a rewrite reads it outside mu; Suspend
	// and Close take it before unmapping.
	fileMu sync.Mutex
	// drainMu lets one drain run at a time (it takes the queue's prefix).
	drainMu  sync.Mutex
	mu       sync.RWMutex
	ready    bool
	building bool
	base     *contentfile.File
	post     map[uint32]*roaring.Bitmap
	pending  []Text
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
	// corrupt is set when a posting of base failed its checksum; onCorrupt
	// (the engine's) rebuilds the index from the records.
	corrupt   atomic.Bool
	onCorrupt func()
	// rewriting: a rewrite of the file is running (the engine's background
	// work sets and clears it).
	rewriting atomic.Bool
}

// Text is a record's rendered text (not yet folded) at its ordinal.
type Text struct {
	Ord  uint32
	Text string
}

// Position is the state of the store an index file describes: the change
// feed's position and the next ordinal to be given.
type Position struct {
	FeedSeq uint64
	NextOrd uint32
}

// commonShare: a trigram in more than 1/commonShare of the records (and in
// at least commonFloor) is common.
const (
	commonShare = 32
	commonFloor = 2048
)

// New returns an empty index, not ready until a Build or a Replay is
// installed, whose file is at path. onCorrupt is called (under the index's
// read lock, once per suspension) when a posting of the file fails its
// checksum.
func New(path string, onCorrupt func()) *Index {
	return &Index{path: path, post: map[uint32]*roaring.Bitmap{}, common: map[uint32]bool{}, onCorrupt: onCorrupt}
}

// commonLimit is how many records a trigram may be in before it is common.
func commonLimit(maxOrd uint32) uint64 { return uint64(max(commonFloor, int(maxOrd)/commonShare)) }

// pruneCommon moves the touched trigrams that became common out of the
// postings; the caller holds mu.
func (x *Index) pruneCommon(touched []uint32) {
	limit := commonLimit(x.maxOrd)
	for _, g := range touched {
		if b := x.post[g]; b != nil && b.GetCardinality()+x.base.Card(g) > limit {
			delete(x.post, g)
			x.common[g] = true
		}
	}
}

func (x *Index) grams() []uint32 {
	out := make([]uint32, 0, len(x.post))
	for g := range x.post {
		out = append(out, g)
	}
	return out
}

// Grams returns the distinct trigrams of a folded text, sorted.
func Grams(folded string) []uint32 {
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
func addChunk(post map[uint32]*roaring.Bitmap, chunk []Text) {
	slices.SortFunc(chunk, func(a, b Text) int { return cmp.Compare(a.Ord, b.Ord) })
	grams, groups := groupTrigrams(chunk)
	addGroups(post, grams, groups)
}

// Add queues new records' texts; writers call it under the engine's write
// lock, and it costs an append.
func (x *Index) Add(batch []Text) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.ready || x.building {
		x.pending = append(x.pending, batch...)
	}
}

// Ready tells whether the index narrows content filters now.
func (x *Index) Ready() bool {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.ready
}

// Suspend drops the postings: content filters scan until a build is
// installed again, and a build begun before is dropped.
func (x *Index) Suspend() {
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

// Discard suspends the index and removes its file, so the next build reads
// the records (the file said something wrong).
func (x *Index) Discard() {
	x.Suspend()
	_ = os.Remove(x.path)
}

// Drain folds the queued texts into the postings. The grouping runs outside
// the lock; only the bitmap updates hold it.
func (x *Index) Drain() {
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
		x.maxOrd = max(x.maxOrd, p.Ord)
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
func groupTrigrams(batch []Text) ([]uint32, [][]uint32) {
	var slots gramSlots
	var grams []uint32
	var groups [][]uint32
	for _, p := range batch {
		f := contract.FoldCase(p.Text)
		for i := 0; i+3 <= len(f); i++ {
			g := uint32(f[i])<<16 | uint32(f[i+1])<<8 | uint32(f[i+2])
			slot := slots.of(g)
			k := *slot - 1
			if k < 0 {
				k = int32(len(groups))
				*slot = k + 1
				grams = append(grams, g)
				groups = append(groups, nil)
			}
			ords := groups[k]
			if n := len(ords); n > 0 && ords[n-1] == p.Ord {
				continue
			}
			groups[k] = append(ords, p.Ord)
		}
	}
	return grams, groups
}

// gramSlots maps each trigram of a batch to its group, one plus the
// group's index (0: none yet): a page of 256 slots for each two-byte prefix
// met, found through a table of all 65,536 prefixes. It replaced a Go map,
// whose lookup for every trigram of every text was most of the content
// index's build (6.6 of 9.2 s of CPU at 100k records); texts use a few
// thousand prefixes (any two bytes, at most 64 MB of pages).
type gramSlots struct {
	// page is one plus the index in pages of each prefix's page (0: none).
	page  []int32
	pages [][256]int32
}

func (s *gramSlots) of(g uint32) *int32 {
	if s.page == nil {
		s.page = make([]int32, 1<<16)
	}
	p := s.page[g>>8]
	if p == 0 {
		s.pages = append(s.pages, [256]int32{})
		p = int32(len(s.pages))
		s.page[g>>8] = p
	}
	return &s.pages[p-1][g&0xff]
}

func addGroups(post map[uint32]*roaring.Bitmap, grams []uint32, groups [][]uint32) {
	for k, g := range grams {
		b, ords := post[g], groups[k]
		switch {
		case b == nil:
			post[g] = roaring.BitmapOf(ords...)
		case b.IsEmpty() || ords[0] > b.Maximum():
			b.AddMany(ords) // after everything in b: appended
		default:
			// Ordinals among b's, as a build reading records by id meets
			// them: a merge, container by container. Added one by one, each
			// was a search and a move of the rest of its array; at 1M that
			// was 26 of a build's 54 s.
			b.Or(roaring.BitmapOf(ords...))
		}
	}
}

// Candidates returns the ordinals whose text may contain the folded needle,
// and false when the index cannot narrow it (not built, a needle shorter
// than a trigram, or a posting of the file that failed its checksum). The
// result is the caller's own: nothing in it refers to the file.
func (x *Index) Candidates(foldedNeedle string) (*roaring.Bitmap, bool) {
	grams := Grams(foldedNeedle)
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
		out.Add(p.Ord)
	}
	// Postings read leave their pages mapped; let them go, as the store's
	// own pages go.
	x.base.Release(releaseMappedEvery)
	return out, true
}

// releaseMappedEvery is how many posting bytes are read between two
// releases of the file's pages.
const releaseMappedEvery = 16 << 20

// RewriteDue: the file names forgotten records (a forget must not leave
// their trigrams on disk longer than a rewrite takes), or the overlay has
// grown past a thirty-second of the file.
func (x *Index) RewriteDue() bool {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.ready && !x.building && x.base != nil && !x.corrupt.Load() &&
		(x.dead > 0 || x.added >= max(4096, int(x.base.NextOrd())/32))
}

// Rewriting is set while a rewrite of the file runs (the engine starts one
// at a time with it).
func (x *Index) Rewriting() *atomic.Bool { return &x.rewriting }

// Forgot notes that n records left the store.
func (x *Index) Forgot(n int) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.base != nil {
		x.dead += n
	}
}

// Close unmaps the file; the engine calls it once no call or background
// work can read the index.
func (x *Index) Close() {
	x.fileMu.Lock()
	defer x.fileMu.Unlock()
	x.mu.Lock()
	defer x.mu.Unlock()
	_ = x.base.Close()
	x.base, x.ready = nil, false
}

// persist writes the index file and maps it back.
func (x *Index) persist(s contentfile.Snapshot) (*contentfile.File, error) {
	if err := contentfile.Write(x.path, s); err != nil {
		return nil, err
	}
	f, err := contentfile.Open(x.path)
	if err == nil && f == nil {
		err = errFileVanished
	}
	return f, err
}

// sortedKeys returns a set's members, sorted.
func sortedKeys(m map[uint32]bool) []uint32 { return slices.Sorted(maps.Keys(m)) }
