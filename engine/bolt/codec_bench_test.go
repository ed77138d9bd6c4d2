package bolt

import (
	"testing"

	"mnemo/engine/internal/metacodec/metacodectest"
)

// BenchmarkDecodeRecord is what a browse page pays a row: the header, the
// text and the metadata of a record with every field set.
func BenchmarkDecodeRecord(b *testing.B) {
	f := metacodectest.Metas()[2]
	r := storedRecord{ord: 7, text: f.Text, meta: f.Meta, itemJSON: []byte(`{"type":"document"}`)}
	data := encodeRecord(&r)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := (&recordCodec{}).decode(data, partHit, parseNS); err != nil {
			b.Fatal(err)
		}
	}
}
