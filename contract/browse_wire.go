package contract

import (
	"encoding/json"
	"strconv"
)

// MarshalJSON writes the wire form of docs/spec/contract.md §4: unset parts are omitted,
// an empty (non-nil) status or kind set is written as [] because it matches nothing.
func (q BrowseQuery) MarshalJSON() ([]byte, error) {
	buf := []byte{'{'}
	first := true
	key := func(k string) {
		if !first {
			buf = append(buf, ',')
		}
		first = false
		buf = appendJSONString(buf, k)
		buf = append(buf, ':')
	}
	if !q.Filter.IsEmpty() {
		f, err := json.Marshal(q.Filter)
		if err != nil {
			return nil, err
		}
		key("filter")
		buf = append(buf, f...)
	}
	if q.Status != nil {
		key("status")
		buf = appendStringArray(buf, statusStrings(q.Status))
	}
	if q.Kind != nil {
		key("kind")
		buf = appendStringArray(buf, kindStrings(q.Kind))
	}
	if len(q.Filters) > 0 {
		key("filters")
		buf = append(buf, '[')
		for i, f := range q.Filters {
			if i > 0 {
				buf = append(buf, ',')
			}
			buf = f.appendJSON(buf)
		}
		buf = append(buf, ']')
	}
	if len(q.OrderBy) > 0 {
		key("order_by")
		buf = append(buf, '[')
		for i, k := range q.OrderBy {
			if i > 0 {
				buf = append(buf, ',')
			}
			buf = append(buf, `{"field":`...)
			buf = appendJSONString(buf, k.Field)
			buf = append(buf, `,"dir":`...)
			buf = appendJSONString(buf, k.Dir)
			buf = append(buf, '}')
		}
		buf = append(buf, ']')
	}
	if q.Limit != 0 {
		key("limit")
		buf = strconv.AppendInt(buf, int64(q.Limit), 10)
	}
	if q.Offset != 0 {
		key("offset")
		buf = strconv.AppendInt(buf, int64(q.Offset), 10)
	}
	if q.Cursor != "" {
		key("cursor")
		buf = appendJSONString(buf, q.Cursor)
	}
	if q.Now != nil {
		key("now")
		buf = appendJSONString(buf, FormatMillis(*q.Now))
	}
	return append(buf, '}'), nil
}

// UnmarshalJSON is ParseBrowseQuery: the same checks and messages.
func (q *BrowseQuery) UnmarshalJSON(data []byte) error {
	parsed, err := ParseBrowseQuery(data)
	if err != nil {
		return err
	}
	*q = parsed
	return nil
}

// MarshalJSON writes {"field", "op", ...operands}, with only the operands the op takes.
func (f BrowseFilter) MarshalJSON() ([]byte, error) { return f.appendJSON(nil), nil }

func (f BrowseFilter) appendJSON(buf []byte) []byte {
	buf = append(buf, `{"field":`...)
	buf = appendJSONString(buf, f.Field)
	buf = append(buf, `,"op":`...)
	buf = appendJSONString(buf, f.Op)
	for _, k := range operandKeys(f.Field, f.Op) {
		buf = append(buf, ',')
		buf = appendJSONString(buf, k)
		buf = append(buf, ':')
		switch k {
		case "values":
			buf = appendStringArray(buf, f.Values)
		case "value":
			if f.Field == BrowseFieldConfidence {
				buf = appendJSONNumber(buf, f.Num)
			} else {
				buf = appendJSONString(buf, f.Text)
			}
		case "min":
			buf = appendJSONNumber(buf, f.Min)
		case "max":
			buf = appendJSONNumber(buf, f.Max)
		case "day":
			buf = appendJSONString(buf, f.Day)
		case "from_day":
			buf = appendJSONString(buf, f.FromDay)
		case "until_day":
			buf = appendJSONString(buf, f.UntilDay)
		}
	}
	return append(buf, '}')
}

// UnmarshalJSON reads and checks one filter with the messages of ParseBrowseQuery.
func (f *BrowseFilter) UnmarshalJSON(data []byte) error {
	if !json.Valid(data) {
		return QueryErr("each filter must be an object")
	}
	parsed, err := parseBrowseFilter(data, nil)
	if err != nil {
		return err
	}
	*f = parsed
	return nil
}

// appendJSONNumber writes a finite float; a non-finite one (which validation
// refuses) is written as null so the output stays JSON.
func appendJSONNumber(buf []byte, f float64) []byte {
	if !finite(f) {
		return append(buf, "null"...)
	}
	return strconv.AppendFloat(buf, f, 'g', -1, 64)
}

func appendStringArray(buf []byte, vals []string) []byte {
	buf = append(buf, '[')
	for i, v := range vals {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = appendJSONString(buf, v)
	}
	return append(buf, ']')
}

func statusStrings(s []Status) []string {
	out := make([]string, len(s))
	for i, v := range s {
		out[i] = string(v)
	}
	return out
}

func kindStrings(k []ItemKind) []string {
	out := make([]string, len(k))
	for i, v := range k {
		out[i] = string(v)
	}
	return out
}
