package bolt

import (
	"context"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"mnemo/contract"
	"mnemo/engine/retrieval"
)

// TestVectorScanOnLargestDimensions: a scan cut to a long query's largest
// dimensions ranks the hits it keeps exactly as a full scan of those records
// alone ranks them (same records, order and scores), with and without a
// filter, and finds what the full scan of the whole store finds (recall@10
// of at least 0.98 over the queries). The store is small, so the cut is
// forced (the engine cuts from 100,000 stored rows).
func TestVectorScanOnLargestDimensions(t *testing.T) {
	ctx := context.Background()
	r := rand.New(rand.NewPCG(29, 1))
	sentence := zipfSentences(r)
	var items []contract.StoreItem
	for range 3000 {
		items = append(items, contract.Document(sentence(15+r.IntN(25)), contract.MemoryMeta{}))
	}
	e := storeInVectorBlocks(t, items)

	cutScan := defaultVecScan()
	cutScan.rows = 1
	fullScan := vecScan{rows: math.MaxInt, dims: math.MaxInt}
	even := func(ord uint32) bool { return ord%2 == 0 }
	var cuts, shared, total int
	for range 30 {
		q := sentence(8 + r.IntN(8))
		vs, err := e.embedder.Embed(ctx, []string{q})
		if err != nil {
			t.Fatal(err)
		}
		qv := vs[0]
		if len(retrieval.QueryDims(qv)) <= cutScan.dims {
			continue
		}
		e.mu.RLock()
		for _, admit := range []func(uint32) bool{nil, even} {
			got, cut, err := e.scanVectors(ctx, qv, 10, admit, cutScan)
			if err != nil || !cut {
				e.mu.RUnlock()
				t.Fatalf("%q: cut %v, %v", q, cut, err)
			}
			kept := map[uint32]bool{}
			for _, h := range got {
				kept[h.ord] = true
			}
			onList, _, err := e.scanVectors(ctx, qv, len(got), func(ord uint32) bool { return kept[ord] }, fullScan)
			if err != nil {
				e.mu.RUnlock()
				t.Fatal(err)
			}
			if len(onList) != len(got) {
				e.mu.RUnlock()
				t.Fatalf("%q: the cut scan kept %d hits, the full scan of them found %d", q, len(got), len(onList))
			}
			for i := range got {
				if got[i].ord != onList[i].ord || got[i].score != onList[i].score {
					e.mu.RUnlock()
					t.Fatalf("%q: hit %d of the cut scan is %d (%v), the full scan of its hits ranks %d (%v) there", q, i, got[i].ord, got[i].score, onList[i].ord, onList[i].score)
				}
			}
			if admit != nil {
				for _, h := range got {
					if !admit(h.ord) {
						e.mu.RUnlock()
						t.Fatalf("%q: the cut scan kept %d, which its filter refuses", q, h.ord)
					}
				}
			}
			exact, _, err := e.scanVectors(ctx, qv, 10, admit, fullScan)
			if err != nil {
				e.mu.RUnlock()
				t.Fatal(err)
			}
			for _, x := range exact[:min(10, len(exact))] {
				for _, h := range got[:min(10, len(got))] {
					if h.ord == x.ord {
						shared++
						break
					}
				}
				total++
			}
		}
		e.mu.RUnlock()
		cuts++
	}
	if cuts < 10 {
		t.Fatalf("only %d of 30 queries had more than %d dimensions", cuts, cutScan.dims)
	}
	recall := float64(shared) / float64(total)
	t.Logf("%d queries cut, recall@10 against the full scan %.3f", cuts, recall)
	if recall < 0.98 {
		t.Errorf("the cut scan found %.3f of the full scan's top 10 over %d queries, want at least 0.98", recall, cuts)
	}
}

// zipfSentences makes sentences of n words of a made-up language of 400
// words, the low-numbered ones common (Zipf-like), from r.
func zipfSentences(r *rand.Rand) func(n int) string {
	syllables := []string{"ka", "lo", "mir", "tes", "van", "du", "pel", "or", "sim", "ra", "ne", "gul"}
	words := make([]string, 400)
	for i := range words {
		var b strings.Builder
		for range 2 + r.IntN(3) {
			b.WriteString(syllables[r.IntN(len(syllables))])
		}
		words[i] = b.String()
	}
	word := func() string { return words[int(float64(len(words))*math.Pow(r.Float64(), 2.5))] }
	return func(n int) string {
		ws := make([]string, n)
		for i := range ws {
			ws[i] = word()
		}
		return strings.Join(ws, " ")
	}
}

// storeInVectorBlocks stores items in a new store, embeds them and opens the
// store again, so every vector is in its block, where a scan reads it in
// place (new ones wait in memory until a batch of them is written).
func storeInVectorBlocks(t *testing.T, items []contract.StoreItem) *Engine {
	t.Helper()
	return reopenedVectorStore(t, writtenVectorStore(t, items), Options{})
}

// writtenVectorStore stores items in a new store, embeds them, closes it and
// answers its directory.
func writtenVectorStore(t *testing.T, items []contract.StoreItem) string {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	e, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for lo := 0; lo < len(items); lo += contract.MaxStoreMany {
		if _, err := contract.StoreMany(ctx, e, items[lo:min(lo+contract.MaxStoreMany, len(items))]); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.WaitEmbedder(ctx); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	return dir
}

// reopenedVectorStore opens the store in dir with opts and waits until its
// vectors are loaded and none waits in memory.
func reopenedVectorStore(t *testing.T, dir string, opts Options) *Engine {
	t.Helper()
	e, err := Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Close() })
	if err := e.WaitEmbedder(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := len(e.vec.store.pending); n != 0 {
		t.Fatalf("%d vectors wait in memory after the reopen", n)
	}
	return e
}
