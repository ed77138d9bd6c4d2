package importer

import (
	"encoding/json"
	"testing"

	"mnemo/bench/corpus"
	"mnemo/contract"
)

// BenchmarkParseLine measures the parser alone on a typical export line and
// a line of the bench corpus, the CLI's own share of an import.
func BenchmarkParseLine(b *testing.B) {
	line := []byte(`{"id":"` + xDocumentID + `","item":` + xDocument + `,"status":"candidate","expires_at":"2027-03-01T00:00:00Z"}`)
	var entry corpus.Entry
	corpus.Each(1, 1, func(_ int, e corpus.Entry) bool { entry = e; return false })
	corpusLine, err := json.Marshal(struct {
		Item contract.StoreItem `json:"item"`
	}{entry.Item})
	if err != nil {
		b.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		line []byte
	}{{"export line", line}, {"corpus line", corpusLine}} {
		b.Run(tc.name, func(b *testing.B) {
			b.SetBytes(int64(len(tc.line)))
			for b.Loop() {
				if _, err := parseLine(tc.line); err != nil {
					b.Fatal(err)
				}
			}
		})
		// The same line through encoding/json, as parseLine read every
		// line before its quick path.
		b.Run(tc.name+" through encoding/json", func(b *testing.B) {
			b.SetBytes(int64(len(tc.line)))
			for b.Loop() {
				if _, err := decodeLine(tc.line); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
