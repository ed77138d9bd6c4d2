package bench

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSizeRow: the size row counts every file of the store (the index's
// too), a record; at 1M it is held to 1.5 KB a record, at 100k reported.
func TestSizeRow(t *testing.T) {
	cases := []struct {
		name    string
		records int
		db, ix  int64
		pass    bool
		budget  string
	}{
		{"100k, reported", 100_000, 250_000_000, 40_000_000, true, "report"},
		{"1M, over", 1_000_000, 1_200_000_000, 400_000_000, false, "<= 1500 bytes a record"},
		{"1M, within", 1_000_000, 1_100_000_000, 400_000_000, true, "<= 1500 bytes a record"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			// Sparse files: their length is what is counted.
			if err := os.MkdirAll(filepath.Join(dir, "index", "store"), 0o755); err != nil {
				t.Fatal(err)
			}
			for path, n := range map[string]int64{"mnemo.db": c.db, "index/store/a.zap": c.ix / 2, "index/store/b.zap": c.ix - c.ix/2} {
				f, err := os.Create(filepath.Join(dir, path))
				if err != nil {
					t.Fatal(err)
				}
				if err := f.Truncate(n); err != nil {
					t.Fatal(err)
				}
				f.Close()
			}
			r, err := MeasureSize(dir, c.records)
			if err != nil {
				t.Fatal(err)
			}
			want := float64(c.db+c.ix) / float64(c.records)
			if r.PerRecord != want || r.Pass != c.pass || r.budget() != c.budget || r.p95() != "" {
				t.Fatalf("row %+v (budget %q), want %.0f bytes a record, pass %v", r, r.budget(), want, c.pass)
			}
			if !strings.HasPrefix(r.Note, fmt.Sprintf("%.0f bytes a record: ", want)) || !strings.Contains(r.Note, "(mnemo.db ") || !strings.Contains(r.Note, "index ") {
				t.Fatalf("note %q does not name the parts", r.Note)
			}
		})
	}
}
