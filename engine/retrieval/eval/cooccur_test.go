package eval

import (
	"context"
	"fmt"
	"hash/fnv"
	"math"
	"testing"

	"mnemo/engine/bolt"
	"mnemo/engine/retrieval"
)

// An experiment towards issue 15's vector goal, not the product: vectors
// learned from the store's own text by random indexing. Every word has a
// sparse random index vector (8 signed positions of 256, from its hash); a
// word's context vector is the idf-weighted sum of the index vectors of the
// words it shares a document with; a text embeds as the tf-idf-weighted sum
// of its words' context and index vectors, concatenated with the hashed
// n-gram vector (weight beta). Deterministic and offline, but its vectors
// change as the store grows, so the product would have to relearn and
// re-embed in the background under a model id that names the model's
// generation; engine/bolt does not do that yet. Measured by
// TestCooccurrenceEmbedder and TestCooccurrenceHybrid (-eval).
type riModel struct {
	dim   int
	idf   map[string]float64
	ctxv  map[string][]float64
	gamma float64
}

func riIndex(w string, dim int) (idx [8]int, sign [8]float64) {
	h := fnv.New64a()
	h.Write([]byte(w))
	x := h.Sum64()
	for i := 0; i < 8; i++ {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		idx[i] = int(x % uint64(dim))
		if x>>40&1 == 0 {
			sign[i] = 1
		} else {
			sign[i] = -1
		}
	}
	return
}

func riWords(t string) []string {
	var out []string
	for _, w := range baselineTokens(t) {
		if len(w) >= 3 {
			out = append(out, w)
		}
	}
	return out
}

func trainRI(texts []string, dim int, gamma float64) *riModel {
	df := map[string]int{}
	docs := make([]map[string]int, len(texts))
	for i, t := range texts {
		docs[i] = map[string]int{}
		for _, w := range riWords(t) {
			docs[i][w]++
		}
		for w := range docs[i] {
			df[w]++
		}
	}
	n := float64(len(texts))
	m := &riModel{dim: dim, idf: map[string]float64{}, ctxv: map[string][]float64{}, gamma: gamma}
	for w, d := range df {
		m.idf[w] = math.Log(1 + n/float64(d))
	}
	for _, d := range docs {
		s := make([]float64, dim)
		for u := range d {
			idx, sg := riIndex(u, dim)
			for k := range idx {
				s[idx[k]] += m.idf[u] * sg[k]
			}
		}
		for w := range d {
			c := m.ctxv[w]
			if c == nil {
				c = make([]float64, dim)
				m.ctxv[w] = c
			}
			idx, sg := riIndex(w, dim)
			for j := range s {
				c[j] += s[j]
			}
			for k := range idx {
				c[idx[k]] -= m.idf[w] * sg[k]
			}
		}
	}
	for _, c := range m.ctxv {
		var nn float64
		for _, v := range c {
			nn += v * v
		}
		nn = math.Sqrt(nn)
		if nn > 0 {
			for j := range c {
				c[j] /= nn
			}
		}
	}
	return m
}

func (m *riModel) embed(t string) []float64 {
	v := make([]float64, m.dim)
	tf := map[string]int{}
	for _, w := range riWords(t) {
		tf[w]++
	}
	for w, c := range tf {
		idf, ok := m.idf[w]
		if !ok {
			continue
		}
		wt := (1 + math.Log(float64(c))) * idf
		for j, x := range m.ctxv[w] {
			v[j] += wt * x
		}
		if m.gamma > 0 {
			idx, sg := riIndex(w, m.dim)
			for k := range idx {
				v[idx[k]] += wt * m.gamma * sg[k] / math.Sqrt(8)
			}
		}
	}
	return v
}

type riEmbedder struct {
	base retrieval.Embedder
	m    *riModel
	beta float64
}

func (e riEmbedder) Model() string { return "experiment-random-indexing" }
func (e riEmbedder) Dim() int      { return e.base.Dim() + e.m.dim }
func (e riEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	a, err := e.base.Embed(ctx, texts)
	if err != nil {
		return nil, err
	}
	out := make([][]float32, len(texts))
	for i, t := range texts {
		r := e.m.embed(t)
		var nn float64
		for _, x := range r {
			nn += x * x
		}
		nn = math.Sqrt(nn)
		v := make([]float32, 0, e.Dim())
		v = append(v, a[i]...)
		for _, x := range r {
			if nn > 0 {
				x /= nn
			}
			v = append(v, float32(e.beta*x))
		}
		var n2 float64
		for _, x := range v {
			n2 += float64(x) * float64(x)
		}
		n2 = math.Sqrt(n2)
		for j := range v {
			v[j] /= float32(n2)
		}
		out[i] = v
	}
	return out, nil
}

// TestCooccurrenceEmbedder: vector search alone, each set's embedder
// learned from that set's documents.
func TestCooccurrenceEmbedder(t *testing.T) {
	if !*runEval {
		t.Skip()
	}
	sets := knownItemSets(t)
	notes, _ := Corpus()
	hold, _ := HoldoutQueries()
	texts := func(ds []KnownDoc) []string {
		out := make([]string, len(ds))
		for i, d := range ds {
			out[i] = d.Text()
		}
		return out
	}
	var nt []string
	for _, n := range notes {
		nt = append(nt, n.Item.RenderText())
	}
	base := retrieval.NewHashEmbedder()
	for _, c := range []struct{ beta, gamma float64 }{{0, 0}, {0.5, 0}, {1, 0}, {0.5, 1}, {1, 1}, {1.5, 0.5}} {
		mk := func(tx []string) retrieval.Embedder {
			if c.beta == 0 {
				return base
			}
			return riEmbedder{base, trainRI(tx, 256, c.gamma), c.beta}
		}
		en := mk(nt)
		r, _ := RunEmbedder(context.Background(), en)
		h, _ := RunEmbedderWith(context.Background(), en, hold)
		t.Logf("%-22s para %.3f held %.3f exact %.3f go %.3f man %.3f", fmt.Sprintf("beta %.1f gamma %.1f", c.beta, c.gamma),
			r.Float32[KindParaphrase].MRR, h.Float32[KindAll].MRR, r.Float32[KindExact].MRR,
			knownVectorMRR(t, sets[0], mk(texts(sets[0].Docs))), knownVectorMRR(t, sets[1], mk(texts(sets[1].Docs))))
	}
}

// TestCooccurrenceHybrid: engine/bolt with the learned embedder, every mode.
func TestCooccurrenceHybrid(t *testing.T) {
	if !*runEval {
		t.Skip()
	}
	base := retrieval.NewHashEmbedder()
	for _, set := range knownItemSets(t) {
		tx := make([]string, len(set.Docs))
		for i, d := range set.Docs {
			tx[i] = d.Text()
		}
		for _, c := range []struct{ beta, gamma float64 }{{0.5, 1}, {1, 1}} {
			r := evalKnownItems(t, []KnownItemSet{set}, bolt.Options{Embedder: riEmbedder{base, trainRI(tx, 256, c.gamma), c.beta}})
			t.Logf("beta %.1f gamma %.1f\n%s", c.beta, c.gamma, KnownItemTable(r...))
		}
	}
	notes, _ := Corpus()
	var nt []string
	for _, n := range notes {
		nt = append(nt, n.Item.RenderText())
	}
	for _, c := range []struct{ beta, gamma float64 }{{0.5, 1}, {1, 1}} {
		e, _ := bolt.Open(t.TempDir(), bolt.Options{Embedder: riEmbedder{base, trainRI(nt, 256, c.gamma), c.beta}})
		rep, err := Run(context.Background(), e)
		if err != nil {
			t.Fatal(err)
		}
		hq, _ := HoldoutQueries()
		hrep, _ := RunWith(context.Background(), e, hq)
		e.Close()
		t.Logf("notes beta %.1f gamma %.1f\n%s\nheld-out\n%s", c.beta, c.gamma, rep.Table(), hrep.Table())
	}
}

// knownVectorMRR is vector search alone on a known-item set, exact float32.
func knownVectorMRR(t *testing.T, set KnownItemSet, emb retrieval.Embedder) float64 {
	texts := make([]string, len(set.Docs))
	for i, d := range set.Docs {
		texts[i] = d.Text()
	}
	vecs, _ := emb.Embed(context.Background(), texts)
	vi := retrieval.NewVectorIndex(emb.Dim())
	for i, d := range set.Docs {
		vi.Upsert(d.Key, vecs[i])
	}
	qs := make([]string, len(set.Queries))
	for i, q := range set.Queries {
		qs[i] = q.Text
	}
	qv, _ := EmbedQueries(context.Background(), emb, qs)
	ranks := make([]int, len(qs))
	for i, q := range set.Queries {
		for r, s := range vi.Search(context.Background(), qv[i], K, nil) {
			if s.ID == q.Target {
				ranks[i] = r + 1
				break
			}
		}
	}
	return metricsOfRanks(ranks).MRR
}
