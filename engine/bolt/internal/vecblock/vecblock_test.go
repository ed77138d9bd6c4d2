package vecblock

import (
	"math/rand/v2"
	"slices"
	"testing"

	"mnemo/engine/retrieval"
)

// Rows written into a block read back in place: tags, scales and every
// column; growing a block keeps the rows it held; a block of cleared rows
// holds nothing.
func TestRowsReadBackAndSurviveGrowth(t *testing.T) {
	const dim = 3
	b := New(2, dim, Int8, Block{}, false)
	SetRow(b, 2, dim, 0, Row{Tag: 7, Scale: 0.5, Q: []int8{1, -2, 3}})
	SetRow(b, 2, dim, 1, Row{Tag: 9, Scale: 0.25, Q: []int8{-4, 5, -6}})
	blk, ok := Parse(b)
	if !ok || blk.N != 2 || blk.Dim != dim {
		t.Fatalf("parse: %+v %v", blk, ok)
	}
	if blk.Tag(0) != 7 || blk.Tag(1) != 9 || blk.Scale(0) != 0.5 || blk.Scale(1) != 0.25 {
		t.Fatalf("tags %d %d scales %v %v", blk.Tag(0), blk.Tag(1), blk.Scale(0), blk.Scale(1))
	}
	// dimension-major: column j holds row 0's and row 1's value j
	if got, want := blk.Cols(), []int8{1, -4, -2, 5, 3, -6}; !slices.Equal(got, want) {
		t.Fatalf("columns %v, want %v", got, want)
	}
	grown := New(4, dim, Int8, blk, true)
	SetRow(grown, 4, dim, 3, Row{Tag: 11, Scale: 1, Q: []int8{8, 8, 8}})
	g, ok := Parse(grown)
	if !ok || g.N != 4 || g.Tag(0) != 7 || g.Tag(1) != 9 || g.Tag(2) != 0 || g.Tag(3) != 11 || g.Scale(1) != 0.25 {
		t.Fatalf("grown block: n %d tags %d %d %d %d", g.N, g.Tag(0), g.Tag(1), g.Tag(2), g.Tag(3))
	}
	if got, want := g.Cols(), []int8{1, -4, 0, 8, -2, 5, 0, 8, 3, -6, 0, 8}; !slices.Equal(got, want) {
		t.Fatalf("grown columns %v, want %v", got, want)
	}
	SetRow(b, 2, dim, 0, Row{})
	SetRow(b, 2, dim, 1, Row{})
	if Holds(b, 2) {
		t.Fatal("a block of cleared rows holds a vector")
	}
}

// Parse refuses what is not a block: too short, no rows, more rows than a
// block covers, or a length that disagrees with its rows and dimension.
func TestParseRefusesWhatIsNotABlock(t *testing.T) {
	good := New(2, 3, Int8, Block{}, false)
	tooMany := New(1, 1, Int8, Block{}, false)
	tooMany[0], tooMany[1] = 0xff, 0xff
	for name, b := range map[string][]byte{
		"empty": nil, "short": good[:4], "cut": good[:len(good)-1], "long": append(slices.Clone(good), 0),
		"no rows": New(1, 3, Int8, Block{}, false)[:0:0], "more rows than a block": tooMany,
	} {
		if _, ok := Parse(b); ok {
			t.Errorf("%s: parsed", name)
		}
	}
	if ModelTag("") == 0 || ModelTag("hash-v1") == ModelTag("learned-v1") {
		t.Error("model tags: 0 or the same for two models")
	}
}

// codesOf reads a block of codes back as one row's codes.
func codesOf(blk Block, r int) []int8 {
	out := make([]int8, blk.Dim)
	cols, s := blk.CodeCols(), blk.Stride()
	for j := range blk.Dim {
		c := cols[j*s+r/2]
		if r%2 == 1 {
			c >>= 4
		}
		out[j] = Code(c)
	}
	return out
}

// A row written into a block of four-bit codes reads back as its int8 values in
// four bits, the row's largest magnitude at CodeMax, with the scale that
// keeps the values' size; an int8 block made into one of codes codes its
// rows the same way; growing a block of codes keeps them, and a cleared
// neighbour in the same byte does not disturb a row.
func TestCodesReadBack(t *testing.T) {
	const dim = 4
	rows := []Row{
		{Tag: 3, Scale: 0.01, Q: []int8{127, -127, 64, -9}},
		{Tag: 5, Scale: 0.02, Q: []int8{-18, 9, 0, 1}},
		{Tag: 7, Scale: 0.5, Q: []int8{0, 0, 0, 0}},
	}
	// round(x*7/top): of top 127, 64 → 3.53 → 4 and -9 → -0.496 → 0; of
	// top 18, 9 → 3.5 → 4 (a half rounds away from zero) and 1 → 0.39 → 0.
	want := [][]int8{{7, -7, 4, 0}, {-7, 4, 0, 0}, {0, 0, 0, 0}}
	wantScale := []float32{codeScale(0.01, 127), codeScale(0.02, 18), 0}
	if d := wantScale[1] - 0.02*18.0/7; d > 1e-7 || d < -1e-7 {
		t.Fatalf("codeScale(0.02, 18) = %v", wantScale[1])
	}
	b := New(3, dim, Codes4, Block{}, false)
	for r, row := range rows {
		SetRow(b, 3, dim, r, row)
	}
	blk, ok := Parse(b)
	if !ok || blk.Kind != Codes4 || blk.N != 3 || blk.Dim != dim || blk.Stride() != 2 || len(b) != Size(3, dim, Codes4) {
		t.Fatalf("parse: %+v %v, %d bytes", blk, ok, len(b))
	}
	for r := range rows {
		if got := codesOf(blk, r); !slices.Equal(got, want[r]) || blk.Tag(r) != rows[r].Tag || blk.Scale(r) != wantScale[r] {
			t.Errorf("row %d: codes %v scale %v tag %d, want %v %v %d", r, got, blk.Scale(r), blk.Tag(r), want[r], wantScale[r], rows[r].Tag)
		}
	}

	plain := New(3, dim, Int8, Block{}, false)
	for r, row := range rows {
		SetRow(plain, 3, dim, r, row)
	}
	pb, _ := Parse(plain)
	coded, ok := Parse(New(3, dim, Codes4, pb, true))
	if !ok || coded.Kind != Codes4 {
		t.Fatal("an int8 block made into one of codes does not parse as codes")
	}
	for r := range rows {
		if got := codesOf(coded, r); !slices.Equal(got, want[r]) || coded.Scale(r) != wantScale[r] {
			t.Errorf("converted row %d: codes %v scale %v, want %v %v", r, got, coded.Scale(r), want[r], wantScale[r])
		}
	}

	grown, _ := Parse(New(4, dim, Codes4, blk, true))
	cut, _ := Parse(New(1, dim, Codes4, blk, true))
	for r := range rows {
		if got := codesOf(grown, r); !slices.Equal(got, want[r]) {
			t.Errorf("grown row %d: %v, want %v", r, got, want[r])
		}
	}
	if got := codesOf(grown, 3); !slices.Equal(got, make([]int8, dim)) || grown.Tag(3) != 0 {
		t.Errorf("the new row of a grown block: %v tag %d", got, grown.Tag(3))
	}
	if got := codesOf(cut, 0); !slices.Equal(got, want[0]) || cut.N != 1 {
		t.Errorf("a block cut to one row: %v", got)
	}
	// Clearing row 1 leaves row 0, which shares its bytes.
	SetRow(b, 3, dim, 1, Row{})
	blk, _ = Parse(b)
	if got := codesOf(blk, 0); !slices.Equal(got, want[0]) || blk.Tag(1) != 0 {
		t.Errorf("row 0 after row 1 was cleared: %v", got)
	}
	if _, ok := Parse(b[:len(b)-1]); ok {
		t.Error("a cut block of codes parsed")
	}
}

// fivesOf reads a block of five-level codes back as one row's codes.
func fivesOf(blk Block, r int) []int8 {
	out := make([]int8, blk.Dim)
	cols, s := blk.CodeCols(), blk.Stride()
	for j := range out {
		out[j] = retrieval.FiveCode(cols[j*s+r/3] / fivePow(r) % 5)
	}
	return out
}

// A row written into a block of five-level codes reads back as
// retrieval.FiveLevel codes it, with its scale times the step; an int8
// block made into one codes its rows the same way; every count of rows
// (one, two or three to the last byte) keeps each row apart: writing,
// clearing or cutting a row leaves its byte's neighbours as they were.
func TestFivesReadBack(t *testing.T) {
	const dim = 5
	rng := rand.New(rand.NewPCG(29, 7))
	for n := 1; n <= 7; n++ {
		rows := make([]Row, n)
		want := make([][]int8, n)
		wantScale := make([]float32, n)
		for r := range rows {
			q := make([]int8, dim)
			for j := range q {
				if rng.IntN(3) > 0 {
					q[j] = int8(rng.IntN(255) - 127)
				}
			}
			rows[r] = Row{Tag: uint32(r + 1), Scale: 0.01 * float32(r+1), Q: q}
			want[r] = make([]int8, dim)
			wantScale[r] = rows[r].Scale * retrieval.FiveLevel(q, want[r])
		}
		check := func(what string, blk Block, rows int) {
			t.Helper()
			if blk.Kind != Fives || blk.N != rows || blk.Stride() != (rows+2)/3 {
				t.Fatalf("%d rows, %s: kind %d n %d stride %d", n, what, blk.Kind, blk.N, blk.Stride())
			}
			for r := range min(rows, n) {
				if got := fivesOf(blk, r); !slices.Equal(got, want[r]) || blk.Scale(r) != wantScale[r] || blk.Tag(r) != uint32(r+1) {
					t.Errorf("%d rows, %s: row %d codes %v scale %v tag %d, want %v %v %d", n, what, r, got, blk.Scale(r), blk.Tag(r), want[r], wantScale[r], r+1)
				}
			}
			for r := n; r < rows; r++ {
				if got := fivesOf(blk, r); !slices.Equal(got, make([]int8, dim)) || blk.Tag(r) != 0 {
					t.Errorf("%d rows, %s: the new row %d holds %v tag %d", n, what, r, got, blk.Tag(r))
				}
			}
		}
		b := New(n, dim, Fives, Block{}, false)
		// Written last to first, so each write lands beside rows already set.
		for r := n - 1; r >= 0; r-- {
			SetRow(b, n, dim, r, rows[r])
		}
		blk, ok := Parse(b)
		if !ok || len(b) != Size(n, dim, Fives) {
			t.Fatalf("%d rows: parse %v, %d bytes", n, ok, len(b))
		}
		check("written", blk, n)

		plain := New(n, dim, Int8, Block{}, false)
		for r, row := range rows {
			SetRow(plain, n, dim, r, row)
		}
		pb, _ := Parse(plain)
		coded, _ := Parse(New(n, dim, Fives, pb, true))
		check("coded from int8", coded, n)
		grown, _ := Parse(New(n+2, dim, Fives, blk, true))
		check("grown", grown, n+2)

		if n > 1 {
			cut, _ := Parse(New(n-1, dim, Fives, blk, true))
			saved := want[n-1]
			want = want[:n-1]
			check("cut", cut, n-1)
			if cut.N%3 != 0 {
				// The cut row's digit is gone from the last byte.
				if got := cut.CodeCols()[cut.Stride()-1]; got >= byte([3]int{1, 5, 25}[cut.N%3]) {
					t.Errorf("%d rows cut to %d: the last byte of column 0 is %d, holding the cut row", n, n-1, got)
				}
			}
			want = append(want, saved)
		}
		// Clearing a row leaves the others, which share its bytes.
		r := rng.IntN(n)
		SetRow(b, n, dim, r, Row{})
		blk, _ = Parse(b)
		for o := range n {
			got := fivesOf(blk, o)
			switch {
			case o == r && (!slices.Equal(got, make([]int8, dim)) || blk.Tag(o) != 0 || blk.Scale(o) != 0):
				t.Errorf("%d rows: cleared row %d holds %v tag %d", n, o, got, blk.Tag(o))
			case o != r && !slices.Equal(got, want[o]):
				t.Errorf("%d rows: row %d after row %d was cleared: %v, want %v", n, o, r, got, want[o])
			}
		}
	}
	if _, ok := Parse(New(3, dim, Fives, Block{}, false)[:Size(3, dim, Fives)-1]); ok {
		t.Error("a cut block of five-level codes parsed")
	}
	both := New(1, dim, Int8, Block{}, false)
	both[7] |= 0xc0 // both kinds' bits
	if _, ok := Parse(both); ok {
		t.Error("a block marked as both kinds of codes parsed")
	}
}
