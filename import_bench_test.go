package main

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"mnemo/bench/corpus"
	"mnemo/contract"
)

// writeBenchCorpus writes the first n entries of the benchmark corpus as an
// import file, with statuses and expiry in the line format.
func writeBenchCorpus(tb testing.TB, path string, n int) {
	tb.Helper()
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	w := bufio.NewWriter(f)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	ids := make([]string, 0, n)
	var lines []exportLine
	corpus.Each(n, 1, func(_ int, e corpus.Entry) bool {
		l := exportLine{Item: e.Item}
		if e.Status == contract.StatusCandidate {
			l.Status = e.Status
		}
		if e.ExpiresAt != nil {
			l.ExpiresAt = contract.FormatMillis(*e.ExpiresAt)
		}
		ids = append(ids, e.Item.Fingerprint())
		lines = append(lines, l)
		if e.Status == contract.StatusSuperseded {
			// The successor is the next entry: written once its id is known.
			lines[len(lines)-1].Status = contract.StatusSuperseded
			lines[len(lines)-1].SupersededBy = strconv.Itoa(e.SupersededBy)
		}
		return true
	})
	for i := range lines {
		if lines[i].SupersededBy != "" {
			next, _ := strconv.Atoi(lines[i].SupersededBy)
			if next < len(ids) {
				lines[i].SupersededBy = ids[next]
			} else {
				lines[i].Status, lines[i].SupersededBy = "", ""
			}
		}
		if err := enc.Encode(struct {
			Item         contract.StoreItem `json:"item"`
			Status       contract.Status    `json:"status,omitempty"`
			ExpiresAt    string             `json:"expires_at,omitempty"`
			SupersededBy string             `json:"superseded_by,omitempty"`
		}{lines[i].Item, lines[i].Status, lines[i].ExpiresAt, lines[i].SupersededBy}); err != nil {
			tb.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		tb.Fatal(err)
	}
	if err := f.Close(); err != nil {
		tb.Fatal(err)
	}
}

// BenchmarkImport measures `mnemo import` end to end (file read, parse,
// store_many into a real store, supersedes) on the benchmark corpus. The size
// is MNEMO_IMPORT_RECORDS (default 10,000); each iteration imports into a new
// store and reports records/s.
func BenchmarkImport(b *testing.B) {
	n := 10_000
	if v := os.Getenv("MNEMO_IMPORT_RECORDS"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil {
			b.Fatalf("MNEMO_IMPORT_RECORDS=%q: %v", v, err)
		}
	}
	dir := b.TempDir()
	file := filepath.Join(dir, "corpus.jsonl")
	writeBenchCorpus(b, file, n)
	b.ResetTimer()
	var total time.Duration
	for i := 0; b.Loop(); i++ {
		db := filepath.Join(dir, "store"+strconv.Itoa(i))
		start := time.Now()
		code := run([]string{"--db", db, "import", file}, nil, io.Discard, os.Stderr)
		total += time.Since(start)
		if code != 0 {
			b.Fatalf("import exit %d", code)
		}
		b.StopTimer()
		_ = os.RemoveAll(db)
		b.StartTimer()
	}
	b.ReportMetric(float64(n)*float64(b.N)/total.Seconds(), "records/s")
}
