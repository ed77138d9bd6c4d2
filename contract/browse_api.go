package contract

import (
	"encoding/base64"
	"fmt"
	"strconv"
)

// This file holds the browse API other packages build on; browse_*.go implement
// the parsing, checks, matching and ordering behind it.

// Validate checks a typed query with the same rules and messages as
// ParseBrowseQuery (a Limit of 0 means the default; an empty Cursor means none).
func (q BrowseQuery) Validate() error { return q.validate() }

// EffectiveLimit is the limit, 50 when unset.
func (q BrowseQuery) EffectiveLimit() int {
	if q.Limit == 0 {
		return BrowseDefaultLimit
	}
	return q.Limit
}

// Order returns the resolved sort keys (default updated_at desc), without the id tie-break.
func (q BrowseQuery) Order() []SortKey {
	if len(q.OrderBy) == 0 {
		return []SortKey{{Field: BrowseFieldUpdatedAt, Dir: SortDesc}}
	}
	return q.OrderBy
}

// Identity is the canonical description of which records match and in which
// order (every field but limit, offset and cursor); cursors bind its hash. Sets
// are sorted, filters are canonical strings in sorted order, the order is the
// resolved one (so an explicit `updated_at desc` equals no order), and the
// MetaFilter appears as its JSON with sorted sets.
func (q BrowseQuery) Identity() string { return q.identity() }

// Fingerprint is the 8-hex FNV-1a of Identity, the `fp` a cursor carries.
func (q BrowseQuery) Fingerprint() string { return fmt.Sprintf("%08x", FNV1a32([]byte(q.identity()))) }

// Matches tells whether a record belongs to the query's set: the filter, the
// status and kind shorthands, every browse filter, and expiry against now. The
// cursor is not a clause here.
func (q BrowseQuery) Matches(r *Record) bool { return q.compile().matches(r) }

// CursorPos is a decoded continuation: the last row's sort key (one entry per
// order key: string, float64, or nil when the record had no value) and its id.
type CursorPos struct {
	Key []any
	ID  string
}

// EncodeCursor returns the continuation after record last for query q:
// base64url (no padding) of {"v":1,"fp":"<8 hex>","key":[...],"id":"..."}.
func EncodeCursor(q BrowseQuery, last *Record) string {
	buf := []byte(`{"v":`)
	buf = strconv.AppendInt(buf, BrowseCursorVersion, 10)
	buf = append(buf, `,"fp":`...)
	buf = appendJSONString(buf, q.Fingerprint())
	buf = append(buf, `,"key":[`...)
	for i, k := range q.Order() {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = appendKeyValue(buf, k.Field, last)
	}
	buf = append(buf, `],"id":`...)
	buf = appendJSONString(buf, last.ID)
	buf = append(buf, '}')
	return base64.RawURLEncoding.EncodeToString(buf)
}

// DecodeCursor checks q.Cursor against q and returns its position, or nil when q
// has no cursor. Errors carry the continuation-invalid code.
func (q BrowseQuery) DecodeCursor() (*CursorPos, error) {
	if q.Cursor == "" {
		return nil, nil
	}
	return decodeCursor(q.Cursor, q.Fingerprint(), q.Order())
}

// After tells whether r sorts strictly after the cursor position under order.
func (p CursorPos) After(order []SortKey, r *Record) bool { return p.resolve(order)(r) }

// BrowseSlice answers q over a snapshot of records (any order): validation,
// matching, sorting, cursor or offset, limit, exact total and continuation. The
// reference engine uses it, and engine tests use it as the oracle.
func BrowseSlice(q BrowseQuery, records []Record) (BrowsePage, error) {
	if err := q.Validate(); err != nil {
		return BrowsePage{}, err
	}
	pos, err := q.DecodeCursor()
	if err != nil {
		return BrowsePage{}, err
	}
	m := q.compile()
	order := q.Order()
	var after func(r *Record) bool
	if pos != nil {
		after = pos.resolve(order)
	}
	// total counts every match; the page is picked from the matches after the
	// cursor (or past the offset) by a bounded heap, without sorting the set.
	limit := q.EffectiveLimit()
	top := newTopK(order, q.Offset+limit, len(records))
	// Snapshots usually arrive in write order, oldest first; under a descending
	// leading key, offering the newest first lets most rows fail the first test.
	fromEnd := order[0].Dir == SortDesc
	total := 0
	for i := range records {
		r := &records[i]
		if fromEnd {
			r = &records[len(records)-1-i]
		}
		if !m.matches(r) {
			continue
		}
		total++
		if after == nil || after(r) {
			top.offer(r)
		}
	}
	window := top.sorted()
	start := min(q.Offset, len(window))
	end := min(start+limit, len(window))
	page := BrowsePage{Records: make([]Record, 0, end-start), Total: total}
	for _, r := range window[start:end] {
		page.Records = append(page.Records, *r)
	}
	if len(page.Records) == limit {
		page.Continuation = Ptr(EncodeCursor(q, &page.Records[len(page.Records)-1]))
	}
	return page, nil
}
