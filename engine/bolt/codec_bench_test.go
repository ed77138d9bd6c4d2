package bolt

import (
	"strings"
	"testing"

	"mnemo/contract"

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

// BenchmarkDecodeRecordLayouts is the same row's cost in each compressed
// layout, on a record of the bench corpus's shape (1.5 KB of body).
func BenchmarkDecodeRecordLayouts(b *testing.B) {
	c := dictCodec(b)
	f := metacodectest.Metas()[2]
	text := strings.Repeat("the deploy of the checkout service waits for the canary in the second region ", 10)
	it := contract.Document(text, f.Meta)
	js, _ := it.MarshalJSON()
	r := storedRecord{ord: 7, text: text, meta: f.Meta, itemJSON: js}
	for _, l := range []struct {
		name string
		data []byte
	}{{"snappy", encodeRecord(&r)}, {"dictionary", c.encode(&r)}} {
		b.Run(l.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.decode(l.data, partHit, parseNS); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
