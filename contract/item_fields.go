package contract

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// MissingItemFields names, in the wire order, every field a StoreItem of the
// JSON's type needs and lacks (turns' role and text included), so one run
// names them all instead of one per attempt. It is empty when the JSON is not
// an object or names no known type: the decoder's own error says more then.
func MissingItemFields(data []byte) string {
	if !json.Valid(data) {
		return ""
	}
	missing, _ := ItemKeys(data)
	return missing
}

// ItemKeys reads, in one pass over data, MissingItemFields and the keys of
// the item's "meta" object that MemoryMeta does not know, in the order they
// appear (the contract ignores them, and an import says so). data must be
// valid JSON (a caller that has decoded it, as an import has each line).
// An import reads every line this way: the two apart decoded each item
// twice more, 7.5 of a 100k import's 131 s of CPU.
//
// Keys are matched as encoding/json matches them where each rule was first
// written with it: the needed fields exactly (a map's keys), "meta" without
// regard to case (a struct field's), and only when the text holds "meta"
// itself somewhere.
func ItemKeys(data []byte) (missing string, unknownMeta []string) {
	s := scanner{b: data, trusted: true}
	if s.at() != '{' {
		return "", nil
	}
	var (
		seen            itemFieldsSeen
		typ             string
		typOK           bool
		turnsAt, metaAt = -1, -1
		lookForMeta     = bytes.Contains(data, []byte(`"meta"`))
	)
	s.object(func(key string) bool {
		switch key {
		case "type":
			seen.typ = true
			switch s.at() {
			case '"':
				typ, typOK = s.str()
				return typOK
			case 'n':
				typ, typOK = "", true
			default:
				typ, typOK = "", false
			}
		case "body":
			seen.body = true
		case "turns":
			seen.turns, turnsAt = true, s.i
		case "text":
			seen.text = true
		case "kind":
			seen.kind = true
		case "confidence":
			seen.confidence = true
		}
		if lookForMeta && strings.EqualFold(key, "meta") {
			metaAt = s.i
		}
		_, ok := s.raw()
		return ok
	})

	if !seen.typ {
		missing = "missing field `type`"
	} else if typOK {
		var need []string
		switch ItemKind(typ) {
		case KindDocument:
			need = seen.lacks(need, "body")
		case KindConversation:
			need = seen.lacks(need, "turns")
			if turnsAt >= 0 {
				if lacking, ok := turnsLacking(data[turnsAt:]); ok {
					need = append(need, lacking...)
				}
			}
		case KindLearning:
			need = seen.lacks(need, "text", "kind", "confidence")
		}
		missing = missingFieldsText(need)
	}

	if metaAt >= 0 {
		m := scanner{b: data, i: metaAt, trusted: true}
		if m.at() == '{' {
			m.object(func(key string) bool {
				if !knownMetaKey(key) {
					unknownMeta = append(unknownMeta, key)
				}
				_, ok := m.raw()
				return ok
			})
		}
	}
	return missing, unknownMeta
}

// itemFieldsSeen is which of the fields a kind needs an item names.
type itemFieldsSeen struct {
	typ, body, turns, text, kind, confidence bool
}

// lacks appends, quoted, each of names the item does not name.
func (s itemFieldsSeen) lacks(out []string, names ...string) []string {
	for _, n := range names {
		var has bool
		switch n {
		case "body":
			has = s.body
		case "turns":
			has = s.turns
		case "text":
			has = s.text
		case "kind":
			has = s.kind
		case "confidence":
			has = s.confidence
		}
		if !has {
			out = append(out, "`"+n+"`")
		}
	}
	return out
}

// turnsLacking names each turn's missing role and text. ok is false when
// turns is not an array of objects (null elements allowed and skipped): the
// decoder says what is wrong with it then.
func turnsLacking(at []byte) (missing []string, ok bool) {
	s := scanner{b: at, trusted: true}
	switch s.at() {
	case 'n':
		return nil, true
	case '[':
	default:
		return nil, false
	}
	ok = true
	i := 0
	s.array(func() bool {
		switch s.at() {
		case '{':
			var role, text bool
			s.object(func(key string) bool {
				switch key {
				case "role":
					role = true
				case "text":
					text = true
				}
				_, ok := s.raw()
				return ok
			})
			if !role {
				missing = append(missing, fmt.Sprintf("`turns[%d].role`", i))
			}
			if !text {
				missing = append(missing, fmt.Sprintf("`turns[%d].text`", i))
			}
		case 'n':
			s.null()
		default:
			ok = false
			s.raw()
		}
		i++
		return true
	})
	return missing, ok
}

func missingFieldsText(missing []string) string {
	switch len(missing) {
	case 0:
		return ""
	case 1:
		return "missing field " + missing[0]
	}
	return "missing fields " + strings.Join(missing, ", ")
}
