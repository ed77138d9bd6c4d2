package contract

import (
	"encoding/json"
	"fmt"
	"strings"
)

// MissingItemFields names, in the wire order, every field a StoreItem of the
// JSON's type needs and lacks (turns' role and text included), so one run
// names them all instead of one per attempt. It is empty when the JSON is not
// an object or names no known type: the decoder's own error says more then.
func MissingItemFields(data []byte) string {
	missing := missingItemFields(data)
	switch len(missing) {
	case 0:
		return ""
	case 1:
		return "missing field " + missing[0]
	}
	return "missing fields " + strings.Join(missing, ", ")
}

func missingItemFields(data []byte) []string {
	var obj map[string]json.RawMessage
	if json.Unmarshal(data, &obj) != nil || obj == nil {
		return nil
	}
	var typ string
	if raw, ok := obj["type"]; !ok {
		return []string{"`type`"}
	} else if json.Unmarshal(raw, &typ) != nil {
		return nil
	}
	var need []string
	switch ItemKind(typ) {
	case KindDocument:
		need = []string{"body"}
	case KindConversation:
		need = []string{"turns"}
	case KindLearning:
		need = []string{"text", "kind", "confidence"}
	default:
		return nil
	}
	var missing []string
	for _, k := range need {
		if _, ok := obj[k]; !ok {
			missing = append(missing, "`"+k+"`")
		}
	}
	var turns []map[string]json.RawMessage
	if raw, ok := obj["turns"]; ok && typ == string(KindConversation) && json.Unmarshal(raw, &turns) == nil {
		for i, t := range turns {
			for _, k := range []string{"role", "text"} {
				if _, ok := t[k]; !ok && t != nil {
					missing = append(missing, fmt.Sprintf("`turns[%d].%s`", i, k))
				}
			}
		}
	}
	return missing
}
