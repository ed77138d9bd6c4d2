package bolt

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	bbolt "go.etcd.io/bbolt"

	"mnemo/contract"
	"mnemo/engine/bolt/internal/vecblock"
	"mnemo/engine/retrieval"
)

// blockKinds counts a store's vector blocks of each kind (the store
// closed).
func blockKinds(t *testing.T, dir string) map[vecblock.Kind]int {
	t.Helper()
	db, err := bbolt.Open(dir+"/mnemo.db", 0o600, &bbolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	kinds := map[vecblock.Kind]int{}
	_ = db.View(func(tx *bbolt.Tx) error {
		return tx.Bucket(bucketVecBlocks).ForEach(func(_, v []byte) error {
			if blk, ok := vecblock.Parse(v); ok {
				kinds[blk.Kind]++
			}
			return nil
		})
	})
	return kinds
}

// toCodes4 rewrites the vector block numbered num of the closed store in
// dir as four-bit codes, as stores of schema 9 wrote them before
// five-level codes.
func toCodes4(t *testing.T, dir string, num uint32) {
	t.Helper()
	rewriteStore(t, dir, func(tx *bbolt.Tx) error {
		b := tx.Bucket(bucketVecBlocks)
		blk, ok := vecblock.Parse(b.Get(vecblock.Key(num)))
		if !ok || blk.Kind != vecblock.Int8 {
			return fmt.Errorf("block %d: %v, kind %d; want an int8 block", num, ok, blk.Kind)
		}
		return b.Put(vecblock.Key(num), vecblock.New(blk.N, blk.Dim, vecblock.Codes4, blk, true))
	})
}

// TestVectorSearchOverCodes: a store that grows past vectorCodesAt keeps its
// vectors as five-level codes, the blocks it wrote as int8 before coded
// when its vectors load, and a block of four-bit codes (what the store
// wrote before five-level ones) kept as it is; a vector search over the
// codes answers as an exact int8 scan of its best hits. Each hit's score
// is the one an int8 scan of its record's vector gives (the text embedded,
// quantized as a stored row is), the hits come in that order, and they
// hold at least 0.98 of the exact int8 top 10 of the whole store over the
// queries, with and without a filter, and with the scan cut to a query's
// largest dimensions.
func TestVectorSearchOverCodes(t *testing.T) {
	ctx := context.Background()
	r := rand.New(rand.NewPCG(29, 4))
	sentence := zipfSentences(r)
	var items []contract.StoreItem
	for range 2500 {
		items = append(items, contract.Document(sentence(15+r.IntN(25)), contract.MemoryMeta{}))
	}
	dir := writtenVectorStore(t, items)
	if kinds := blockKinds(t, dir); len(kinds) != 1 || kinds[vecblock.Int8] != 3 {
		t.Fatalf("a store of 2,500 records under vectorCodesAt: blocks of each kind %v; want 3 of int8", kinds)
	}
	toCodes4(t, dir, 1)
	e := reopenedVectorStore(t, dir, Options{vectorCodesAt: 1000})

	// The exact reference: every record's vector embedded now, as int8.
	e.mu.RLock()
	dim := e.vec.store.dim
	type ref struct {
		q     []int8
		scale float32
	}
	refs := map[uint32]ref{}
	var ords []uint32
	var texts []string
	for ord, alive := range e.t.alive {
		if alive {
			ords = append(ords, uint32(ord))
		}
	}
	err := e.db.View(func(tx *bbolt.Tx) error {
		for _, ord := range ords {
			s, err := e.codec.decode(e.records(tx).Get(e.t.idOf(ord)), partHit, parseNS)
			if err != nil {
				return err
			}
			texts = append(texts, s.text)
		}
		return nil
	})
	e.mu.RUnlock()
	if err != nil {
		t.Fatal(err)
	}
	vecs, err := e.embedder.Embed(ctx, texts)
	if err != nil {
		t.Fatal(err)
	}
	for i, ord := range ords {
		q := make([]int8, dim)
		refs[ord] = ref{q, retrieval.QuantizeUnit(vecs[i], q)}
	}
	exactScore := func(unit []float32, dims []int, ord uint32) float64 {
		var acc [1]float32
		retrieval.ScoreColumns(acc[:], refs[ord].q, 1, dims, unit)
		return float64(acc[0] * refs[ord].scale)
	}

	cutScan := defaultVecScan()
	cutScan.rows = 1
	fullScan := vecScan{rows: math.MaxInt, dims: math.MaxInt}
	even := func(ord uint32) bool { return ord%2 == 0 }
	shared, total, rescored := 0, 0, 0
	byMode := map[string][2]int{}
	e.mu.RLock()
	defer e.mu.RUnlock()
	for range 40 {
		text := sentence(8 + r.IntN(8))
		vs, err := e.embedder.Embed(ctx, []string{text})
		if err != nil {
			t.Fatal(err)
		}
		unit := retrieval.Normalized(vs[0])
		dims := retrieval.QueryDims(unit)
		for _, how := range []vecScan{fullScan, cutScan} {
			for _, admit := range []func(uint32) bool{nil, even} {
				got, _, err := e.scanVectors(ctx, vs[0], 10, admit, how)
				if err != nil {
					t.Fatal(err)
				}
				got = got[:min(10, len(got))]
				for i, h := range got {
					if want := exactScore(unit, dims, h.ord); h.score != want {
						t.Fatalf("%q: hit %d (ordinal %d) scored %v, an int8 scan of its vector scores %v", text, i, h.ord, h.score, want)
					}
					if admit != nil && !admit(h.ord) {
						t.Fatalf("%q: hit %d is refused by the filter", text, h.ord)
					}
					rescored++
				}
				if !slices.IsSortedFunc(got, func(a, b vecHit) int {
					if c := cmp.Compare(b.score, a.score); c != 0 {
						return c
					}
					return cmp.Compare(a.id, b.id)
				}) {
					t.Fatalf("%q: the hits are not in the order of their scores", text)
				}
				var exact []vecHit
				for _, ord := range ords {
					if admit == nil || admit(ord) {
						exact = append(exact, vecHit{score: exactScore(unit, dims, ord), ord: ord, id: e.t.idOf(ord)})
					}
				}
				sortHits(exact)
				mode := "full scan"
				if how.rows == 1 {
					mode = "cut scan"
				}
				if admit != nil {
					mode += "+filter"
				}
				m := byMode[mode]
				for _, x := range exact[:10] {
					for _, h := range got {
						if h.ord == x.ord {
							shared++
							m[0]++
							break
						}
					}
					total++
					m[1]++
				}
				byMode[mode] = m
			}
		}
	}
	for mode, m := range byMode {
		if recall := float64(m[0]) / float64(m[1]); recall < 0.98 {
			t.Errorf("%s: recall@10 %.3f, want at least 0.98", mode, recall)
		}
	}
	recall := float64(shared) / float64(total)
	t.Logf("recall@10 against the exact int8 scan: %.3f (%d of %d); %d hits scored exactly", recall, shared, total, rescored)
	if recall < 0.98 {
		t.Errorf("a search over codes found %.3f of the exact top 10, want at least 0.98", recall)
	}
	if err := e.db.View(func(tx *bbolt.Tx) error {
		return tx.Bucket(bucketVecBlocks).ForEach(func(k, v []byte) error {
			want := vecblock.Fives
			if string(k) == string(vecblock.Key(1)) {
				want = vecblock.Codes4
			}
			if blk, ok := vecblock.Parse(v); !ok || blk.Kind != want {
				t.Errorf("block %x is of kind %d after the vectors loaded, want %d", k, blk.Kind, want)
			}
			return nil
		})
	}); err != nil {
		t.Fatal(err)
	}
}
