package retrieval

import (
	"math"
	"slices"
	"testing"
)

func TestBlendKeepsMargins(t *testing.T) {
	kw := []ScoredID{{"a", 10}, {"b", 4}, {"c", 3}}
	vec := []ScoredID{{"c", 0.8}, {"d", 0.4}, {"b", 0.4}}
	got := Blend(kw, vec, 0.75)
	ids := make([]string, len(got))
	for i, f := range got {
		ids[i] = f.ID
	}
	// a: 0.75; c: 0.75*0.3 + 0.25 = 0.475; b: 0.75*0.4 + 0.25*0.5 = 0.425; d: 0.125
	if want := []string{"a", "c", "b", "d"}; !slices.Equal(ids, want) {
		t.Fatalf("order %v, want %v", ids, want)
	}
	if math.Abs(got[1].Score-0.475) > 1e-9 || math.Abs(got[3].Score-0.125) > 1e-9 {
		t.Errorf("scores %+v", got)
	}
	// RRF would put c (ranks 3 and 1) above a (rank 1 only): a keyword hit
	// far ahead of the rest must keep the top.
	if rrf := RRF(RRFK, []string{"a", "b", "c"}, []string{"c", "d", "b"}); rrf[0].ID == "a" {
		t.Errorf("RRF ranks a first too: %v", rrf)
	}
}

func TestBlendEdgeCases(t *testing.T) {
	if got := Blend(nil, nil, 0.75); len(got) != 0 {
		t.Errorf("empty lists: %v", got)
	}
	// one side only keeps its order; repeats count once; ties by id
	got := Blend(nil, []ScoredID{{"y", 0.5}, {"x", 0.5}, {"y", 0.1}}, 0.75)
	if len(got) != 2 || got[0].ID != "x" || got[1].ID != "y" || got[0].Score != 0.25 {
		t.Errorf("vector only: %+v", got)
	}
	// non-positive scores do not divide by zero
	got = Blend([]ScoredID{{"z", 0}}, nil, 0.75)
	if len(got) != 1 || got[0].Score != 0 {
		t.Errorf("zero score: %+v", got)
	}
}

func TestMinMax(t *testing.T) {
	got := MinMax([]ScoredID{{"a", 0.5}, {"b", 0.3}, {"c", 0.25}})
	want := []ScoredID{{"a", 1}, {"b", 0.2}, {"c", 0}}
	for i := range want {
		if got[i].ID != want[i].ID || math.Abs(got[i].Score-want[i].Score) > 1e-9 {
			t.Fatalf("MinMax = %+v, want %+v", got, want)
		}
	}
	if one := MinMax([]ScoredID{{"a", 0.2}, {"b", 0.2}}); one[0].Score != 1 || one[1].Score != 1 {
		t.Errorf("equal scores: %+v, want all 1", one)
	}
	if MinMax(nil) != nil {
		t.Error("MinMax(nil) is not nil")
	}
	// As hybrid fuses: keyword's top hit stays above the vector side's
	// top that keyword lacks, and a hit high in both lists rises above
	// keyword-only ones.
	fused := Blend([]ScoredID{{"k1", 10}, {"both", 6}, {"k3", 5.5}}, MinMax([]ScoredID{{"v1", 0.5}, {"both", 0.45}, {"v3", 0.2}}), HybridKeywordWeight)
	ids := make([]string, len(fused))
	for i, f := range fused {
		ids[i] = f.ID
	}
	if want := []string{"both", "k1", "v1", "k3", "v3"}; !slices.Equal(ids, want) {
		t.Errorf("hybrid order %v, want %v", ids, want)
	}
}
