package retrieval

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
)

func randomVectors(n, dim int, seed uint64) ([]string, [][]float32) {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	ids := make([]string, n)
	vecs := make([][]float32, n)
	for i := range n {
		ids[i] = fmt.Sprintf("id%06d", i)
		v := make([]float32, dim)
		for j := range v {
			v[j] = float32(r.NormFloat64())
		}
		vecs[i] = v
	}
	return ids, vecs
}

// bruteForce is the obvious exact search the index must agree with.
func bruteForce(ids []string, vecs [][]float32, q []float32, k int, admit func(string) bool) []Scored {
	var all []Scored
	for i, v := range vecs {
		if admit != nil && !admit(ids[i]) {
			continue
		}
		all = append(all, Scored{ID: ids[i], Score: cosine(q, v)})
	}
	slices.SortFunc(all, func(a, b Scored) int {
		if c := cmp.Compare(b.Score, a.Score); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return all[:min(k, len(all))]
}

func sameIDs(a, b []Scored) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].ID != b[i].ID {
			return false
		}
	}
	return true
}

func TestVectorSearchIsExact(t *testing.T) {
	for _, n := range []int{0, 1, 7, 5000, 9000} {
		for _, workers := range []int{1, 2, 3} {
			t.Run(fmt.Sprintf("n=%d/workers=%d", n, workers), func(t *testing.T) {
				ids, vecs := randomVectors(n, 32, uint64(n))
				idx := NewVectorIndex(32, WithWorkers(workers), WithCapacity(n/2))
				for i := range ids {
					idx.Upsert(ids[i], vecs[i])
				}
				_, qs := randomVectors(5, 32, 99)
				for _, q := range qs {
					got := idx.Search(context.Background(), q, 10, nil)
					want := bruteForce(ids, vecs, q, 10, nil)
					if !sameIDs(got, want) {
						t.Fatalf("got %v\nwant %v", got, want)
					}
					for i := range got {
						if d := got[i].Score - want[i].Score; d > 1e-5 || d < -1e-5 {
							t.Fatalf("score %v, want %v", got[i].Score, want[i].Score)
						}
					}
				}
			})
		}
	}
}

func TestVectorSearchAppliesFilterInside(t *testing.T) {
	ids, vecs := randomVectors(10000, 16, 7)
	idx := NewVectorIndex(16)
	for i := range ids {
		idx.Upsert(ids[i], vecs[i])
	}
	// admit one id in 97: a post-filter of the unfiltered top 10 would find almost none
	admit := func(id string) bool {
		return id[len(id)-2:] == "97" || strings.HasSuffix(id, "0") && id[len(id)-3] == '5'
	}
	q := vecs[123]
	got := idx.Search(context.Background(), q, 10, admit)
	want := bruteForce(ids, vecs, q, 10, admit)
	if len(got) != 10 || !sameIDs(got, want) {
		t.Fatalf("got %v\nwant %v", got, want)
	}
	for _, s := range got {
		if !admit(s.ID) {
			t.Fatalf("returned %s which the filter refuses", s.ID)
		}
	}
	if none := idx.Search(context.Background(), q, 10, func(string) bool { return false }); len(none) != 0 {
		t.Fatalf("a filter admitting nothing returned %v", none)
	}
}

func TestVectorUpsertReplacesAndRemoveForgets(t *testing.T) {
	idx := NewVectorIndex(3)
	idx.Upsert("a", []float32{1, 0, 0})
	idx.Upsert("b", []float32{0, 1, 0})
	idx.Upsert("c", []float32{0, 0, 1})
	idx.Upsert("a", []float32{0, 0, 5}) // a now points where c does
	if idx.Len() != 3 {
		t.Fatalf("Len = %d after replacing, want 3", idx.Len())
	}
	got := idx.Search(context.Background(), []float32{0, 0, 1}, 2, nil)
	if len(got) != 2 || got[0].ID != "a" || got[1].ID != "c" || got[0].Score < 0.9999 {
		t.Fatalf("got %v, want a and c (tie broken by id) at cosine 1", got)
	}
	idx.Remove("a")
	idx.Remove("a")
	idx.Remove("missing")
	if idx.Len() != 2 || idx.Has("a") {
		t.Fatalf("after remove: Len %d, Has(a) %v", idx.Len(), idx.Has("a"))
	}
	got = idx.Search(context.Background(), []float32{0, 0, 1}, 5, nil)
	if len(got) != 2 || got[0].ID != "c" {
		t.Fatalf("after remove got %v, want c first and no a", got)
	}
	idx.Remove("b")
	idx.Remove("c")
	if got := idx.Search(context.Background(), []float32{0, 0, 1}, 5, nil); len(got) != 0 {
		t.Fatalf("empty index returned %v", got)
	}
}

func TestVectorInt8AgreesWithFloat32(t *testing.T) {
	ids, vecs := randomVectors(20000, 64, 3)
	f := NewVectorIndex(64)
	q8 := NewVectorIndex(64, WithInt8())
	for i := range ids {
		f.Upsert(ids[i], vecs[i])
		q8.Upsert(ids[i], vecs[i])
	}
	_, qs := randomVectors(50, 64, 11)
	agree, total := 0, 0
	for _, q := range qs {
		a := f.Search(context.Background(), q, 10, nil)
		b := q8.Search(context.Background(), q, 10, nil)
		set := map[string]bool{}
		for _, s := range a {
			set[s.ID] = true
		}
		for _, s := range b {
			if set[s.ID] {
				agree++
			}
		}
		total += len(a)
		if d := a[0].Score - b[0].Score; d > 0.02 || d < -0.02 {
			t.Errorf("int8 score %v far from float32 %v", b[0].Score, a[0].Score)
		}
	}
	// random Gaussian vectors are the hard case (scores crowd together); real
	// embeddings agree more, see the eval package
	if ratio := float64(agree) / float64(total); ratio < 0.8 {
		t.Errorf("int8 recall@10 against float32 = %.3f, want >= 0.8", ratio)
	}
}

func TestVectorConcurrentUse(t *testing.T) {
	ids, vecs := randomVectors(6000, 16, 5)
	idx := NewVectorIndex(16, WithInt8())
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < len(ids); i += 4 {
				idx.Upsert(ids[i], vecs[i])
				if i%10 == 0 {
					idx.Remove(ids[i])
				}
			}
		}()
	}
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 50 {
				res := idx.Search(context.Background(), vecs[i], 5, func(string) bool { return true })
				for _, r := range res {
					if r.ID == "" {
						t.Error("empty id in results")
					}
				}
			}
		}()
	}
	wg.Wait()
	if want := len(ids) - len(ids)/10; idx.Len() != want {
		t.Errorf("Len = %d, want %d", idx.Len(), want)
	}
}

func TestVectorSearchCancelled(t *testing.T) {
	ids, vecs := randomVectors(100, 8, 1)
	idx := NewVectorIndex(8)
	for i := range ids {
		idx.Upsert(ids[i], vecs[i])
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if got := idx.Search(ctx, vecs[0], 3, nil); got != nil {
		t.Errorf("cancelled search returned %v", got)
	}
}

func TestVectorZeroQueryAndEdgeK(t *testing.T) {
	idx := NewVectorIndex(2)
	idx.Upsert("a", []float32{1, 0})
	if got := idx.Search(context.Background(), []float32{0, 0}, 3, nil); len(got) != 1 || got[0].Score != 0 {
		t.Errorf("zero query: got %v, want a at score 0", got)
	}
	if got := idx.Search(context.Background(), []float32{1, 0}, 0, nil); len(got) != 0 {
		t.Errorf("k=0 returned %v", got)
	}
}

func TestVectorLazyDimension(t *testing.T) {
	idx := NewVectorIndex(0)
	if got := idx.Search(context.Background(), []float32{1, 2, 3}, 3, nil); len(got) != 0 {
		t.Fatalf("empty lazy index returned %v", got)
	}
	idx.Upsert("a", []float32{1, 2, 3})
	if idx.Dim() != 3 {
		t.Fatalf("Dim = %d after the first vector, want 3", idx.Dim())
	}
	if got := idx.Search(context.Background(), []float32{1, 2, 3}, 3, nil); len(got) != 1 || got[0].ID != "a" {
		t.Fatalf("got %v", got)
	}
	defer func() {
		if recover() == nil {
			t.Errorf("a vector of another length did not panic")
		}
	}()
	idx.Upsert("b", []float32{1, 2})
}

func TestDotProducts(t *testing.T) {
	for _, n := range []int{0, 1, 7, 8, 9, 512, 515} {
		_, vs := randomVectors(2, n, uint64(n)+1)
		q8 := make([]int8, n)
		scale := quantize(vs[1], q8)
		var want, want8 float64
		for i := range n {
			want += float64(vs[0][i]) * float64(vs[1][i])
			want8 += float64(vs[0][i]) * float64(q8[i])
			if q8[i] < -127 {
				t.Fatalf("quantised to %d", q8[i])
			}
		}
		if got := float64(dotF32(vs[0], vs[1])); math.Abs(got-want) > 1e-3*max(1, math.Abs(want)) {
			t.Errorf("n=%d dotF32 = %v, want %v", n, got, want)
		}
		acc := make([]float32, n)
		for i := range acc {
			acc[i] = 1
		}
		addColumn(acc, q8, 0.5)
		for i, a := range acc {
			if want := 1 + 0.5*float32(q8[i]); a != want {
				t.Fatalf("n=%d addColumn[%d] = %v, want %v", n, i, a, want)
			}
		}
		if n > 0 && math.Abs(want8*float64(scale)-want) > 0.05*math.Sqrt(float64(n)) {
			t.Errorf("n=%d int8 product %v far from float %v", n, want8*float64(scale), want)
		}
	}
}

// The int8 index keeps its vectors in dimension-major blocks; searching it
// must find what a row-by-row scan of the same quantised vectors finds,
// across block boundaries, after removals that move the last vector into a
// hole and empty the last block, for sparse and dense queries.
func TestVectorInt8BlocksMatchARowScan(t *testing.T) {
	const dim = 48
	n := 2*blockRows + 123
	ids, vecs := randomVectors(n, dim, 7)
	v := NewVectorIndex(dim, WithInt8())
	for i, id := range ids {
		v.Upsert(id, vecs[i])
	}
	alive := map[string][]float32{}
	for i, id := range ids {
		alive[id] = vecs[i]
	}
	// Remove from the first block, the middle and the tail, until the last
	// block is empty and dropped.
	for i := 0; i < n; i += 97 {
		v.Remove(ids[i])
		delete(alive, ids[i])
	}
	for i := n - 1; len(alive) > 2*blockRows-5; i-- {
		if _, ok := alive[ids[i]]; ok {
			v.Remove(ids[i])
			delete(alive, ids[i])
		}
	}
	if v.Len() != len(alive) || len(v.i8) != (len(alive)+blockRows-1)/blockRows {
		t.Fatalf("Len %d in %d blocks, want %d", v.Len(), len(v.i8), len(alive))
	}
	_, queries := randomVectors(6, dim, 99)
	for qi, q := range queries {
		if qi%2 == 0 { // sparse: a few dimensions, like a short text's
			for j := range q {
				if j%7 != 0 {
					q[j] = 0
				}
			}
		}
		unit := normalized(q)
		var want []Scored
		for id, vec := range alive {
			row := make([]int8, dim)
			scale := quantize(normalized(vec), row)
			var dot float64
			for j := range row {
				dot += float64(unit[j]) * float64(row[j])
			}
			want = append(want, Scored{ID: id, Score: dot * float64(scale)})
		}
		slices.SortFunc(want, func(a, b Scored) int { return cmp.Compare(b.Score, a.Score) })
		got := v.Search(context.Background(), q, 10, nil)
		if len(got) != 10 {
			t.Fatalf("query %d: %d hits", qi, len(got))
		}
		for i := range got {
			if got[i].ID != want[i].ID || math.Abs(got[i].Score-want[i].Score) > 1e-5 {
				t.Fatalf("query %d hit %d: got %s %.6f, want %s %.6f", qi, i, got[i].ID, got[i].Score, want[i].ID, want[i].Score)
			}
		}
	}
}
