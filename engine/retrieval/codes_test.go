package retrieval

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// packCodes lays rows of four-bit values out as ScoreCodes reads them:
// dimension-major, two rows a byte, the even row in the low four bits.
func packCodes(rows [][]int8, dim int) ([]byte, int) {
	stride := (len(rows) + 1) / 2
	cols := make([]byte, dim*stride)
	for r, row := range rows {
		for j, c := range row {
			v := byte(c) & 0x0f
			if r%2 == 1 {
				v <<= 4
			}
			cols[j*stride+r/2] |= v
		}
	}
	return cols, stride
}

// randomCodes is 1 to 40 rows of 1 to 30 codes from lo to hi, and a query
// of the same length with about two thirds of its dimensions non-zero.
func randomCodes(rng *rand.Rand, lo, hi int8) (rows [][]int8, dim int, q []float32, dims []int) {
	n, dim := 1+rng.IntN(40), 1+rng.IntN(30)
	rows = make([][]int8, n)
	for r := range rows {
		rows[r] = make([]int8, dim)
		for j := range rows[r] {
			rows[r][j] = lo + int8(rng.IntN(int(hi-lo)+1))
		}
	}
	q = make([]float32, dim)
	for j := range q {
		if rng.IntN(3) > 0 {
			q[j] = rng.Float32()*2 - 1
			dims = append(dims, j)
		}
	}
	return rows, dim, q, dims
}

// ScoreCodes adds, for every row, the sum over the query's dimensions of
// the weight times the row's signed four-bit value, whatever the number of
// rows (odd ones leave half a byte unused) and dimensions (not a multiple
// of four), for every value from -8 to 7.
func TestScoreCodesIsTheDotProductOfTheCodes(t *testing.T) {
	rng := rand.New(rand.NewPCG(29, 4))
	for trial := range 300 {
		rows, dim, q, dims := randomCodes(rng, -8, 7)
		n := len(rows)
		cols, stride := packCodes(rows, dim)
		acc := make([]float32, n)
		for r := range acc {
			acc[r] = float32(r) // ScoreCodes adds to what acc holds
		}
		ScoreCodes(acc, cols, stride, dims, q)
		for r, row := range rows {
			want := float64(r)
			for _, j := range dims {
				want += float64(q[j]) * float64(row[j])
			}
			if math.Abs(float64(acc[r])-want) > 1e-4 {
				t.Fatalf("trial %d (%d rows, dim %d, %d dims): row %d scored %v, want %v", trial, n, dim, len(dims), r, acc[r], want)
			}
		}
	}
}

// BenchmarkScoreBlock scores one block of 1,024 rows on 64 dimensions, as
// int8 columns, as four-bit codes and as five-level codes (the tables
// built once per query, outside the loop, as a search builds them).
func BenchmarkScoreBlock(b *testing.B) {
	const n, dim = 1024, 768
	rng := rand.New(rand.NewPCG(1, 2))
	q := make([]float32, dim)
	dims := make([]int, 0, 64)
	for j := 0; j < dim; j += dim / 64 {
		q[j] = rng.Float32()
		dims = append(dims, j)
	}
	int8Cols := make([]int8, n*dim)
	for i := range int8Cols {
		int8Cols[i] = int8(rng.IntN(255) - 127)
	}
	codes := make([]byte, (n+1)/2*dim)
	for i := range codes {
		codes[i] = byte(rng.IntN(256))
	}
	acc := make([]float32, n)
	b.Run("int8", func(b *testing.B) {
		for b.Loop() {
			clear(acc)
			ScoreColumns(acc, int8Cols, n, dims, q)
		}
	})
	b.Run("codes", func(b *testing.B) {
		for b.Loop() {
			clear(acc)
			ScoreCodes(acc, codes, (n+1)/2, dims, q)
		}
	})
	fives := make([]byte, (n+2)/3*dim)
	for i := range fives {
		fives[i] = byte(rng.IntN(125))
	}
	tabs := NewFiveTables(q, dims)
	b.Run("fives", func(b *testing.B) {
		for b.Loop() {
			clear(acc)
			ScoreFives(acc, fives, (n+2)/3, dims, tabs)
		}
	})
}

// packFives lays rows of five-level codes out as ScoreFives reads them:
// dimension-major, three rows a byte as digits.
func packFives(rows [][]int8, dim int) ([]byte, int) {
	stride := (len(rows) + 2) / 3
	cols := make([]byte, dim*stride)
	pow := [3]byte{1, 5, 25}
	for r, row := range rows {
		for j, c := range row {
			cols[j*stride+r/3] += FiveDigit(c) * pow[r%3]
		}
	}
	return cols, stride
}

// ScoreFives adds, for every row, the sum over the query's dimensions of
// the weight times the row's code, whatever the number of rows (a last
// byte holding one or two) and dimensions (not a multiple of four), for
// every code from -2 to 2, and from a triple of rows inside the columns as
// scoring one row of a block does.
func TestScoreFivesIsTheDotProductOfTheCodes(t *testing.T) {
	rng := rand.New(rand.NewPCG(29, 5))
	for trial := range 300 {
		rows, dim, q, dims := randomCodes(rng, -2, 2)
		n := len(rows)
		tabs := NewFiveTables(q, dims)
		cols, stride := packFives(rows, dim)
		acc := make([]float32, n)
		for r := range acc {
			acc[r] = float32(r) // ScoreFives adds to what acc holds
		}
		ScoreFives(acc, cols, stride, dims, tabs)
		want := func(r int) float64 {
			s := 0.0
			for _, j := range dims {
				s += float64(q[j]) * float64(rows[r][j])
			}
			return s
		}
		for r := range rows {
			if math.Abs(float64(acc[r])-float64(r)-want(r)) > 1e-4 {
				t.Fatalf("trial %d (%d rows, dim %d, %d dims): row %d scored %v, want %v", trial, n, dim, len(dims), r, acc[r]-float32(r), want(r))
			}
		}
		// One row alone, from its triple, sums as the whole scan did.
		scan := make([]float32, n)
		ScoreFives(scan, cols, stride, dims, tabs)
		r := rng.IntN(n)
		first := r - r%3
		one := make([]float32, min(3, n-first))
		ScoreFives(one, cols[first/3:], stride, dims, tabs)
		if one[r-first] != scan[r] {
			t.Fatalf("trial %d: row %d alone scored %v, in the scan %v", trial, r, one[r-first], scan[r])
		}
	}
	for c := int8(-2); c <= 2; c++ {
		if FiveCode(FiveDigit(c)) != c {
			t.Errorf("code %d reads back as %d", c, FiveCode(FiveDigit(c)))
		}
	}
	if FiveDigit(0) != 0 {
		t.Error("code 0 is not digit 0: a block of zero bytes would not hold zeros")
	}
}

// FiveLevel codes a row in -2..2 with the row's signs, a row of zeros as
// zeros; a row whose values are all at the largest is coded exactly; and
// the step it picks leaves no more squared error than the step a row's
// largest value would set (the largest at 2), over many random rows shaped
// like the store's (about half zeros, most of the rest small).
func TestFiveLevelFitsTheRow(t *testing.T) {
	rng := rand.New(rand.NewPCG(29, 6))
	sqErr := func(q, codes []int8, step float64) float64 {
		var s float64
		for j, x := range q {
			d := float64(x) - float64(codes[j])*step
			s += d * d
		}
		return s
	}
	var fitted, byLargest float64
	for trial := range 500 {
		dim := 1 + rng.IntN(800)
		q := make([]int8, dim)
		for j := range q {
			if rng.IntN(2) == 0 {
				q[j] = int8(max(-127, min(127, rng.NormFloat64()*20)))
			}
		}
		if trial%50 == 0 {
			clear(q)
		}
		codes := make([]int8, dim)
		step := float64(FiveLevel(q, codes))
		var top int
		for j, x := range q {
			c := codes[j]
			if c < -2 || c > 2 || (x > 0 && c < 0) || (x < 0 && c > 0) || (x == 0 && c != 0) {
				t.Fatalf("trial %d: value %d coded %d", trial, x, c)
			}
			top = max(top, int(max(x, -x)))
		}
		if top == 0 {
			if step != 0 {
				t.Fatalf("a row of zeros has step %v", step)
			}
			continue
		}
		largest := float64(top) / 2
		naive := make([]int8, dim)
		for j, x := range q {
			naive[j] = int8(math.Max(-2, math.Min(2, math.Round(float64(x)/largest))))
		}
		e, n := sqErr(q, codes, step), sqErr(q, naive, largest)
		if e > n+1e-9 {
			t.Fatalf("trial %d: the fitted step %v leaves %v, the largest's %v leaves %v", trial, step, e, largest, n)
		}
		fitted += e
		byLargest += n
	}
	if fitted > 0.8*byLargest {
		t.Errorf("the fitted steps left %.0f of squared error, the largest's %.0f: the fit should do much better on rows of mostly small values", fitted, byLargest)
	}
	q := []int8{-90, 90, 0, 90}
	codes := make([]int8, len(q))
	if step := FiveLevel(q, codes); step != 45 || !slices.Equal(codes, []int8{-2, 2, 0, 2}) {
		t.Errorf("a row at its largest: step %v codes %v, want 45 and [-2 2 0 2]", step, codes)
	}
}
