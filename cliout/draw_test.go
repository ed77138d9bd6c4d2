package cliout

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"mnemo/contract"
	"mnemo/engine/bolt"
)

// textOut is the human form on a pipe (-o text), 80 columns wide, no colour.
func textOut(w *bytes.Buffer) Out {
	return Out{Stdout: w, Getenv: func(string) string { return "" }, IsTerminal: func(any) bool { return false },
		Now: func() time.Time { return time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC) }, Format: FormatText}
}

func TestCountsHaveSeparators(t *testing.T) {
	var out bytes.Buffer
	err := textOut(&out).Answer(nil, func(s *Screen) {
		DrawExplore(s, contract.ExplorePage{Facet: contract.FacetTag, Total: 1_234_567, Missing: 20_000, MoreBuckets: 1_500,
			Buckets: []contract.FacetBucket{{Value: "style", Count: 12_408}, {Value: "ops", Count: 1_001}}})
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"12,408", "1,001", "1,234,567 records", "20,000 without a tag", "1,500 more values"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("no %q in\n%s", want, out.String())
		}
	}
}

func TestCheckSaysWhatDisagrees(t *testing.T) {
	var out bytes.Buffer
	err := textOut(&out).Answer(nil, func(s *Screen) {
		DrawCheck(s, bolt.CheckReport{Records: 12_000, Consistent: false, Checks: []bolt.CheckEntry{
			{Name: "records", Checked: 12_000},
			{Name: "search index", Checked: 12_000, Disagreements: 1_234, Examples: []string{"fbcc6500 missing"}},
		}})
	})
	if err != nil {
		t.Fatal(err)
	}
	got := out.String()
	for _, want := range []string{"records        12,000  ok", "search index   12,000  1,234 disagreements  e.g. fbcc6500 missing", "not consistent · 12,000 records"} {
		if !strings.Contains(got, want) {
			t.Errorf("no %q in\n%s", want, got)
		}
	}
}
