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
// A block of codes (dim's high bit set: Codes) holds each value in four bits
// instead of eight, -7 to 7 with the row's largest at 7, two rows a byte
// (row 2i in the low half, 2i+1 in the high), so a column is (n+1)/2 bytes
// (column j at 8+8n+j*((n+1)/2)); a value is its code times its row's scale.
// The codes rank the rows closely, not exactly: a search that scans them
// scores its best hits again exactly (engine/bolt re-embeds their texts).
package vecblock

import (
	"encoding/binary"
	"hash/crc32"
	"math"
	"unsafe"
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
	// codesFlag, in the stored dim, marks a block of four-bit codes.
	codesFlag = 1 << 31
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

// Block reads a stored block in place.
type Block struct {
	N, Dim int
	// Codes tells a block of four-bit codes (CodeCols) from one of int8
	// values (Cols).
	Codes bool
	b     []byte
}

// Stride is the length of one of the block's columns in bytes.
func (k Block) Stride() int { return stride(k.N, k.Codes) }

func stride(n int, codes bool) int {
	if codes {
		return (n + 1) / 2
	}
	return n
}

// Size is the length of a block of n rows of dim values.
func Size(n, dim int, codes bool) int { return header + 8*n + dim*stride(n, codes) }

// Parse reads a block, false when b is not one.
func Parse(b []byte) (Block, bool) {
	if len(b) < header {
		return Block{}, false
	}
	n, raw := int(binary.LittleEndian.Uint32(b)), binary.LittleEndian.Uint32(b[4:])
	codes, dim := raw&codesFlag != 0, int(raw&^codesFlag)
	if n <= 0 || n > Rows || dim <= 0 || dim > 1<<20 || len(b) != Size(n, dim, codes) {
		return Block{}, false
	}
	return Block{N: n, Dim: dim, Codes: codes, b: b}, true
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

// CodeCols is the columns of a block of codes, in place: byte i of a
// column holds rows 2i (low four bits) and 2i+1 (high), each a signed
// four-bit value.
func (k Block) CodeCols() []byte { return k.b[header+8*k.N:] }

// Code is the value of a four-bit code held in the low bits of c.
func Code(c byte) int8 { return int8(c<<4) >> 4 }

// Row is a row to write: a vector (tag, scale, q), or (tag 0) a row to clear.
type Row struct {
	Tag   uint32
	Scale float32
	Q     []int8
}

// New makes an empty block of n rows (of codes when codes), with the rows
// of old (when keep: it has the same dimension) copied in; int8 rows copied
// into a block of codes are coded as SetRow codes them. A block of codes is
// not made into one of int8 (the caller keeps old's kind).
func New(n, dim int, codes bool, old Block, keep bool) []byte {
	b := make([]byte, Size(n, dim, codes))
	binary.LittleEndian.PutUint32(b, uint32(n))
	raw := uint32(dim)
	if codes {
		raw |= codesFlag
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
	case old.Codes == codes:
		os, ns, w := old.Stride(), stride(n, codes), stride(m, codes)
		for j := range dim {
			copy(dst[j*ns:j*ns+w], src[j*os:j*os+w])
		}
		if codes && m%2 == 1 && m < old.N {
			// Row m shares its byte with row m-1 in old; it is not copied.
			for j := range dim {
				dst[j*ns+w-1] &= 0x0f
			}
		}
	case codes:
		cols := old.Cols()
		top := make([]int8, m)
		for j := range dim {
			for r, x := range cols[j*old.N : j*old.N+m] {
				top[r] = max(top[r], mag(x))
			}
		}
		for r := range m {
			scale := math.Float32frombits(binary.LittleEndian.Uint32(b[header+4*n+4*r:]))
			binary.LittleEndian.PutUint32(b[header+4*n+4*r:], math.Float32bits(codeScale(scale, top[r])))
		}
		ns := stride(n, true)
		for j := range dim {
			col := cols[j*old.N : j*old.N+m]
			out := dst[j*ns : (j+1)*ns]
			for r, x := range col {
				putCode(out, r, code(x, top[r]))
			}
		}
	default:
		panic("vecblock: a block of codes made into one of int8")
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

// SetRow writes row r of a block of n rows made by New (of codes or not, as
// it was made): an int8 row into a block of codes is coded, its largest
// magnitude at CodeMax.
func SetRow(b []byte, n, dim, r int, row Row) {
	codes := binary.LittleEndian.Uint32(b[4:])&codesFlag != 0
	binary.LittleEndian.PutUint32(b[header+4*r:], row.Tag)
	scale := row.Scale
	var top int8
	if codes {
		for _, x := range row.Q {
			top = max(top, mag(x))
		}
		scale = codeScale(scale, top)
	}
	binary.LittleEndian.PutUint32(b[header+4*n+4*r:], math.Float32bits(scale))
	cols := b[header+8*n:]
	s := stride(n, codes)
	for j := range dim {
		var x int8
		if row.Q != nil {
			x = row.Q[j]
		}
		if codes {
			putCode(cols[j*s:(j+1)*s], r, code(x, top))
		} else {
			cols[j*n+r] = byte(x)
		}
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
