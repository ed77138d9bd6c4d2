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

// DecodeRecords reads a JSON array of records (a get's answer) as a browse
// page's records are read: scanned by hand when a server wrote it, through
// encoding/json record by record otherwise, with the same answers
// (FuzzDecodeRecords).
func DecodeRecords(data []byte) ([]Record, error) {
	s := scanner{b: data, s: string(data)}
	if ws, ok := s.records(); ok {
		s.ws()
		if s.i == len(s.b) {
			if out, err := recordsOf(ws); err == nil {
				return out, nil
			}
		}
	}
	var out []Record
	err := json.Unmarshal(data, &out)
	return out, err
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
			var ok bool
			w.Records, ok = s.records()
			return ok
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

// records reads an array of records, or null (nil).
func (s *scanner) records() ([]recordIn, bool) {
	if s.null() {
		return nil, true
	}
	ws := []recordIn{}
	ok := s.array(func() bool {
		ws = append(ws, recordIn{})
		return s.recordFields(&ws[len(ws)-1])
	})
	return ws, ok
}

// page converts w with the checks Record.UnmarshalJSON makes.
func (w *browsePageIn) page() (BrowsePage, error) {
	recs, err := recordsOf(w.Records)
	if err != nil {
		return BrowsePage{}, err
	}
	return BrowsePage{Records: recs, Total: w.Total, Continuation: w.Continuation}, nil
}

// recordsOf converts records read into plain structs with the checks
// Record.UnmarshalJSON makes (pageCache); nil stays nil.
func recordsOf(ws []recordIn) ([]Record, error) {
	if ws == nil {
		return nil, nil
	}
	var cache pageCache
	out := make([]Record, len(ws))
	for i := range ws {
		r, err := ws[i].record(&cache)
		if err != nil {
			return nil, err
		}
		out[i] = r
	}
	return out, nil
}
