package contract

import (
	"bytes"
	"encoding/json"
	"strconv"
)

// The wire's one rule for lists: an answer's list is [] when it is empty,
// never null, whoever encodes it (the CLI, the HTTP API, MCP). The pages
// below encode through an alias of themselves with their nil lists made
// empty, so no caller has to remember it.

// MarshalWire encodes v as the wire writes everything (the HTTP API's
// answers, the client's requests, MCP's tool results): compact, on one line
// without its newline, HTML characters as they are.
func MarshalWire(v any) ([]byte, error) {
	// What is written most (a server's browse pages, gets and pages of
	// changes, `mnemo watch`'s lines) is written by hand, the same bytes:
	// encoding/json would check and compact each record's JSON again, and a
	// browse page's twice (encoded through an alias, then as the answer).
	switch v := v.(type) {
	case BrowsePage:
		return v.appendJSON(nil)
	case []Record:
		return appendRecords(nil, v)
	case ChangesPage:
		return v.AppendJSON(nil)
	case Change:
		return v.MarshalJSON()
	case Record:
		return v.MarshalJSON()
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// EmptyIfNil is s, or an empty slice when s is nil: the wire's rule for a
// list, for the lists that are not inside one of the pages below (a get's
// hits, a batch's receipts, a request's ids).
func EmptyIfNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// MarshalJSON writes the page with "items": [] when it has none.
func (p ListPage) MarshalJSON() ([]byte, error) {
	type wire ListPage
	p.Items = EmptyIfNil(p.Items)
	return MarshalWire(wire(p))
}

// MarshalJSON writes the page with "items": [] when it has none.
func (p ExportPage) MarshalJSON() ([]byte, error) {
	type wire ExportPage
	p.Items = EmptyIfNil(p.Items)
	return MarshalWire(wire(p))
}

// MarshalJSON writes the page with "hits": [] when it has none.
func (p FetchPage) MarshalJSON() ([]byte, error) {
	type wire FetchPage
	p.Hits = EmptyIfNil(p.Hits)
	return MarshalWire(wire(p))
}

// MarshalJSON writes the answer with "citations": [] when it cites nothing.
func (a RecallAnswer) MarshalJSON() ([]byte, error) {
	type wire RecallAnswer
	a.Citations = EmptyIfNil(a.Citations)
	return MarshalWire(wire(a))
}

// MarshalJSON writes the page with "buckets": [] when it has none.
func (p ExplorePage) MarshalJSON() ([]byte, error) {
	type wire ExplorePage
	p.Buckets = EmptyIfNil(p.Buckets)
	return MarshalWire(wire(p))
}

// MarshalJSON writes the page with "records": [] when it has none.
func (p BrowsePage) MarshalJSON() ([]byte, error) { return p.appendJSON(nil) }

// appendJSON appends the page as encoding/json wrote its alias: the records
// ([] when none), the total, the continuation or null.
func (p BrowsePage) appendJSON(dst []byte) ([]byte, error) {
	if dst == nil {
		dst = make([]byte, 0, 96+recordsSize(p.Records))
	}
	dst = append(dst, `{"records":`...)
	dst, err := appendRecords(dst, EmptyIfNil(p.Records))
	if err != nil {
		return nil, err
	}
	dst = append(dst, `,"total":`...)
	dst = strconv.AppendInt(dst, int64(p.Total), 10)
	dst = append(dst, `,"continuation":`...)
	if p.Continuation == nil {
		dst = append(dst, "null"...)
	} else if dst, err = appendWireString(dst, *p.Continuation); err != nil {
		return nil, err
	}
	return append(dst, '}'), nil
}

// appendRecords appends rs as a JSON list (null when nil, as encoding/json
// writes a nil slice), each record as its MarshalJSON writes it.
func appendRecords(dst []byte, rs []Record) ([]byte, error) {
	if rs == nil {
		return append(dst, "null"...), nil
	}
	if dst == nil {
		dst = make([]byte, 0, 2+recordsSize(rs))
	}
	dst = append(dst, '[')
	for i := range rs {
		if i > 0 {
			dst = append(dst, ',')
		}
		var err error
		if dst, err = rs[i].appendJSON(dst); err != nil {
			return nil, err
		}
	}
	return append(dst, ']'), nil
}

// recordsSize is about how many bytes rs's JSON takes (Record.sizeHint).
func recordsSize(rs []Record) int {
	n := 0
	for i := range rs {
		n += rs[i].sizeHint() + 1
	}
	return n
}

// appendWireString appends s as MarshalWire writes a string: a plain
// printable ASCII string as it is (a continuation always is), anything else
// through encoding/json, which knows its escapes.
func appendWireString(dst []byte, s string) ([]byte, error) {
	plain := true
	for i := 0; i < len(s) && plain; i++ {
		plain = s[i] >= 0x20 && s[i] < 0x7f && s[i] != '"' && s[i] != '\\'
	}
	if plain {
		dst = append(dst, '"')
		dst = append(dst, s...)
		return append(dst, '"'), nil
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		return nil, err
	}
	return append(dst, bytes.TrimSuffix(buf.Bytes(), []byte("\n"))...), nil
}

// MarshalJSON writes the page with "changes": [] when it has none (the same
// bytes AppendJSON assembles by hand).
func (p ChangesPage) MarshalJSON() ([]byte, error) { return p.AppendJSON(nil) }
