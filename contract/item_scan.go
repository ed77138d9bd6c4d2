package contract

import "encoding/json"

// scanStoreItem reads a StoreItem by hand with the changes' scanner
// (changes_scan.go), for items as clients write them: keys spelled as the
// wire spells them, each once per object, values of their types. Whatever
// else it meets (a key in another case, a repeated key, a number in a
// string, invalid JSON or UTF-8) and any item the rules refuse, it leaves to
// encoding/json (ok false), which also words the error. It never reads an
// item differently (FuzzStoreItemScan). An import reads each line's item
// here: encoding/json validated and skipped a document's text once per
// level of nesting, six times in all.
func scanStoreItem(data []byte) (StoreItem, bool) {
	// No s.s: an item's strings are copies of their own, not substrings of
	// the line, which an engine keeping a tag or a folder would pin whole.
	s := scanner{b: data}
	var (
		r      rawItem
		meta   *metaIn
		seen   uint16
		turns  []Turn
		body   DocumentBody
		number json.Number
	)
	once := func(bit uint) bool {
		if seen&(1<<bit) != 0 {
			return false
		}
		seen |= 1 << bit
		return true
	}
	ok := s.object(func(k string) bool {
		switch k {
		case "type":
			return once(0) && s.strPtr(&r.Type)
		case "title":
			return once(1) && s.strPtr(&r.Title)
		case "body":
			if !once(2) {
				return false
			}
			if s.null() {
				return true
			}
			var rb rawBody
			var bs uint8
			if !s.object(func(k string) bool {
				switch k {
				case "text":
					return s.once(&bs, 0) && s.strPtr(&rb.Text)
				case "uri":
					return s.once(&bs, 1) && s.strPtr(&rb.URI)
				}
				return s.unknown(k, "text", "uri")
			}) {
				return false
			}
			var err error
			body, err = rb.body()
			r.Body = &body
			return err == nil
		case "mime":
			return once(3) && s.strPtr(&r.Mime)
		case "turns":
			if !once(4) {
				return false
			}
			if s.null() {
				return true
			}
			turns = []Turn{}
			if !s.array(func() bool {
				t, ok := s.turn()
				turns = append(turns, t)
				return ok
			}) {
				return false
			}
			r.Turns = &turns
			return true
		case "text":
			return once(5) && s.strPtr(&r.Text)
		case "kind":
			return once(6) && s.strPtr(&r.Kind)
		case "confidence":
			if !once(7) {
				return false
			}
			if s.null() {
				return true
			}
			raw, ok := s.raw()
			if !ok || (raw[0] != '-' && (raw[0] < '0' || raw[0] > '9')) {
				return false
			}
			number = json.Number(raw)
			r.Confidence = &number
			return true
		case "evidence":
			return once(8) && s.strPtr(&r.Evidence)
		case "meta":
			if !once(9) {
				return false
			}
			if s.null() {
				return true
			}
			meta = &metaIn{}
			return s.meta(meta)
		}
		return s.unknown(k, "type", "title", "body", "mime", "turns", "text", "kind", "confidence", "evidence", "meta")
	})
	if s.ws(); !ok || s.i != len(s.b) {
		return StoreItem{}, false
	}
	it, err := r.item(func() (MemoryMeta, error) {
		if meta == nil {
			return MemoryMeta{}, nil
		}
		return meta.meta(ParseNamespace)
	})
	return it, err == nil
}

// turn reads one turn of a conversation; a turn the rules refuse is left
// to encoding/json.
func (s *scanner) turn() (Turn, bool) {
	var r rawTurn
	var seen uint8
	if !s.object(func(k string) bool {
		switch k {
		case "role":
			return s.once(&seen, 0) && s.strPtr(&r.Role)
		case "text":
			return s.once(&seen, 1) && s.strPtr(&r.Text)
		case "at":
			return s.once(&seen, 2) && s.strPtr(&r.At)
		case "tool_calls":
			if !s.once(&seen, 3) {
				return false
			}
			raw, ok := s.raw()
			return ok && json.Unmarshal(raw, &r.ToolCalls) == nil
		}
		return s.unknown(k, "role", "text", "at", "tool_calls")
	}) {
		return Turn{}, false
	}
	t, err := r.turn()
	return t, err == nil
}
