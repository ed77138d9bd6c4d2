package postgres

import (
	"encoding/binary"
	"errors"
	"time"

	"mnemo/contract"
)

// The hit column holds what a hit carries besides the columns the row has
// anyway (id, kind, confidence): the rendered text and the metadata, in a
// compact binary form, so a browse page, a listing or a ranking decodes its
// rows without reading the item out of line or parsing JSON (about 50 µs a
// row before). The first byte is the layout's version; a row written before
// the column existed holds NULL and is decoded from its item.
const hitVersion = 1

var errCorruptHit = errors.New("stored hit is corrupt")

// encodeHit is the hit column of an item whose rendered text is text.
func encodeHit(text string, m *contract.MemoryMeta) []byte {
	w := hitWriter{buf: make([]byte, 0, len(text)+128)}
	w.buf = append(w.buf, hitVersion)
	w.str(text)
	w.str(m.Namespace.String())
	for _, p := range []*string{m.Workspace, m.Folder, m.FilePath, m.Language, m.Repo, m.Commit, m.URL, m.ThreadID, m.AgentID} {
		w.optStr(p)
	}
	if m.Turns == nil {
		w.u8(0)
	} else {
		w.u8(1)
		w.uvarint(uint64(m.Turns.First))
		w.uvarint(uint64(m.Turns.Last))
	}
	if m.ToolCall == nil {
		w.u8(0)
	} else {
		w.u8(1)
		w.str(m.ToolCall.Name)
		w.optStr(m.ToolCall.ID)
	}
	w.str(string(m.Source.Kind))
	w.optStr(m.Source.ID)
	if m.Tags == nil {
		w.u8(0)
	} else {
		w.u8(1)
		w.uvarint(uint64(len(m.Tags)))
		for _, t := range m.Tags {
			w.str(t)
		}
	}
	if m.ObservedAt == nil {
		w.u8(0)
	} else {
		w.u8(1)
		w.buf = binary.AppendVarint(w.buf, m.ObservedAt.Unix())
		w.uvarint(uint64(m.ObservedAt.Nanosecond()))
	}
	switch {
	case m.Derive == nil:
		w.u8(0)
	case *m.Derive:
		w.u8(2)
	default:
		w.u8(1)
	}
	if m.ObservedActor == nil {
		w.u8(0)
	} else {
		w.u8(1)
		w.str(m.ObservedActor.ID)
		w.optStr(m.ObservedActor.Name)
	}
	return w.buf
}

// nsCache parses each printed namespace once per page.
type nsCache map[string]contract.Namespace

func (c nsCache) get(s string) (contract.Namespace, error) {
	if ns, ok := c[s]; ok {
		return ns, nil
	}
	ns, err := contract.ParseNamespace(s)
	if err != nil {
		return contract.Namespace{}, err
	}
	c[s] = ns
	return ns, nil
}

// decodeHit reads a hit column into the hit's text and metadata. The
// column is copied into one string that every decoded string shares, and the
// optional fields point into one array: a row costs a handful of allocations
// rather than one per field (a 1000-row page decodes in about 1 ms).
func decodeHit(b []byte, nss nsCache) (string, contract.MemoryMeta, error) {
	r := hitReader{buf: string(b)}
	var m contract.MemoryMeta
	if r.u8() != hitVersion {
		return "", m, errCorruptHit
	}
	text := r.str()
	ns, err := nss.get(r.str())
	if err != nil {
		return "", m, errCorruptHit
	}
	m.Namespace = ns
	// Every optional string of a hit: nine fields, the tool call's name
	// and id, the source id, the actor's id and name.
	opts := new([14]string)
	k := 0
	opt := func() *string {
		if r.u8() == 0 || k == len(opts) {
			return nil
		}
		opts[k] = r.str()
		k++
		return &opts[k-1]
	}
	for _, p := range []**string{&m.Workspace, &m.Folder, &m.FilePath, &m.Language, &m.Repo, &m.Commit, &m.URL, &m.ThreadID, &m.AgentID} {
		*p = opt()
	}
	if r.u8() == 1 {
		m.Turns = &contract.TurnRange{First: uint32(r.uvarint()), Last: uint32(r.uvarint())}
	}
	if r.u8() == 1 {
		name := r.str()
		m.ToolCall = &contract.ToolCallRef{Name: name, ID: opt()}
	}
	m.Source = contract.SourceRef{Kind: contract.SourceKind(r.str()), ID: opt()}
	if r.u8() == 1 {
		n := r.uvarint()
		if n > uint64(len(r.buf)) {
			return "", m, errCorruptHit
		}
		m.Tags = make([]string, n)
		for i := range m.Tags {
			m.Tags[i] = r.str()
		}
	}
	if r.u8() == 1 {
		sec, n := binary.Varint([]byte(r.buf[:min(len(r.buf), binary.MaxVarintLen64)]))
		if n <= 0 {
			return "", m, errCorruptHit
		}
		r.buf = r.buf[n:]
		nsec := r.uvarint()
		if nsec >= uint64(time.Second) {
			return "", m, errCorruptHit
		}
		t := time.Unix(sec, int64(nsec)).UTC()
		m.ObservedAt = &t
	}
	switch r.u8() {
	case 1:
		m.Derive = contract.Ptr(false)
	case 2:
		m.Derive = contract.Ptr(true)
	}
	if r.u8() == 1 {
		id := r.str()
		m.ObservedActor = &contract.ObservedActor{ID: id, Name: opt()}
	}
	if r.err != nil || len(r.buf) != 0 {
		return "", m, errCorruptHit
	}
	return text, m, nil
}

type hitWriter struct{ buf []byte }

func (w *hitWriter) u8(v uint8)       { w.buf = append(w.buf, v) }
func (w *hitWriter) uvarint(v uint64) { w.buf = binary.AppendUvarint(w.buf, v) }
func (w *hitWriter) str(s string)     { w.uvarint(uint64(len(s))); w.buf = append(w.buf, s...) }
func (w *hitWriter) optStr(p *string) {
	if p == nil {
		w.u8(0)
		return
	}
	w.u8(1)
	w.str(*p)
}

type hitReader struct {
	buf string
	err error
}

func (r *hitReader) fail() { r.err, r.buf = errCorruptHit, "" }

func (r *hitReader) u8() uint8 {
	if len(r.buf) < 1 {
		r.fail()
		return 0
	}
	v := r.buf[0]
	r.buf = r.buf[1:]
	return v
}

func (r *hitReader) uvarint() uint64 {
	var v uint64
	for shift := uint(0); shift < 64; shift += 7 {
		if len(r.buf) == 0 {
			break
		}
		c := r.buf[0]
		r.buf = r.buf[1:]
		v |= uint64(c&0x7f) << shift
		if c < 0x80 {
			return v
		}
	}
	r.fail()
	return 0
}

// str is the next string, sharing the column's copy.
func (r *hitReader) str() string {
	n := r.uvarint()
	if n > uint64(len(r.buf)) {
		r.fail()
		return ""
	}
	s := r.buf[:n]
	r.buf = r.buf[n:]
	return s
}
