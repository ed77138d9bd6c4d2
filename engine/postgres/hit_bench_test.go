package postgres

import (
	"testing"

	"mnemo/engine/internal/metacodec/metacodectest"
)

// BenchmarkDecodeHit is what a page pays a row for its hit column.
func BenchmarkDecodeHit(b *testing.B) {
	f := metacodectest.Metas()[2]
	data := encodeHit(f.Text, &f.Meta)
	nss := nsCache{}
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := decodeHit(data, nss); err != nil {
			b.Fatal(err)
		}
	}
}
