package bolt

import (
	"encoding/hex"
	"strings"
	"testing"

	"github.com/charmbracelet/x/exp/golden"

	"mnemo/engine/internal/metacodec/metacodectest"
)

// TestRecordBytesAreTheGoldens: a stored record is written byte for byte as
// the golden says (written by the codec of b344131), and reading one and
// writing it again gives the same bytes. Stores on disk depend on it.
func TestRecordBytesAreTheGoldens(t *testing.T) {
	var b strings.Builder
	var encoded [][]byte
	for i, f := range metacodectest.Metas() {
		r := storedRecord{
			ord: uint32(i) * 977, status: statusByCode[i%3], kind: kindByCode[i%3],
			created: 1773500966535 + int64(i), updated: 1773500966999, expires: noTime,
			text: f.Text, confidence: 0.8, meta: f.Meta, itemJSON: []byte(`{"type":"document","body":{"text":"` + f.Name + `"}}`),
		}
		if i%2 == 1 {
			r.expires, r.supersededBy = 1773500966535000001, "0123456789abcdef"
		}
		data := encodeRecord(&r)
		encoded = append(encoded, data)
		b.WriteString(f.Name + "\t" + hex.EncodeToString(data) + "\n")
	}
	golden.RequireEqual(t, b.String())
	requireReencodes(t, encoded)
}

// requireReencodes checks that each record decodes and, encoded again,
// gives its bytes back.
func requireReencodes(t *testing.T, encoded [][]byte) {
	t.Helper()
	for i, data := range encoded {
		back, err := (&recordCodec{}).decode(data, partFull, parseNS)
		if err != nil {
			t.Fatalf("record %d: %v", i, err)
		}
		if again := encodeRecord(&back); string(again) != string(data) {
			t.Errorf("record %d: decoded and encoded again\n%x\nwant\n%x", i, again, data)
		}
	}
}
