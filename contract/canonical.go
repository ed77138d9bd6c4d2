package contract

import (
	"crypto/sha256"
	"encoding/hex"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// canonWriter writes the reference's compact JSON (serde_json's): fields in
// declaration order, unset options omitted, no HTML escaping, f32 in ryu's
// shortest form and times in chrono's RFC 3339 AutoSi form. The fingerprint hashes
// its output, so every byte matters.
type canonWriter struct {
	buf []byte
	err error
}

func (w *canonWriter) raw(s string) { w.buf = append(w.buf, s...) }

func (w *canonWriter) str(s string) {
	w.buf = appendJSONString(w.buf, s)
}

func (w *canonWriter) key(first *bool, k string) {
	if !*first {
		w.buf = append(w.buf, ',')
	}
	*first = false
	w.str(k)
	w.buf = append(w.buf, ':')
}

func (w *canonWriter) optStr(first *bool, k string, v *string) {
	if v == nil {
		return
	}
	w.key(first, k)
	w.str(*v)
}

func (w *canonWriter) item(it *StoreItem, forFingerprint bool) {
	first := true
	w.raw("{")
	w.key(&first, "type")
	w.str(string(it.Type))
	switch it.Type {
	case KindDocument:
		w.optStr(&first, "title", it.Title)
		w.key(&first, "body")
		w.body(it.Body)
		w.optStr(&first, "mime", it.Mime)
	case KindConversation:
		w.key(&first, "turns")
		w.raw("[")
		for i, t := range it.Turns {
			if i > 0 {
				w.raw(",")
			}
			w.turn(t)
		}
		w.raw("]")
	case KindLearning:
		w.key(&first, "text")
		w.str(it.Text)
		w.key(&first, "kind")
		w.str(string(it.Kind))
		w.key(&first, "confidence")
		w.raw(FormatF32(it.Confidence))
		w.optStr(&first, "evidence", it.Evidence)
	}
	w.key(&first, "meta")
	w.meta(&it.Meta, forFingerprint)
	w.raw("}")
}

func (w *canonWriter) body(b DocumentBody) {
	if b.IsURI {
		w.raw(`{"uri":`)
		w.str(b.URI)
	} else {
		w.raw(`{"text":`)
		w.str(b.Text)
	}
	w.raw("}")
}

func (w *canonWriter) turn(t Turn) {
	first := true
	w.raw("{")
	w.key(&first, "role")
	w.str(string(t.Role))
	w.key(&first, "text")
	w.str(t.Text)
	if t.At != nil {
		w.key(&first, "at")
		w.str(FormatTime(*t.At))
	}
	if len(t.ToolCalls) > 0 {
		w.key(&first, "tool_calls")
		w.raw("[")
		for i, c := range t.ToolCalls {
			if i > 0 {
				w.raw(",")
			}
			w.toolCall(c)
		}
		w.raw("]")
	}
	w.raw("}")
}

func (w *canonWriter) toolCall(c ToolCallRef) {
	first := true
	w.raw("{")
	w.key(&first, "name")
	w.str(c.Name)
	w.optStr(&first, "id", c.ID)
	w.raw("}")
}

func (w *canonWriter) meta(m *MemoryMeta, forFingerprint bool) {
	first := true
	w.raw("{")
	if !m.Namespace.IsRoot() {
		w.key(&first, "namespace")
		w.str(m.Namespace.String())
	}
	w.optStr(&first, "workspace", m.Workspace)
	w.optStr(&first, "folder", m.Folder)
	w.optStr(&first, "file_path", m.FilePath)
	w.optStr(&first, "language", m.Language)
	w.optStr(&first, "repo", m.Repo)
	w.optStr(&first, "commit", m.Commit)
	w.optStr(&first, "url", m.URL)
	w.optStr(&first, "thread_id", m.ThreadID)
	if m.Turns != nil {
		w.key(&first, "turns")
		w.raw(`{"first":` + strconv.FormatUint(uint64(m.Turns.First), 10) + `,"last":` + strconv.FormatUint(uint64(m.Turns.Last), 10) + "}")
	}
	w.optStr(&first, "agent_id", m.AgentID)
	if m.ToolCall != nil {
		w.key(&first, "tool_call")
		w.toolCall(*m.ToolCall)
	}
	w.key(&first, "source")
	w.raw(`{"kind":`)
	w.str(string(m.SourceKindOf()))
	if m.Source.ID != nil {
		w.raw(`,"id":`)
		w.str(*m.Source.ID)
	}
	w.raw("}")
	if len(m.Tags) > 0 {
		w.key(&first, "tags")
		w.raw("[")
		for i, t := range m.Tags {
			if i > 0 {
				w.raw(",")
			}
			w.str(t)
		}
		w.raw("]")
	}
	if !forFingerprint && m.ObservedAt != nil {
		w.key(&first, "observed_at")
		w.str(FormatTime(*m.ObservedAt))
	}
	if m.Derive != nil {
		w.key(&first, "derive")
		if *m.Derive {
			w.raw("true")
		} else {
			w.raw("false")
		}
	}
	if !forFingerprint && m.ObservedActor != nil {
		first2 := true
		w.key(&first, "observed_actor")
		w.raw("{")
		w.key(&first2, "id")
		w.str(m.ObservedActor.ID)
		w.optStr(&first2, "name", m.ObservedActor.Name)
		w.raw("}")
	}
	w.raw("}")
}

const hexDigits = "0123456789abcdef"

// appendJSONString escapes like serde_json: quote, backslash, the short escapes
// \b \t \n \f \r, other C0 controls as \u00xx, everything else raw UTF-8.
// Invalid UTF-8 becomes U+FFFD, as a Rust String could never hold it.
func appendJSONString(buf []byte, s string) []byte {
	buf = append(buf, '"')
	for i := 0; i < len(s); {
		// A run of bytes that go out as they are is copied at once, found
		// eight bytes at a time (a record's text is mostly such a run).
		j := i
		for j+8 <= len(s) && !special(load8(s, j)) {
			j += 8
		}
		for j < len(s) && s[j] >= 0x20 && s[j] < utf8.RuneSelf && s[j] != '"' && s[j] != '\\' {
			j++
		}
		buf = append(buf, s[i:j]...)
		if i = j; i == len(s) {
			break
		}
		var n int
		buf, n = appendEscaped(buf, s[i:])
		i += n
	}
	return append(buf, '"')
}

// appendEscaped appends the first character of s (not empty) as a JSON
// string holds it, and answers how many bytes of s it took: the short
// escapes, other C0 controls as \u00xx, U+FFFD for a byte that starts no
// valid UTF-8, everything else as it is.
func appendEscaped(buf []byte, s string) ([]byte, int) {
	c := s[0]
	if c >= utf8.RuneSelf {
		r, size := utf8.DecodeRuneInString(s)
		if r == utf8.RuneError && size == 1 {
			return append(buf, "\uFFFD"...), 1
		}
		return append(buf, s[:size]...), size
	}
	switch {
	case c == '"':
		buf = append(buf, '\\', '"')
	case c == '\\':
		buf = append(buf, '\\', '\\')
	case c == '\b':
		buf = append(buf, '\\', 'b')
	case c == '\t':
		buf = append(buf, '\\', 't')
	case c == '\n':
		buf = append(buf, '\\', 'n')
	case c == '\f':
		buf = append(buf, '\\', 'f')
	case c == '\r':
		buf = append(buf, '\\', 'r')
	case c < 0x20:
		buf = append(buf, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
	default:
		buf = append(buf, c)
	}
	return buf, 1
}

// load8 is the eight bytes of s from i, little-endian.
func load8(s string, i int) uint64 {
	_ = s[i+7]
	return uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
		uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56
}

// FormatF32 prints an f32 the way serde_json does (ryu's shortest round-trip form):
// "0.8", "1.0", "0.0", "1e-7", "1.5e-7", "1e16". NaN and infinities, which JSON
// cannot hold, print as null like serde_json.
func FormatF32(f float32) string {
	if f != f || math.IsInf(float64(f), 0) {
		return "null"
	}
	if f == 0 {
		if math.Signbit(float64(f)) {
			return "-0.0"
		}
		return "0.0"
	}
	// Shortest digits and exponent: d.ddde±x.
	e := strconv.FormatFloat(float64(f), 'e', -1, 32)
	neg := false
	if e[0] == '-' {
		neg = true
		e = e[1:]
	}
	mant, expPart, _ := strings.Cut(e, "e")
	digits := strings.Replace(mant, ".", "", 1)
	exp10, _ := strconv.Atoi(expPart)
	length := len(digits)
	// value = digits * 10^k with k = exp10 - (length-1); kk = length + k.
	k := exp10 - (length - 1)
	kk := length + k
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	switch {
	case k >= 0 && kk <= 13:
		b.WriteString(digits)
		b.WriteString(strings.Repeat("0", kk-length))
		b.WriteString(".0")
	case kk > 0 && kk <= 13:
		b.WriteString(digits[:kk])
		b.WriteByte('.')
		b.WriteString(digits[kk:])
	case kk > -6 && kk <= 0:
		b.WriteString("0.")
		b.WriteString(strings.Repeat("0", -kk))
		b.WriteString(digits)
	case length == 1:
		b.WriteString(digits)
		b.WriteByte('e')
		b.WriteString(strconv.Itoa(kk - 1))
	default:
		b.WriteString(digits[:1])
		b.WriteByte('.')
		b.WriteString(digits[1:])
		b.WriteByte('e')
		b.WriteString(strconv.Itoa(kk - 1))
	}
	return b.String()
}

// formatF32Display prints an f32 like Rust's Display (used in messages): no
// exponent, "NaN", "inf".
func formatF32Display(f float32) string {
	switch {
	case f != f:
		return "NaN"
	case math.IsInf(float64(f), 1):
		return "inf"
	case math.IsInf(float64(f), -1):
		return "-inf"
	}
	return strconv.FormatFloat(float64(f), 'f', -1, 32)
}

// CanonicalJSON returns the compact JSON the fingerprint hashes: the item with
// observed_at and observed_actor cleared.
func (it StoreItem) CanonicalJSON() []byte {
	w := canonWriter{buf: make([]byte, 0, it.jsonSizeHint())}
	w.item(&it, true)
	return w.buf
}

// Fingerprint is the item's id: SHA-256 of its canonical JSON, first 20 bytes,
// lowercase hex.
func (it StoreItem) Fingerprint() string { return fingerprintOf(it.CanonicalJSON()) }

func fingerprintOf(canonical []byte) string {
	sum := sha256.Sum256(canonical)
	return hex.EncodeToString(sum[:FingerprintBytes])
}

// FingerprintBytes is how many bytes of the hash an id spells.
const FingerprintBytes = 20

// IsFingerprint tells whether id has a fingerprint's form: 40 lowercase hex
// digits (which its 20 bytes give back exactly).
func IsFingerprint(id string) bool {
	if len(id) != 2*FingerprintBytes {
		return false
	}
	for i := 0; i < len(id); i++ {
		if c := id[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// JSONAndFingerprint is MarshalJSON and Fingerprint at once: the item is
// written once, and that JSON hashed, when it is also the canonical one (no
// observed_at or observed_actor, which the fingerprint leaves out). A write
// wrote every item twice, a fifth of a bulk load's CPU.
func (it StoreItem) JSONAndFingerprint() ([]byte, string, error) {
	js, err := it.MarshalJSON()
	if err != nil {
		return nil, "", err
	}
	canonical := js
	if it.Meta.ObservedAt != nil || it.Meta.ObservedActor != nil {
		canonical = it.CanonicalJSON()
	}
	return js, fingerprintOf(canonical), nil
}
