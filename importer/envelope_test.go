package importer

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"mnemo/bench/corpus"
	"mnemo/contract"
)

// quickLineSeeds are lines of every shape the import reads: export lines,
// bare items, and the spellings parseLineQuick must leave to encoding/json.
var quickLineSeeds = []string{
	tabsLearning, xDocument,
	" \t" + xDocument + "\r\n",
	`{"id":"` + xDocumentID + `","item":` + xDocument + `,"status":"candidate","expires_at":"2027-03-01T00:00:00Z"}`,
	`{"item":` + xDocument + `,"superseded_by":"` + tabsLearningID + `"}`,
	`{"item":` + xDocument + `,"status":"superseded","superseded_by":"` + tabsLearningID + `"}`,
	`{ "item" : ` + xDocument + ` , "id" : null , "status" : null , "created_at" : "2026-01-01T00:00:00Z" , "n" : [1, {"a": "}"}] }`,
	`{"item":` + xDocument + `,"extra":tru}`,
	`{"item":` + xDocument + `,"extra":1 2}`,
	`{"item":` + xDocument + `,"Status":"candidate"}`,
	`{"item":` + xDocument + `,"status":"candidate","status":"active"}`,
	`{"item":` + xDocument + `,"status":"cand\u0069date"}`,
	`{"item":` + xDocument + `,"status":5}`,
	`{"item":` + xDocument + `,"st\u0061tus":"candidate"}`,
	`{"item":` + xDocument + `,"expires_at":"2027-03-01T00:00:00Z"}x`,
	`{"item":` + xDocument + `,"id":"` + tabsLearningID + `"}`,
	`{"item":` + xDocument + `,"type":"document"}`,
	`{"item":null}`, `{"type":null}`, `{}`, `[]`, `null`, "\xff\xfe",
	`{"type":"document","body":{"text":"x"},"status":"candidate"}`,
	`{"type":"document","body":{"text":"x"},"id":"` + xDocumentID + `"}`,
	`{"type":"document","body":{"text":"x"},"meta":{"tags":["a"],"weird":{"k":[1,2]}}}`,
	`{"type":"document","body":{"text":"x"},"meta":{"source":{"kind":"agent"}}`,
	`{"type":"document","body":{"text":"x\"}"},"meta":{"source":{"kind":"agent"}}}`,
	`{"type":"learning","text":"t","kind":"fact","confidence":1e400}`,
	`{"item":{"type":"document","body":{"text":"x"}},"expires_at":"not a time"}`,
}

// FuzzParseLineQuick: whatever the quick path reads, encoding/json's path
// reads the same, and it takes no line that path refuses.
func FuzzParseLineQuick(f *testing.F) {
	for _, s := range quickLineSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		quick, ok := parseLineQuick(data)
		if !ok {
			return
		}
		slow, err := decodeLine(data)
		if err != nil {
			t.Fatalf("the quick path read %q, encoding/json's refuses it: %v", data, err)
		}
		if !reflect.DeepEqual(quick, slow) {
			t.Fatalf("%q:\nquick %#v\nencoding/json %#v", data, quick, slow)
		}
	})
}

// TestParseLineQuickTakesThePlainLines: the lines mnemo export and the
// bench corpus write take the quick path, and each spelling encoding/json
// reads differently (a key in another case, a key twice, an escape) or
// refuses is left to it, which reads it or words its error as before.
func TestParseLineQuickTakesThePlainLines(t *testing.T) {
	for _, tt := range []struct {
		line  string
		quick bool
	}{
		{xDocument, true},
		{" \t" + xDocument + "\r\n", true},
		{`{"id":"` + xDocumentID + `","item":` + xDocument + `,"status":"candidate","expires_at":"2027-03-01T00:00:00Z"}`, true},
		{`{"item":` + xDocument + `,"status":"superseded","superseded_by":"` + tabsLearningID + `"}`, true},
		{`{ "item" : ` + xDocument + ` , "id" : null , "created_at" : "2026-01-01T00:00:00Z" , "n" : [1, {"a": "}"}] }`, true},
		{`{"item":` + xDocument + `,"Status":"candidate"}`, false},
		{`{"item":` + xDocument + `,"status":"candidate","status":"active"}`, false},
		{`{"item":` + xDocument + `,"status":"cand\u0069date"}`, false},
		{`{"item":` + xDocument + `,"st\u0061tus":"candidate"}`, false},
		{`{"item":` + xDocument + `,"extra":tru}`, false},
		{`{"item":` + xDocument + `,"status":5}`, false},
		{`{"item":` + xDocument + `}x`, false},
		{`{"item":` + xDocument + `,"id":"` + tabsLearningID + `"}`, false},
		{`{"item":null}`, false},
		{`{}`, false},
		{`{"type":"document","body":{"text":"x"},"meta":{"source":{"kind":"agent"}}`, false},
	} {
		_, quick := parseLineQuick([]byte(tt.line))
		if quick != tt.quick {
			t.Errorf("%s: quick path %v, want %v", tt.line, quick, tt.quick)
		}
		got, err := parseLine([]byte(tt.line))
		want, wantErr := decodeLine([]byte(tt.line))
		if (err == nil) != (wantErr == nil) || err != nil && err.Error() != wantErr.Error() {
			t.Errorf("%s: parseLine says %v, encoding/json's path %v", tt.line, err, wantErr)
		}
		if err == nil && !reflect.DeepEqual(got, want) {
			t.Errorf("%s: parseLine read %#v, encoding/json's path %#v", tt.line, got, want)
		}
		if tt.quick && err != nil {
			t.Errorf("%s: %v", tt.line, err)
		}
	}
}

// TestCorpusLinesTakeTheQuickPath: lines as `mnemo bench --write-corpus`
// and `mnemo export` write them (the item, then its status and expiry when
// it has them, through encoding/json) are read by the quick path, as
// encoding/json's path reads them: the bench corpus's 2,000 first entries.
func TestCorpusLinesTakeTheQuickPath(t *testing.T) {
	n := 0
	corpus.Each(2000, 3, func(i int, en corpus.Entry) bool {
		line := map[string]any{"item": en.Item}
		if en.Status == contract.StatusCandidate {
			line["status"] = string(en.Status)
		}
		if en.ExpiresAt != nil {
			line["expires_at"] = en.ExpiresAt.UTC().Format(time.RFC3339Nano)
		}
		if i%7 == 0 {
			line["id"] = en.Item.Fingerprint()
		}
		data, err := json.Marshal(line)
		if err != nil {
			t.Fatal(err)
		}
		quick, ok := parseLineQuick(data)
		if !ok {
			t.Fatalf("entry %d left to encoding/json: %s", i, data)
		}
		slow, err := decodeLine(data)
		if err != nil || !reflect.DeepEqual(quick, slow) {
			t.Fatalf("entry %d: quick %#v, encoding/json's path %#v, %v", i, quick, slow, err)
		}
		n++
		return true
	})
	if n != 2000 {
		t.Fatalf("%d entries read, want 2000", n)
	}
}
