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

// decodeHit reads a hit column into the hit's text and metadata.
func decodeHit(b []byte, nss nsCache) (string, contract.MemoryMeta, error) {
	r := hitReader{buf: b}
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
	for _, p := range []**string{&m.Workspace, &m.Folder, &m.FilePath, &m.Language, &m.Repo, &m.Commit, &m.URL, &m.ThreadID, &m.AgentID} {
		*p = r.optStr()
	}
	if r.u8() == 1 {
		m.Turns = &contract.TurnRange{First: uint32(r.uvarint()), Last: uint32(r.uvarint())}
	}
	if r.u8() == 1 {
		m.ToolCall = &contract.ToolCallRef{Name: r.str(), ID: r.optStr()}
	}
	m.Source = contract.SourceRef{Kind: contract.SourceKind(r.str()), ID: r.optStr()}
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
		sec, k := binary.Varint(r.buf)
		if k <= 0 {
			return "", m, errCorruptHit
		}
		r.buf = r.buf[k:]
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
		m.ObservedActor = &contract.ObservedActor{ID: r.str(), Name: r.optStr()}
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
	buf []byte
	err error
}

func (r *hitReader) fail() { r.err, r.buf = errCorruptHit, nil }

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
	v, k := binary.Uvarint(r.buf)
	if k <= 0 {
		r.fail()
		return 0
	}
	r.buf = r.buf[k:]
	return v
}

func (r *hitReader) str() string {
	n := r.uvarint()
	if n > uint64(len(r.buf)) {
		r.fail()
		return ""
	}
	s := string(r.buf[:n])
	r.buf = r.buf[n:]
	return s
}

func (r *hitReader) optStr() *string {
	if r.u8() == 0 {
		return nil
	}
	s := r.str()
	return &s
}
