package bolt

import (
	"slices"
	"sync"

	"github.com/RoaringBitmap/roaring/v2"
	bbolt "go.etcd.io/bbolt"

	"mnemo/contract"
)

// trigramIndex maps every byte trigram of a record's case-folded rendered
// text to the ordinals holding it. It is a prefilter for content filters: the
// candidates it returns are a superset (ordinals of forgotten records stay
// until the next open, which costs nothing since ordinals are never reused and
// browse verifies every candidate against the snapshot's text).
//
// Writers only queue their texts (pending); the index worker folds them into
// the postings off the write path (drain). Until then a queued record is a
// candidate of every needle, so the superset rule holds at every moment.
type trigramIndex struct {
	// drainMu lets one drain run at a time (it takes the queue's prefix).
	drainMu  sync.Mutex
	mu       sync.RWMutex
	ready    bool
	building bool
	post     map[uint32]*roaring.Bitmap
	pending  []pendingText
	// gen counts suspensions, so a build that began before one is dropped.
	gen int
	// common holds the trigrams found in more than commonShare of the
	// records: their postings are dropped (they narrow nothing and held most
	// of the index's memory), and a needle made only of them is not narrowed.
	common map[uint32]bool
	maxOrd uint32
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
		if b := x.post[g]; b != nil && b.GetCardinality() > limit {
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

func addTrigrams(post map[uint32]*roaring.Bitmap, ord uint32, folded string) {
	for _, g := range trigramsOf(folded) {
		b := post[g]
		if b == nil {
			b = roaring.New()
			post[g] = b
		}
		b.Add(ord)
	}
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
	x.drainMu.Lock()
	defer x.drainMu.Unlock()
	x.mu.Lock()
	defer x.mu.Unlock()
	x.ready, x.building = false, false
	x.gen++
	x.post, x.pending, x.common, x.maxOrd = map[uint32]*roaring.Bitmap{}, nil, map[uint32]bool{}, 0
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
// and false when the index cannot narrow it (not built, or a needle shorter
// than a trigram).
func (x *trigramIndex) candidates(foldedNeedle string) (*roaring.Bitmap, bool) {
	grams := trigramsOf(foldedNeedle)
	if len(grams) == 0 {
		return nil, false
	}
	x.mu.RLock()
	defer x.mu.RUnlock()
	if !x.ready {
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
		b := x.post[g]
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
		out = bms[0].Clone()
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
	return out, true
}

// buildTrigrams fills the index from the record in chunks (never one long
// read transaction, which would hold back bbolt's remapping); records written
// meanwhile are queued by add and merged at the end.
func (e *Engine) buildTrigrams() error {
	x := e.tri
	x.mu.Lock()
	x.building = true
	x.pending = nil
	gen := x.gen
	x.mu.Unlock()
	post := map[uint32]*roaring.Bitmap{}
	var after []byte
	var maxOrd uint32
	for {
		select {
		case <-e.closing:
			return nil
		default:
		}
		n := 0
		err := e.db.View(func(tx *bbolt.Tx) error {
			c := tx.Bucket(bucketRecords).Cursor()
			k, v := c.First()
			if after != nil {
				k, v = c.Seek(after)
				if k != nil && string(k) == string(after) {
					k, v = c.Next()
				}
			}
			for ; k != nil && n < 2000; k, v = c.Next() {
				s, err := decodeRecord(v, partHit, parseNS)
				if err != nil {
					return err
				}
				addTrigrams(post, s.ord, contract.FoldCase(s.text))
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
		if n == 0 {
			break
		}
	}
	x.mu.Lock()
	if x.gen != gen {
		// Suspended meanwhile (a bulk load began): a later build takes over.
		x.mu.Unlock()
		return nil
	}
	for g, b := range post {
		if cur := x.post[g]; cur != nil {
			b.Or(cur)
		}
		x.post[g] = b
	}
	x.maxOrd = max(x.maxOrd, maxOrd)
	x.pruneCommon(x.grams())
	x.building = false
	x.ready = true
	x.mu.Unlock()
	x.drain()
	return nil
}
