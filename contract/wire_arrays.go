package contract

import (
	"bytes"
	"encoding/json"
)

// The wire's one rule for lists: an answer's list is [] when it is empty,
// never null, whoever encodes it (the CLI, the HTTP API, MCP). The pages
// below encode through an alias of themselves with their nil lists made
// empty, so no caller has to remember it.

// MarshalWire encodes v as the wire writes everything (the HTTP API's
// answers, the client's requests, MCP's tool results): compact, on one line
// without its newline, HTML characters as they are.
func MarshalWire(v any) ([]byte, error) {
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
func (p BrowsePage) MarshalJSON() ([]byte, error) {
	type wire BrowsePage
	p.Records = EmptyIfNil(p.Records)
	return MarshalWire(wire(p))
}

// MarshalJSON writes the page with "changes": [] when it has none (the same
// bytes AppendJSON assembles by hand).
func (p ChangesPage) MarshalJSON() ([]byte, error) { return p.AppendJSON(nil) }
