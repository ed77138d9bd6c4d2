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
type trigramIndex struct {
	mu       sync.RWMutex
	ready    bool
	building bool
	post     map[uint32]*roaring.Bitmap
	pending  []pendingText
}

type pendingText struct {
	ord    uint32
	folded string
}

func newTrigramIndex() *trigramIndex { return &trigramIndex{post: map[uint32]*roaring.Bitmap{}} }

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

// addBatch records new records' texts; writers call it under the engine's
// write lock. Postings are grouped by trigram first, so each bitmap takes one
// AddMany per batch instead of one Add per record.
func (x *trigramIndex) addBatch(batch []pendingText) {
	x.mu.Lock()
	defer x.mu.Unlock()
	switch {
	case x.ready:
		addTrigramBatch(x.post, batch)
	case x.building:
		x.pending = append(x.pending, batch...)
	}
}

func addTrigramBatch(post map[uint32]*roaring.Bitmap, batch []pendingText) {
	// Group the ordinals by trigram in one pass: the batch comes in ordinal
	// order, so each group is already sorted, and a record's repeated
	// trigrams are the group's last entry. This replaced a sort of every
	// (trigram, ordinal) pair, which cost more than the bitmaps themselves.
	slot := make(map[uint32]int32, 1024)
	var grams []uint32
	var groups [][]uint32
	for _, p := range batch {
		f := p.folded
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
	bms := make([]*roaring.Bitmap, 0, len(grams))
	for _, g := range grams {
		b := x.post[g]
		if b == nil {
			return roaring.New(), true
		}
		bms = append(bms, b)
	}
	slices.SortFunc(bms, func(a, b *roaring.Bitmap) int { return int(a.GetCardinality()) - int(b.GetCardinality()) })
	out := bms[0].Clone()
	for _, b := range bms[1:] {
		out.And(b)
		if out.IsEmpty() {
			break
		}
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
	x.mu.Unlock()
	post := map[uint32]*roaring.Bitmap{}
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
				after = append(after[:0], k...)
				n++
			}
			return nil
		})
		if err != nil {
			return contract.EngineErr("build content index: %v", err)
		}
		if n == 0 {
			break
		}
	}
	x.mu.Lock()
	for g, b := range post {
		if cur := x.post[g]; cur != nil {
			b.Or(cur)
		}
		x.post[g] = b
	}
	addTrigramBatch(x.post, x.pending)
	x.pending = nil
	x.building = false
	x.ready = true
	x.mu.Unlock()
	return nil
}
