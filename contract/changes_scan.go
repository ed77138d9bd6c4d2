package contract

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"math/bits"
	"strconv"
	"strings"
	"unicode/utf8"
)

// scanChangesPage reads a page of changes by hand into the structs
// encoding/json would fill (changes_decode.go), for the JSON servers write:
// keys spelled as the wire spells them, each once per object, values of
// their types. Whatever else it meets (a key in another case, a repeated
// key, a null where a value is wanted, invalid JSON, invalid UTF-8) it
// leaves to encoding/json: ok false. It never accepts what encoding/json
// refuses, nor reads anything differently (FuzzChangesPageScan).
func scanChangesPage(data []byte) (pageIn, bool) {
	// The page as one string: every string without escapes read from it is
	// a substring, not an allocation and a copy of its own (the strings of
	// a page's changes then share the page's memory).
	s := scanner{b: data, s: string(data)}
	return s.page()
}

// page reads the page in s.b; the changes go in s.changes (reused from
// page to page by a ChangesDecoder).
func (s *scanner) page() (pageIn, bool) {
	var w pageIn
	var seen uint8
	ok := s.object(func(k string) bool {
		switch k {
		case "changes":
			if !s.once(&seen, 0) {
				return false
			}
			if s.null() {
				w.Changes = nil
				return true
			}
			w.Changes = s.changes[:0]
			if w.Changes == nil {
				w.Changes = []changeIn{}
			}
			ok := s.array(func() bool {
				w.Changes = append(w.Changes, changeIn{})
				return s.change(&w.Changes[len(w.Changes)-1])
			})
			s.changes = w.Changes
			return ok
		case "next":
			return s.once(&seen, 1) && s.uint(&w.Next)
		case "head":
			return s.once(&seen, 2) && s.uint(&w.Head)
		case "floor":
			return s.once(&seen, 3) && s.uint(&w.Floor)
		}
		return s.unknown(k, "changes", "next", "head", "floor")
	})
	if !ok {
		return pageIn{}, false
	}
	s.ws()
	return w, s.i == len(s.b)
}

type scanner struct {
	b []byte
	// s is b as a string, when set.
	s string
	i int
	// strs holds the strings the page's *string fields point to, and recs
	// the records read, a block at a time rather than an allocation each.
	strs []string
	recs []recordIn
	// srcs and tags hold the page's sources (scratch, like recs) and its
	// records' tags (the records' own, like strs), a block at a time.
	srcs []sourceIn
	tags []string
	// changes, blocks and block are scratch a ChangesDecoder keeps from
	// page to page: the changes read, the blocks recs was taken from, and
	// how many of them this page used.
	changes []changeIn
	blocks  [][]recordIn
	block   int
	// trusted is set when b is known to be valid JSON (ItemKeys): values
	// are skipped without checking them, and a string that is not valid
	// UTF-8 reads as encoding/json reads it instead of ending the scan.
	trusted bool
}

// record is the next record of the page's block.
func (s *scanner) record() *recordIn {
	if len(s.recs) == cap(s.recs) {
		if s.block < len(s.blocks) {
			s.recs = s.blocks[s.block][:0]
		} else {
			s.recs = make([]recordIn, 0, 64)
			s.blocks = append(s.blocks, s.recs)
		}
		s.block++
	}
	s.recs = append(s.recs, recordIn{})
	return &s.recs[len(s.recs)-1]
}

// source is the next source of the page's block.
func (s *scanner) source() *sourceIn {
	if len(s.srcs) == cap(s.srcs) {
		s.srcs = make([]sourceIn, 0, nextBlock(cap(s.srcs)))
	}
	s.srcs = append(s.srcs, sourceIn{})
	return &s.srcs[len(s.srcs)-1]
}

// reset makes the scratch ready for the next page, holding nothing of the
// last one.
func (s *scanner) reset() {
	clear(s.changes)
	if s.block > 0 {
		for _, b := range s.blocks[:s.block-1] {
			clear(b[:cap(b)])
		}
		clear(s.recs) // the last block used, as far as it was
	}
	*s = scanner{changes: s.changes[:0], blocks: s.blocks}
}

// nextBlock is the size of the block that follows one of size last: each
// twice the last, from 8 up to 256. A scanner reading one item needs a
// handful of strings (a block of 256 for each was 4.5 KB of a 100k
// import's 30 allocated a line), one reading a page of changes thousands.
func nextBlock(last int) int { return min(max(8, 2*last), 256) }

// ptr is a pointer to a string of its own holding v, the strings
// allocated a block at a time (nextBlock).
func (s *scanner) ptr(v string) *string {
	if len(s.strs) == cap(s.strs) {
		s.strs = make([]string, 0, nextBlock(cap(s.strs)))
	}
	s.strs = append(s.strs, v)
	return &s.strs[len(s.strs)-1]
}

func (s *scanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// at is the byte the next value starts with, 0 at the end.
func (s *scanner) at() byte {
	s.ws()
	if s.i < len(s.b) {
		return s.b[s.i]
	}
	return 0
}

func (s *scanner) eat(c byte) bool {
	s.ws()
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

// null reads a null.
func (s *scanner) null() bool {
	s.ws()
	if bytes.HasPrefix(s.b[s.i:], []byte("null")) {
		s.i += 4
		return true
	}
	return false
}

// once marks bit in seen: a key repeated is left to encoding/json.
func (s *scanner) once(seen *uint8, bit uint) bool {
	if *seen&(1<<bit) != 0 {
		return false
	}
	*seen |= 1 << bit
	return true
}

// object reads {"key": value, ...}, field reading each value.
func (s *scanner) object(field func(k string) bool) bool {
	if !s.eat('{') {
		return false
	}
	if s.eat('}') {
		return true
	}
	for {
		k, ok := s.str()
		if !ok || !s.eat(':') || !field(k) {
			return false
		}
		if s.eat(',') {
			continue
		}
		return s.eat('}')
	}
}

// array reads [value, ...], elem reading each value.
func (s *scanner) array(elem func() bool) bool {
	if !s.eat('[') {
		return false
	}
	if s.eat(']') {
		return true
	}
	for {
		if !elem() {
			return false
		}
		if s.eat(',') {
			continue
		}
		return s.eat(']')
	}
}

// unknown skips the value of a key the object does not name, unless it is
// one of known in another case (encoding/json matches keys without case).
func (s *scanner) unknown(k string, known ...string) bool {
	for _, n := range known {
		if strings.EqualFold(k, n) {
			return false
		}
	}
	_, ok := s.raw()
	return ok
}

// raw reads any one value and returns its bytes, checked by json.Valid.
func (s *scanner) raw() ([]byte, bool) {
	s.ws()
	start := s.i
	depth := 0
	for s.i < len(s.b) {
		c := s.b[s.i]
		switch {
		case c == '"':
			if !s.strEnd() {
				return nil, false
			}
			if depth == 0 {
				return s.valid(start)
			}
			continue
		case c == '{' || c == '[':
			depth++
		case c == '}' || c == ']':
			if depth == 0 {
				return s.valid(start)
			}
			depth--
			if depth == 0 {
				s.i++
				return s.valid(start)
			}
		case depth == 0 && (c == ',' || c == ' ' || c == '\t' || c == '\n' || c == '\r'):
			return s.valid(start)
		}
		s.i++
	}
	return s.valid(start)
}

func (s *scanner) valid(start int) ([]byte, bool) {
	v := s.b[start:s.i]
	return v, len(v) > 0 && (s.trusted || json.Valid(v))
}

// strEnd moves past the string starting at s.i.
func (s *scanner) strEnd() bool {
	for j := s.i + 1; j < len(s.b); j++ {
		switch s.b[j] {
		case '\\':
			j++
		case '"':
			s.i = j + 1
			return true
		}
	}
	return false
}

// str reads a string: as it stands when it holds no escape and is valid
// UTF-8, through encoding/json when it has escapes. It is read eight bytes
// at a time: a block without a quote, a backslash, a control or a byte of
// UTF-8 is passed at once, and one with is entered at its first such byte
// (keys and short values take a step or two rather than a byte each).
func (s *scanner) str() (string, bool) {
	s.ws()
	if s.i >= len(s.b) || s.b[s.i] != '"' {
		return "", false
	}
	start := s.i + 1
	j, ascii := start, true
	for {
		if j+8 <= len(s.b) {
			m := specialBytes(binary.LittleEndian.Uint64(s.b[j:]))
			if m == 0 {
				j += 8
				continue
			}
			j += bits.TrailingZeros64(m) >> 3
		} else if j >= len(s.b) {
			return "", false
		}
		switch c := s.b[j]; {
		case c == '"':
			v := s.b[start:j]
			if !ascii && !utf8.Valid(v) {
				if !s.trusted {
					return "", false
				}
				var out string
				err := json.Unmarshal(s.b[start-1:j+1], &out)
				s.i = j + 1
				return out, err == nil
			}
			s.i = j + 1
			if len(s.s) == len(s.b) {
				return s.s[start:j], true
			}
			return string(v), true
		case c == '\\':
			from := s.i
			if !s.strEnd() {
				return "", false
			}
			var out string
			if err := json.Unmarshal(s.b[from:s.i], &out); err != nil {
				return "", false
			}
			return out, true
		case c < 0x20:
			return "", false
		case c >= 0x80:
			ascii = false
		}
		j++
	}
}

// special tells whether any of the eight bytes in x is a quote, a
// backslash, a control character or not ASCII.
func special(x uint64) bool { return specialBytes(x) != 0 }

// specialBytes marks the bytes of x (little-endian) that are a quote, a
// backslash, a control character or not ASCII, each by its high bit. Past
// the first such byte a mark may be false (a borrow carries into the byte
// above), so only the lowest mark is to be read.
func specialBytes(x uint64) uint64 {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	zero := func(v uint64) uint64 { return (v - ones) & ^v & highs }
	return (x & highs) | ((x - 0x20*ones) & ^x & highs) | zero(x^('"'*ones)) | zero(x^('\\'*ones))
}

// strField reads a string into a string field (a null is left to encoding/json).
func (s *scanner) strField(v *string) bool {
	out, ok := s.str()
	*v = out
	return ok
}

// strPtr reads a string or null into a *string field.
func (s *scanner) strPtr(v **string) bool {
	if s.null() {
		*v = nil
		return true
	}
	out, ok := s.str()
	if ok {
		*v = s.ptr(out)
	}
	return ok
}

// uint reads a whole number without sign, fraction or exponent.
func (s *scanner) uint(v *uint64) bool {
	s.ws()
	start := s.i
	for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
		s.i++
	}
	d := s.b[start:s.i]
	if len(d) == 0 || (len(d) > 1 && d[0] == '0') || (s.i < len(s.b) && strings.IndexByte(".eE-+", s.b[s.i]) >= 0) {
		return false
	}
	n, err := strconv.ParseUint(string(d), 10, 64)
	*v = n
	return err == nil
}

// decodeInto reads one value (or null) into a pointer field through
// encoding/json, for the fields servers seldom write.
func decodeInto[T any](s *scanner, v **T) bool {
	if s.null() {
		*v = nil
		return true
	}
	raw, ok := s.raw()
	if !ok {
		return false
	}
	out := new(T)
	if err := json.Unmarshal(raw, out); err != nil {
		return false
	}
	*v = out
	return true
}

func (s *scanner) change(c *changeIn) bool {
	var seen uint8
	return s.object(func(k string) bool {
		switch k {
		case "seq":
			return s.once(&seen, 0) && s.uint(&c.Seq)
		case "at":
			return s.once(&seen, 1) && s.strField(&c.At)
		case "op":
			var op string
			ok := s.once(&seen, 2) && s.strField(&op)
			c.Op = ChangeOp(op)
			return ok
		case "id":
			return s.once(&seen, 3) && s.strField(&c.ID)
		case "namespace":
			return s.once(&seen, 4) && s.strPtr(&c.Namespace)
		case "status":
			return s.once(&seen, 5) && s.strPtr(&c.Status)
		case "record":
			if !s.once(&seen, 6) {
				return false
			}
			if s.null() {
				c.Record = nil
				return true
			}
			c.Record = s.record()
			return s.recordFields(c.Record)
		}
		return s.unknown(k, "seq", "at", "op", "id", "namespace", "status", "record")
	})
}

// recordFields reads a record. One without its meta is left to
// encoding/json: MemoryMeta's defaults (a source of kind agent) are given by
// its own decoding, which a record without meta never reaches.
func (s *scanner) recordFields(r *recordIn) bool {
	var seen uint16
	once := func(bit uint) bool {
		if seen&(1<<bit) != 0 {
			return false
		}
		seen |= 1 << bit
		return true
	}
	const metaSeen = 1 << 3
	return s.object(func(k string) bool {
		switch k {
		case "id":
			return once(0) && s.strField(&r.ID)
		case "kind":
			return once(1) && s.strPtr(&r.Kind)
		case "text":
			return once(2) && s.strField(&r.Text)
		case "meta":
			return once(3) && s.meta(&r.Meta)
		case "confidence":
			return once(4) && decodeInto(s, &r.Confidence)
		case "status":
			return once(5) && s.strPtr(&r.Status)
		case "created_at":
			return once(6) && s.strField(&r.CreatedAt)
		case "updated_at":
			return once(7) && s.strField(&r.UpdatedAt)
		case "expires_at":
			return once(8) && s.strPtr(&r.ExpiresAt)
		case "superseded_by":
			return once(9) && s.strPtr(&r.SupersededBy)
		case "item":
			return once(10) && decodeInto(s, &r.Item)
		}
		return s.unknown(k, "id", "kind", "text", "meta", "confidence", "status", "created_at", "updated_at",
			"expires_at", "superseded_by", "item")
	}) && seen&metaSeen != 0
}

func (s *scanner) meta(m *metaIn) bool {
	var seen uint32
	once := func(bit uint) bool {
		if seen&(1<<bit) != 0 {
			return false
		}
		seen |= 1 << bit
		return true
	}
	strs := [...]struct {
		k string
		v **string
	}{{"namespace", &m.Namespace}, {"workspace", &m.Workspace}, {"folder", &m.Folder}, {"file_path", &m.FilePath},
		{"language", &m.Language}, {"repo", &m.Repo}, {"commit", &m.Commit}, {"url", &m.URL},
		{"thread_id", &m.ThreadID}, {"agent_id", &m.AgentID}, {"observed_at", &m.ObservedAt}}
	return s.object(func(k string) bool {
		for i, f := range strs {
			if k == f.k {
				return once(uint(i)) && s.strPtr(f.v)
			}
		}
		switch k {
		case "turns":
			return once(20) && decodeInto(s, &m.Turns)
		case "tool_call":
			return once(21) && decodeInto(s, &m.ToolCall)
		case "observed_actor":
			return once(22) && decodeInto(s, &m.ObservedActor)
		case "derive":
			return once(23) && decodeInto(s, &m.Derive)
		case "tags":
			if !once(24) {
				return false
			}
			if s.null() {
				m.Tags = nil
				return true
			}
			// The tags of a page's records share blocks (each record's
			// slice capped at its own, so an append copies).
			start := len(s.tags)
			ok := s.array(func() bool {
				t, ok := s.str()
				if len(s.tags) == cap(s.tags) {
					n := len(s.tags) - start
					block := make([]string, n, nextBlock(cap(s.tags))+n)
					copy(block, s.tags[start:])
					s.tags, start = block, 0
				}
				s.tags = append(s.tags, t)
				return ok
			})
			if m.Tags = s.tags[start:len(s.tags):len(s.tags)]; len(m.Tags) == 0 {
				m.Tags = []string{} // as encoding/json reads []
			}
			return ok
		case "source":
			if !once(25) {
				return false
			}
			if s.null() {
				m.Source = nil
				return true
			}
			m.Source = s.source()
			var src uint8
			return s.object(func(k string) bool {
				switch k {
				case "kind":
					return s.once(&src, 0) && s.strPtr(&m.Source.Kind)
				case "id":
					return s.once(&src, 1) && s.strPtr(&m.Source.ID)
				}
				return s.unknown(k, "kind", "id")
			})
		}
		return s.unknown(k, "namespace", "workspace", "folder", "file_path", "language", "repo", "commit", "url",
			"thread_id", "agent_id", "observed_at", "turns", "tool_call", "observed_actor", "derive", "tags", "source")
	})
}
