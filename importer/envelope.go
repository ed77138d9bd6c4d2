package importer

import (
	"encoding/json"
	"strings"
)

// envelopeKeys are lineEnvelope's JSON names, in the order of the bits
// scanEnvelope marks them with.
var envelopeKeys = [...]string{"id", "item", "type", "status", "expires_at", "superseded_by"}

// scanEnvelope reads a line's envelope (lineEnvelope) in one pass, for
// parseLineQuick. It reads only lines spelled the plain way, where it can
// tell what encoding/json would read: an object whose keys have no escapes
// and no bytes beyond ASCII, none spelled like an envelope key in another
// case (encoding/json matches those too) and none of them twice; id,
// status, expires_at and superseded_by null or a string of printable ASCII
// without escapes; an item that is an object. Anything else is not ok.
//
// It checks the JSON of the envelope itself and of the values it skips in
// an export line, but not the item's (a bare StoreItem's is the whole
// line): the caller reads the item with a decoder that takes only valid
// JSON.
func scanEnvelope(data []byte) (env lineEnvelope, ok bool) {
	i := skipSpace(data, 0)
	if i == len(data) || data[i] != '{' {
		return env, false
	}
	var seen uint8
	var others [][]byte
	for i = skipSpace(data, i+1); ; {
		if i == len(data) || data[i] != '"' {
			return env, false // `{}` too: neither an item nor a type
		}
		end := i + 1
		for end < len(data) && data[end] != '"' {
			if c := data[end]; c == '\\' || c < 0x20 || c >= 0x80 {
				return env, false
			}
			end++
		}
		if end == len(data) {
			return env, false
		}
		key := string(data[i+1 : end])
		if i = skipSpace(data, end+1); i == len(data) || data[i] != ':' {
			return env, false
		}
		start := skipSpace(data, i+1)
		if i = skipValue(data, start); i <= start {
			return env, false
		}
		value := data[start:i]
		field := -1
		for f, name := range envelopeKeys {
			if key == name {
				field = f
			} else if strings.EqualFold(key, name) {
				return env, false
			}
		}
		switch field {
		case -1:
			others = append(others, value)
		default:
			if seen&(1<<field) != 0 {
				return env, false
			}
			seen |= 1 << field
			switch envelopeKeys[field] {
			case "item":
				if value[0] != '{' {
					return env, false
				}
				env.Item = value
			case "type":
				env.Type = value
			default:
				s, isString := plainString(value)
				if !isString && string(value) != "null" {
					return env, false
				}
				if isString {
					*envelopeString(&env, field) = &s
				}
			}
		}
		if i = skipSpace(data, i); i == len(data) {
			return env, false
		}
		if data[i] == '}' {
			break
		}
		if data[i] != ',' {
			return env, false
		}
		i = skipSpace(data, i+1)
	}
	if skipSpace(data, i+1) != len(data) {
		return env, false
	}
	// In an export line the other keys are skipped, so their values are
	// checked here; a bare StoreItem's are the item's, which its decoder
	// checks.
	if env.Item != nil {
		for _, v := range others {
			if !json.Valid(v) {
				return env, false
			}
		}
	}
	return env, true
}

// envelopeString is the field of env that envelopeKeys[field] names, for
// the four string fields.
func envelopeString(env *lineEnvelope, field int) **string {
	switch envelopeKeys[field] {
	case "id":
		return &env.ID
	case "status":
		return &env.Status
	case "expires_at":
		return &env.ExpiresAt
	}
	return &env.SupersededBy
}

// plainString is the string a JSON value spells when it is a string of
// printable ASCII without escapes.
func plainString(v []byte) (string, bool) {
	if len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' {
		return "", false
	}
	for _, c := range v[1 : len(v)-1] {
		if c == '\\' || c == '"' || c < 0x20 || c >= 0x80 {
			return "", false
		}
	}
	return string(v[1 : len(v)-1]), true
}

// skipSpace is the index of the first byte at or after i that is not JSON
// whitespace.
func skipSpace(data []byte, i int) int {
	for i < len(data) {
		switch data[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// skipValue is the index just past the JSON value that begins at i, found
// by its structure alone (strings, nesting): whether the value is valid
// JSON is for the caller to check. It answers i when no value begins there
// and len(data) when the value does not end.
func skipValue(data []byte, i int) int {
	if i == len(data) {
		return i
	}
	switch data[i] {
	case '"':
		return skipString(data, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(data); j++ {
			switch data[j] {
			case '"':
				j = skipString(data, j) - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return j + 1
				}
			}
		}
		return len(data)
	case ',', ':', '}', ']':
		return i
	}
	j := i
	for j < len(data) {
		switch data[j] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return j
		}
		j++
	}
	return j
}

// skipString is the index just past the string that begins at i (its
// closing quote), or len(data) when it does not end.
func skipString(data []byte, i int) int {
	for j := i + 1; j < len(data); j++ {
		switch data[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return len(data)
}
