package bolt

import (
	"container/heap"
	"context"
	"encoding/base64"
	"strings"

	bbolt "go.etcd.io/bbolt"

	"mnemo/contract"
	"mnemo/engine/bolt/internal/idkey"
)

// List pages through the records matching the filter, newest created first,
// then by id; the cursor is the position of the last record returned.
func (e *Engine) List(ctx context.Context, req contract.ListRequest) (contract.ListPage, error) {
	if err := req.Validate(); err != nil {
		return contract.ListPage{}, err
	}
	after, err := decodeListCursor(req.Cursor)
	if err != nil {
		return contract.ListPage{}, err
	}
	if err := e.enter(ctx); err != nil {
		return contract.ListPage{}, err
	}
	defer e.leave()
	page := contract.ListPage{Items: []contract.Hit{}}
	next, err := e.scanCreated(ctx, req.Filter, after, req.Limit, partHit, func(id string, s *storedRecord) error {
		page.Items = append(page.Items, s.hit(id))
		return nil
	})
	page.NextCursor = next
	return page, err
}

// Export pages like List and hands back each item exactly as stored.
func (e *Engine) Export(ctx context.Context, req contract.ListRequest) (contract.ExportPage, error) {
	if err := req.Validate(); err != nil {
		return contract.ExportPage{}, err
	}
	after, err := decodeListCursor(req.Cursor)
	if err != nil {
		return contract.ExportPage{}, err
	}
	if err := e.enter(ctx); err != nil {
		return contract.ExportPage{}, err
	}
	defer e.leave()
	page := contract.ExportPage{Items: []contract.Exported{}}
	next, err := e.scanCreated(ctx, req.Filter, after, req.Limit, partFull, func(id string, s *storedRecord) error {
		it, err := s.storedItem()
		if err != nil {
			return err
		}
		page.Items = append(page.Items, contract.Exported{ID: id, Item: it})
		return nil
	})
	page.NextCursor = next
	return page, err
}

// A list cursor is a by_created key as it was until schema 9, the id in its
// digits (so a cursor handed out before stays good): the key's eight bytes
// of time, then the id.
const listCursorPrefix = "c1."

// decodeListCursor is the by_created key a cursor names.
func decodeListCursor(c *string) ([]byte, error) {
	if c == nil {
		return nil, nil
	}
	raw, ok := strings.CutPrefix(*c, listCursorPrefix)
	if ok {
		if k, err := base64.RawURLEncoding.DecodeString(raw); err == nil && len(k) > 8 {
			return idkey.Append(k[:8:8], string(k[8:])), nil
		}
	}
	return nil, contract.Invalid("unknown cursor `%s`", *c)
}

// encodeListCursor is the cursor of a by_created key.
func encodeListCursor(key []byte) *string {
	_, id, _ := splitDescMillisKey(key)
	return contract.Ptr(listCursorPrefix + base64.RawURLEncoding.EncodeToString(append(key[:8:8], id...)))
}

// scanCreated walks the created_at index after the given key, emitting up to
// limit matching records; it returns a cursor when more matching records follow.
func (e *Engine) scanCreated(ctx context.Context, f contract.MetaFilter, after []byte, limit int, part recordPart, emit func(string, *storedRecord) error) (*string, error) {
	budget := coldScanBudget
	if e.opts.coldScanBudget > 0 {
		budget = e.opts.coldScanBudget
	}
	for {
		next, resume, emitted, err := e.scanCreatedFrom(ctx, f, after, limit, part, emit, budget)
		if err == errKeysDeferred {
			// by_created lacks a bulk load's records until their keys are
			// put: the table has them.
			if err := e.waitTable(ctx); err != nil {
				return nil, err
			}
			return e.scanCreatedTable(ctx, f, after, limit, part, emit)
		}
		if err != nil || resume == nil {
			return next, err
		}
		// The cold scan read its budget of records without filling the
		// page: the filter is selective, and the table (about a second to
		// load at 1M) answers the rest far sooner than decoding every record
		// (ten seconds at 1M). The page goes on where the scan stopped.
		if err := e.waitTable(ctx); err != nil {
			return nil, err
		}
		after, limit, budget = resume, limit-emitted, 0
	}
}

// coldScanBudget is how many records a list or export decodes before the
// table has loaded, looking for its page, before it waits for the table.
const coldScanBudget = 4096

// scanCreatedFrom is one pass of scanCreated. With a budget, a cold pass that
// has read that many records without filling the page stops and answers
// resume, the last key it read, and how many records it emitted.
func (e *Engine) scanCreatedFrom(ctx context.Context, f contract.MetaFilter, after []byte, limit int, part recordPart,
	emit func(string, *storedRecord) error, budget int) (next *string, resume []byte, emitted int, err error) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	if e.keysDeferred() {
		return nil, nil, 0, errKeysDeferred
	}
	// Before the table has loaded, each record is decoded and matched by the
	// contract's own rule; after, by the compiled filter over the table.
	cold := !e.tables.loaded.Load()
	var p rowFilter
	if !cold {
		p = e.t.compileFilter(f, false)
	}
	n := 0
	err = e.readView(func(tx *bbolt.Tx, recs *recordReader) error {
		c := tx.Bucket(bucketCreated).Cursor()
		k, v := seekAfter(c, after)
		var last, prev []byte // the last key emitted, the last key read
		for scanned := 0; k != nil; k, v = c.Next() {
			if cold && budget > 0 && scanned == budget {
				resume = append([]byte(nil), prev...)
				return nil
			}
			prev = k
			scanned++
			if scanned%1024 == 0 {
				if err := ctx.Err(); err != nil {
					return contract.Unavailable("%w", err)
				}
			}
			var id string
			var s storedRecord
			if cold {
				_, kid, ok := splitDescMillisKey(k)
				if !ok {
					return contract.EngineErr("created_at index key is corrupt")
				}
				raw := recs.Get(kid)
				if raw == nil {
					continue
				}
				var err error
				if s, err = e.codec.decode(raw, part, e.t.namespaceOf); err != nil {
					return contract.EngineErr("record %s: %w", kid, err)
				}
				if !f.Matches(s.kind, &s.meta) || !f.AdmitsStatus(s.status, false) {
					continue
				}
				id = kid
			} else {
				ord := getOrd(v)
				if !e.t.matchOrd(&p, ord) {
					continue
				}
				id = e.t.idOf(ord)
			}
			if n == limit {
				next = encodeListCursor(last)
				return nil
			}
			if !cold {
				var err error
				if s, err = e.codec.decode(recs.Get(id), part, e.t.namespaceOf); err != nil {
					return contract.EngineErr("record %s: %w", id, err)
				}
			}
			if err := emit(id, &s); err != nil {
				return err
			}
			last = k
			n++
		}
		return nil
	})
	if err != nil {
		return nil, nil, n, contract.AsError(err)
	}
	return next, resume, n, nil
}

func getOrd(v []byte) uint32 {
	if len(v) != 4 && !movedValue(v) {
		return ^uint32(0)
	}
	return uint32(v[0])<<24 | uint32(v[1])<<16 | uint32(v[2])<<8 | uint32(v[3])
}

// Get reads hits by id, in the order named, leaving out ids outside the reach.
func (e *Engine) Get(ctx context.Context, req contract.GetRequest) ([]contract.Hit, error) {
	if err := req.Validate(); err != nil {
		return nil, err
	}
	if err := e.enter(ctx); err != nil {
		return nil, err
	}
	defer e.leave()
	out := []contract.Hit{}
	err := e.lookup(req, partHit, func(id string, s *storedRecord) error {
		out = append(out, s.hit(id))
		return nil
	})
	return out, err
}

// GetRecords reads whole records by id, in the order named, leaving out ids
// outside the reach.
func (e *Engine) GetRecords(ctx context.Context, req contract.GetRequest) ([]contract.Record, error) {
	if err := req.Validate(); err != nil {
		return nil, err
	}
	if err := e.enter(ctx); err != nil {
		return nil, err
	}
	defer e.leave()
	out := []contract.Record{}
	err := e.lookup(req, partFull, func(id string, s *storedRecord) error {
		r, err := s.record(id, true)
		if err != nil {
			return err
		}
		out = append(out, r)
		return nil
	})
	return out, err
}

func (e *Engine) lookup(req contract.GetRequest, part recordPart, emit func(string, *storedRecord) error) error {
	e.mu.RLock()
	defer e.mu.RUnlock()
	seen := make(map[string]bool, len(req.IDs))
	err := e.readView(func(tx *bbolt.Tx, recs *recordReader) error {
		for _, id := range req.IDs {
			if seen[id] {
				continue
			}
			seen[id] = true
			v := recs.Get(id)
			if v == nil {
				continue
			}
			s, err := e.codec.decode(v, part, e.t.namespaceOf)
			if err != nil {
				return contract.EngineErr("record %s: %w", id, err)
			}
			if !contract.AdmittedBy(req.Reach, s.meta.Namespace) {
				continue
			}
			if err := emit(id, &s); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return contract.AsError(err)
	}
	return nil
}

// Explore counts a facet's values exactly. With no filter field but a reach it
// reads the per-namespace counters kept with every write; otherwise it counts
// over the table rows the filter admits. Never truncated.
func (e *Engine) Explore(ctx context.Context, req contract.ExploreRequest) (contract.ExplorePage, error) {
	if err := req.Validate(); err != nil {
		return contract.ExplorePage{}, err
	}
	if err := e.enter(ctx); err != nil {
		return contract.ExplorePage{}, err
	}
	defer e.leave()
	if !e.tables.loaded.Load() {
		if page, ok := e.coldExplore(req); ok {
			return page, nil
		}
	}
	if err := e.waitTable(ctx); err != nil {
		return contract.ExplorePage{}, err
	}
	fi := e.t.facetIndex(req.Facet)
	e.mu.RLock()
	defer e.mu.RUnlock()
	t := e.t
	if onlyReach(req.Filter) {
		counts, total, missing := t.rootCounts(fi, req.Filter.Reach)
		return t.explorePage(req.Facet, counts.each, req.Limit, total, missing), nil
	}
	// Dense counts for small value spaces; a map when the facet has many
	// values (a path per record) and the filter selects only some records.
	var dense []uint64
	var sparse map[uint32]uint64
	if space := t.valueSpace(req.Facet); space <= 1<<12 {
		dense = make([]uint64, space)
	} else {
		sparse = map[uint32]uint64{}
	}
	var total, missing uint64
	matched, err := e.matchedRows(ctx, req.Filter)
	if err != nil {
		return contract.ExplorePage{}, err
	}
	for _, ord := range matched {
		r := &t.rows[ord]
		total++
		vals := t.facetValueIDs(r, req.Facet)
		if len(vals) == 0 {
			missing++
		}
		for _, v := range vals {
			if dense != nil {
				dense[v]++
			} else {
				sparse[v]++
			}
		}
	}
	counts := denseCounts(dense)
	if sparse != nil {
		counts = func(yield func(uint32, uint64) bool) {
			for v, c := range sparse {
				if !yield(v, c) {
					return
				}
			}
		}
	}
	return t.explorePage(req.Facet, counts, req.Limit, total, missing), nil
}

// valueCounts yields (value id, count) pairs.
type valueCounts func(yield func(v uint32, c uint64) bool)

func denseCounts(counts []uint64) valueCounts {
	return func(yield func(uint32, uint64) bool) {
		for v, c := range counts {
			if c > 0 && !yield(uint32(v), c) {
				return
			}
		}
	}
}

// explorePage orders buckets like contract.ExplorePageOf (count desc, then
// value ascending by bytes) but keeps only the top limit in a bounded heap and
// names only those, so a facet with a value per record stays cheap. Value ids
// are interned, so each prints to a distinct value.
func (t *table) explorePage(f contract.Facet, counts valueCounts, limit int, total, missing uint64) contract.ExplorePage {
	h := &bucketHeap{}
	distinct := 0
	for v, c := range counts {
		if c == 0 {
			continue
		}
		distinct++
		b := contract.FacetBucket{Value: t.facetValueName(f, v), Count: c}
		if len(h.b) < limit {
			heap.Push(h, b)
		} else if bucketBetter(b, h.b[0]) {
			h.b[0] = b
			heap.Fix(h, 0)
		}
	}
	buckets := h.b
	contract.SortBuckets(buckets)
	return contract.ExplorePage{Facet: f, Buckets: buckets, Total: total, Missing: missing,
		MoreBuckets: uint64(distinct - len(buckets)), Truncated: false}
}

func bucketBetter(a, b contract.FacetBucket) bool {
	if a.Count != b.Count {
		return a.Count > b.Count
	}
	return a.Value < b.Value
}

// bucketHeap is a min-heap by bucket order: its top is the worst bucket kept.
type bucketHeap struct {
	b []contract.FacetBucket
}

func (h *bucketHeap) Len() int           { return len(h.b) }
func (h *bucketHeap) Less(i, j int) bool { return bucketBetter(h.b[j], h.b[i]) }
func (h *bucketHeap) Swap(i, j int)      { h.b[i], h.b[j] = h.b[j], h.b[i] }
func (h *bucketHeap) Push(x any)         { h.b = append(h.b, x.(contract.FacetBucket)) }
func (h *bucketHeap) Pop() any {
	n := len(h.b) - 1
	x := h.b[n]
	h.b = h.b[:n]
	return x
}
