package contract

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"testing"
)

// The two rules as they were written with encoding/json, before ItemKeys
// read an item once for both: the oracles ItemKeys must agree with.

func oracleMissingItemFields(data []byte) []string {
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

func oracleUnknownMetaKeys(itemJSON []byte) []string {
	if !bytes.Contains(itemJSON, []byte(`"meta"`)) {
		return nil
	}
	var item struct {
		Meta json.RawMessage `json:"meta"`
	}
	if json.Unmarshal(itemJSON, &item) != nil || len(item.Meta) == 0 {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(item.Meta))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil
	}
	var out []string
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return out
		}
		key, _ := t.(string)
		if !knownMetaKey(key) {
			out = append(out, key)
		}
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			return out
		}
	}
	return out
}

func oracleMissingText(data []byte) string {
	return missingFieldsText(oracleMissingItemFields(data))
}

var itemKeysSeeds = []string{
	`{"type":"document","body":{"text":"x"},"meta":{"bogus":1,"tags":["a"],"colour":{"r":1}}}`,
	`{"type":"document"}`,
	`{"type":"learning","text":"x"}`,
	`{"type":"learning"}`,
	`{"type":"conversation","turns":[{"role":"user"},{"text":"hi"},null,{}]}`,
	`{"type":"conversation","turns":[{"role":"user"},5]}`,
	`{"type":"conversation","turns":null}`,
	`{"type":"conversation","turns":{"role":"user"}}`,
	`{"type":"conversation"}`,
	`{"type":"conversation","turns":[{"role":"user","text":"a"}],"turns":[{}]}`,
	`{"type":5,"body":{}}`,
	`{"type":null}`,
	`{"typ\u0065":"document"}`,
	`{"type":"docum\u0065nt","meta":{"t\u0061gs":[],"\u00e9":1}}`,
	`{"body":{}}`,
	`{"type":"document","Meta":{"x":1},"body":{"text":"meta"}}`,
	`{"type":"document","Meta":{"x":1}}`,
	`{"type":"document","meta":{"x":1},"META":{"y":2}}`,
	`{"type":"document","meta":null}`,
	`{"type":"document","meta":[1]}`,
	`{"type":"document","meta":{"a":"}\"{","b":[{"c":"]"}],"tags":["meta"]}}`,
	` { "type" : "learning" , "text" : "t" , "kind" : "fact" , "confidence" : 1e-3 } `,
	`[1,2]`,
	`"meta"`,
	`null`,
	"{\"type\":\"document\",\"meta\":{\"\xff\":1}}",
}

// TestItemKeysAgreesWithEncodingJSON holds ItemKeys to the two rules as
// encoding/json read them, on cases each with a trap (escaped keys,
// repeated keys, "Meta", nulls, strings that look like structure).
func TestItemKeysAgreesWithEncodingJSON(t *testing.T) {
	for _, c := range itemKeysSeeds {
		checkItemKeys(t, []byte(c))
	}
	missing, unknown := ItemKeys([]byte(itemKeysSeeds[4]))
	want := "missing fields `turns[0].text`, `turns[1].role`, `turns[3].role`, `turns[3].text`"
	if missing != want || unknown != nil {
		t.Fatalf("ItemKeys = %q, %v; want %q", missing, unknown, want)
	}
}

func checkItemKeys(t *testing.T, data []byte) {
	t.Helper()
	wantMissing, wantUnknown := oracleMissingText(data), oracleUnknownMetaKeys(data)
	if got := MissingItemFields(data); got != wantMissing {
		t.Fatalf("MissingItemFields(%s) = %q, want %q", data, got, wantMissing)
	}
	if !json.Valid(data) {
		return
	}
	missing, unknown := ItemKeys(data)
	if missing != wantMissing || !slices.Equal(unknown, wantUnknown) {
		t.Fatalf("ItemKeys(%s) = %q, %q; want %q, %q", data, missing, unknown, wantMissing, wantUnknown)
	}
}

func FuzzItemKeys(f *testing.F) {
	for _, c := range itemKeysSeeds {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkItemKeys(t, data)
	})
}
