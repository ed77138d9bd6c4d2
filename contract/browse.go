package contract

import "time"

// Browse limits.
const (
	BrowseDefaultLimit  = 50
	BrowseMaxLimit      = 1000
	BrowseMaxFilters    = 8
	BrowseMaxOrderBy    = 3
	BrowseMaxStringB    = 1024
	BrowseMaxCursor     = 4096
	BrowseCursorVersion = 1
)

// BrowseQuery is the query-free, exactly counted, sortable, keyset-paged listing
// of docs/spec/contract.md §4.
type BrowseQuery struct {
	Filter MetaFilter
	// Status and Kind: nil means no constraint; an empty non-nil slice matches nothing.
	Status  []Status
	Kind    []ItemKind
	Filters []BrowseFilter
	OrderBy []SortKey
	// Limit 0 means the default of 50.
	Limit  int
	Offset int
	Cursor string
	Now    *time.Time
}

// BrowseFilter is one predicate of a browse query. Which operands are meaningful
// depends on Field and Op.
type BrowseFilter struct {
	Field string
	Op    string
	// Values: status / kind sets.
	Values []string
	// Text: content and namespace operand.
	Text string
	// Num: confidence comparison operand.
	Num float64
	// Min, Max: confidence between.
	Min, Max float64
	// Day: on_day, before_day, after_day; FromDay, UntilDay: between_days.
	Day, FromDay, UntilDay string
}

// SortKey is one order_by entry.
type SortKey struct {
	Field string `json:"field"`
	Dir   string `json:"dir"`
}

// BrowsePage is one page of a browse walk.
type BrowsePage struct {
	Records      []Record `json:"records"`
	Total        int      `json:"total"`
	Continuation *string  `json:"continuation"`
}
