package retrieval

import (
	"slices"
	"testing"
)

func TestWords(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"Hello, World!", []string{"hello", "world"}},
		{"don't stop", []string{"dont", "stop"}},
		{"Ünïcode ЖУК 42x", []string{"ünïcode", "жук", "42x"}},
		{"snake_case and kebab-case", []string{"snake", "case", "and", "kebab", "case"}},
		{"  ", nil},
	}
	for _, tt := range tests {
		if got := words(tt.in); !slices.Equal(got, tt.want) {
			t.Errorf("words(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestStemMergesInflections(t *testing.T) {
	groups := [][]string{
		{"cach", "cache", "caches", "cached", "caching"},
		{"cod", "code", "codes", "coding", "coded"},
		{"ris", "rise", "rises", "rising"},
		{"stop", "stopped", "stopping"},
		{"query", "queries"},
		{"index", "indexes"},
		{"class", "classes"},
		{"quick", "quickly"},
	}
	for _, g := range groups {
		for _, w := range g[1:] {
			if got := stem(w); got != g[0] {
				t.Errorf("stem(%q) = %q, want %q", w, got, g[0])
			}
		}
	}
	for _, keep := range []string{"bus", "this", "glass", "go", "run", "жуки"} {
		if got := stem(keep); got != keep {
			t.Errorf("stem(%q) = %q, want it unchanged", keep, got)
		}
	}
}

func TestTermsDropStopWords(t *testing.T) {
	got := terms("How do I reset the router's password?")
	want := []string{"reset", "router", "password"}
	if !slices.Equal(got, want) {
		t.Errorf("terms = %q, want %q", got, want)
	}
}
