package postgres

import (
	"encoding/hex"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"mnemo/engine/internal/metacodec/metacodectest"
)

var update = flag.Bool("update", false, "rewrite the goldens from the current code")

// TestHitBytesAreTheGoldens: the hit column is written byte for byte as the
// goldens say (written by the codec of b344131), and reads back as the
// metadata it was written from. Databases written before depend on it.
func TestHitBytesAreTheGoldens(t *testing.T) {
	path := filepath.Join("testdata", "hit.golden")
	fixtures := metacodectest.Metas()
	var b strings.Builder
	for _, f := range fixtures {
		b.WriteString(f.Name + "\t" + hex.EncodeToString(encodeHit(f.Text, &f.Meta)) + "\n")
	}
	if *update {
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to write it)", err)
	}
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	if len(lines) != len(fixtures) {
		t.Fatalf("the golden holds %d hits, the fixtures %d", len(lines), len(fixtures))
	}
	for i, f := range fixtures {
		name, h, _ := strings.Cut(lines[i], "\t")
		got := hex.EncodeToString(encodeHit(f.Text, &f.Meta))
		if name != f.Name || got != h {
			t.Errorf("%s: encoded\n%s\nwant (%s)\n%s", f.Name, got, name, h)
			continue
		}
		raw, _ := hex.DecodeString(h)
		text, m, err := decodeHit(raw, nsCache{})
		if err != nil {
			t.Fatalf("%s: decoding the golden: %v", f.Name, err)
		}
		if text != f.Text || !reflect.DeepEqual(m, f.Meta) {
			t.Errorf("%s: decoded %q %+v, want %q %+v", f.Name, text, m, f.Text, f.Meta)
		}
	}
}
