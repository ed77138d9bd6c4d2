package contract

import (
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Browse filter fields.
const (
	BrowseFieldStatus     = "status"
	BrowseFieldKind       = "kind"
	BrowseFieldContent    = "content"
	BrowseFieldNamespace  = "namespace"
	BrowseFieldConfidence = "confidence"
	BrowseFieldUpdatedAt  = "updated_at"
	BrowseFieldCreatedAt  = "created_at"
	BrowseFieldObservedAt = "observed_at"
)

// Sort directions.
const (
	SortAsc  = "asc"
	SortDesc = "desc"
)

// BrowseFilterFields lists the filterable fields in the order error messages name them.
func BrowseFilterFields() []string {
	return []string{BrowseFieldStatus, BrowseFieldKind, BrowseFieldContent, BrowseFieldNamespace,
		BrowseFieldConfidence, BrowseFieldUpdatedAt, BrowseFieldCreatedAt, BrowseFieldObservedAt}
}

// BrowseSortFields lists the sortable fields in the order error messages name them.
func BrowseSortFields() []string {
	return []string{BrowseFieldUpdatedAt, BrowseFieldCreatedAt, BrowseFieldObservedAt,
		BrowseFieldConfidence, BrowseFieldNamespace, BrowseFieldKind, BrowseFieldStatus}
}

// BrowseFilterOps lists the ops a filter field accepts (nil for an unknown field).
func BrowseFilterOps(field string) []string {
	switch field {
	case BrowseFieldStatus, BrowseFieldKind:
		return []string{"in", "not_in"}
	case BrowseFieldContent:
		return []string{"contains", "not_contains", "equals", "not_equals", "starts_with", "ends_with"}
	case BrowseFieldNamespace:
		return []string{"equals", "within"}
	case BrowseFieldConfidence:
		return []string{"eq", "neq", "gt", "gte", "lt", "lte", "between"}
	case BrowseFieldUpdatedAt, BrowseFieldCreatedAt, BrowseFieldObservedAt:
		return []string{"on_day", "before_day", "after_day", "between_days"}
	}
	return nil
}

// isTimeField tells whether a field holds an instant (sorts and filters by UTC milliseconds).
func isTimeField(field string) bool {
	return field == BrowseFieldUpdatedAt || field == BrowseFieldCreatedAt || field == BrowseFieldObservedAt
}

// operandKeys lists the wire operand keys an op takes, besides field and op.
func operandKeys(field, op string) []string {
	switch {
	case field == BrowseFieldStatus || field == BrowseFieldKind:
		return []string{"values"}
	case field == BrowseFieldContent || field == BrowseFieldNamespace:
		return []string{"value"}
	case field == BrowseFieldConfidence && op == "between":
		return []string{"min", "max"}
	case field == BrowseFieldConfidence:
		return []string{"value"}
	case isTimeField(field) && op == "between_days":
		return []string{"from_day", "until_day"}
	case isTimeField(field):
		return []string{"day"}
	}
	return nil
}

func quoteJSON(s string) string { return string(appendJSONString(nil, s)) }

func statusNames() []string {
	out := make([]string, len(allStatuses))
	for i, s := range allStatuses {
		out[i] = string(s)
	}
	return out
}

func itemKindNames() []string {
	out := make([]string, len(allItemKinds))
	for i, k := range allItemKinds {
		out[i] = string(k)
	}
	return out
}

// enumNames is the closed value set of a set field (status or kind).
func enumNames(field string) []string {
	if field == BrowseFieldStatus {
		return statusNames()
	}
	return itemKindNames()
}

// invalidEnum is the message for a value outside a closed set; shown is the
// value's JSON text.
func invalidEnum(label, shown string, allowed []string) error {
	return QueryErr("invalid %s %s (expected one of: %s)", label, shown, strings.Join(allowed, ", "))
}

func checkEnumValue(label, v string, allowed []string) error {
	if !slices.Contains(allowed, v) {
		return invalidEnum(label, quoteJSON(v), allowed)
	}
	return nil
}

// The query-level checks, shared by Validate and ParseBrowseQuery so both report
// the same first failure.

func checkLimitCeiling(limit int) error {
	if limit < 0 {
		return QueryErr("limit must be an integer >= 1")
	}
	if limit > BrowseMaxLimit {
		return QueryErr("limit must be at most %d", BrowseMaxLimit)
	}
	return nil
}

func checkOffset(offset int) error {
	if offset < 0 {
		return QueryErr("offset must be an integer >= 0")
	}
	return nil
}

func checkCursor(cursor string, offset int) error {
	if utf8.RuneCountInString(cursor) > BrowseMaxCursor {
		return QueryErr("cursor must be at most %d characters", BrowseMaxCursor)
	}
	if cursor != "" && offset != 0 {
		return QueryErr("cursor and a non-zero offset cannot be combined — a keyset continuation already carries the position")
	}
	return nil
}

// checkMetaFilter refuses enum values a typed filter could hold but the wire never would.
func checkMetaFilter(f MetaFilter) error {
	for _, k := range f.Kinds {
		if _, ok := ParseItemKind(string(k)); !ok {
			return QueryErr("filter: `%s` is not an item kind", k)
		}
	}
	for _, s := range f.Sources {
		if _, ok := ParseSourceKind(string(s)); !ok {
			return QueryErr("filter: `%s` is not a source kind", s)
		}
	}
	for _, s := range f.Statuses {
		if _, ok := ParseStatus(string(s)); !ok {
			return QueryErr("filter: `%s` is not a status", s)
		}
	}
	return nil
}

const instantFormat = "2006-01-02T15:04:05.000Z"

var instantShape = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$`)

var dayShape = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}$`)

func instantShapeErr(label string) error {
	return QueryErr(`%s must be a full ISO-8601 UTC instant ("YYYY-MM-DDTHH:MM:SS.sssZ")`, label)
}

// parseInstant reads a full ISO-8601 UTC instant with milliseconds; the shape is
// checked before the calendar so "2026-02-31..." gets its own message.
func parseInstant(label, s string) (time.Time, error) {
	if !instantShape.MatchString(s) {
		return time.Time{}, instantShapeErr(label)
	}
	t, err := time.Parse(instantFormat, s)
	if err != nil || t.Format(instantFormat) != s {
		return time.Time{}, QueryErr("%s %s is not a real UTC instant", label, quoteJSON(s))
	}
	return t, nil
}

// checkNow refuses an instant the wire form cannot print (years outside 0000..9999).
func checkNow(now *time.Time) error {
	if now == nil {
		return nil
	}
	if y := now.UTC().Year(); y < 0 || y > 9999 {
		return instantShapeErr("now")
	}
	return nil
}

func checkSet(label string, values []string, allowed []string) error {
	for _, v := range values {
		if err := checkEnumValue(label, v, allowed); err != nil {
			return err
		}
	}
	return nil
}

func checkFilterField(field string) error {
	if !slices.Contains(BrowseFilterFields(), field) {
		return QueryErr("unknown filter field %s (expected one of: %s)", quoteJSON(field), strings.Join(BrowseFilterFields(), ", "))
	}
	return nil
}

func checkFilterRepeat(field string, seen map[string]bool) error {
	if seen == nil {
		return nil
	}
	if seen[field] {
		return QueryErr("at most one filter per field; %s appears twice", quoteJSON(field))
	}
	seen[field] = true
	return nil
}

func unknownOp(shown, field string) error {
	return QueryErr("unknown op %s for filter field %s (expected one of: %s)", shown, quoteJSON(field), strings.Join(BrowseFilterOps(field), ", "))
}

func checkFilterOp(field, op string) error {
	if !slices.Contains(BrowseFilterOps(field), op) {
		return unknownOp(quoteJSON(op), field)
	}
	return nil
}

// operandSource yields a filter's operands, from a typed filter or from raw JSON
// (which adds shape errors); checkOperands asks for each operand just before it
// checks it, so both paths fail on the same first problem.
type operandSource interface {
	values(field string) ([]string, error)
	text(field string) (string, error)
	number(field, key string) (float64, error)
	day(field, key string) (string, error)
}

func finiteErr(field, key string) error {
	return QueryErr("%s %s must be a finite number", field, key)
}

func dayShapeErr(field, key string) error {
	return QueryErr(`%s %s must be a "YYYY-MM-DD" UTC day`, field, key)
}

// parseDay reads a real UTC calendar day.
func parseDay(field, key, s string) (time.Time, error) {
	if !dayShape.MatchString(s) {
		return time.Time{}, dayShapeErr(field, key)
	}
	t, err := time.Parse(time.DateOnly, s)
	if err != nil || t.Format(time.DateOnly) != s {
		return time.Time{}, QueryErr("%s %s %s is not a real calendar day", field, key, quoteJSON(s))
	}
	return t, nil
}

// checkOperands checks and collects the operands of a filter whose field and op are known.
func checkOperands(field, op string, src operandSource) (BrowseFilter, error) {
	f := BrowseFilter{Field: field, Op: op}
	var err error
	switch field {
	case BrowseFieldStatus, BrowseFieldKind:
		if f.Values, err = src.values(field); err != nil {
			return f, err
		}
		if len(f.Values) == 0 {
			return f, QueryErr("%s values must not be empty", field)
		}
		return f, checkSet(field, f.Values, enumNames(field))
	case BrowseFieldContent, BrowseFieldNamespace:
		if f.Text, err = src.text(field); err != nil {
			return f, err
		}
		if f.Text == "" {
			return f, QueryErr("%s value must not be empty", field)
		}
		if len(f.Text) > BrowseMaxStringB {
			return f, QueryErr("%s value must be at most %d bytes", field, BrowseMaxStringB)
		}
		if field == BrowseFieldNamespace {
			if _, perr := ParseNamespace(f.Text); perr != nil {
				return f, QueryErr("namespace value: %s", AsError(perr).Message)
			}
		}
		return f, nil
	case BrowseFieldConfidence:
		if op == "between" {
			if f.Min, err = src.number(field, "min"); err != nil {
				return f, err
			}
			if !finite(f.Min) {
				return f, finiteErr(field, "min")
			}
			if f.Max, err = src.number(field, "max"); err != nil {
				return f, err
			}
			if !finite(f.Max) {
				return f, finiteErr(field, "max")
			}
			if f.Min > f.Max {
				return f, QueryErr("confidence between requires min <= max")
			}
			return f, nil
		}
		if f.Num, err = src.number(field, "value"); err != nil {
			return f, err
		}
		if !finite(f.Num) {
			return f, finiteErr(field, "value")
		}
		return f, nil
	default: // the three instants
		if op == "between_days" {
			if f.FromDay, err = src.day(field, "from_day"); err != nil {
				return f, err
			}
			from, derr := parseDay(field, "from_day", f.FromDay)
			if derr != nil {
				return f, derr
			}
			if f.UntilDay, err = src.day(field, "until_day"); err != nil {
				return f, err
			}
			until, derr := parseDay(field, "until_day", f.UntilDay)
			if derr != nil {
				return f, derr
			}
			if from.After(until) {
				return f, QueryErr("%s between_days requires from_day <= until_day", field)
			}
			return f, nil
		}
		if f.Day, err = src.day(field, "day"); err != nil {
			return f, err
		}
		_, err = parseDay(field, "day", f.Day)
		return f, err
	}
}

func finite(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }

// typedOperands is the operand source of an already typed filter.
type typedOperands BrowseFilter

func (t typedOperands) values(string) ([]string, error) { return t.Values, nil }
func (t typedOperands) text(string) (string, error)     { return t.Text, nil }
func (t typedOperands) number(_, key string) (float64, error) {
	switch key {
	case "min":
		return t.Min, nil
	case "max":
		return t.Max, nil
	}
	return t.Num, nil
}
func (t typedOperands) day(_, key string) (string, error) {
	switch key {
	case "from_day":
		return t.FromDay, nil
	case "until_day":
		return t.UntilDay, nil
	}
	return t.Day, nil
}

// checkFilter validates one typed filter; seen (when non-nil) enforces one filter per field.
func checkFilter(f BrowseFilter, seen map[string]bool) error {
	if err := checkFilterField(f.Field); err != nil {
		return err
	}
	if err := checkFilterRepeat(f.Field, seen); err != nil {
		return err
	}
	if err := checkFilterOp(f.Field, f.Op); err != nil {
		return err
	}
	_, err := checkOperands(f.Field, f.Op, typedOperands(f))
	return err
}

func unknownSortField(shown string) error {
	return QueryErr("unknown sort field %s (expected one of: %s)", shown, strings.Join(BrowseSortFields(), ", "))
}

func badSortDir(shown string) error {
	return QueryErr(`sort direction must be "asc" or "desc", got %s`, shown)
}

func checkSortKey(k SortKey, seen map[string]bool) error {
	if !slices.Contains(BrowseSortFields(), k.Field) {
		return unknownSortField(quoteJSON(k.Field))
	}
	if k.Dir != SortAsc && k.Dir != SortDesc {
		return badSortDir(quoteJSON(k.Dir))
	}
	return checkSortRepeat(k.Field, seen)
}

func checkSortRepeat(field string, seen map[string]bool) error {
	if seen[field] {
		return QueryErr("order_by repeats the field %s", quoteJSON(field))
	}
	seen[field] = true
	return nil
}

// validate runs every check of a typed query in Dawn's order.
func (q BrowseQuery) validate() error {
	if err := checkLimitCeiling(q.Limit); err != nil {
		return err
	}
	if err := checkOffset(q.Offset); err != nil {
		return err
	}
	if err := checkCursor(q.Cursor, q.Offset); err != nil {
		return err
	}
	if err := checkMetaFilter(q.Filter); err != nil {
		return err
	}
	if err := checkNow(q.Now); err != nil {
		return err
	}
	for _, s := range q.Status {
		if err := checkEnumValue(BrowseFieldStatus, string(s), statusNames()); err != nil {
			return err
		}
	}
	for _, k := range q.Kind {
		if err := checkEnumValue(BrowseFieldKind, string(k), itemKindNames()); err != nil {
			return err
		}
	}
	if len(q.Filters) > BrowseMaxFilters {
		return QueryErr("at most %d filters", BrowseMaxFilters)
	}
	seen := map[string]bool{}
	for _, f := range q.Filters {
		if err := checkFilter(f, seen); err != nil {
			return err
		}
	}
	if len(q.OrderBy) > BrowseMaxOrderBy {
		return QueryErr("at most %d order_by entries", BrowseMaxOrderBy)
	}
	seenSort := map[string]bool{}
	for _, k := range q.OrderBy {
		if err := checkSortKey(k, seenSort); err != nil {
			return err
		}
	}
	return nil
}

// formatNum prints a filter number in its shortest round-trip form.
func formatNum(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }
