package retrieval

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync"
)

// Scored is one vector search result: an id and its cosine similarity to the
// query (in [-1, 1]).
type Scored struct {
	ID    string
	Score float64
}

// VectorOption configures a VectorIndex.
type VectorOption func(*vectorConfig)

type vectorConfig struct {
	int8     bool
	workers  int
	capacity int
}

// WithInt8 stores vectors quantised to int8 (one scale per vector): a quarter
// of the memory of float32, scored with integer dot products. Rankings agree
// closely with float32 but not exactly; see the package benchmarks.
func WithInt8() VectorOption { return func(c *vectorConfig) { c.int8 = true } }

// WithWorkers sets how many goroutines one search uses (default GOMAXPROCS at
// search time). One makes searches sequential.
func WithWorkers(n int) VectorOption { return func(c *vectorConfig) { c.workers = n } }

// WithCapacity reserves room for n vectors up front (when the dimension is
// known), so loading a store's vectors does not copy the matrix as it grows.
func WithCapacity(n int) VectorOption { return func(c *vectorConfig) { c.capacity = n } }

// parallelMin is the index size below which one goroutine beats several: the
// scan is shorter than starting and joining the workers.
const parallelMin = 4096

// VectorIndex is an exact (brute-force) cosine-similarity index held in
// memory. Vectors are normalised to unit length on insert. It is safe for
// concurrent use: searches share a read lock, writes take the write lock.
type VectorIndex struct {
	dim int
	cfg vectorConfig

	mu    sync.RWMutex
	ids   []string       // slot -> id
	slots map[string]int // id -> slot
	f32   []float32      // slot*dim.. when float32
	// i8 holds the int8 vectors in blocks of blockRows slots, each block
	// dimension-major (block[j*blockRows+row]): a query scores only the
	// dimensions it has, and a short query (a few words of hashed n-grams
	// touch 10 to 60 of 512 dimensions) reads that many columns, not every
	// byte of every vector. The sums are the same products as a row scan.
	i8    [][]int8
	scale []float32 // per slot, when int8: value = i8 * scale
}

// blockRows is the number of slots in an int8 block: its score accumulator
// (16 KB) stays in the first-level cache while the columns stream past.
const blockRows = 4096

// NewVectorIndex returns an empty index for vectors of length dim. A dim of 0
// takes the length of the first vector upserted (for an embedder that learns
// its dimension from its first reply); until then searches find nothing.
func NewVectorIndex(dim int, opts ...VectorOption) *VectorIndex {
	if dim < 0 {
		panic(fmt.Sprintf("retrieval: vector dimension must not be negative, got %d", dim))
	}
	v := &VectorIndex{dim: dim, slots: make(map[string]int)}
	for _, o := range opts {
		o(&v.cfg)
	}
	if n := v.cfg.capacity; n > 0 && dim > 0 {
		v.ids = make([]string, 0, n)
		v.slots = make(map[string]int, n)
		if v.cfg.int8 {
			v.i8 = make([][]int8, 0, (n+blockRows-1)/blockRows)
			v.scale = make([]float32, 0, n)
		} else {
			v.f32 = make([]float32, 0, n*dim)
		}
	}
	return v
}

// Dim is the vector length the index holds (0 while a lazily sized index is empty).
func (v *VectorIndex) Dim() int {
	v.mu.RLock()
	defer v.mu.RUnlock()
	return v.dim
}

// Quantized tells whether vectors are stored as int8.
func (v *VectorIndex) Quantized() bool { return v.cfg.int8 }

// Len is the number of vectors held.
func (v *VectorIndex) Len() int {
	v.mu.RLock()
	defer v.mu.RUnlock()
	return len(v.ids)
}

// Has tells whether id holds a vector.
func (v *VectorIndex) Has(id string) bool {
	v.mu.RLock()
	defer v.mu.RUnlock()
	_, ok := v.slots[id]
	return ok
}

// Upsert sets the vector of id, replacing any earlier one. The vector is
// copied and normalised; a vector of the wrong length is a programming error
// (it must come from the embedder the index was sized for) and panics.
func (v *VectorIndex) Upsert(id string, vec []float32) {
	unit := normalized(vec)
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.dim == 0 && len(vec) > 0 {
		v.dim = len(vec)
	}
	if len(vec) != v.dim {
		panic(fmt.Sprintf("retrieval: vector of length %d for an index of dimension %d", len(vec), v.dim))
	}
	slot, ok := v.slots[id]
	if !ok {
		slot = len(v.ids)
		v.ids = append(v.ids, id)
		v.slots[id] = slot
		if v.cfg.int8 {
			if slot%blockRows == 0 {
				v.i8 = append(v.i8, make([]int8, blockRows*v.dim))
			}
			v.scale = append(v.scale, 0)
		} else {
			v.f32 = append(v.f32, make([]float32, v.dim)...)
		}
	}
	if v.cfg.int8 {
		row := make([]int8, v.dim)
		v.scale[slot] = quantize(unit, row)
		v.setColumns(slot, row)
	} else {
		copy(v.f32[slot*v.dim:(slot+1)*v.dim], unit)
	}
}

// Remove drops the vector of id; an unknown id is a no-op.
func (v *VectorIndex) Remove(id string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	slot, ok := v.slots[id]
	if !ok {
		return
	}
	last := len(v.ids) - 1
	// move the last vector into the hole so the matrix stays dense
	if slot != last {
		moved := v.ids[last]
		v.ids[slot] = moved
		v.slots[moved] = slot
		if v.cfg.int8 {
			v.setColumns(slot, v.row(last))
			v.scale[slot] = v.scale[last]
		} else {
			copy(v.f32[slot*v.dim:(slot+1)*v.dim], v.f32[last*v.dim:])
		}
	}
	delete(v.slots, id)
	v.ids[last] = ""
	v.ids = v.ids[:last]
	if v.cfg.int8 {
		v.setColumns(last, make([]int8, v.dim))
		if last%blockRows == 0 {
			v.i8[len(v.i8)-1] = nil
			v.i8 = v.i8[:len(v.i8)-1]
		}
		v.scale = v.scale[:last]
	} else {
		v.f32 = v.f32[:last*v.dim]
	}
}

// setColumns writes the int8 vector of slot into its block's columns.
func (v *VectorIndex) setColumns(slot int, row []int8) {
	blk, r := v.i8[slot/blockRows], slot%blockRows
	for j, x := range row {
		blk[j*blockRows+r] = x
	}
}

// row reads the int8 vector of slot back out of its block.
func (v *VectorIndex) row(slot int) []int8 {
	blk, r := v.i8[slot/blockRows], slot%blockRows
	out := make([]int8, v.dim)
	for j := range out {
		out[j] = blk[j*blockRows+r]
	}
	return out
}

// Search returns the k vectors most similar to q (cosine), best first, ties
// broken by id. admit, when not nil, is the filter: only ids it accepts are
// returned, and it is applied inside the search, so k admitted results come
// back whenever k exist. admit is called only for vectors that would enter
// the current top k, but from several goroutines at once: it must be safe for
// concurrent use (a lookup in a map built beforehand is) and must not write
// to this index. A cancelled context ends the search early and returns nil.
// A query of the wrong length panics, like Upsert.
func (v *VectorIndex) Search(ctx context.Context, q []float32, k int, admit func(id string) bool) []Scored {
	v.mu.RLock()
	defer v.mu.RUnlock()
	n := len(v.ids)
	if n == 0 || k <= 0 {
		return []Scored{}
	}
	if len(q) != v.dim {
		panic(fmt.Sprintf("retrieval: query of length %d for an index of dimension %d", len(q), v.dim))
	}
	unit := normalized(q)

	workers := v.cfg.workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	if n < parallelMin {
		workers = 1
	}
	workers = min(workers, n)

	tops := make([]topK, workers)
	chunk := (n + workers - 1) / workers
	if v.cfg.int8 {
		// Workers take whole blocks, as evenly as they divide.
		blocks := (n + blockRows - 1) / blockRows
		chunk = (blocks + workers - 1) / workers * blockRows
	}
	var wg sync.WaitGroup
	for w := range workers {
		lo, hi := w*chunk, min((w+1)*chunk, n)
		tops[w] = topK{k: k}
		scan := func() {
			if v.cfg.int8 {
				v.scanInt8(ctx, unit, lo, hi, admit, &tops[w])
			} else {
				v.scanFloat(ctx, unit, lo, hi, admit, &tops[w])
			}
		}
		if workers == 1 {
			scan()
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			scan()
		}()
	}
	wg.Wait()
	if ctx.Err() != nil {
		return nil
	}

	var all []hit
	for _, t := range tops {
		all = append(all, t.items...)
	}
	slices.SortFunc(all, func(a, b hit) int {
		if c := cmp.Compare(b.score, a.score); c != 0 {
			return c
		}
		return cmp.Compare(a.id, b.id)
	})
	if len(all) > k {
		all = all[:k]
	}
	out := make([]Scored, len(all))
	for i, h := range all {
		out[i] = Scored{ID: h.id, Score: h.score}
	}
	return out
}

// cancelCheckEvery is how many vectors a worker scans between context checks.
const cancelCheckEvery = 8192

func (v *VectorIndex) scanFloat(ctx context.Context, q []float32, lo, hi int, admit func(string) bool, top *topK) {
	dim := v.dim
	for s := lo; s < hi; s++ {
		if (s-lo)%cancelCheckEvery == 0 && ctx.Err() != nil {
			return
		}
		score := float64(dotF32(q, v.f32[s*dim:(s+1)*dim]))
		top.offer(score, v.ids[s], admit)
	}
}

// scanInt8 scores the float32 query against the int8 vectors of slots
// [lo, hi) (lo a block boundary), a block at a time: each of the query's
// non-zero dimensions adds its column into the block's accumulator. Keeping
// the query unquantised is both more accurate and, in pure Go, faster than
// an int8 by int8 product.
func (v *VectorIndex) scanInt8(ctx context.Context, q []float32, lo, hi int, admit func(string) bool, top *topK) {
	dims := QueryDims(q)
	acc := make([]float32, blockRows)
	for base := lo; base < hi; base += blockRows {
		if ctx.Err() != nil {
			return
		}
		rows := min(blockRows, hi-base)
		blk := v.i8[base/blockRows]
		a := acc[:rows]
		clear(a)
		ScoreColumns(a, blk, blockRows, dims, q)
		scales := v.scale[base : base+rows]
		for r, sum := range a {
			top.offer(float64(sum*scales[r]), v.ids[base+r], admit)
		}
	}
}

// QueryDims lists the dimensions where q is not zero: the columns a scan of
// dimension-major int8 blocks reads.
func QueryDims(q []float32) []int {
	var dims []int
	for j, x := range q {
		if x != 0 {
			dims = append(dims, j)
		}
	}
	return dims
}

// LargestDims is dims (q's non-zero dimensions, as QueryDims lists them)
// cut to the keep of largest magnitude, in dimension order: the columns a
// scan reads when it scores a long query on its heaviest dimensions first.
func LargestDims(q []float32, dims []int, keep int) []int {
	if len(dims) <= keep {
		return dims
	}
	byWeight := slices.Clone(dims)
	slices.SortStableFunc(byWeight, func(a, b int) int {
		return cmp.Compare(math.Abs(float64(q[b])), math.Abs(float64(q[a])))
	})
	kept := byWeight[:keep]
	slices.Sort(kept)
	return kept
}

// ScoreColumns adds the products of the query q's dimensions dims with a
// dimension-major int8 block into acc: column j holds the rows' values of
// dimension j at cols[j*stride:], and acc has one entry per row (at most
// stride). Times a row's scale, acc is that row's dot product with q.
func ScoreColumns(acc []float32, cols []int8, stride int, dims []int, q []float32) {
	rows := len(acc)
	k := 0
	for ; k+4 <= len(dims); k += 4 {
		j0, j1, j2, j3 := dims[k], dims[k+1], dims[k+2], dims[k+3]
		addColumns4(acc, cols[j0*stride:j0*stride+rows], cols[j1*stride:j1*stride+rows],
			cols[j2*stride:j2*stride+rows], cols[j3*stride:j3*stride+rows], q[j0], q[j1], q[j2], q[j3])
	}
	for _, j := range dims[k:] {
		addColumn(acc, cols[j*stride:j*stride+rows], q[j])
	}
}

// QuantizeUnit normalises vec to unit length and writes it as int8 into dst
// (len(vec)), returning the scale that maps the ints back: the form the
// int8 index scores, so vectors stored this way rank as they do in it.
func QuantizeUnit(vec []float32, dst []int8) float32 {
	return quantize(normalized(vec), dst)
}

// Normalized returns a unit-length copy of vec (all zeros stays all zeros).
func Normalized(vec []float32) []float32 { return normalized(vec) }

// addColumns4 adds four weighted columns at once: one load and store of
// the accumulator per four products, which is what bounds the loop.
func addColumns4(acc []float32, c0, c1, c2, c3 []int8, w0, w1, w2, w3 float32) {
	n := len(acc)
	c0, c1, c2, c3 = c0[:n], c1[:n], c2[:n], c3[:n]
	for i := range acc {
		acc[i] += w0*float32(c0[i]) + w1*float32(c1[i]) + w2*float32(c2[i]) + w3*float32(c3[i])
	}
}

// addColumn adds w times the column to acc, four at a time in re-sliced
// windows the compiler can prove in bounds.
func addColumn(acc []float32, col []int8, w float32) {
	col = col[:len(acc)]
	for len(acc) >= 4 && len(col) >= 4 {
		a, c := acc[:4:4], col[:4:4]
		a[0] += w * float32(c[0])
		a[1] += w * float32(c[1])
		a[2] += w * float32(c[2])
		a[3] += w * float32(c[3])
		acc, col = acc[4:], col[4:]
	}
	for i := range acc {
		acc[i] += w * float32(col[i])
	}
}

// ScoreCodes is ScoreColumns over a block of four-bit codes: column j is
// cols[j*stride:], byte i of it holding row 2i's code in its low four bits
// and row 2i+1's in its high four, each a signed value (-8 to 7); acc has
// one entry per row (at most 2*stride; cols may start at a pair of rows
// inside a block, as the columns of a block do at its first). Times a row's
// scale, acc is that row's dot product with q as the codes have it.
func ScoreCodes(acc []float32, cols []byte, stride int, dims []int, q []float32) {
	w := (len(acc) + 1) / 2
	k := 0
	for ; k+4 <= len(dims); k += 4 {
		j0, j1, j2, j3 := dims[k], dims[k+1], dims[k+2], dims[k+3]
		addCodes4(acc, cols[j0*stride:j0*stride+w], cols[j1*stride:j1*stride+w],
			cols[j2*stride:j2*stride+w], cols[j3*stride:j3*stride+w], q[j0], q[j1], q[j2], q[j3])
	}
	for _, j := range dims[k:] {
		addCodes4(acc, cols[j*stride:j*stride+w], nil, nil, nil, q[j], 0, 0, 0)
	}
}

// addCodes4 adds up to four weighted columns of codes (a nil column, with
// weight 0, adds nothing), looking each code's product up in a table of
// the sixteen a column's weight makes (faster here than shifting, converting
// and multiplying each code); like addColumns4, one load and store of the
// accumulator per four products.
func addCodes4(acc []float32, c0, c1, c2, c3 []byte, w0, w1, w2, w3 float32) {
	var t0, t1, t2, t3 [16]float32
	for v := range 16 {
		x := float32(int8(byte(v)<<4) >> 4)
		t0[v], t1[v], t2[v], t3[v] = w0*x, w1*x, w2*x, w3*x
	}
	n := len(acc)
	pairs := n / 2
	if c1 == nil {
		// One column: the three others are read from c0 itself with tables
		// of zeros, so the loop has one shape.
		c1, c2, c3 = c0, c0, c0
	}
	c0, c1, c2, c3 = c0[:(n+1)/2], c1[:(n+1)/2], c2[:(n+1)/2], c3[:(n+1)/2]
	for i := 0; i < pairs; i++ {
		b0, b1, b2, b3 := c0[i], c1[i], c2[i], c3[i]
		a := acc[2*i : 2*i+2 : 2*i+2]
		a[0] += t0[b0&15] + t1[b1&15] + t2[b2&15] + t3[b3&15]
		a[1] += t0[b0>>4] + t1[b1>>4] + t2[b2>>4] + t3[b3>>4]
	}
	if n%2 == 1 {
		b0, b1, b2, b3 := c0[pairs], c1[pairs], c2[pairs], c3[pairs]
		acc[n-1] += t0[b0&15] + t1[b1&15] + t2[b2&15] + t3[b3&15]
	}
}

type hit struct {
	score float64
	id    string
}

// worse orders hits from the one to drop first: lower score, then larger id.
func worse(a, b hit) bool {
	if a.score != b.score {
		return a.score < b.score
	}
	return a.id > b.id
}

// topK keeps the best k hits seen, as a min-heap on worse.
type topK struct {
	k     int
	items []hit
}

func (t *topK) offer(score float64, id string, admit func(string) bool) {
	h := hit{score: score, id: id}
	if len(t.items) == t.k && !worse(t.items[0], h) {
		return
	}
	if admit != nil && !admit(id) {
		return
	}
	if len(t.items) < t.k {
		t.items = append(t.items, h)
		t.up(len(t.items) - 1)
		return
	}
	t.items[0] = h
	t.down(0)
}

func (t *topK) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !worse(t.items[i], t.items[p]) {
			return
		}
		t.items[i], t.items[p] = t.items[p], t.items[i]
		i = p
	}
}

func (t *topK) down(i int) {
	n := len(t.items)
	for {
		l, r, m := 2*i+1, 2*i+2, i
		if l < n && worse(t.items[l], t.items[m]) {
			m = l
		}
		if r < n && worse(t.items[r], t.items[m]) {
			m = r
		}
		if m == i {
			return
		}
		t.items[i], t.items[m] = t.items[m], t.items[i]
		i = m
	}
}

// normalized returns a unit-length copy of vec (all zeros stays all zeros).
func normalized(vec []float32) []float32 {
	var s float64
	for _, x := range vec {
		s += float64(x) * float64(x)
	}
	out := make([]float32, len(vec))
	if s == 0 || math.IsNaN(s) || math.IsInf(s, 0) {
		return out
	}
	inv := 1 / math.Sqrt(s)
	for i, x := range vec {
		out[i] = float32(float64(x) * inv)
	}
	return out
}

// quantize writes vec as int8 into dst (symmetric, largest magnitude -> 127)
// and returns the scale that maps the ints back.
func quantize(vec []float32, dst []int8) float32 {
	var maxAbs float32
	for _, x := range vec {
		maxAbs = max(maxAbs, float32(math.Abs(float64(x))))
	}
	if maxAbs == 0 {
		clear(dst)
		return 0
	}
	inv := 127 / maxAbs
	for i, x := range vec {
		dst[i] = int8(max(-127, min(127, math.Round(float64(x*inv)))))
	}
	return maxAbs / 127
}

// dotF32 walks both slices eight at a time with re-sliced windows,
// the shape the Go compiler can prove in bounds; without bounds checks the
// scalar loop runs about twice as fast.
func dotF32(a, b []float32) float32 {
	var s0, s1, s2, s3 float32
	for len(a) >= 8 && len(b) >= 8 {
		x, y := a[:8:8], b[:8:8]
		s0 += x[0]*y[0] + x[4]*y[4]
		s1 += x[1]*y[1] + x[5]*y[5]
		s2 += x[2]*y[2] + x[6]*y[6]
		s3 += x[3]*y[3] + x[7]*y[7]
		a, b = a[8:], b[8:]
	}
	for i := 0; i < len(a) && i < len(b); i++ {
		s0 += a[i] * b[i]
	}
	return s0 + s1 + s2 + s3
}
