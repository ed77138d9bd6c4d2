package contract

import (
	"encoding/base64"
	"encoding/json"
	"time"
)

// appendKeyValue writes r's raw value for one sort field as a cursor key entry:
// a millisecond ISO string for times, an f32 number for confidence, a string
// otherwise, null when the record has none.
func appendKeyValue(buf []byte, field string, r *Record) []byte {
	v := recordVal(field, r)
	switch {
	case !v.ok:
		return append(buf, "null"...)
	case isTimeField(field):
		return appendJSONString(buf, FormatMillis(time.UnixMilli(v.ms)))
	case field == BrowseFieldConfidence:
		return append(buf, FormatF32(v.f)...)
	}
	return appendJSONString(buf, v.s)
}

// keyVal converts a decoded cursor key entry to a comparable value; an entry of
// the wrong type counts as no value.
func keyVal(field string, v any) sortVal {
	switch x := v.(type) {
	case string:
		if isTimeField(field) {
			t, err := time.Parse(instantFormat, x)
			if err != nil {
				return sortVal{}
			}
			return sortVal{ok: true, ms: millis(t)}
		}
		if field == BrowseFieldConfidence {
			return sortVal{}
		}
		return sortVal{ok: true, s: x}
	case float64:
		if field != BrowseFieldConfidence {
			return sortVal{}
		}
		return sortVal{ok: true, f: float32(x)}
	}
	return sortVal{}
}

const keyMismatch = "cursor key does not match the requested sort order"

func keyFieldErr(field, want string) error {
	return CursorErr(keyMismatch + ": the key for " + quoteJSON(field) + " must be " + want)
}

// keyWant names the type a cursor key entry must have for a field.
func keyWant(field string) string {
	switch {
	case isTimeField(field):
		return "a full ISO-8601 UTC instant"
	case field == BrowseFieldConfidence:
		return "a finite number"
	}
	return "a string"
}

// nullable tells whether a sort field may lack a value (so its key may be null).
func nullable(field string) bool {
	return field == BrowseFieldConfidence || field == BrowseFieldObservedAt
}

func decodeCursor(cursor, fp string, order []SortKey) (*CursorPos, error) {
	payload, err := base64.RawURLEncoding.Strict().DecodeString(cursor)
	if err != nil || !json.Valid(payload) {
		return nil, CursorErr("cursor is not decodable")
	}
	m, ok := rawObject(payload)
	if !ok {
		return nil, CursorErr("cursor is not decodable")
	}
	if v, ok := rawNumber(m["v"]); !ok || v != BrowseCursorVersion {
		return nil, CursorErr("cursor version is not supported")
	}
	if got, ok := rawString(m["fp"]); !ok || got != fp {
		return nil, CursorErr("cursor belongs to a different query")
	}
	entries, ok := rawArray(m["key"])
	if !ok || len(entries) != len(order) {
		return nil, CursorErr(keyMismatch)
	}
	pos := &CursorPos{Key: make([]any, len(order))}
	for i, k := range order {
		e := entries[i]
		if shown(e) == "null" {
			if !nullable(k.Field) {
				return nil, keyFieldErr(k.Field, keyWant(k.Field))
			}
			continue
		}
		switch {
		case isTimeField(k.Field):
			s, ok := rawString(e)
			if !ok || !instantShape.MatchString(s) {
				return nil, keyFieldErr(k.Field, keyWant(k.Field))
			}
			if _, err := time.Parse(instantFormat, s); err != nil {
				return nil, keyFieldErr(k.Field, keyWant(k.Field))
			}
			pos.Key[i] = s
		case k.Field == BrowseFieldConfidence:
			f, ok := rawNumber(e)
			if !ok || !finite(f) {
				return nil, keyFieldErr(k.Field, keyWant(k.Field))
			}
			pos.Key[i] = f
		default:
			s, ok := rawString(e)
			if !ok {
				return nil, keyFieldErr(k.Field, keyWant(k.Field))
			}
			pos.Key[i] = s
		}
	}
	id, ok := rawString(m["id"])
	if !ok || id == "" {
		return nil, CursorErr("cursor id is missing")
	}
	pos.ID = id
	return pos, nil
}

// resolve converts the position's key once and returns the test "sorts
// strictly after the position" for records under order.
func (p CursorPos) resolve(order []SortKey) func(r *Record) bool {
	vals := make([]sortVal, len(order))
	for i, k := range order {
		if i < len(p.Key) {
			vals[i] = keyVal(k.Field, p.Key[i])
		}
	}
	return func(r *Record) bool {
		for i, k := range order {
			if c := compareVals(k.Field, k.Dir, recordVal(k.Field, r), vals[i]); c != 0 {
				return c > 0
			}
		}
		return r.ID > p.ID
	}
}
