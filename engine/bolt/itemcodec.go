package bolt

import (
	"math"
	"time"
	"unicode/utf8"

	"mnemo/contract"
	"mnemo/engine/internal/metacodec"
)

// A record of layout 4 or 5 holds its item as the fields its JSON would
// write, in binary, after the rendered text and the metadata the record
// holds anyway; the item is the record's kind, those fields and that
// metadata. Until layout 4 a record held the item's JSON, which spells out
// the metadata a second time: on the bench corpus a body took 456
// compressed bytes with the JSON, 368 without any item, and takes 382 with
// the fields in binary.
//
// The item read back is the one its JSON would give (the same JSON, the
// same values: times in UTC, a document's body as its JSON has it), which
// TestItemsReadBackAsTheirJSONGives holds for every kind. An item whose
// strings are not all valid UTF-8 is the exception: its JSON would replace
// the bad bytes, so its record keeps the JSON (binaryItem).

// setItem gives s the item to write: in binary when binaryItem allows (a
// copy, so the caller's item may change after), else its JSON, js.
func (s *storedRecord) setItem(it *contract.StoreItem, js []byte) {
	if binaryItem(it) {
		cp := *it
		s.item, s.itemJSON = &cp, nil
		return
	}
	s.item, s.itemJSON = nil, js
}

// binaryItem says whether it can be kept in binary: every string it would
// write is valid UTF-8.
func binaryItem(it *contract.StoreItem) bool {
	ok := true
	str := func(s string) { ok = ok && utf8.ValidString(s) }
	opt := func(p *string) {
		if p != nil {
			str(*p)
		}
	}
	switch it.Type {
	case contract.KindDocument:
		opt(it.Title)
		str(it.Body.Text)
		str(it.Body.URI)
		opt(it.Mime)
	case contract.KindConversation:
		for _, t := range it.Turns {
			str(string(t.Role))
			str(t.Text)
			for _, c := range t.ToolCalls {
				str(c.Name)
				opt(c.ID)
			}
		}
	case contract.KindLearning:
		str(it.Text)
		str(string(it.Kind))
		opt(it.Evidence)
	default:
		return false
	}
	m := &it.Meta
	for _, p := range []*string{m.Workspace, m.Folder, m.FilePath, m.Language, m.Repo, m.Commit, m.URL, m.ThreadID, m.AgentID, m.Source.ID} {
		opt(p)
	}
	if m.ToolCall != nil {
		str(m.ToolCall.Name)
		opt(m.ToolCall.ID)
	}
	for _, t := range m.Tags {
		str(t)
	}
	if m.ObservedActor != nil {
		str(m.ObservedActor.ID)
		opt(m.ObservedActor.Name)
	}
	return ok
}

// appendItem writes the fields of it that its JSON writes for its type,
// but its metadata.
func appendItem(w *metacodec.Writer, it *contract.StoreItem) {
	switch it.Type {
	case contract.KindDocument:
		w.OptStr(it.Title)
		if it.Body.IsURI {
			w.U8(1)
			w.Str(it.Body.URI)
		} else {
			w.U8(0)
			w.Str(it.Body.Text)
		}
		w.OptStr(it.Mime)
	case contract.KindConversation:
		w.Uvarint(uint64(len(it.Turns)))
		for _, t := range it.Turns {
			w.Str(string(t.Role))
			w.Str(t.Text)
			if t.At == nil {
				w.U8(0)
			} else {
				w.U8(1)
				w.I64(t.At.Unix())
				w.U32(uint32(t.At.Nanosecond()))
			}
			w.Uvarint(uint64(len(t.ToolCalls)))
			for _, c := range t.ToolCalls {
				w.Str(c.Name)
				w.OptStr(c.ID)
			}
		}
	case contract.KindLearning:
		w.Str(it.Text)
		w.Str(string(it.Kind))
		w.U32(math.Float32bits(it.Confidence))
		w.OptStr(it.Evidence)
	}
}

// readItem reads what appendItem wrote for an item of kind whose metadata
// is meta. A malformed input sets r.Err.
func readItem(r *metacodec.Reader[[]byte], kind contract.ItemKind, meta contract.MemoryMeta) contract.StoreItem {
	it := contract.StoreItem{Type: kind, Meta: meta}
	switch kind {
	case contract.KindDocument:
		it.Title = r.OptStr()
		if r.U8() == 1 {
			it.Body = contract.DocumentBody{URI: r.Str(), IsURI: true}
		} else {
			it.Body = contract.DocumentBody{Text: r.Str()}
		}
		it.Mime = r.OptStr()
	case contract.KindConversation:
		n := r.Uvarint()
		if n > uint64(len(r.Rest())) {
			r.Fail()
			return it
		}
		it.Turns = make([]contract.Turn, n)
		for i := range it.Turns {
			t := &it.Turns[i]
			t.Role = contract.Role(r.Str())
			t.Text = r.Str()
			if r.U8() == 1 {
				sec, nsec := r.I64(), r.U32()
				if nsec >= uint32(time.Second) {
					r.Fail()
					return it
				}
				at := time.Unix(sec, int64(nsec)).UTC()
				t.At = &at
			}
			k := r.Uvarint()
			if k > uint64(len(r.Rest())) {
				r.Fail()
				return it
			}
			for range k {
				name := r.Str()
				t.ToolCalls = append(t.ToolCalls, contract.ToolCallRef{Name: name, ID: r.OptStr()})
			}
		}
	case contract.KindLearning:
		it.Text = r.Str()
		it.Kind = contract.LearningKind(r.Str())
		it.Confidence = math.Float32frombits(r.U32())
		it.Evidence = r.OptStr()
	}
	return it
}
