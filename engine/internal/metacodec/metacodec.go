// Package metacodec is the compact binary form in which engines store an
// item's metadata (contract.MemoryMeta) beside its record, so that listings,
// browse pages and rankings decode rows without parsing JSON: the writer, the
// reader, and the walk over the metadata's fields, written once.
//
// Stores hold two layouts of the same walk, and both are kept byte for byte
// (the goldens of engine/bolt and engine/postgres hold them): Fixed, in
// engine/bolt's records, and Varint, in engine/postgres's hit column. A new
// metadata field is added here, at the end of the walk, with a new version
// of each store's record.
package metacodec

import (
	"encoding/binary"
	"errors"
	"time"

	"mnemo/contract"
)

// Layout is one of the byte layouts of the metadata.
type Layout uint8

const (
	// Fixed is engine/bolt's: big-endian fixed-width turns and times, the
	// source kind as its index in contract.SourceKinds, the tags' count
	// always (no tags and an empty list read back as none), the agent id
	// after the turns.
	Fixed Layout = iota + 1
	// Varint is engine/postgres's: varint turns and times, the source kind
	// by name, the tags behind a presence byte (an empty list reads back
	// empty), the agent id among the other strings.
	Varint
)

// ErrCorrupt is the error of bytes that are not a value the writer wrote.
var ErrCorrupt = errors.New("stored metadata is corrupt")

// sourceKinds is contract.SourceKinds() read once (the contract's function
// returns a fresh copy): never written.
var sourceKinds = contract.SourceKinds()

// SourceCode is the Fixed layout's code of a source kind; an unknown kind is
// written as agent's.
func SourceCode(k contract.SourceKind) uint8 {
	for i, s := range sourceKinds {
		if s == k {
			return uint8(i)
		}
	}
	return SourceCode(contract.SourceAgent)
}

// SourceKindOf is the source kind of a Fixed code, false when there is none.
func SourceKindOf(code uint8) (contract.SourceKind, bool) {
	if int(code) >= len(sourceKinds) {
		return "", false
	}
	return sourceKinds[code], true
}

// SourceKinds is how many source kinds have a code.
func SourceKinds() int { return len(sourceKinds) }

// Writer appends values to Buf.
type Writer struct{ Buf []byte }

// U8 appends one byte.
func (w *Writer) U8(v uint8) { w.Buf = append(w.Buf, v) }

// U32 appends v big-endian.
func (w *Writer) U32(v uint32) { w.Buf = binary.BigEndian.AppendUint32(w.Buf, v) }

// I64 appends v big-endian.
func (w *Writer) I64(v int64) { w.Buf = binary.BigEndian.AppendUint64(w.Buf, uint64(v)) }

// Uvarint appends v as a varint.
func (w *Writer) Uvarint(v uint64) { w.Buf = binary.AppendUvarint(w.Buf, v) }

// Varint appends v as a zig-zag varint.
func (w *Writer) Varint(v int64) { w.Buf = binary.AppendVarint(w.Buf, v) }

// Bytes appends b behind its length.
func (w *Writer) Bytes(b []byte) {
	w.Uvarint(uint64(len(b)))
	w.Buf = append(w.Buf, b...)
}

// Str appends s behind its length.
func (w *Writer) Str(s string) {
	w.Uvarint(uint64(len(s)))
	w.Buf = append(w.Buf, s...)
}

// OptStr appends a presence byte, then the string when there is one.
func (w *Writer) OptStr(p *string) {
	if p == nil {
		w.U8(0)
		return
	}
	w.U8(1)
	w.Str(*p)
}

// Reader reads what a Writer wrote from a string or a byte slice. Read from
// a string, the strings it returns share its memory (one copy for a whole
// row); read from bytes, each string is its own copy (a long-lived value
// then keeps nothing else alive). The first malformed read sets Err, and
// every read after it returns a zero value.
type Reader[T ~string | ~[]byte] struct {
	buf T
	err error
}

// NewReader reads b.
func NewReader[T ~string | ~[]byte](b T) *Reader[T] { return &Reader[T]{buf: b} }

// Err is the first malformed read's error (ErrCorrupt), or nil.
func (r *Reader[T]) Err() error { return r.err }

// Rest is what is left to read.
func (r *Reader[T]) Rest() T { return r.buf }

// SetRest replaces what is left to read (a decompressed body, say).
func (r *Reader[T]) SetRest(b T) { r.buf = b }

// Fail marks the input corrupt.
func (r *Reader[T]) Fail() {
	r.err = ErrCorrupt
	r.buf = r.buf[:0]
}

// U8 reads one byte.
func (r *Reader[T]) U8() uint8 {
	if len(r.buf) < 1 {
		r.Fail()
		return 0
	}
	v := r.buf[0]
	r.buf = r.buf[1:]
	return v
}

// U32 reads a big-endian uint32.
func (r *Reader[T]) U32() uint32 {
	if len(r.buf) < 4 {
		r.Fail()
		return 0
	}
	b := r.buf
	v := uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
	r.buf = r.buf[4:]
	return v
}

// I64 reads a big-endian int64.
func (r *Reader[T]) I64() int64 {
	if len(r.buf) < 8 {
		r.Fail()
		return 0
	}
	var v uint64
	for i := range 8 {
		v = v<<8 | uint64(r.buf[i])
	}
	r.buf = r.buf[8:]
	return int64(v)
}

// Uvarint reads a varint, refusing one longer than a uint64 (as
// encoding/binary does).
func (r *Reader[T]) Uvarint() uint64 {
	var x uint64
	var s uint
	for i := 0; i < len(r.buf); i++ {
		if i == binary.MaxVarintLen64 {
			break
		}
		b := r.buf[i]
		if b < 0x80 {
			if i == binary.MaxVarintLen64-1 && b > 1 {
				break
			}
			r.buf = r.buf[i+1:]
			return x | uint64(b)<<s
		}
		x |= uint64(b&0x7f) << s
		s += 7
	}
	r.Fail()
	return 0
}

// Varint reads a zig-zag varint.
func (r *Reader[T]) Varint() int64 {
	ux := r.Uvarint()
	x := int64(ux >> 1)
	if ux&1 != 0 {
		x = ^x
	}
	return x
}

// Raw reads a length-prefixed run, sharing the input's memory.
func (r *Reader[T]) Raw() T {
	n := r.Uvarint()
	if r.err != nil || n > uint64(len(r.buf)) {
		r.Fail()
		return r.buf[:0]
	}
	b := r.buf[:n]
	r.buf = r.buf[n:]
	return b
}

// Str reads a length-prefixed string.
func (r *Reader[T]) Str() string { return string(r.Raw()) }

// OptStr reads a presence byte and the string behind it.
func (r *Reader[T]) OptStr() *string {
	if r.U8() == 0 {
		return nil
	}
	s := r.Str()
	return &s
}

// AppendMeta appends m in layout l. The printed namespace comes first, so a
// reader can take it apart from the rest.
func AppendMeta(w *Writer, m *contract.MemoryMeta, l Layout) {
	w.Str(m.Namespace.String())
	for _, p := range []*string{m.Workspace, m.Folder, m.FilePath, m.Language, m.Repo, m.Commit, m.URL, m.ThreadID} {
		w.OptStr(p)
	}
	if l == Varint {
		w.OptStr(m.AgentID)
	}
	if m.Turns == nil {
		w.U8(0)
	} else {
		w.U8(1)
		w.number(uint64(m.Turns.First), l)
		w.number(uint64(m.Turns.Last), l)
	}
	if l == Fixed {
		w.OptStr(m.AgentID)
	}
	if m.ToolCall == nil {
		w.U8(0)
	} else {
		w.U8(1)
		w.Str(m.ToolCall.Name)
		w.OptStr(m.ToolCall.ID)
	}
	if l == Fixed {
		w.U8(SourceCode(m.SourceKindOf()))
	} else {
		w.Str(string(m.Source.Kind))
	}
	w.OptStr(m.Source.ID)
	if l == Varint {
		if m.Tags == nil {
			w.U8(0)
		} else {
			w.U8(1)
		}
	}
	if l == Fixed || m.Tags != nil {
		w.Uvarint(uint64(len(m.Tags)))
		for _, t := range m.Tags {
			w.Str(t)
		}
	}
	if m.ObservedAt == nil {
		w.U8(0)
	} else {
		w.U8(1)
		if l == Fixed {
			w.I64(m.ObservedAt.Unix())
			w.U32(uint32(m.ObservedAt.Nanosecond()))
		} else {
			w.Varint(m.ObservedAt.Unix())
			w.Uvarint(uint64(m.ObservedAt.Nanosecond()))
		}
	}
	switch {
	case m.Derive == nil:
		w.U8(0)
	case *m.Derive:
		w.U8(2)
	default:
		w.U8(1)
	}
	if m.ObservedActor == nil {
		w.U8(0)
	} else {
		w.U8(1)
		w.Str(m.ObservedActor.ID)
		w.OptStr(m.ObservedActor.Name)
	}
}

// number writes a turn: fixed-width or a varint.
func (w *Writer) number(v uint64, l Layout) {
	if l == Fixed {
		w.U32(uint32(v))
		return
	}
	w.Uvarint(v)
}

func number[T ~string | ~[]byte](r *Reader[T], l Layout) uint32 {
	if l == Fixed {
		return r.U32()
	}
	return uint32(r.Uvarint())
}

// ReadMeta reads metadata AppendMeta wrote in layout l into m, all but the
// namespace, whose printed form it returns for the caller to parse (callers
// cache them: the namespaces are few). A malformed input sets r.Err. In the
// Varint layout the optional strings share one allocation.
func ReadMeta[T ~string | ~[]byte](r *Reader[T], m *contract.MemoryMeta, l Layout) T {
	ns := r.Raw()
	var block *[14]string // a hit's optional strings: nine fields, the tool call's id, the source id, the actor's name
	k := 0
	opt := func() *string {
		if l == Fixed {
			return r.OptStr()
		}
		if r.U8() == 0 {
			return nil
		}
		if block == nil {
			block = new([14]string)
		}
		if k == len(block) {
			r.Fail()
			return nil
		}
		block[k] = r.Str()
		k++
		return &block[k-1]
	}
	for _, p := range []**string{&m.Workspace, &m.Folder, &m.FilePath, &m.Language, &m.Repo, &m.Commit, &m.URL, &m.ThreadID} {
		*p = opt()
	}
	if l == Varint {
		m.AgentID = opt()
	}
	if r.U8() == 1 {
		first := number(r, l)
		m.Turns = &contract.TurnRange{First: first, Last: number(r, l)}
	}
	if l == Fixed {
		m.AgentID = opt()
	}
	if r.U8() == 1 {
		name := r.Str()
		m.ToolCall = &contract.ToolCallRef{Name: name, ID: opt()}
	}
	if l == Fixed {
		kind, ok := SourceKindOf(r.U8())
		if !ok {
			r.Fail()
			return ns
		}
		m.Source = contract.SourceRef{Kind: kind, ID: opt()}
	} else {
		kind := contract.SourceKind(r.Str())
		m.Source = contract.SourceRef{Kind: kind, ID: opt()}
	}
	if l == Fixed || r.U8() == 1 {
		n := r.Uvarint()
		if n > uint64(len(r.buf)) {
			r.Fail()
			return ns
		}
		if n > 0 || l == Varint {
			m.Tags = make([]string, n)
			for i := range m.Tags {
				m.Tags[i] = r.Str()
			}
		}
	}
	if r.U8() == 1 {
		var sec int64
		var nsec uint64
		if l == Fixed {
			sec, nsec = r.I64(), uint64(r.U32())
		} else {
			sec, nsec = r.Varint(), r.Uvarint()
			if nsec >= uint64(time.Second) {
				r.Fail()
				return ns
			}
		}
		t := time.Unix(sec, int64(nsec)).UTC()
		m.ObservedAt = &t
	}
	switch r.U8() {
	case 1:
		m.Derive = contract.Ptr(false)
	case 2:
		m.Derive = contract.Ptr(true)
	}
	if r.U8() == 1 {
		id := r.Str()
		m.ObservedActor = &contract.ObservedActor{ID: id, Name: opt()}
	}
	return ns
}
