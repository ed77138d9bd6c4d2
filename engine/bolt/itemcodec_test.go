package bolt

import (
	"encoding/hex"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/exp/golden"

	"mnemo/bench/corpus"
	"mnemo/contract"
	"mnemo/engine/internal/metacodec/metacodectest"
)

// itemSamples are items of every kind and field: the bench corpus's, and
// each optional field set and unset, over every metadata of metacodectest.
func itemSamples() []contract.StoreItem {
	var out []contract.StoreItem
	for _, en := range corpus.Generate(300, 5) {
		out = append(out, en.Item)
	}
	p := contract.Ptr[string]
	paris := time.FixedZone("CET", 3600)
	at := time.Date(2026, 3, 14, 15, 9, 26, 535897932, paris)
	whole := time.Date(1969, 7, 20, 20, 17, 40, 0, time.UTC)
	for i, m := range metacodectest.Metas() {
		titled := contract.Document(m.Text, m.Meta)
		titled.Title, titled.Mime = p("a title: \"quoted\"\n"), p("text/markdown")
		uri := contract.StoreItem{Type: contract.KindDocument, Body: contract.DocumentBody{URI: "https://example.test/x?y=1", IsURI: true}, Meta: m.Meta}
		learning := contract.Learning("prefers tabs \u2028 over spaces", contract.LearningKinds()[i%5], float32(i)/7, m.Meta)
		if i%2 == 0 {
			learning.Evidence = p("said so in PR 12")
		}
		conv := contract.Conversation([]contract.Turn{
			{Role: contract.RoleUser, Text: "how do I deploy?", At: &at},
			{Role: contract.RoleAssistant, Text: "run `make deploy`", At: &whole,
				ToolCalls: []contract.ToolCallRef{{Name: "shell", ID: p("call-1")}, {Name: "grep"}}},
			{Role: contract.RoleTool, Text: ""},
		}, m.Meta)
		out = append(out, contract.Document(m.Text, m.Meta), titled, uri, learning, conv)
	}
	return out
}

// TestItemsReadBackAsTheirJSONGives: a record keeps its item in binary
// (layouts 4 and 5) and reads back the item its JSON gives, the same value
// and the same JSON, without a dictionary and with one; the record's body
// is smaller than with the JSON. An item with a string that is not UTF-8
// keeps its JSON, as its JSON would change the string.
func TestItemsReadBackAsTheirJSONGives(t *testing.T) {
	dc := dictCodec(t)
	var binaryBody, jsonBody int
	for i, it := range itemSamples() {
		js, err := it.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		var want contract.StoreItem
		if err := want.UnmarshalJSON(js); err != nil {
			t.Fatal(err)
		}
		s := storedRecord{ord: uint32(i), kind: it.Type, status: contract.StatusActive, expires: noTime, text: it.RenderText(), meta: it.Meta}
		s.setItem(&it, js)
		if s.item == nil {
			t.Fatalf("item %d kept as JSON", i)
		}
		for name, c := range map[string]*recordCodec{"no dictionary": {}, "a dictionary": dc} {
			b := c.encode(&s)
			if wantV := map[string]byte{"no dictionary": recordV4, "a dictionary": recordV6}[name]; b[0] != wantV {
				t.Fatalf("item %d with %s: layout %d, want %d", i, name, b[0], wantV)
			}
			back, err := c.decode(b, partFull, parseNS)
			if err != nil {
				t.Fatalf("item %d with %s: %v", i, name, err)
			}
			got, err := back.storedItem()
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("item %d with %s reads back\n%#v\nits JSON gives\n%#v", i, name, got, want)
			}
			if gjs, _ := got.MarshalJSON(); string(gjs) != string(js) {
				t.Fatalf("item %d with %s: JSON\n%s\nwant\n%s", i, name, gjs, js)
			}
			if hit, err := c.decode(b, partHit, parseNS); err != nil || hit.text != s.text || hit.item != nil {
				t.Fatalf("item %d with %s: a hit's decode: %v", i, name, err)
			}
		}
		asJSON := s
		asJSON.item, asJSON.itemJSON = nil, js
		binaryBody += len(dc.pack(&s).body)
		jsonBody += len(dc.pack(&asJSON).body)
	}
	if binaryBody >= jsonBody {
		t.Fatalf("bodies with the item in binary take %d bytes, with its JSON %d", binaryBody, jsonBody)
	}
	t.Logf("bodies: %d bytes with the item in binary, %d with its JSON", binaryBody, jsonBody)

	bad := contract.Document("fine", contract.MemoryMeta{Tags: []string{"bad \xff byte"}})
	js, _ := bad.MarshalJSON()
	s := storedRecord{kind: bad.Type, status: contract.StatusActive, expires: noTime, text: bad.RenderText(), meta: bad.Meta}
	s.setItem(&bad, js)
	b := dc.encode(&s)
	back, err := dc.decode(b, partFull, parseNS)
	if s.item != nil || b[0] != recordV3 || err != nil {
		t.Fatalf("an item with a string that is not UTF-8: layout %d, %v", b[0], err)
	}
	got, _ := back.storedItem()
	if gjs, _ := got.MarshalJSON(); string(gjs) != string(js) || !strings.Contains(got.Meta.Tags[0], "\uFFFD") {
		t.Fatalf("it reads back %s, want %s", gjs, js)
	}
}

// TestBinaryItemRecordBytesAreTheGoldens: a record of layout 4 is written
// byte for byte as the golden says, and reading one and writing it again
// gives the same bytes. Stores on disk depend on it.
func TestBinaryItemRecordBytesAreTheGoldens(t *testing.T) {
	var b strings.Builder
	var encoded [][]byte
	for i, it := range itemSamples()[300:] {
		js, _ := it.MarshalJSON()
		r := storedRecord{ord: uint32(i) * 977, status: statusByCode[i%3], kind: it.Type, created: 1773500966535 + int64(i),
			updated: 1773500966999, expires: noTime, text: it.RenderText(), confidence: it.Confidence, meta: it.Meta}
		r.setItem(&it, js)
		data := encodeRecord(&r)
		encoded = append(encoded, data)
		b.WriteString(string(it.Type) + "\t" + hex.EncodeToString(data) + "\n")
	}
	golden.RequireEqual(t, b.String())
	requireReencodes(t, encoded)
}
