package contract

import (
	"encoding/json"
	"math"
)

// Reading a browse page in one pass, as a page of changes is read
// (changes_decode.go): a remote client's browse answer (the TUI's Browse
// view over SSH or --remote, a script's pages) holds up to a thousand
// records, which encoding/json scanned once per nesting level. A page as
// servers write it is scanned by hand into plain structs, its records in one
// block; anything else goes through encoding/json exactly as before, which
// also words the errors (FuzzBrowsePageScan holds the two to the same
// answers).

// browsePageIn is a browse page read into plain structs.
type browsePageIn struct {
	Records      []recordIn
	Total        int
	Continuation *string
}

// browsePageJSON is BrowsePage as encoding/json reads it, record by record
// through Record.UnmarshalJSON.
type browsePageJSON BrowsePage

// UnmarshalJSON reads a browse page (see above).
func (p *BrowsePage) UnmarshalJSON(data []byte) error {
	s := scanner{b: data, s: string(data)}
	if w, ok := s.browsePage(); ok {
		if out, err := w.page(); err == nil {
			*p = out
			return nil
		}
	}
	return json.Unmarshal(data, (*browsePageJSON)(p))
}

// browsePage reads {"records": [...], "total": n, "continuation": ...}.
func (s *scanner) browsePage() (browsePageIn, bool) {
	var w browsePageIn
	var seen uint8
	ok := s.object(func(k string) bool {
		switch k {
		case "records":
			if !s.once(&seen, 0) {
				return false
			}
			if s.null() {
				w.Records = nil
				return true
			}
			w.Records = []recordIn{}
			return s.array(func() bool {
				w.Records = append(w.Records, recordIn{})
				return s.recordFields(&w.Records[len(w.Records)-1])
			})
		case "total":
			var n uint64
			ok := s.once(&seen, 1) && s.uint(&n) && n <= math.MaxInt
			w.Total = int(n)
			return ok
		case "continuation":
			return s.once(&seen, 2) && s.strPtr(&w.Continuation)
		}
		return s.unknown(k, "records", "total", "continuation")
	})
	if !ok {
		return browsePageIn{}, false
	}
	s.ws()
	return w, s.i == len(s.b)
}

// page converts w with the checks Record.UnmarshalJSON makes, each
// namespace parsed once per page.
func (w *browsePageIn) page() (BrowsePage, error) {
	out := BrowsePage{Total: w.Total, Continuation: w.Continuation}
	if w.Records == nil {
		return out, nil
	}
	parseNS := namespaceCache()
	out.Records = make([]Record, len(w.Records))
	for i := range w.Records {
		r, err := w.Records[i].record(parseNS)
		if err != nil {
			return BrowsePage{}, err
		}
		out.Records[i] = r
	}
	return out, nil
}
