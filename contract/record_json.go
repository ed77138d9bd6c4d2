package contract

import (
	"bytes"
	"encoding/json"
	"strconv"
	"unicode/utf8"
)

// Records and changes written by hand. encoding/json wrote a record's
// fields by reflection and then validated and compacted the metadata's own
// JSON (MemoryMeta.MarshalJSON) again, byte by byte: about 6 µs a change
// for a server streaming the feed, once per change, and again for every
// line `mnemo watch` prints and every record of a browse page. The bytes
// are the ones json.Marshal wrote (TestRecordJSONIsEncodingJSONs,
// FuzzAppendJSONStringHTML): strings in encoding/json's HTML-safe form,
// the metadata in the canonical form with that escaping applied.

// millisLayout is the layout of FormatMillis and of the times records and
// changes are written with.
const millisLayout = "2006-01-02T15:04:05.000Z"

// appendJSON appends r as MarshalJSON writes it. A record that carries its
// item goes through encoding/json: the item is seldom sent.
func (r *Record) appendJSON(dst []byte) ([]byte, error) {
	if r.Item != nil {
		b, err := r.wireJSON()
		return append(dst, b...), err
	}
	dst = append(dst, `{"id":`...)
	dst = appendJSONStringHTML(dst, r.ID)
	dst = append(dst, `,"kind":`...)
	dst = appendJSONStringHTML(dst, string(r.Kind))
	dst = append(dst, `,"text":`...)
	dst = appendJSONStringHTML(dst, r.Text)
	dst = append(dst, `,"meta":`...)
	start := len(dst)
	w := canonWriter{buf: dst}
	w.meta(&r.Meta, false)
	if w.err != nil {
		return dst, w.err
	}
	dst = escapeHTMLFrom(w.buf, start)
	if r.Confidence != nil {
		dst = append(dst, `,"confidence":`...)
		dst = append(dst, FormatF32(float32(*r.Confidence))...)
	}
	dst = append(dst, `,"status":`...)
	dst = appendJSONStringHTML(dst, string(r.Status))
	dst = append(dst, `,"created_at":"`...)
	dst = r.CreatedAt.UTC().AppendFormat(dst, millisLayout)
	dst = append(dst, `","updated_at":"`...)
	dst = r.UpdatedAt.UTC().AppendFormat(dst, millisLayout)
	dst = append(dst, '"')
	if r.ExpiresAt != nil {
		dst = append(dst, `,"expires_at":"`...)
		dst = r.ExpiresAt.UTC().AppendFormat(dst, millisLayout)
		dst = append(dst, '"')
	}
	if r.SupersededBy != nil {
		dst = append(dst, `,"superseded_by":`...)
		dst = appendJSONStringHTML(dst, *r.SupersededBy)
	}
	return append(dst, '}'), nil
}

// sizeHint is about how many bytes r's JSON takes (its text and a record's
// usual fields), so that it is written into one buffer.
func (r *Record) sizeHint() int { return 320 + len(r.Text) + len(r.ID) }

// wireJSON is the record through encoding/json.
func (r *Record) wireJSON() ([]byte, error) {
	w := recordWire{ID: r.ID, Kind: r.Kind, Text: r.Text, Meta: r.Meta, Confidence: r.Confidence,
		Status: r.Status, CreatedAt: FormatMillis(r.CreatedAt), UpdatedAt: FormatMillis(r.UpdatedAt),
		SupersededBy: r.SupersededBy, Item: r.Item}
	if r.ExpiresAt != nil {
		w.ExpiresAt = Ptr(FormatMillis(*r.ExpiresAt))
	}
	return json.Marshal(w)
}

// appendJSON appends c as MarshalJSON writes it.
func (c *Change) appendJSON(dst []byte) ([]byte, error) {
	dst = append(dst, `{"seq":`...)
	dst = strconv.AppendUint(dst, c.Seq, 10)
	dst = append(dst, `,"at":"`...)
	dst = c.At.UTC().AppendFormat(dst, millisLayout)
	dst = append(dst, `","op":`...)
	dst = appendJSONStringHTML(dst, string(c.Op))
	dst = append(dst, `,"id":`...)
	dst = appendJSONStringHTML(dst, c.ID)
	dst = append(dst, `,"namespace":`...)
	start := len(dst)
	dst = escapeHTMLFrom(appendJSONString(dst, c.Namespace.String()), start)
	dst = append(dst, `,"status":`...)
	dst = appendJSONStringHTML(dst, string(c.Status))
	if c.Record != nil {
		dst = append(dst, `,"record":`...)
		var err error
		if dst, err = c.Record.appendJSON(dst); err != nil {
			return dst, err
		}
	}
	return append(dst, '}'), nil
}

// appendJSONStringHTML appends s as encoding/json writes a string: quote
// and backslash escaped, \b \f \n \r \t, other C0 controls and < > & as
// \u00xx, U+2028 and U+2029 as \u2028 and \u2029, a byte that starts no
// valid UTF-8 as \ufffd. Plain ASCII passes eight bytes at a time.
func appendJSONStringHTML(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		for i+8 <= len(s) && !htmlSpecial(load8(s, i)) {
			i += 8
		}
		if i >= len(s) {
			break
		}
		b := s[i]
		if b < utf8.RuneSelf {
			if b >= 0x20 && b != '"' && b != '\\' && b != '<' && b != '>' && b != '&' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '\\', '"':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xF])
			}
			i++
			start = i
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case c == utf8.RuneError && size == 1:
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
		case c == '\u2028' || c == '\u2029':
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[c&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// htmlSpecial tells whether any of the eight bytes in x is one
// appendJSONStringHTML does not copy as it is: special's, or < > &.
func htmlSpecial(x uint64) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	zero := func(v uint64) uint64 { return (v - ones) & ^v & highs }
	return special(x) || zero(x^('<'*ones))|zero(x^('>'*ones))|zero(x^('&'*ones)) != 0
}

// escapeHTMLFrom applies to dst[start:], JSON written by canonWriter, what
// encoding/json does to a Marshaler's output: < > & as \u003c \u003e
// \u0026 and U+2028, U+2029 as \u2028, \u2029. They stand only inside
// strings, so every one is replaced.
func escapeHTMLFrom(dst []byte, start int) []byte {
	v := dst[start:]
	if bytes.IndexAny(v, "<>&\u2028\u2029") < 0 {
		return dst
	}
	out := make([]byte, 0, len(v)+16)
	for i := 0; i < len(v); {
		switch c := v[i]; {
		case c == '<' || c == '>' || c == '&':
			out = append(out, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			i++
		case c == 0xE2 && i+2 < len(v) && v[i+1] == 0x80 && v[i+2]&^1 == 0xA8:
			out = append(out, '\\', 'u', '2', '0', '2', hexDigits[v[i+2]&0xF])
			i += 3
		default:
			out = append(out, c)
			i++
		}
	}
	return append(dst[:start], out...)
}
