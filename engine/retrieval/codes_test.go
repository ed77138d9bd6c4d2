package retrieval

import (
	"math"
	"math/rand/v2"
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

// ScoreCodes adds, for every row, the sum over the query's dimensions of
// the weight times the row's signed four-bit value, whatever the number of
// rows (odd ones leave half a byte unused) and dimensions (not a multiple
// of four), for every value from -8 to 7.
func TestScoreCodesIsTheDotProductOfTheCodes(t *testing.T) {
	rng := rand.New(rand.NewPCG(29, 4))
	for trial := range 300 {
		n, dim := 1+rng.IntN(40), 1+rng.IntN(30)
		rows := make([][]int8, n)
		for r := range rows {
			rows[r] = make([]int8, dim)
			for j := range rows[r] {
				rows[r][j] = int8(rng.IntN(16) - 8)
			}
		}
		q := make([]float32, dim)
		var dims []int
		for j := range q {
			if rng.IntN(3) > 0 {
				q[j] = rng.Float32()*2 - 1
				dims = append(dims, j)
			}
		}
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
// int8 columns and as four-bit codes.
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
}
