package contract

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// browseQueryKeys lists the top-level keys of a browse query, in wire order.
func browseQueryKeys() []string {
	return []string{"filter", "status", "kind", "filters", "order_by", "limit", "offset", "cursor", "now"}
}

// rawObject decodes a JSON object keeping each value raw; ok is false when the
// text is not an object.
func rawObject(data []byte) (map[string]json.RawMessage, bool) {
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return nil, false
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(trimmed, &m); err != nil {
		return nil, false
	}
	return m, true
}

// shown is a raw JSON value as messages quote it: compact, `null` when absent.
func shown(raw json.RawMessage) string {
	if raw == nil {
		return "null"
	}
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return string(raw)
	}
	return b.String()
}

func rawString(raw json.RawMessage) (string, bool) {
	if raw == nil {
		return "", false
	}
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || t[0] != '"' {
		return "", false
	}
	var s string
	if err := json.Unmarshal(t, &s); err != nil {
		return "", false
	}
	return s, true
}

func rawArray(raw json.RawMessage) ([]json.RawMessage, bool) {
	if raw == nil {
		return nil, false
	}
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || t[0] != '[' {
		return nil, false
	}
	var a []json.RawMessage
	if err := json.Unmarshal(t, &a); err != nil {
		return nil, false
	}
	return a, true
}

// rawNumber reads a JSON number; ok is false for any other JSON value. A number
// too large for a float64 reads as an infinity.
func rawNumber(raw json.RawMessage) (float64, bool) {
	if raw == nil {
		return 0, false
	}
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || !(t[0] == '-' || t[0] >= '0' && t[0] <= '9') {
		return 0, false
	}
	var n json.Number
	if err := json.Unmarshal(t, &n); err != nil {
		return 0, false
	}
	f, err := strconv.ParseFloat(string(n), 64)
	if err != nil {
		var ne *strconv.NumError
		if errors.As(err, &ne) && errors.Is(ne.Err, strconv.ErrRange) {
			return f, true
		}
		return 0, false
	}
	return f, true
}

// rawInteger reads an integral JSON number (1e3 and 5.0 are integers, as in JSON's data model).
func rawInteger(raw json.RawMessage) (float64, bool) {
	f, ok := rawNumber(raw)
	if !ok || !finite(f) || f != math.Trunc(f) {
		return 0, false
	}
	return f, true
}

// maxSafeInteger bounds offsets to integers every JSON reader holds exactly.
const maxSafeInteger = 1<<53 - 1

// ParseBrowseQuery reads a browse query from untyped JSON and validates it
// fail-fast, in Dawn's check order with its messages adapted to our snake_case
// field names (every error is an InvalidRequest with code invalid-query).
func ParseBrowseQuery(data []byte) (BrowseQuery, error) {
	if !json.Valid(data) {
		return BrowseQuery{}, QueryErr("a browse query must be valid JSON")
	}
	m, ok := rawObject(data)
	if !ok {
		return BrowseQuery{}, QueryErr("a browse query must be a JSON object")
	}
	var unknown []string
	for k := range m {
		if !slices.Contains(browseQueryKeys(), k) {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		return BrowseQuery{}, QueryErr("unknown browse query key %s (expected one of: %s)", quoteJSON(unknown[0]), strings.Join(browseQueryKeys(), ", "))
	}

	var q BrowseQuery
	if raw, ok := m["limit"]; ok {
		f, isInt := rawInteger(raw)
		if !isInt || f < 1 {
			return BrowseQuery{}, QueryErr("limit must be an integer >= 1")
		}
		if f > BrowseMaxLimit {
			return BrowseQuery{}, QueryErr("limit must be at most %d", BrowseMaxLimit)
		}
		q.Limit = int(f)
	}
	if raw, ok := m["offset"]; ok {
		f, isInt := rawInteger(raw)
		if !isInt || f < 0 {
			return BrowseQuery{}, QueryErr("offset must be an integer >= 0")
		}
		if f > maxSafeInteger {
			return BrowseQuery{}, QueryErr("offset must be at most %d", maxSafeInteger)
		}
		q.Offset = int(f)
	}
	if raw, ok := m["cursor"]; ok {
		s, isStr := rawString(raw)
		if !isStr || s == "" {
			return BrowseQuery{}, QueryErr("cursor must be a non-empty string")
		}
		q.Cursor = s
		if err := checkCursor(q.Cursor, q.Offset); err != nil {
			return BrowseQuery{}, err
		}
	}
	if raw, ok := m["filter"]; ok && shown(raw) != "null" {
		if t := bytes.TrimSpace(raw); len(t) == 0 || t[0] != '{' {
			return BrowseQuery{}, QueryErr("filter: a filter must be a JSON object")
		}
		if err := json.Unmarshal(raw, &q.Filter); err != nil {
			return BrowseQuery{}, QueryErr("filter: %s", DescribeJSONError(err))
		}
		if err := checkMetaFilter(q.Filter); err != nil {
			return BrowseQuery{}, err
		}
	}
	if raw, ok := m["now"]; ok {
		s, isStr := rawString(raw)
		if !isStr {
			return BrowseQuery{}, instantShapeErr("now")
		}
		t, err := parseInstant("now", s)
		if err != nil {
			return BrowseQuery{}, err
		}
		q.Now = &t
	}
	if raw, ok := m["status"]; ok {
		vals, err := rawEnumSet(BrowseFieldStatus, raw, statusNames())
		if err != nil {
			return BrowseQuery{}, err
		}
		q.Status = make([]Status, len(vals))
		for i, v := range vals {
			q.Status[i] = Status(v)
		}
	}
	if raw, ok := m["kind"]; ok {
		vals, err := rawEnumSet(BrowseFieldKind, raw, itemKindNames())
		if err != nil {
			return BrowseQuery{}, err
		}
		q.Kind = make([]ItemKind, len(vals))
		for i, v := range vals {
			q.Kind[i] = ItemKind(v)
		}
	}
	if raw, ok := m["filters"]; ok {
		elems, isArr := rawArray(raw)
		if !isArr {
			return BrowseQuery{}, QueryErr("filters must be an array")
		}
		if len(elems) > BrowseMaxFilters {
			return BrowseQuery{}, QueryErr("at most %d filters", BrowseMaxFilters)
		}
		seen := map[string]bool{}
		for _, e := range elems {
			f, err := parseBrowseFilter(e, seen)
			if err != nil {
				return BrowseQuery{}, err
			}
			q.Filters = append(q.Filters, f)
		}
	}
	if raw, ok := m["order_by"]; ok {
		elems, isArr := rawArray(raw)
		if !isArr {
			return BrowseQuery{}, QueryErr("order_by must be an array")
		}
		if len(elems) > BrowseMaxOrderBy {
			return BrowseQuery{}, QueryErr("at most %d order_by entries", BrowseMaxOrderBy)
		}
		seen := map[string]bool{}
		for _, e := range elems {
			k, err := parseSortKey(e, seen)
			if err != nil {
				return BrowseQuery{}, err
			}
			q.OrderBy = append(q.OrderBy, k)
		}
	}
	return q, nil
}

// rawEnumSet reads a value-or-array of a closed enum; `[]` stays an empty, non-nil set.
func rawEnumSet(label string, raw json.RawMessage, allowed []string) ([]string, error) {
	if s, ok := rawString(raw); ok {
		if err := checkEnumValue(label, s, allowed); err != nil {
			return nil, err
		}
		return []string{s}, nil
	}
	elems, ok := rawArray(raw)
	if !ok {
		return nil, QueryErr("%s must be a value or an array of values", label)
	}
	out := make([]string, 0, len(elems))
	for _, e := range elems {
		s, ok := rawString(e)
		if !ok {
			return nil, invalidEnum(label, shown(e), allowed)
		}
		if err := checkEnumValue(label, s, allowed); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// rawOperands is the operand source of a filter read from JSON.
type rawOperands map[string]json.RawMessage

func (r rawOperands) values(field string) ([]string, error) {
	elems, ok := rawArray(r["values"])
	if !ok {
		return nil, QueryErr("%s values must be an array", field)
	}
	out := make([]string, 0, len(elems))
	for _, e := range elems {
		s, ok := rawString(e)
		if !ok {
			return nil, invalidEnum(field, shown(e), enumNames(field))
		}
		out = append(out, s)
	}
	return out, nil
}

func (r rawOperands) text(field string) (string, error) {
	s, ok := rawString(r["value"])
	if !ok {
		return "", QueryErr("%s value must be a string", field)
	}
	return s, nil
}

func (r rawOperands) number(field, key string) (float64, error) {
	f, ok := rawNumber(r[key])
	if !ok {
		return 0, finiteErr(field, key)
	}
	return f, nil
}

func (r rawOperands) day(field, key string) (string, error) {
	s, ok := rawString(r[key])
	if !ok {
		return "", dayShapeErr(field, key)
	}
	return s, nil
}

// parseBrowseFilter reads one filter object; seen (when non-nil) enforces one filter per field.
func parseBrowseFilter(raw json.RawMessage, seen map[string]bool) (BrowseFilter, error) {
	m, ok := rawObject(raw)
	if !ok {
		return BrowseFilter{}, QueryErr("each filter must be an object")
	}
	field, ok := rawString(m["field"])
	if !ok {
		return BrowseFilter{}, QueryErr("unknown filter field %s (expected one of: %s)", shown(m["field"]), strings.Join(BrowseFilterFields(), ", "))
	}
	if err := checkFilterField(field); err != nil {
		return BrowseFilter{}, err
	}
	if err := checkFilterRepeat(field, seen); err != nil {
		return BrowseFilter{}, err
	}
	op, ok := rawString(m["op"])
	if !ok {
		return BrowseFilter{}, unknownOp(shown(m["op"]), field)
	}
	if err := checkFilterOp(field, op); err != nil {
		return BrowseFilter{}, err
	}
	f, err := checkOperands(field, op, rawOperands(m))
	if err != nil {
		return BrowseFilter{}, err
	}
	allowed := append([]string{"field", "op"}, operandKeys(field, op)...)
	var extra []string
	for k := range m {
		if !slices.Contains(allowed, k) {
			extra = append(extra, k)
		}
	}
	if len(extra) > 0 {
		slices.Sort(extra)
		return BrowseFilter{}, QueryErr("filter %s with op %s does not take %s (it takes: %s)", quoteJSON(field), quoteJSON(op), quoteJSON(extra[0]), strings.Join(operandKeys(field, op), ", "))
	}
	return f, nil
}

// parseSortKey reads one order_by entry.
func parseSortKey(raw json.RawMessage, seen map[string]bool) (SortKey, error) {
	m, ok := rawObject(raw)
	if !ok {
		return SortKey{}, QueryErr("each order_by entry must be an object")
	}
	field, ok := rawString(m["field"])
	if !ok {
		return SortKey{}, unknownSortField(shown(m["field"]))
	}
	if !slices.Contains(BrowseSortFields(), field) {
		return SortKey{}, unknownSortField(quoteJSON(field))
	}
	dir, ok := rawString(m["dir"])
	if !ok {
		return SortKey{}, badSortDir(shown(m["dir"]))
	}
	if dir != SortAsc && dir != SortDesc {
		return SortKey{}, badSortDir(quoteJSON(dir))
	}
	if err := checkSortRepeat(field, seen); err != nil {
		return SortKey{}, err
	}
	for k := range m {
		if k != "field" && k != "dir" {
			return SortKey{}, QueryErr("an order_by entry takes only field and dir, not %s", quoteJSON(k))
		}
	}
	return SortKey{Field: field, Dir: dir}, nil
}

// DescribeJSONError turns a decoding error into a message that speaks the
// wire's field names (`filter.tags_any must be an array`), never Go types.
func DescribeJSONError(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		where := te.Field
		if where == "" {
			where = "value"
		}
		return where + " must be " + jsonTypeName(te.Type)
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return "not valid JSON"
	}
	return strings.TrimPrefix(err.Error(), "json: ")
}

func jsonTypeName(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Struct, reflect.Map:
		return "an object"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return "an integer"
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a non-negative integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	}
	return "of another type"
}
