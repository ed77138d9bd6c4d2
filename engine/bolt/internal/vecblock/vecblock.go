// Package vecblock is the on-disk layout of a bbolt store's vectors: blocks
// of Rows ordinals (keyed by the block's number), each in the layout the
// exact int8 scan reads: dimension-major, so a query reads only the columns
// of the dimensions it has. A search scans the blocks in place, in bbolt's
// memory map, inside one read transaction: no process holds the vectors in
// its heap (at 1M they were 0.77 GB of it), the OS pages them. Keyed by
// ordinal and packed, they take the vector's bytes and little else (the
// layout before, one value per record keyed by its 40-byte id, wasted a
// sixth of every page).
//
// A block of n rows (the block's highest ordinal held, plus one, less its
// first; at most Rows) is:
//
//	rows u32, dim u32
//	n model tags, u32 (0: the row holds no vector)
//	n scales, float32 (a value is its int8 times its row's scale)
//	dim columns of n int8 (column j at 8+8n+j*n)
//
// A block of codes holds each value in fewer bits; a value is its code
// times its row's scale. Two kinds, told by a high bit of the stored dim:
//
//   - Fives (bit 30), what a store writes now: five-level codes, -2 to 2
//     steps of a step fitted to the row (retrieval.FiveLevel), three rows a
//     byte as digits (d0 + 5*d1 + 25*d2 for rows 3i, 3i+1, 3i+2; code 0 is
//     digit 0), so a column is (n+2)/3 bytes;
//   - Codes4 (bit 31), what stores of schema 9 wrote: four-bit
//     codes, -7 to 7 with the row's largest at 7, two rows a byte (row 2i
//     in the low half, 2i+1 in the high), so a column is (n+1)/2 bytes.
//
// Column j is at 8+8n+j*stride. The codes rank the rows closely, not
// exactly: a search that scans them scores its best hits again exactly
// (engine/bolt re-embeds their texts).
package vecblock

import (
	"encoding/binary"
	"hash/crc32"
	"math"
	"unsafe"

	"mnemo/engine/retrieval"
)

// Bucket holds the blocks; OldBucket is the layout before schema 5 (one
// value per record, keyed by id), migrated into blocks when vectors first
// load.
var (
	Bucket    = []byte("vector_blocks")
	OldBucket = []byte("vectors")
)

const (
	// Rows is how many ordinals a block covers.
	Rows = 1024
	// header is a block's rows and dim.
	header = 8
	// codesFlag, in the stored dim, marks a block of four-bit codes;
	// fivesFlag one of five-level codes.
	codesFlag = 1 << 31
	fivesFlag = 1 << 30
	// CodeMax is the largest code: a row's largest value is coded as it.
	CodeMax = 7
)

// ModelTag names a model in a row: a checksum of its id, never 0.
func ModelTag(model string) uint32 {
	if t := crc32.ChecksumIEEE([]byte(model)); t != 0 {
		return t
	}
	return 1
}

// Key is a block's key: its number, big-endian.
func Key(num uint32) []byte { return binary.BigEndian.AppendUint32(nil, num) }

// Kind is how a block holds its values.
type Kind uint8

const (
	// Int8 is a byte a value, exact.
	Int8 Kind = iota
	// Codes4 is four-bit codes, two rows a byte.
	Codes4
	// Fives is five-level codes, three rows a byte.
	Fives
	// NumKinds is how many kinds there are: every Kind is below it.
	NumKinds
)

// Coded tells codes, which rank rows closely but not exactly, from int8.
func (k Kind) Coded() bool { return k != Int8 }

// Block reads a stored block in place.
type Block struct {
	N, Dim int
	// Kind tells whether Cols (int8) or CodeCols (either kind of codes)
	// holds the values.
	Kind Kind
	b    []byte
}

// Stride is the length of one of the block's columns in bytes.
func (k Block) Stride() int { return stride(k.N, k.Kind) }

func stride(n int, kind Kind) int {
	switch kind {
	case Codes4:
		return (n + 1) / 2
	case Fives:
		return (n + 2) / 3
	}
	return n
}

// Size is the length of a block of n rows of dim values.
func Size(n, dim int, kind Kind) int { return header + 8*n + dim*stride(n, kind) }

// Parse reads a block, false when b is not one.
func Parse(b []byte) (Block, bool) {
	if len(b) < header {
		return Block{}, false
	}
	n, raw := int(binary.LittleEndian.Uint32(b)), binary.LittleEndian.Uint32(b[4:])
	var kind Kind
	switch raw & (codesFlag | fivesFlag) {
	case codesFlag:
		kind = Codes4
	case fivesFlag:
		kind = Fives
	case codesFlag | fivesFlag:
		return Block{}, false
	}
	dim := int(raw &^ (codesFlag | fivesFlag))
	if n <= 0 || n > Rows || dim <= 0 || dim > 1<<20 || len(b) != Size(n, dim, kind) {
		return Block{}, false
	}
	return Block{N: n, Dim: dim, Kind: kind, b: b}, true
}

// Tag is row r's model tag (0: no vector).
func (k Block) Tag(r int) uint32 { return binary.LittleEndian.Uint32(k.b[header+4*r:]) }

// Scale is row r's scale: a value is its int8 (or its code) times it.
func (k Block) Scale(r int) float32 {
	return math.Float32frombits(binary.LittleEndian.Uint32(k.b[header+4*k.N+4*r:]))
}

// Cols is the int8 columns of a block that is not of codes, in place.
func (k Block) Cols() []int8 {
	c := k.b[header+8*k.N:]
	return unsafe.Slice((*int8)(unsafe.Pointer(unsafe.SliceData(c))), len(c))
}

// CodeCols is the columns of a block of codes, in place: for Codes4, byte
// i of a column holds rows 2i (low four bits) and 2i+1 (high), each a
// signed four-bit value; for Fives, rows 3i, 3i+1 and 3i+2 as digits.
func (k Block) CodeCols() []byte { return k.b[header+8*k.N:] }

// fivePow is the weight of row r's digit in its byte.
func fivePow(r int) byte { return [3]byte{1, 5, 25}[r%3] }

// Code is the value of a four-bit code held in the low bits of c.
func Code(c byte) int8 { return int8(c<<4) >> 4 }

// Row is a row to write: a vector (tag, scale, q), or (tag 0) a row to clear.
type Row struct {
	Tag   uint32
	Scale float32
	Q     []int8
}

// New makes an empty block of n rows of the kind given, with the rows of
// old (when keep: it has the same dimension) copied in; int8 rows copied
// into a block of codes are coded as SetRow codes them. A block of codes
// is made only into one of its own kind (the caller keeps old's kind).
func New(n, dim int, kind Kind, old Block, keep bool) []byte {
	b := make([]byte, Size(n, dim, kind))
	binary.LittleEndian.PutUint32(b, uint32(n))
	raw := uint32(dim)
	switch kind {
	case Codes4:
		raw |= codesFlag
	case Fives:
		raw |= fivesFlag
	}
	binary.LittleEndian.PutUint32(b[4:], raw)
	if !keep {
		return b
	}
	m := min(old.N, n)
	copy(b[header:], old.b[header:header+4*m])
	copy(b[header+4*n:], old.b[header+4*old.N:header+4*old.N+4*m])
	src, dst := old.b[header+8*old.N:], b[header+8*n:]
	switch {
	case old.Kind == kind:
		os, ns, w := old.Stride(), stride(n, kind), stride(m, kind)
		for j := range dim {
			copy(dst[j*ns:j*ns+w], src[j*os:j*os+w])
		}
		if m < old.N {
			// The rows past m that share the last byte copied are not
			// copied: their codes go back to 0.
			for j := range dim {
				switch {
				case kind == Codes4 && m%2 == 1:
					dst[j*ns+w-1] &= 0x0f
				case kind == Fives && m%3 != 0:
					dst[j*ns+w-1] %= fivePow(m)
				}
			}
		}
	case old.Kind == Int8:
		cols := old.Cols()
		row := make([]int8, dim)
		for r := range m {
			for j := range dim {
				row[j] = cols[j*old.N+r]
			}
			scale := math.Float32frombits(binary.LittleEndian.Uint32(b[header+4*n+4*r:]))
			setCodes(b, n, dim, r, kind, scale, row)
		}
	default:
		panic("vecblock: a block of codes made into another kind")
	}
	return b
}

// code is int8 value x of a row whose largest magnitude is top, in four
// bits: round(x * CodeMax / top), the row's largest at CodeMax.
func code(x, top int8) int8 {
	if top == 0 {
		return 0
	}
	num := int(x) * CodeMax
	t := int(top)
	if num >= 0 {
		return int8((2*num + t) / (2 * t))
	}
	return -int8((-2*num + t) / (2 * t))
}

// codeScale is the scale of a coded row: int8 values times scale are its
// codes times this.
func codeScale(scale float32, top int8) float32 {
	if top == 0 {
		return 0
	}
	return scale * float32(top) / CodeMax
}

// mag is |x|, 127 for -128 (which no quantized row holds).
func mag(x int8) int8 {
	switch {
	case x == math.MinInt8:
		return math.MaxInt8
	case x < 0:
		return -x
	}
	return x
}

func putCode(col []byte, r int, c int8) {
	v := byte(c) & 0x0f
	if r%2 == 0 {
		col[r/2] = col[r/2]&0xf0 | v
	} else {
		col[r/2] = col[r/2]&0x0f | v<<4
	}
}

// putFive sets row r's digit of its byte to code c's.
func putFive(col []byte, r int, c int8) {
	p, cur := fivePow(r), col[r/3]
	col[r/3] = cur - cur/p%5*p + retrieval.FiveDigit(c)*p
}

// SetRow writes row r of a block of n rows made by New (of its kind, as it
// was made): an int8 row into a block of codes is coded, four-bit codes
// with its largest magnitude at CodeMax, five-level ones with their
// fitted step.
func SetRow(b []byte, n, dim, r int, row Row) {
	blk, ok := Parse(b)
	if !ok || blk.N != n || blk.Dim != dim {
		panic("vecblock: SetRow on a block New did not make")
	}
	binary.LittleEndian.PutUint32(b[header+4*r:], row.Tag)
	q := row.Q
	if q == nil {
		q = make([]int8, dim)
	}
	if blk.Kind.Coded() {
		setCodes(b, n, dim, r, blk.Kind, row.Scale, q)
		return
	}
	binary.LittleEndian.PutUint32(b[header+4*n+4*r:], math.Float32bits(row.Scale))
	cols := b[header+8*n:]
	for j := range dim {
		cols[j*n+r] = byte(q[j])
	}
}

// setCodes writes row r's int8 values q, of scale scale, as codes of the
// kind given, with the scale of its codes.
func setCodes(b []byte, n, dim, r int, kind Kind, scale float32, q []int8) {
	cols := b[header+8*n:]
	s := stride(n, kind)
	if kind == Fives {
		codes := make([]int8, dim)
		step := retrieval.FiveLevel(q, codes)
		binary.LittleEndian.PutUint32(b[header+4*n+4*r:], math.Float32bits(scale*step))
		for j, c := range codes {
			putFive(cols[j*s:(j+1)*s], r, c)
		}
		return
	}
	var top int8
	for _, x := range q {
		top = max(top, mag(x))
	}
	binary.LittleEndian.PutUint32(b[header+4*n+4*r:], math.Float32bits(codeScale(scale, top)))
	for j := range dim {
		putCode(cols[j*s:(j+1)*s], r, code(q[j], top))
	}
}

// Holds tells whether any row of a block made by New holds a vector.
func Holds(b []byte, n int) bool {
	for r := range n {
		if binary.LittleEndian.Uint32(b[header+4*r:]) != 0 {
			return true
		}
	}
	return false
}
