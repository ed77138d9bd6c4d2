package retrieval

import (
	"math"
	"testing"
)

func TestRRF(t *testing.T) {
	tests := []struct {
		name  string
		lists [][]string
		want  []Fused
	}{
		{"empty", nil, []Fused{}},
		{"one list keeps its order", [][]string{{"b", "a"}}, []Fused{{"b", 1.0 / 61}, {"a", 1.0 / 62}}},
		{"agreement wins", [][]string{{"a", "b", "c"}, {"c", "b"}}, []Fused{{"c", 1.0/63 + 1.0/61}, {"b", 1.0/62 + 1.0/62}, {"a", 1.0 / 61}}},
		{"ties broken by id", [][]string{{"y"}, {"x"}}, []Fused{{"x", 1.0 / 61}, {"y", 1.0 / 61}}},
		{"a repeat counts once", [][]string{{"a", "a", "b"}}, []Fused{{"a", 1.0 / 61}, {"b", 1.0 / 63}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := RRF(RRFK, tt.lists...)
			if len(got) != len(tt.want) {
				t.Fatalf("got %v, want %v", got, tt.want)
			}
			for i := range got {
				if got[i].ID != tt.want[i].ID || math.Abs(got[i].Score-tt.want[i].Score) > 1e-12 {
					t.Fatalf("got %v, want %v", got, tt.want)
				}
			}
		})
	}
}
