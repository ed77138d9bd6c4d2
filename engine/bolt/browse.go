package bolt

import (
	"bytes"
	"cmp"
	"container/heap"
	"context"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/RoaringBitmap/roaring/v2"
	bbolt "go.etcd.io/bbolt"

	"mnemo/contract"
	"mnemo/engine/bolt/internal/idkey"
)

// bval is one row's value for a browse sort or filter field, with the
// contract's precision: times in UTC milliseconds, confidence as an f32.
type bval struct {
	ok bool
	ms int64
	f  float32
	s  string
}

func (t *table) rowVal(field string, r *row) bval {
	switch field {
	case contract.BrowseFieldUpdatedAt:
		return bval{ok: true, ms: r.updated}
	case contract.BrowseFieldCreatedAt:
		return bval{ok: true, ms: r.created}
	case contract.BrowseFieldObservedAt:
		if r.observed == noTime {
			return bval{}
		}
		return bval{ok: true, ms: r.observed}
	case contract.BrowseFieldConfidence:
		if kindByCode[r.kind] != contract.KindLearning {
			return bval{}
		}
		return bval{ok: true, f: r.conf}
	case contract.BrowseFieldNamespace:
		return bval{ok: true, s: t.ns.Val(r.ns)}
	case contract.BrowseFieldKind:
		return bval{ok: true, s: string(kindByCode[r.kind])}
	case contract.BrowseFieldStatus:
		return bval{ok: true, s: string(statusByCode[r.status])}
	}
	return bval{}
}

func isTimeField(f string) bool {
	return f == contract.BrowseFieldUpdatedAt || f == contract.BrowseFieldCreatedAt || f == contract.BrowseFieldObservedAt
}

// compareBvals orders one field ascending, missing values last in either direction.
func compareBvals(field, dir string, a, b bval) int {
	switch {
	case !a.ok && !b.ok:
		return 0
	case !a.ok:
		return 1
	case !b.ok:
		return -1
	}
	var c int
	switch {
	case isTimeField(field):
		c = cmp.Compare(a.ms, b.ms)
	case field == contract.BrowseFieldConfidence:
		c = cmp.Compare(a.f, b.f)
	default:
		c = strings.Compare(a.s, b.s)
	}
	if dir == contract.SortDesc {
		return -c
	}
	return c
}

func (t *table) compareRows(order []contract.SortKey, a, b *row) int {
	for _, k := range order {
		if c := compareBvals(k.Field, k.Dir, t.rowVal(k.Field, a), t.rowVal(k.Field, b)); c != 0 {
			return c
		}
	}
	// By id: the names the table holds sort as the ids do.
	return strings.Compare(t.ids.Val(a.idv), t.ids.Val(b.idv))
}

// cursorVals converts a decoded cursor key to comparable values.
func cursorVals(order []contract.SortKey, pos *contract.CursorPos) []bval {
	out := make([]bval, len(order))
	for i, k := range order {
		if i >= len(pos.Key) {
			continue
		}
		switch x := pos.Key[i].(type) {
		case string:
			if isTimeField(k.Field) {
				if tm, err := time.Parse("2006-01-02T15:04:05.000Z", x); err == nil {
					out[i] = bval{ok: true, ms: tm.UnixMilli()}
				}
			} else if k.Field != contract.BrowseFieldConfidence {
				out[i] = bval{ok: true, s: x}
			}
		case float64:
			if k.Field == contract.BrowseFieldConfidence {
				out[i] = bval{ok: true, f: float32(x)}
			}
		}
	}
	return out
}

// afterCursor tells whether r sorts strictly after the cursor position,
// whose id's name (idkey.Name) is idName.
func (t *table) afterCursor(order []contract.SortKey, key []bval, idName string, r *row) bool {
	for i, k := range order {
		if c := compareBvals(k.Field, k.Dir, t.rowVal(k.Field, r), key[i]); c != 0 {
			return c > 0
		}
	}
	return t.ids.Val(r.idv) > idName
}

// browsePlan is a browse query compiled against the table.
type browsePlan struct {
	meta    rowFilter
	checks  []func(r *row) bool
	content *contentCheck
	trivial bool // no clause beyond a reach: total comes from the counters
	// countable: the only clauses are a reach and status sets (or kind sets),
	// so the total is a sum of per-namespace counters.
	countable  bool
	countFacet contract.Facet
	countSet   [3]bool
	// status, when the query has status clauses, is the statuses they
	// all admit, checked against table.stat before a row is read.
	status *[3]bool
}

type contentCheck struct {
	op     string
	needle string // folded
}

func (c *contentCheck) admits(folded string) bool {
	return contract.ContentMatches(c.op, folded, c.needle)
}

// narrows tells whether the content op implies the text contains the needle,
// so the trigram index can propose candidates.
func (c *contentCheck) narrows() bool {
	switch c.op {
	case "contains", "equals", "starts_with", "ends_with":
		return true
	}
	return false
}

func (p *browsePlan) rowOK(r *row) bool {
	return p.meta.match(r) && p.browseChecks(r)
}

// ordOK is rowOK for ordinal ord of t, false when it is not in the table;
// a refused status is refused by table.stat, without reading the row.
func (p *browsePlan) ordOK(t *table, ord uint32) bool {
	if p.status != nil && int(ord) < len(t.stat) && !p.status[t.stat[ord]] {
		return false
	}
	return t.matchOrd(&p.meta, ord) && p.browseChecks(&t.rows[ord])
}

func (p *browsePlan) browseChecks(r *row) bool {
	for _, c := range p.checks {
		if !c(r) {
			return false
		}
	}
	return true
}

func codeSet[T comparable](all [3]T, vals []T) [3]bool {
	var ok [3]bool
	for i, v := range all {
		ok[i] = slices.Contains(vals, v)
	}
	return ok
}

func dayMillis(day string) int64 {
	t, err := time.Parse(time.DateOnly, day)
	if err != nil {
		return 0
	}
	return t.UnixMilli()
}

const msPerDay = 24 * 60 * 60 * 1000

func (t *table) compileBrowse(q *contract.BrowseQuery) *browsePlan {
	p := &browsePlan{meta: t.compileFilter(q.Filter, false)}
	add := func(c func(r *row) bool) { p.checks = append(p.checks, c) }
	statusSet, kindSet := [3]bool{true, true, true}, [3]bool{true, true, true}
	statusSets, kindSets, others := 0, 0, 0
	narrow := func(set *[3]bool, ok [3]bool, in bool) {
		for i := range set {
			set[i] = set[i] && ok[i] == in
		}
	}
	if q.Status != nil {
		ok := codeSet(statusByCode, q.Status)
		narrow(&statusSet, ok, true)
		statusSets++
		add(func(r *row) bool { return ok[r.status] })
	}
	if q.Kind != nil {
		ok := codeSet(kindByCode, q.Kind)
		narrow(&kindSet, ok, true)
		kindSets++
		add(func(r *row) bool { return ok[r.kind] })
	}
	if q.Now != nil && t.expiring > 0 {
		others++
		now := q.Now.UnixMilli()
		add(func(r *row) bool { return r.expires == noTime || r.expires > now })
	}
	for _, f := range q.Filters {
		switch f.Field {
		case contract.BrowseFieldStatus:
			vals := make([]contract.Status, len(f.Values))
			for i, v := range f.Values {
				vals[i] = contract.Status(v)
			}
			ok, in := codeSet(statusByCode, vals), f.Op == "in"
			narrow(&statusSet, ok, in)
			statusSets++
			add(func(r *row) bool { return ok[r.status] == in })
		case contract.BrowseFieldKind:
			vals := make([]contract.ItemKind, len(f.Values))
			for i, v := range f.Values {
				vals[i] = contract.ItemKind(v)
			}
			ok, in := codeSet(kindByCode, vals), f.Op == "in"
			narrow(&kindSet, ok, in)
			kindSets++
			add(func(r *row) bool { return ok[r.kind] == in })
		case contract.BrowseFieldContent:
			p.content = &contentCheck{op: f.Op, needle: contract.FoldCase(f.Text)}
		case contract.BrowseFieldNamespace:
			others++
			want, _ := contract.ParseNamespace(f.Text)
			ok := make([]bool, len(t.nsVals))
			for i := 1; i < len(t.nsVals); i++ {
				if f.Op == "equals" {
					ok[i] = t.nsVals[i].Equal(want)
				} else {
					ok[i] = t.nsVals[i].IsWithin(want)
				}
			}
			add(func(r *row) bool { return ok[r.ns] })
		case contract.BrowseFieldConfidence:
			others++
			num, lo, hi, op := float32(f.Num), float32(f.Min), float32(f.Max), f.Op
			add(func(r *row) bool {
				if kindByCode[r.kind] != contract.KindLearning {
					return false
				}
				v := r.conf
				switch op {
				case "eq":
					return v == num
				case "neq":
					return v != num
				case "gt":
					return v > num
				case "gte":
					return v >= num
				case "lt":
					return v < num
				case "lte":
					return v <= num
				case "between":
					return v >= lo && v <= hi
				}
				return false
			})
		default:
			others++
			field := f.Field
			lo, hi := int64(math.MinInt64), int64(math.MaxInt64)
			switch f.Op {
			case "on_day":
				lo = dayMillis(f.Day)
				hi = lo + msPerDay
			case "before_day":
				hi = dayMillis(f.Day)
			case "after_day":
				lo = dayMillis(f.Day) + msPerDay
			case "between_days":
				lo, hi = dayMillis(f.FromDay), dayMillis(f.UntilDay)+msPerDay
			}
			add(func(r *row) bool {
				v := t.rowVal(field, r)
				return v.ok && v.ms >= lo && v.ms < hi
			})
		}
	}
	if statusSets > 0 {
		p.status = &statusSet
	}
	p.trivial = onlyReach(q.Filter) && len(p.checks) == 0 && p.content == nil
	if !p.trivial && onlyReach(q.Filter) && p.content == nil && others == 0 {
		switch {
		case kindSets == 0:
			p.countable, p.countFacet, p.countSet = true, contract.FacetStatus, statusSet
		case statusSets == 0:
			p.countable, p.countFacet, p.countSet = true, contract.FacetKind, kindSet
		}
	}
	return p
}

// Browse answers docs/spec/contract.md §4 from one snapshot: the table (under the read
// lock) and one bbolt read transaction. The default order walks the
// updated_at index from the cursor's position (a seek, O(page)); other orders
// and selective filters take the top of the matching rows with a bounded heap.
// The total is exact: from the per-namespace counters when the query has no
// clause but a reach, else counted over the table's rows, with content
// filters narrowed by the trigram index and verified against the text.
func (e *Engine) Browse(ctx context.Context, q contract.BrowseQuery) (contract.BrowsePage, error) {
	if err := q.Validate(); err != nil {
		return contract.BrowsePage{}, err
	}
	pos, err := q.DecodeCursor()
	if err != nil {
		return contract.BrowsePage{}, err
	}
	if err := e.enter(ctx); err != nil {
		return contract.BrowsePage{}, err
	}
	defer e.leave()
	limit := q.EffectiveLimit()
	order := q.Order()
	var curKey []bval
	if pos != nil {
		curKey = cursorVals(order, pos)
	}
	if !e.tables.loaded.Load() {
		if page, ok, err := e.browseCold(ctx, &q, order, pos, curKey, limit); ok || err != nil {
			return page, err
		}
		if err := e.waitTable(ctx); err != nil {
			return contract.BrowsePage{}, err
		}
	}
	e.mu.RLock()
	defer e.mu.RUnlock()
	t := e.t
	p := t.compileBrowse(&q)
	page := contract.BrowsePage{Records: []contract.Record{}}
	err = e.readView(func(tx *bbolt.Tx, recs *recordReader) error {
		// The matching set: counted always, kept when a heap or a content
		// filter needs it.
		var matched []uint32
		var inSet *roaring.Bitmap
		switch {
		case p.trivial:
			nsOK := t.nsAdmitted(q.Filter.Reach)
			for ns, c := range t.nsTotal {
				if nsOK[ns] {
					page.Total += int(c)
				}
			}
		case p.countable:
			counts, _, _ := t.rootCounts(t.facetIndex(p.countFacet), q.Filter.Reach)
			for v, in := range p.countSet {
				if in {
					page.Total += int(counts.at(uint32(v)))
				}
			}
		default:
			visit := func(ord uint32) error {
				if !p.ordOK(t, ord) {
					return nil
				}
				if p.content != nil {
					id := t.idOf(ord)
					text, ok := e.codec.text(recs.Get(id))
					if !ok {
						return contract.EngineErr("record %s is corrupt", id)
					}
					if !p.content.admits(contract.FoldCase(text)) {
						return nil
					}
				}
				matched = append(matched, ord)
				return nil
			}
			var cand *roaring.Bitmap
			if p.content != nil && p.content.narrows() {
				cand, _ = e.tri.Candidates(p.content.needle)
			}
			if cand != nil {
				it := cand.Iterator()
				for it.HasNext() {
					if ord := it.Next(); int(ord) < len(t.alive) {
						if err := visit(ord); err != nil {
							return err
						}
					}
				}
			} else {
				for ord := range t.alive {
					if ord%4096 == 0 {
						if err := ctx.Err(); err != nil {
							return contract.Unavailable("%w", err)
						}
					}
					if err := visit(uint32(ord)); err != nil {
						return err
					}
				}
			}
			page.Total = len(matched)
			if p.content != nil {
				inSet = roaring.BitmapOf(matched...)
			}
		}
		admit := func(ord uint32) bool {
			if inSet != nil {
				return int(ord) < len(t.alive) && t.alive[ord] && inSet.Contains(ord)
			}
			return p.ordOK(t, ord)
		}

		var ords []uint32
		// Walking an ordered index costs O(page / selectivity); a heap over
		// the matching rows costs O(matches). Walk when matches are common.
		materialized := !p.trivial && !p.countable
		// While a bulk load's keys are deferred (ordered.go) the time keys
		// are walked only down to the newest time some may lack, and the
		// confidence keys not at all.
		walkIndex := len(order) == 1 && order[0].Dir == contract.SortDesc &&
			(order[0].Field == contract.BrowseFieldUpdatedAt || order[0].Field == contract.BrowseFieldCreatedAt ||
				order[0].Field == contract.BrowseFieldConfidence && !e.keysDeferred()) &&
			page.Total*20 >= t.live
		if walkIndex {
			skip := q.Offset
			take := func(ord uint32) bool {
				if !admit(ord) {
					return len(ords) < limit
				}
				if skip > 0 {
					skip--
					return true
				}
				ords = append(ords, ord)
				return len(ords) < limit
			}
			switch order[0].Field {
			case contract.BrowseFieldUpdatedAt, contract.BrowseFieldCreatedAt:
				var seek []byte
				if pos != nil {
					seek = descMillisKey(curKey[0].ms, pos.ID)
				}
				full := false
				walkTimes(tx, order[0].Field, seek, func(k, v []byte) bool {
					if ms, _, ok := splitDescMillisKey(k); ok && !e.keyedAbove(ms) {
						return false
					}
					full = !take(getOrd(v))
					return !full
				})
				if !full && e.keysDeferred() {
					// The page went past the keys it may take: the table
					// ranks it instead.
					walkIndex, ords = false, nil
				}
			case contract.BrowseFieldConfidence:
				// Learnings by confidence desc, then the records without a
				// confidence in id order (the tie-break of the missing value).
				more := true
				if pos == nil || curKey[0].ok {
					var seek []byte
					if pos != nil {
						seek = confKey(curKey[0].f, pos.ID)
					}
					walkAfter(tx.Bucket(bucketConf), seek, func(_, v []byte) bool {
						more = take(getOrd(v))
						return more
					})
				}
				if more {
					var seek []byte
					if pos != nil && !curKey[0].ok {
						seek = e.rk.key(pos.ID)
					}
					walkAfter(tx.Bucket(bucketRecords), seek, func(k, _ []byte) bool {
						ord, ok := t.ordOfID(e.rk.id(k))
						if !ok || kindByCode[t.rows[ord].kind] == contract.KindLearning {
							return true
						}
						return take(ord)
					})
				}
			}
		}
		if !walkIndex {
			top := &rowHeap{t: t, order: order, max: q.Offset + limit}
			var posName string
			if pos != nil {
				posName = idkey.Name(pos.ID)
			}
			offer := func(ord uint32) {
				r := &t.rows[ord]
				if pos != nil && !t.afterCursor(order, curKey, posName, r) {
					return
				}
				top.offer(ord)
			}
			if !materialized {
				for ord := range t.alive {
					if p.ordOK(t, uint32(ord)) {
						offer(uint32(ord))
					}
				}
			} else {
				for _, ord := range matched {
					offer(ord)
				}
			}
			ords = top.sorted()
			ords = ords[min(q.Offset, len(ords)):]
		}
		for _, ord := range ords {
			if rec, ok := e.cache.get(ord); ok {
				page.Records = append(page.Records, rec)
				continue
			}
			id := t.idOf(ord)
			s, err := e.codec.decode(recs.Get(id), partHit, t.namespaceOf)
			if err != nil {
				return contract.EngineErr("record %s: %w", id, err)
			}
			rec, err := s.record(id, false)
			if err != nil {
				return err
			}
			e.cache.put(ord, rec)
			page.Records = append(page.Records, rec)
		}
		return nil
	})
	if err != nil {
		return contract.BrowsePage{}, contract.AsError(err)
	}
	if len(page.Records) == limit {
		page.Continuation = contract.Ptr(contract.EncodeCursor(q, &page.Records[len(page.Records)-1]))
	}
	return page, nil
}

// walkAfter visits a bucket's keys in order from the first key after seek
// (from the start when seek is nil) while visit returns true.
func walkAfter(b *bbolt.Bucket, seek []byte, visit func(k, v []byte) bool) {
	c := b.Cursor()
	var k, v []byte
	if seek == nil {
		k, v = c.First()
	} else {
		k, v = c.Seek(seek)
		if k != nil && bytes.Equal(k, seek) {
			k, v = c.Next()
		}
	}
	for ; k != nil; k, v = c.Next() {
		if !visit(k, v) {
			return
		}
	}
}

// walkTimes is walkAfter over the time keys of field (updated_at or
// created_at), newest first.
func walkTimes(tx *bbolt.Tx, field string, seek []byte, visit func(k, v []byte) bool) {
	if field == contract.BrowseFieldCreatedAt {
		walkAfter(tx.Bucket(bucketCreated), seek, visit)
		return
	}
	walkUpdated(tx, seek, visit)
}

// rowHeap keeps the max best rows under an order: a max-heap whose top is the
// worst kept row, so most rows are rejected with one comparison.
type rowHeap struct {
	t     *table
	order []contract.SortKey
	max   int
	ords  []uint32
}

func (h *rowHeap) Len() int { return len(h.ords) }
func (h *rowHeap) Less(i, j int) bool {
	return h.t.compareRows(h.order, &h.t.rows[h.ords[i]], &h.t.rows[h.ords[j]]) > 0
}
func (h *rowHeap) Swap(i, j int) { h.ords[i], h.ords[j] = h.ords[j], h.ords[i] }
func (h *rowHeap) Push(x any)    { h.ords = append(h.ords, x.(uint32)) }
func (h *rowHeap) Pop() any {
	n := len(h.ords) - 1
	x := h.ords[n]
	h.ords = h.ords[:n]
	return x
}

func (h *rowHeap) offer(ord uint32) {
	if h.max <= 0 {
		return
	}
	if len(h.ords) < h.max {
		heap.Push(h, ord)
		return
	}
	if h.t.compareRows(h.order, &h.t.rows[ord], &h.t.rows[h.ords[0]]) < 0 {
		h.ords[0] = ord
		heap.Fix(h, 0)
	}
}

func (h *rowHeap) sorted() []uint32 {
	out := slices.Clone(h.ords)
	slices.SortFunc(out, func(a, b uint32) int { return h.t.compareRows(h.order, &h.t.rows[a], &h.t.rows[b]) })
	return out
}

// coldWalkFactor bounds the records a cold browse may pass over per row it
// returns before it gives up and waits for the table (a reach that admits
// few records would otherwise walk most of the store).
const coldWalkFactor = 50

// browseCold answers, before the table has loaded, the queries a new process
// asks first: the newest records under at most a reach (the TUI's first page
// and header count, `mnemo browse`), from the per-namespace totals and a
// seek on the ordered keys, so a first page costs O(page) at any size. ok is
// false when the query needs the table, or keys it would walk are deferred.
func (e *Engine) browseCold(ctx context.Context, q *contract.BrowseQuery, order []contract.SortKey, pos *contract.CursorPos, curKey []bval, limit int) (contract.BrowsePage, bool, error) {
	if !onlyReach(q.Filter) || q.Status != nil || q.Kind != nil || len(q.Filters) > 0 || q.Now != nil ||
		len(order) != 1 || order[0].Dir != contract.SortDesc ||
		(order[0].Field != contract.BrowseFieldUpdatedAt && order[0].Field != contract.BrowseFieldCreatedAt) {
		return contract.BrowsePage{}, false, nil
	}
	var seek []byte
	if pos != nil {
		seek = descMillisKey(curKey[0].ms, pos.ID)
	}
	page := contract.BrowsePage{Records: []contract.Record{}}
	ok := false
	e.mu.RLock()
	defer e.mu.RUnlock()
	err := e.readView(func(tx *bbolt.Tx, recs *recordReader) error {
		var known bool
		if page.Total, known = e.coldTotals(tx, q.Filter.Reach, false); !known {
			return nil
		}
		skip, budget := q.Offset, coldWalkFactor*(q.Offset+limit)+1000
		var ferr error
		walkTimes(tx, order[0].Field, seek, func(k, _ []byte) bool {
			if budget--; budget < 0 {
				return false
			}
			ms, id, good := splitDescMillisKey(k)
			if good && !e.keyedAbove(ms) {
				// A bulk load's deferred keys (ordered.go) may be missing
				// from here on: the table answers.
				budget = -1
				return false
			}
			raw := recs.Get(id)
			if !good || raw == nil {
				return true
			}
			s, err := e.codec.decode(raw, partHit, e.t.namespaceOf)
			if err != nil {
				ferr = contract.EngineErr("record %s: %w", id, err)
				return false
			}
			if !contract.AdmittedBy(q.Filter.Reach, s.meta.Namespace) {
				return true
			}
			if skip > 0 {
				skip--
				return true
			}
			rec, err := s.record(id, false)
			if err != nil {
				ferr = err
				return false
			}
			page.Records = append(page.Records, rec)
			return len(page.Records) < limit
		})
		if ferr != nil {
			return ferr
		}
		// Done when the page is full or the walk reached the end (with
		// every key there).
		ok = budget >= 0 && (len(page.Records) == limit || !e.keysDeferred())
		if err := ctx.Err(); err != nil {
			return contract.Unavailable("%w", err)
		}
		return nil
	})
	if err != nil {
		return contract.BrowsePage{}, false, contract.AsError(err)
	}
	if !ok {
		return contract.BrowsePage{}, false, nil
	}
	if len(page.Records) == limit {
		page.Continuation = contract.Ptr(contract.EncodeCursor(*q, &page.Records[len(page.Records)-1]))
	}
	return page, true, nil
}
