package retrieval

import (
	"cmp"
	"slices"
)

// RRFK is the usual reciprocal-rank-fusion constant. Hybrid fetch fused by
// RRF until Blend measured better (see HybridKeywordWeight); RRF stays as
// the baseline the evaluation compares fusions against.
const RRFK = 60

// HybridWindow is how many keyword results hybrid fetch takes before fusing
// them with the vector side's HybridVectorWindow.
const HybridWindow = 64

// Fused is one id of a fused ranking with its fused score.
type Fused struct {
	ID    string
	Score float64
}

// RRF fuses ranked id lists by reciprocal rank fusion: each id scores the sum
// of 1/(k + rank) over the lists it appears in, rank counting from 1. An id
// repeated within one list counts at its first rank only. The result is best
// first, ties broken by id so the order is stable.
func RRF(k int, lists ...[]string) []Fused {
	scores := make(map[string]float64)
	var order []string
	for _, list := range lists {
		seen := make(map[string]struct{}, len(list))
		for i, id := range list {
			if _, dup := seen[id]; dup {
				continue
			}
			seen[id] = struct{}{}
			if _, ok := scores[id]; !ok {
				order = append(order, id)
			}
			scores[id] += 1 / float64(k+i+1)
		}
	}
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
