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
	b      []byte
}

// Parse reads a block, false when b is not one.
func Parse(b []byte) (Block, bool) {
	if len(b) < header {
		return Block{}, false
	}
	n, dim := int(binary.LittleEndian.Uint32(b)), int(binary.LittleEndian.Uint32(b[4:]))
	if n <= 0 || n > Rows || dim <= 0 || len(b) != header+n*(8+dim) {
		return Block{}, false
	}
	return Block{N: n, Dim: dim, b: b}, true
}

// Tag is row r's model tag (0: no vector).
func (k Block) Tag(r int) uint32 { return binary.LittleEndian.Uint32(k.b[header+4*r:]) }

// Scale is row r's scale: a value is its int8 times it.
func (k Block) Scale(r int) float32 {
	return math.Float32frombits(binary.LittleEndian.Uint32(k.b[header+4*k.N+4*r:]))
}

// Cols is the block's int8 columns, in place.
func (k Block) Cols() []int8 {
	c := k.b[header+8*k.N:]
	return unsafe.Slice((*int8)(unsafe.Pointer(unsafe.SliceData(c))), len(c))
}

// Row is a row to write: a vector (tag, scale, q), or (tag 0) a row to clear.
type Row struct {
	Tag   uint32
	Scale float32
	Q     []int8
}

// New makes an empty block of n rows, with the rows of old (when keep: it
// has the same dimension) copied in.
func New(n, dim int, old Block, keep bool) []byte {
	b := make([]byte, header+n*(8+dim))
	binary.LittleEndian.PutUint32(b, uint32(n))
	binary.LittleEndian.PutUint32(b[4:], uint32(dim))
	if !keep {
		return b
	}
	m := min(old.N, n)
	copy(b[header:], old.b[header:header+4*m])
	copy(b[header+4*n:], old.b[header+4*old.N:header+4*old.N+4*m])
	src, dst := old.b[header+8*old.N:], b[header+8*n:]
	for j := range dim {
		copy(dst[j*n:j*n+m], src[j*old.N:j*old.N+m])
	}
	return b
}

// SetRow writes row r of a block of n rows made by New.
func SetRow(b []byte, n, dim, r int, row Row) {
	binary.LittleEndian.PutUint32(b[header+4*r:], row.Tag)
	binary.LittleEndian.PutUint32(b[header+4*n+4*r:], math.Float32bits(row.Scale))
	cols := b[header+8*n:]
	for j := range dim {
		var x int8
		if row.Q != nil {
			x = row.Q[j]
		}
		cols[j*n+r] = byte(x)
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
