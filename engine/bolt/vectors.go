package bolt

import (
	"cmp"
	"context"
	"encoding/binary"
	"math"
	"runtime"
	"slices"
	"sync"

	bbolt "go.etcd.io/bbolt"

	"mnemo/contract"
	"mnemo/engine/bolt/internal/vecblock"
	"mnemo/engine/retrieval"
)

// Vectors live in bbolt in blocks (package vecblock has the layout). New
// ones wait in memory (pending) and are written in batches, a few blocks per
// commit, instead of rewriting a block per write; a crash loses only vectors
// that embedMissing computes again at the next open. A forget clears its
// records' rows in its own transaction, so no vector of a forgotten record
// outlives the forget on disk.

var (
	bucketVecBlocks = vecblock.Bucket
	bucketVectors   = vecblock.OldBucket
)

const vecBlockRows = vecblock.Rows

// pendingRow is a vector not yet written, or (tag 0) a row to clear.
type pendingRow struct {
	tag   uint32
	scale float32
	q     []int8
	gen   uint64 // tells a row replaced since it was written from the one written
}

// vectorStore is what the engine knows of the stored vectors: which
// ordinals hold one and of which model, and the rows not yet written. It is
// guarded by the engine's mu (read for searches, write for changes).
type vectorStore struct {
	dim int // 0 until the first vector of an embedder that learns its length
	// tag is the model in use; prev the one before it, whose vectors keep
	// answering while the records are embedded again (the learned
	// generations share one space).
	tag, prev uint32
	// rowTag is each ordinal's model tag (0: no vector); only live records
	// hold one.
	rowTag []uint32
	// current counts the ordinals whose vector is of the model in use.
	current int
	pending map[uint32]pendingRow
	gen     uint64
	// codesAt is how many records make the store write its blocks as codes
	// (0: never; only an embedder a search can ask again for a record's
	// vector sets it), live how many it holds (the table's count: a bulk
	// load's records are counted before they are embedded, so a large
	// import writes no int8 block to code later).
	codesAt int
	live    func() int
}

// vectorCodesAt is how many records make a store keep its vectors as
// five-level codes (vecblock.Fives), a third of the bytes of int8: at 1M
// records 0.26 GB instead of 0.78. A search scans the codes and scores its
// best hits again exactly, embedding their texts (rescoreOf of them, about
// 130 µs a text), which a small store, whose vector and hybrid budgets are
// four times tighter, does not pay for.
const vectorCodesAt = 250_000

// rescoreOf is how many of a search's best hits by codes of a kind are
// scored exactly (at least k). Over 100,000 learned vectors
// (TestEvalVectorCodes100k), for the evaluation's two query sets: the best
// 128 by five-level codes held 0.995 and 1.000 of the exact int8 top 10
// (100: 0.992 and 1.000; 64: 0.978 and 1.000); the best 64 by four-bit
// codes, which stores wrote before, 0.993 and 1.000.
func rescoreOf(kind vecblock.Kind) int {
	switch kind {
	case vecblock.Fives:
		return 128
	case vecblock.Codes4:
		return 64
	}
	return 0
}

// codesOn tells whether blocks written now are written as codes.
func (v *vectorStore) codesOn() bool { return v.codesAt > 0 && v.live != nil && v.live() >= v.codesAt }

func newVectorStore(dim int) *vectorStore {
	return &vectorStore{dim: dim, pending: map[uint32]pendingRow{}}
}

// use puts a model in use (a no-op for the one in use).
func (v *vectorStore) use(model string) {
	t := vecblock.ModelTag(model)
	if t == v.tag {
		return
	}
	v.prev, v.tag = v.tag, t
	v.current = 0
	for _, x := range v.rowTag {
		if x == t {
			v.current++
		}
	}
}

func (v *vectorStore) answers(tag uint32) bool { return tag != 0 && (tag == v.tag || tag == v.prev) }

// has tells whether ord holds a vector of the model in use.
func (v *vectorStore) has(ord uint32) bool { return v.holds(ord, v.tag) }

// holds tells whether ord holds a vector of the model whose tag is tag.
func (v *vectorStore) holds(ord, tag uint32) bool {
	return int(ord) < len(v.rowTag) && v.rowTag[ord] == tag && tag != 0
}

func (v *vectorStore) setTag(ord, tag uint32) {
	if int(ord) >= len(v.rowTag) {
		if tag == 0 {
			return
		}
		v.rowTag = append(v.rowTag, make([]uint32, int(ord)+1-len(v.rowTag))...)
	}
	if old := v.rowTag[ord]; old != 0 && old == v.tag {
		v.current--
	}
	if tag != 0 && tag == v.tag {
		v.current++
	}
	v.rowTag[ord] = tag
}

// upsert sets ord's vector (embedded with model); it is written later.
func (v *vectorStore) upsert(ord uint32, model string, vec []float32) {
	if v.dim == 0 {
		v.dim = len(vec)
	}
	v.use(model)
	q := make([]int8, v.dim)
	scale := retrieval.QuantizeUnit(vec, q)
	v.gen++
	v.pending[ord] = pendingRow{tag: v.tag, scale: scale, q: q, gen: v.gen}
	v.setTag(ord, v.tag)
}

// writeBlocks writes pending rows into their blocks within tx, clearing the
// rows of clears (forgotten records): every pending block with all, else
// only the blocks clears fall in. The memory is updated once tx commits
// (the caller holds the engine's mu until then).
func (v *vectorStore) writeBlocks(tx *bbolt.Tx, clears []uint32, all bool) error {
	if len(v.pending) == 0 && len(clears) == 0 {
		return nil
	}
	rows := make(map[uint32]map[uint32]pendingRow)
	add := func(ord uint32, row pendingRow) {
		num := ord / vecBlockRows
		if rows[num] == nil {
			rows[num] = map[uint32]pendingRow{}
		}
		rows[num][ord] = row
	}
	for _, ord := range clears {
		add(ord, pendingRow{})
	}
	for ord, row := range v.pending {
		if all || rows[ord/vecBlockRows] != nil {
			if _, cleared := rows[ord/vecBlockRows][ord]; !cleared || row.tag == 0 {
				add(ord, row)
			}
		}
	}
	dim := v.dim
	b := tx.Bucket(bucketVecBlocks)
	for num, in := range rows {
		key := vecblock.Key(num)
		old, keep := vecblock.Parse(b.Get(key))
		keep = keep && old.Dim == dim
		n := 0
		if keep {
			n = old.N
		}
		for ord, row := range in {
			if r := int(ord%vecBlockRows) + 1; r > n && row.tag != 0 {
				n = r
			}
		}
		if n == 0 || dim == 0 {
			// Nothing to hold: rows cleared in a block never written.
			continue
		}
		// A block of codes stays one of its kind; an int8 block is coded
		// once the store is large enough.
		kind := vecblock.Int8
		switch {
		case keep && old.Kind.Coded():
			kind = old.Kind
		case v.codesOn():
			kind = vecblock.Fives
		}
		nb := vecblock.New(n, dim, kind, old, keep)
		for ord, row := range in {
			if r := int(ord % vecBlockRows); r < n {
				vecblock.SetRow(nb, n, dim, r, vecblock.Row{Tag: row.tag, Scale: row.scale, Q: row.q})
			}
		}
		var err error
		if vecblock.Holds(nb, n) {
			err = b.Put(key, nb)
		} else {
			err = b.Delete(key)
		}
		if err != nil {
			return err
		}
	}
	tx.OnCommit(func() {
		for _, in := range rows {
			for ord, row := range in {
				if cur, ok := v.pending[ord]; ok && cur.gen == row.gen {
					delete(v.pending, ord)
				}
			}
		}
		for _, ord := range clears {
			delete(v.pending, ord)
			v.setTag(ord, 0)
		}
	})
	return nil
}

// codeBlocks rewrites the int8 blocks of a store large enough for codes as
// blocks of codes, a few a transaction: the blocks written before the store
// grew past vectorCodesAt, or by a release before codes. What is in memory
// (which ordinals hold a vector of which model) does not change, so it takes
// no lock of the engine's: bbolt orders it with writeBlocks, which keeps a
// block of codes one.
func (e *Engine) codeBlocks() error {
	e.mu.RLock()
	on, dim := e.vec.store.codesOn(), e.vec.store.dim
	e.mu.RUnlock()
	if !on || e.opts.ReadOnly {
		return nil
	}
	var after []byte
	coded := 0
	for {
		select {
		case <-e.closing:
			return nil
		default:
		}
		type put struct{ key, val []byte }
		var puts []put
		done := false
		err := e.db.Update(func(tx *bbolt.Tx) error {
			b := tx.Bucket(bucketVecBlocks)
			c := b.Cursor()
			k, val := c.First()
			if after != nil {
				k, val = c.Seek(after)
				if k != nil && string(k) == string(after) {
					k, val = c.Next()
				}
			}
			for ; k != nil && len(puts) < 16; k, val = c.Next() {
				after = append(after[:0], k...)
				if blk, ok := vecblock.Parse(val); ok && !blk.Kind.Coded() && blk.Dim == dim {
					puts = append(puts, put{slices.Clone(k), vecblock.New(blk.N, dim, vecblock.Fives, blk, true)})
				}
			}
			done = k == nil
			for _, p := range puts {
				if err := b.Put(p.key, p.val); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return contract.EngineErr("code the vector blocks: %w", err)
		}
		coded += len(puts)
		if done {
			if coded > 0 {
				e.log.Info("vector blocks coded", "blocks", coded)
			}
			return nil
		}
	}
}

// storedVectorRows lists the ordinals whose stored rows hold a vector.
func (e *Engine) storedVectorRows(tx *bbolt.Tx) []uint32 {
	var out []uint32
	c := tx.Bucket(bucketVecBlocks).Cursor()
	for k, val := c.First(); k != nil; k, val = c.Next() {
		blk, ok := vecblock.Parse(val)
		if !ok || len(k) != 4 {
			continue
		}
		first := binary.BigEndian.Uint32(k) * vecBlockRows
		for r := range blk.N {
			if blk.Tag(r) != 0 {
				out = append(out, first+uint32(r))
			}
		}
	}
	return out
}

// vecHit is a candidate of a vector search; id is read only for the hits
// that enter a top k.
type vecHit struct {
	score float64
	ord   uint32
	id    string
}

// vecTop keeps the best k hits seen, as a min-heap: lower score first, then
// the larger id (ties go to the smaller id, as everywhere).
type vecTop struct {
	k     int
	items []vecHit
	idOf  func(uint32) string
	admit func(uint32) bool
}

func vecWorse(a, b vecHit) bool {
	if a.score != b.score {
		return a.score < b.score
	}
	return a.id > b.id
}

// below tells whether score cannot enter the top (it is full and its worst
// scores higher).
func (t *vecTop) below(score float64) bool {
	return len(t.items) == t.k && score < t.items[0].score
}

func (t *vecTop) offer(score float64, ord uint32) {
	if t.below(score) {
		return
	}
	h := vecHit{score: score, ord: ord, id: t.idOf(ord)}
	if len(t.items) == t.k && !vecWorse(t.items[0], h) {
		return
	}
	if t.admit != nil && !t.admit(ord) {
		return
	}
	if len(t.items) < t.k {
		t.items = append(t.items, h)
		for i := len(t.items) - 1; i > 0; {
			p := (i - 1) / 2
			if !vecWorse(t.items[i], t.items[p]) {
				break
			}
			t.items[i], t.items[p] = t.items[p], t.items[i]
			i = p
		}
		return
	}
	t.items[0] = h
	for i := 0; ; {
		l, r, m := 2*i+1, 2*i+2, i
		if l < len(t.items) && vecWorse(t.items[l], t.items[m]) {
			m = l
		}
		if r < len(t.items) && vecWorse(t.items[r], t.items[m]) {
			m = r
		}
		if m == i {
			break
		}
		t.items[i], t.items[m] = t.items[m], t.items[i]
		i = m
	}
}

// admitsAny tells whether any live row of the n from first passes admit.
func admitsAny(first uint32, n int, isLive, admit func(ord uint32) bool) bool {
	for r := range n {
		if ord := first + uint32(r); isLive(ord) && admit(ord) {
			return true
		}
	}
	return false
}

// vecParallelRows is the number of stored rows below which one goroutine
// scans: starting workers costs more than the scan.
const vecParallelRows = 4096

// vecScan is how a vector search scans a large store: a query with more
// than dims dimensions, over at least rows stored rows, is scanned on its
// dims largest dimensions only, and the best rescore hits of that scan (or
// four times k, if more) are scored again on every dimension, exactly as a
// full scan scores them, for the final ranking. Over 100,000 learned vectors
// (TestEvalVectorCodes100k, queries of 112-120 dimensions) the top 10 found
// this way held 0.999 and 1.000 of the full scan's on the evaluation's two
// query sets; on the 1M bench store, all of it for the bench's 41 queries,
// in 30 ms at p50 against 42 (docs/retrieval.md).
type vecScan struct {
	rows, dims, rescore int
}

// defaultVecScan: full scans up to 100,000 rows, where one takes a few ms.
func defaultVecScan() vecScan { return vecScan{rows: 100_000, dims: 48, rescore: 400} }

// searchVectors returns the k records whose vectors are most similar to q
// (cosine), best first, ties by id; admit, when set, filters inside the
// search. Every vector is scored; on a large store a long query first on
// its largest dimensions only (vecScan), and the hits it keeps on all of
// them. The caller holds the engine's mu (read). A cancelled context ends
// it with the context's error.
func (e *Engine) searchVectors(ctx context.Context, q []float32, k int, admit func(ord uint32) bool) ([]vecHit, error) {
	hits, _, err := e.scanVectors(ctx, q, k, admit, e.vecScan)
	return hits[:min(len(hits), k)], err
}

// scanVectors is searchVectors with its scan settings, before the cut to k:
// every hit it kept, in order; it also answers whether the scan was cut to
// the query's largest dimensions (then the hits are those it rescored).
func (e *Engine) scanVectors(ctx context.Context, q []float32, k int, admit func(ord uint32) bool, how vecScan) ([]vecHit, bool, error) {
	v := e.vec.store
	if v.dim == 0 || k <= 0 || len(q) != v.dim {
		return nil, false, nil
	}
	unit := retrieval.Normalized(q)
	dims := retrieval.QueryDims(unit)
	var cut bool
	alive := e.t.alive
	isLive := func(ord uint32) bool { return int(ord) < len(alive) && alive[ord] }
	pendingIn := map[uint32][]uint32{}
	for ord := range v.pending {
		pendingIn[ord/vecBlockRows] = append(pendingIn[ord/vecBlockRows], ord)
	}
	var out []vecHit
	err := e.db.View(func(tx *bbolt.Tx) error {
		type stored struct {
			num uint32
			blk vecblock.Block
		}
		var blocks []stored
		rows := 0
		var fives *retrieval.FiveTables
		c := tx.Bucket(bucketVecBlocks).Cursor()
		for key, val := c.First(); key != nil; key, val = c.Next() {
			if blk, ok := vecblock.Parse(val); ok && blk.Dim == v.dim && len(key) == 4 {
				blocks = append(blocks, stored{binary.BigEndian.Uint32(key), blk})
				rows += blk.N
				if blk.Kind == vecblock.Fives && fives == nil {
					fives = retrieval.NewFiveTables(unit, dims)
				}
			}
		}
		workers := 1
		if rows >= vecParallelRows {
			workers = min(runtime.GOMAXPROCS(0), len(blocks))
		}
		scanDims := dims
		if rows >= how.rows && len(dims) > how.dims {
			cut = true
			scanDims = retrieval.LargestDims(unit, dims, how.dims)
		}
		// Each kind of block keeps its own best rows: codes of a kind score
		// on their own scale (five-level codes fit a step to the row,
		// four-bit ones take its largest value), so one list for every kind
		// would fill with the kind that scores higher, not with the best
		// rows. A kind of codes keeps its best by the codes, to score them
		// exactly.
		keepOf := func(kind vecblock.Kind) int {
			keep := max(k, rescoreOf(kind))
			if cut {
				keep = max(how.rescore, 4*k, keep)
			}
			return keep
		}
		tops := make([][vecblock.NumKinds]vecTop, max(workers, 1))
		for w := range tops {
			for kind := range vecblock.NumKinds {
				tops[w][kind] = vecTop{k: keepOf(vecblock.Kind(kind)), idOf: e.t.idOf, admit: admit}
			}
		}
		scan := func(w int) {
			acc := make([]float32, vecBlockRows)
			skip := make([]bool, vecBlockRows)
			for i := w; i < len(blocks); i += len(tops) {
				if ctx.Err() != nil {
					return
				}
				s := blocks[i]
				top := &tops[w][s.blk.Kind]
				first := s.num * vecBlockRows
				if admit != nil && !admitsAny(first, s.blk.N, isLive, admit) {
					// A filter that admits few records (a conversation's
					// turns, one agent's notes) skips the blocks that hold
					// none of them: checking a row costs far less than
					// scoring it.
					continue
				}
				a := acc[:s.blk.N]
				clear(a)
				scoreBlock(a, s.blk, 0, scanDims, unit, fives)
				sk := skip[:s.blk.N]
				clear(sk)
				for _, ord := range pendingIn[s.num] {
					if r := int(ord - first); r < len(sk) {
						sk[r] = true
					}
				}
				for r, sum := range a {
					score := float64(sum * s.blk.Scale(r))
					if top.below(score) {
						continue // most rows: cheaper than the checks below
					}
					ord := first + uint32(r)
					if sk[r] || !v.answers(s.blk.Tag(r)) || !isLive(ord) {
						continue
					}
					top.offer(score, ord)
				}
			}
		}
		if len(tops) == 1 {
			scan(0)
		} else {
			var wg sync.WaitGroup
			for w := range tops {
				wg.Add(1)
				go func() {
					defer wg.Done()
					scan(w)
				}()
			}
			wg.Wait()
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		// The rows not yet written (the only copy of a new vector, and
		// newer than a stored row of the same ordinal): exact, as int8.
		for ord, row := range v.pending {
			if !v.answers(row.tag) || !isLive(ord) {
				continue
			}
			var sum float32
			for _, j := range dims {
				sum += unit[j] * float32(row.q[j])
			}
			tops[0][vecblock.Int8].offer(float64(sum*row.scale), ord)
		}
		byNum := make(map[uint32]vecblock.Block, len(blocks))
		for _, s := range blocks {
			byNum[s.num] = s.blk
		}
		for kind := range vecblock.NumKinds {
			var hits []vecHit
			for w := range tops {
				hits = append(hits, tops[w][kind].items...)
			}
			if cut {
				// The hits kept, scored on every dimension as a full scan
				// scores them (the same sums in the same order).
				for i := range hits {
					h := &hits[i]
					if _, ok := v.pending[h.ord]; ok {
						continue // scored on every dimension above
					}
					blk, r := byNum[h.ord/vecBlockRows], int(h.ord%vecBlockRows)
					h.score = scoreRow(blk, r, dims, unit, fives)
				}
			}
			sortHits(hits)
			if vecblock.Kind(kind).Coded() && len(hits) > 0 {
				// The best by their codes are scored again from their
				// vectors embedded anew: as an int8 scan of those vectors
				// scores them, which is what the store held before codes.
				hits = hits[:min(len(hits), max(rescoreOf(vecblock.Kind(kind)), k))]
				all := make([]int, len(hits))
				for i := range all {
					all[i] = i
				}
				if err := e.rescoreCoded(ctx, tx, hits, all, dims, unit); err != nil {
					return err
				}
			}
			out = append(out, hits...)
		}
		sortHits(out)
		return nil
	})
	if err != nil {
		return nil, false, err
	}
	return out, cut, nil
}

// sortHits orders hits best first, ties by id.
func sortHits(hits []vecHit) {
	slices.SortFunc(hits, func(a, b vecHit) int {
		if c := cmp.Compare(b.score, a.score); c != 0 {
			return c
		}
		return cmp.Compare(a.id, b.id)
	})
}

// scoreBlock adds a block's rows' products with q on dims into acc (one
// entry per row from row first: for codes, the first of the rows that
// share a byte). fives holds the tables of q's dimensions when the block
// is of five-level codes.
func scoreBlock(acc []float32, blk vecblock.Block, first int, dims []int, q []float32, fives *retrieval.FiveTables) {
	switch blk.Kind {
	case vecblock.Codes4:
		retrieval.ScoreCodes(acc, blk.CodeCols()[first/2:], blk.Stride(), dims, q)
	case vecblock.Fives:
		retrieval.ScoreFives(acc, blk.CodeCols()[first/3:], blk.Stride(), dims, fives)
	default:
		retrieval.ScoreColumns(acc, blk.Cols()[first:], blk.N, dims, q)
	}
}

// scoreRow is row r's score on dims, as a scan of its block scores it: the
// rows that share its bytes are scored with it, in the same sums.
func scoreRow(blk vecblock.Block, r int, dims []int, q []float32, fives *retrieval.FiveTables) float64 {
	var acc [3]float32
	per := 1
	switch blk.Kind {
	case vecblock.Codes4:
		per = 2
	case vecblock.Fives:
		per = 3
	}
	first := r - r%per
	scoreBlock(acc[:min(per, blk.N-first)], blk, first, dims, q, fives)
	return float64(acc[r-first] * blk.Scale(r))
}

// rescoreCoded scores the hits at the indexes coded (rows of blocks of
// codes) exactly: each record's text embedded again with the model in use,
// quantized as a stored int8 row is, and scored on dims as an int8 scan
// scores it. The embedding runs on every core. A hit whose record cannot
// be read scores -inf (it sorts last).
func (e *Engine) rescoreCoded(ctx context.Context, tx *bbolt.Tx, hits []vecHit, coded []int, dims []int, q []float32) error {
	recs := e.records(tx)
	texts := make([]string, len(coded))
	gone := make([]bool, len(coded))
	for n, i := range coded {
		raw := recs.Get(hits[i].id)
		if gone[n] = raw == nil; gone[n] {
			continue
		}
		s, err := e.codec.decode(raw, partHit, parseNS)
		if err != nil {
			return contract.AsError(err)
		}
		texts[n] = s.text
	}
	vecs := make([][]float32, len(texts))
	workers := min(runtime.GOMAXPROCS(0), max(1, len(texts)/8))
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		lo, hi := w*len(texts)/workers, (w+1)*len(texts)/workers
		wg.Go(func() {
			got, err := e.embedder.Embed(ctx, texts[lo:hi])
			if err == nil && len(got) != hi-lo {
				err = contract.EngineErr("the embedder returned %d vectors for %d texts", len(got), hi-lo)
			}
			errs[w] = err
			if err == nil {
				copy(vecs[lo:hi], got)
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	row := make([]int8, len(q))
	var acc [1]float32
	for n, i := range coded {
		if gone[n] || len(vecs[n]) != len(q) {
			hits[i].score = math.Inf(-1)
			continue
		}
		scale := retrieval.QuantizeUnit(vecs[n], row)
		acc[0] = 0
		retrieval.ScoreColumns(acc[:], row, 1, dims, q)
		hits[i].score = float64(acc[0] * scale)
	}
	return nil
}
