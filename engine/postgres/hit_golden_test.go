package postgres

import (
	"encoding/hex"
	"reflect"
	"strings"
	"testing"

	"github.com/charmbracelet/x/exp/golden"

	"mnemo/engine/internal/metacodec/metacodectest"
)

// TestHitBytesAreTheGoldens: the hit column is written byte for byte as the
// golden says (written by the codec of b344131), and reads back as the
// metadata it was written from. Databases written before depend on it.
func TestHitBytesAreTheGoldens(t *testing.T) {
	var b strings.Builder
	for _, f := range metacodectest.Metas() {
		data := encodeHit(f.Text, &f.Meta)
		b.WriteString(f.Name + "\t" + hex.EncodeToString(data) + "\n")
		text, m, err := decodeHit(data, nsCache{})
		if err != nil {
			t.Fatalf("%s: %v", f.Name, err)
		}
		if text != f.Text || !reflect.DeepEqual(m, f.Meta) {
			t.Errorf("%s: decoded %q %+v, want %q %+v", f.Name, text, m, f.Text, f.Meta)
		}
	}
	golden.RequireEqual(t, b.String())
}
