package retrieval

import "math"

// Five-level codes: a vector's int8 values, each rounded to one of -2, -1,
// 0, 1, 2 steps, three values a byte (the byte is d0 + 5*d1 + 25*d2 of
// their digits, FiveDigit). At 2.67 bits a value they take a third less
// than four-bit codes and rank a store's rows about as closely: over
// 100,000 learned vectors, rescoring the best 128 by these codes exactly
// finds 0.995 and 1.000 of the exact int8 top 10 for the evaluation's two
// query sets, where four-bit codes rescoring their best 64 found 0.993 and
// 1.000 (engine/retrieval/eval TestEvalVectorCodes100k). What makes so few
// levels enough is the step: chosen per row to fit its values
// (FiveLevel), not set by its largest one, since about half of a vector's
// values are zero and most of the rest are small.

// fiveMax is the largest five-level code.
const fiveMax = 2

// FiveDigit is the digit (0 to 4) that holds code c (-2 to 2).
func FiveDigit(c int8) byte {
	switch {
	case c > 0:
		return byte(2*c - 1)
	case c < 0:
		return byte(-2 * c)
	}
	return 0
}

// FiveCode is the code a digit holds (-2 to 2; a digit over 4 holds 0).
func FiveCode(d byte) int8 {
	if d > 4 {
		return 0
	}
	return fiveValue(d)
}

// fiveValue is digit d's code (d at most 4): 0 is the code 0, so a block
// of zero bytes holds zero codes.
func fiveValue(d byte) int8 { return [5]int8{0, 1, -1, 2, -2}[d] }

// fiveSteps is how many steps FiveLevel tries: the row's largest value
// over 2 times 0.30, 0.32, ... 1.00.
const fiveSteps = 36

// FiveLevel codes a row of int8 values as five-level codes into codes
// (len(q)) and returns the step, a value being about its code times the
// step. The step is the one of fiveSteps candidates whose rounding leaves
// the least squared error over the row; it is found from a histogram of
// the row's magnitudes, so a row of 768 values costs about as much as
// reading it once more. A row of zeros is coded as zeros with a step of 0.
func FiveLevel(q []int8, codes []int8) float32 {
	var hist [128]int32
	top := 0
	for _, x := range q {
		m := int(x)
		if m < 0 {
			m = min(-m, 127)
		}
		hist[m]++
		top = max(top, m)
	}
	if top == 0 {
		clear(codes[:len(q)])
		return 0
	}
	var best float64
	bestErr := math.Inf(1)
	for i := range fiveSteps {
		step := float64(top) * (0.30 + 0.02*float64(i)) / fiveMax
		var sum float64
		for m := 1; m <= top; m++ {
			if hist[m] == 0 {
				continue
			}
			d := float64(m) - fiveRound(float64(m), step)*step
			sum += float64(hist[m]) * d * d
		}
		if sum < bestErr {
			best, bestErr = step, sum
		}
	}
	for j, x := range q {
		c := int8(fiveRound(math.Abs(float64(x)), best))
		if x < 0 {
			c = -c
		}
		codes[j] = c
	}
	return float32(best)
}

// fiveRound is magnitude m in steps, rounded (halves up) and capped at
// fiveMax.
func fiveRound(m, step float64) float64 { return min(fiveMax, math.Round(m/step)) }

// FiveTables holds, for each of a query's dimensions, the products of its
// weight with every byte of three digits: a scan of five-level codes looks
// each byte's three products up instead of decoding it. Built once per
// query (3 KB a dimension), shared by the scan's workers.
type FiveTables struct {
	of   [][256][3]float32
	at   []int32 // per dimension of q: its table in of, -1 for none
	zero [256][3]float32
}

// NewFiveTables makes the tables of q's dimensions dims.
func NewFiveTables(q []float32, dims []int) *FiveTables {
	t := &FiveTables{of: make([][256][3]float32, len(dims)), at: make([]int32, len(q))}
	for j := range t.at {
		t.at[j] = -1
	}
	for i, j := range dims {
		t.at[j] = int32(i)
		w := q[j]
		tab := &t.of[i]
		for b := range 125 {
			tab[b] = [3]float32{w * float32(fiveValue(byte(b%5))), w * float32(fiveValue(byte(b/5%5))), w * float32(fiveValue(byte(b/25)))}
		}
	}
	return t
}

func (t *FiveTables) table(j int) *[256][3]float32 {
	if i := t.at[j]; i >= 0 {
		return &t.of[i]
	}
	return &t.zero
}

// ScoreFives is ScoreColumns over a block of five-level codes: column j is
// cols[j*stride:], byte i of it holding rows 3i, 3i+1 and 3i+2 as digits
// (d0 + 5*d1 + 25*d2); acc has one entry per row (at most 3*stride; cols
// may start at a triple of rows inside a block). t holds the tables of (at
// least) dims. Times a row's scale, acc is that row's dot product with the
// query as the codes have it. A byte over 124, which no block holds, adds
// nothing.
func ScoreFives(acc []float32, cols []byte, stride int, dims []int, t *FiveTables) {
	w := (len(acc) + 2) / 3
	k := 0
	for ; k+4 <= len(dims); k += 4 {
		j0, j1, j2, j3 := dims[k], dims[k+1], dims[k+2], dims[k+3]
		addFives4(acc, cols[j0*stride:j0*stride+w], cols[j1*stride:j1*stride+w],
			cols[j2*stride:j2*stride+w], cols[j3*stride:j3*stride+w],
			t.table(j0), t.table(j1), t.table(j2), t.table(j3))
	}
	for _, j := range dims[k:] {
		c := cols[j*stride : j*stride+w]
		addFives4(acc, c, c, c, c, t.table(j), &t.zero, &t.zero, &t.zero)
	}
}

// addFives4 adds four columns of five-level codes, each byte's three
// products looked up in its column's table; like addCodes4, one load and
// store of the accumulator per four products.
func addFives4(acc []float32, c0, c1, c2, c3 []byte, t0, t1, t2, t3 *[256][3]float32) {
	n := len(acc)
	full := n / 3
	w := (n + 2) / 3
	c0, c1, c2, c3 = c0[:w], c1[:w], c2[:w], c3[:w]
	for i := 0; i < full; i++ {
		p0, p1, p2, p3 := &t0[c0[i]], &t1[c1[i]], &t2[c2[i]], &t3[c3[i]]
		a := acc[3*i : 3*i+3 : 3*i+3]
		a[0] += p0[0] + p1[0] + p2[0] + p3[0]
		a[1] += p0[1] + p1[1] + p2[1] + p3[1]
		a[2] += p0[2] + p1[2] + p2[2] + p3[2]
	}
	if rest := n - 3*full; rest > 0 {
		p0, p1, p2, p3 := &t0[c0[full]], &t1[c1[full]], &t2[c2[full]], &t3[c3[full]]
		for d := range rest {
			acc[3*full+d] += p0[d] + p1[d] + p2[d] + p3[d]
		}
	}
}
