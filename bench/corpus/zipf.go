package corpus

import (
	"math"
	"math/rand/v2"
)

// zipfTable samples ranks 0..n-1 with P(k) proportional to 1/(k+v)^s in O(1)
// through Walker's alias method. It is built once per corpus and read only, so
// sampling costs one random number and no exp/log per draw.
type zipfTable struct {
	prob  []float64
	alias []int32
}

func newZipfTable(n int, s, v float64) *zipfTable {
	w := make([]float64, n)
	sum := 0.0
	for k := range w {
		w[k] = math.Pow(float64(k)+v, -s)
		sum += w[k]
	}
	t := &zipfTable{prob: make([]float64, n), alias: make([]int32, n)}
	scaled := make([]float64, n)
	var small, large []int32
	for k := range w {
		scaled[k] = w[k] * float64(n) / sum
		if scaled[k] < 1 {
			small = append(small, int32(k))
		} else {
			large = append(large, int32(k))
		}
	}
	for len(small) > 0 && len(large) > 0 {
		l := small[len(small)-1]
		small = small[:len(small)-1]
		g := large[len(large)-1]
		t.prob[l], t.alias[l] = scaled[l], g
		scaled[g] -= 1 - scaled[l]
		if scaled[g] < 1 {
			large = large[:len(large)-1]
			small = append(small, g)
		}
	}
	for _, k := range large {
		t.prob[k], t.alias[k] = 1, k
	}
	for _, k := range small {
		t.prob[k], t.alias[k] = 1, k
	}
	return t
}

// draw returns one rank.
func (t *zipfTable) draw(r *rand.Rand) int {
	u := r.Uint64()
	k := int((u >> 32) * uint64(len(t.prob)) >> 32)
	if float64(u&0xffffffff)/(1<<32) < t.prob[k] {
		return k
	}
	return int(t.alias[k])
}
