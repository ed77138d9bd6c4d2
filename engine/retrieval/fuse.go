package retrieval

import (
	"cmp"
	"slices"
)

// ScoredID is one id of a ranked list with the score its ranker gave it.
type ScoredID struct {
	ID    string
	Score float64
}

// HybridKeywordWeight is the keyword list's share of the blended score in
// mnemo's hybrid fetch, and HybridVectorWindow how many of the vector
// side's best hits take part (the keyword side gives HybridWindow); the
// keyword scores are divided by their best, the vector window's are
// min-max normalised (MinMax) first. They were chosen on the evaluation sets
// with engine/bolt's learned embedder (TestFusionSweep in eval; the table is
// in the README's Retrieval quality section): with them hybrid is at least
// as good as its better input on every set and 0.02 above keyword on the
// real-text ones. With the hashed embedder alone keyword needed 0.75.
const (
	HybridKeywordWeight = 0.6
	HybridVectorWindow  = 20
)

// Blend fuses a keyword and a vector ranking by their scores: each list's
// scores are divided by its best (so 1 is that ranker's top hit and the
// margins behind it are kept), an id scores keywordWeight times its keyword
// value plus (1 - keywordWeight) times its vector value (0 where a list
// lacks it), best first, ties by id. Unlike RRF, a keyword hit far ahead of
// the next stays ahead of a vector hit that is only that side's guess.
// Lists are expected best first with positive scores; a repeated id counts
// at its first place.
func Blend(keyword, vector []ScoredID, keywordWeight float64) []Fused {
	scores := make(map[string]float64, len(keyword)+len(vector))
	var order []string
	add := func(list []ScoredID, weight float64) {
		if len(list) == 0 {
			return
		}
		best := list[0].Score
		for _, x := range list {
			best = max(best, x.Score)
		}
		seen := make(map[string]struct{}, len(list))
		for _, x := range list {
			if _, dup := seen[x.ID]; dup {
				continue
			}
			seen[x.ID] = struct{}{}
			v := 0.0
			if best > 0 {
				v = max(x.Score, 0) / best
			}
			if _, ok := scores[x.ID]; !ok {
				order = append(order, x.ID)
			}
			scores[x.ID] += weight * v
		}
	}
	add(keyword, keywordWeight)
	add(vector, 1-keywordWeight)
	out := make([]Fused, len(order))
	for i, id := range order {
		out[i] = Fused{ID: id, Score: scores[id]}
	}
	slices.SortFunc(out, func(a, b Fused) int {
		if c := cmp.Compare(b.Score, a.Score); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
	return out
}

// MinMax maps a list's scores onto [0, 1] by its best and worst (all 1
// when they are equal), keeping the order: fed to Blend, which divides by
// the best, it blends min-max normalised scores.
func MinMax(l []ScoredID) []ScoredID {
	if len(l) == 0 {
		return l
	}
	hi, lo := l[0].Score, l[0].Score
	for _, x := range l {
		hi, lo = max(hi, x.Score), min(lo, x.Score)
	}
	out := make([]ScoredID, len(l))
	for i, x := range l {
		v := 1.0
		if hi > lo {
			v = (x.Score - lo) / (hi - lo)
		}
		out[i] = ScoredID{ID: x.ID, Score: v}
	}
	return out
}
