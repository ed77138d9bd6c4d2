package contract

// This file pins the browse API other packages build on; browse_*.go implement it.
// (The bodies here are placeholders until the browse implementation lands.)

// ParseBrowseQuery reads a browse query from untyped JSON and validates it
// fail-fast, in Dawn's check order with its messages adapted to our snake_case
// field names (every error is an InvalidRequest with code invalid-query).
func ParseBrowseQuery(data []byte) (BrowseQuery, error) {
	return BrowseQuery{}, QueryErr("browse query parsing is being written")
}

// Validate checks a typed query with the same rules and messages as ParseBrowseQuery.
func (q BrowseQuery) Validate() error { return QueryErr("browse query validation is being written") }

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
		return []SortKey{{Field: "updated_at", Dir: "desc"}}
	}
	return q.OrderBy
}

// Identity is the canonical description of which records match and in which
// order (every field but limit, offset and cursor); cursors bind its hash.
func (q BrowseQuery) Identity() string { return "" }

// Matches tells whether a record belongs to the query's set: the filter, the
// status and kind shorthands, every browse filter, and expiry against now. The
// cursor is not a clause here.
func (q BrowseQuery) Matches(r *Record) bool { return false }

// CompareRecords orders two records by the resolved order, then id ascending by
// bytes. A record without a value for a sort field sorts after every record with
// one, in either direction.
func CompareRecords(order []SortKey, a, b *Record) int { return 0 }

// CursorPos is a decoded continuation: the last row's sort key (one entry per
// order key: string, float64, or nil when the record had no value) and its id.
type CursorPos struct {
	Key []any
	ID  string
}

// EncodeCursor returns the continuation after record last for query q.
func EncodeCursor(q BrowseQuery, last *Record) string { return "" }

// DecodeCursor checks q.Cursor against q and returns its position, or nil when q
// has no cursor. Errors carry the continuation-invalid code.
func (q BrowseQuery) DecodeCursor() (*CursorPos, error) { return nil, nil }

// After tells whether r sorts strictly after the cursor position under order.
func (p CursorPos) After(order []SortKey, r *Record) bool { return false }

// BrowseSlice answers q over a snapshot of records (any order): validation,
// matching, sorting, cursor or offset, limit, exact total and continuation. The
// reference engine uses it, and engine tests use it as the oracle.
func BrowseSlice(q BrowseQuery, records []Record) (BrowsePage, error) {
	return BrowsePage{}, QueryErr("browse is being written")
}

// FoldCase folds s with Unicode simple case folding, for content filters.
func FoldCase(s string) string { return s }
