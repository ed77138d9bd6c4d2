package bolt

import (
	"encoding/hex"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"mnemo/engine/internal/metacodec/metacodectest"
)

var update = flag.Bool("update", false, "rewrite the goldens from the current code")

// goldenLines reads (or, with -update, writes) a golden of name<TAB>hex lines.
func goldenLines(t *testing.T, path string, got [][2]string) map[string]string {
	t.Helper()
	if *update {
		var b strings.Builder
		for _, g := range got {
			b.WriteString(g[0] + "\t" + g[1] + "\n")
		}
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to write it)", err)
	}
	want := map[string]string{}
	for _, line := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
		name, h, _ := strings.Cut(line, "\t")
		want[name] = h
	}
	return want
}

// TestRecordBytesAreTheGoldens: a stored record is written byte for byte as
// the goldens say (written by the codec of b344131), and reading a golden
// and writing it again gives the same bytes. Stores on disk depend on it.
func TestRecordBytesAreTheGoldens(t *testing.T) {
	var got [][2]string
	for i, f := range metacodectest.Metas() {
		r := storedRecord{
			ord: uint32(i) * 977, status: statusByCode[i%3], kind: kindByCode[i%3],
			created: 1773500966535 + int64(i), updated: 1773500966999, expires: noTime,
			text: f.Text, confidence: 0.8, meta: f.Meta, itemJSON: []byte(`{"type":"document","body":{"text":"` + f.Name + `"}}`),
		}
		if i%2 == 1 {
			r.expires, r.supersededBy = 1773500966535000001, "0123456789abcdef"
		}
		got = append(got, [2]string{f.Name, hex.EncodeToString(encodeRecord(&r))})
	}
	want := goldenLines(t, filepath.Join("testdata", "codec-records.golden"), got)
	for _, g := range got {
		if want[g[0]] != g[1] {
			t.Errorf("%s: encoded\n%s\nwant\n%s", g[0], g[1], want[g[0]])
			continue
		}
		b, _ := hex.DecodeString(want[g[0]])
		back, err := decodeRecord(b, partFull, parseNS)
		if err != nil {
			t.Fatalf("%s: decoding the golden: %v", g[0], err)
		}
		if again := hex.EncodeToString(encodeRecord(&back)); again != g[1] {
			t.Errorf("%s: decoded and encoded again\n%s\nwant\n%s", g[0], again, g[1])
		}
	}
}
