package vecblock

import (
	"slices"
	"testing"
)

// Rows written into a block read back in place: tags, scales and every
// column; growing a block keeps the rows it held; a block of cleared rows
// holds nothing.
func TestRowsReadBackAndSurviveGrowth(t *testing.T) {
	const dim = 3
	b := New(2, dim, Block{}, false)
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
	grown := New(4, dim, blk, true)
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
	good := New(2, 3, Block{}, false)
	tooMany := New(1, 1, Block{}, false)
	tooMany[0], tooMany[1] = 0xff, 0xff
	for name, b := range map[string][]byte{
		"empty": nil, "short": good[:4], "cut": good[:len(good)-1], "long": append(slices.Clone(good), 0),
		"no rows": New(1, 3, Block{}, false)[:0:0], "more rows than a block": tooMany,
	} {
		if _, ok := Parse(b); ok {
			t.Errorf("%s: parsed", name)
		}
	}
	if ModelTag("") == 0 || ModelTag("hash-v1") == ModelTag("learned-v1") {
		t.Error("model tags: 0 or the same for two models")
	}
}
