package eval

import (
	"context"
	"flag"
	"fmt"
	"strings"
	"testing"

	"mnemo/contract"
	"mnemo/engine/bolt"
	"mnemo/engine/retrieval"
)

var sweepHashed = flag.Bool("hashed", false, "TestFusionSweep: with the hashed embedder instead of the default")

var sweepLearnWeight = flag.Float64("learnweight", 0, "TestFusionSweep: the learned embedder with this Weight")

// sweepQuery is a query and the keys that answer it.
type sweepQuery struct {
	text     string
	relevant []string
}

// sweepLists fetches, per query, the keyword and vector windows hybrid
// fuses, as note keys with their scores.
func sweepLists(t *testing.T, notes []Note, queries []sweepQuery, emb retrieval.Embedder) (kw, vec [][]retrieval.ScoredID) {
	t.Helper()
	ctx := context.Background()
	e, err := bolt.Open(t.TempDir(), bolt.Options{Embedder: emb})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	ids, err := Load(ctx, e, notes)
	if err != nil {
		t.Fatal(err)
	}
	keyOf := map[string]string{}
	for k, id := range ids {
		keyOf[id] = k
	}
	ns, _ := contract.ParseNamespace(Namespace)
	reach := contract.ReachSubtree(ns)
	fetch := func(q string, mode contract.FetchMode) []retrieval.ScoredID {
		page, err := e.Fetch(ctx, contract.FetchRequest{Query: q, Mode: mode, Filter: contract.MetaFilter{Reach: &reach}, Limit: retrieval.HybridWindow})
		if err != nil {
			t.Fatal(err)
		}
		out := make([]retrieval.ScoredID, len(page.Hits))
		for i, h := range page.Hits {
			out[i] = retrieval.ScoredID{ID: keyOf[h.ID], Score: float64(h.Score)}
		}
		return out
	}
	for _, q := range queries {
		kw = append(kw, fetch(q.text, contract.ModeKeyword))
		vec = append(vec, fetch(q.text, contract.ModeVector))
	}
	return kw, vec
}

func mrrOf(queries []sweepQuery, ranked func(i int) []string) float64 {
	sum := 0.0
	for i, q := range queries {
		top := ranked(i)
		if r := firstRelevant(top, q.relevant, K); r > 0 {
			sum += 1 / float64(r)
		}
	}
	return sum / float64(len(queries))
}

// TestFusionSweep measures fusions of the same keyword and vector windows
// on every set, with engine/bolt's default (learned) embedder, or with the
// hashed one under -hashed: the table behind retrieval.HybridKeywordWeight.
//
//	go test ./engine/retrieval/eval -run TestFusionSweep -v -args -eval
func TestFusionSweep(t *testing.T) {
	if !*runEval {
		t.Skip("run with -eval")
	}
	var emb retrieval.Embedder // the engine's default
	if *sweepHashed {
		emb = retrieval.NewHashEmbedder()
	}
	if *sweepLearnWeight > 0 {
		cfg := retrieval.DefaultLearnConfig()
		cfg.Weight = *sweepLearnWeight
		emb = retrieval.NewLearnedEmbedder(cfg)
	}
	sets := sweepSets(t)
	type fusion struct {
		name string
		fuse func(kw, vec []retrieval.ScoredID) []string
	}
	fusions := []fusion{
		{"keyword", func(kw, _ []retrieval.ScoredID) []string { return scoredIDs(kw) }},
		{"vector", func(_, vec []retrieval.ScoredID) []string { return scoredIDs(vec) }},
		{"RRF k 60", func(kw, vec []retrieval.ScoredID) []string {
			return fusedIDs(retrieval.RRF(60, scoredIDs(kw), scoredIDs(vec)))
		}},
	}
	for _, w := range []float64{0.5, 0.7} {
		fusions = append(fusions, fusion{fmt.Sprintf("min-max blend %.2f", w), func(kw, vec []retrieval.ScoredID) []string {
			return fusedIDs(retrieval.Blend(retrieval.MinMax(kw), retrieval.MinMax(vec), w))
		}})
	}
	for _, vw := range []int{10, 20, 64} {
		for _, w := range []float64{0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8} {
			fusions = append(fusions, fusion{fmt.Sprintf("score / best %.2f, vector top %d", w, vw), func(kw, vec []retrieval.ScoredID) []string {
				return fusedIDs(retrieval.Blend(kw, vec[:min(vw, len(vec))], w))
			}})
		}
	}
	for _, vw := range []int{10, 20, 64} {
		for _, w := range []float64{0.3, 0.4, 0.45} {
			fusions = append(fusions, fusion{fmt.Sprintf("score / best %.2f, vector top %d", w, vw), func(kw, vec []retrieval.ScoredID) []string {
				return fusedIDs(retrieval.Blend(kw, vec[:min(vw, len(vec))], w))
			}})
		}
		for _, w := range []float64{0.4, 0.5, 0.6, 0.7} {
			fusions = append(fusions, fusion{fmt.Sprintf("keyword / best, vector min-max, %.2f, vector top %d", w, vw), func(kw, vec []retrieval.ScoredID) []string {
				return fusedIDs(retrieval.Blend(kw, retrieval.MinMax(vec[:min(vw, len(vec))]), w))
			}})
		}
	}
	for _, k := range []float64{5, 20} {
		for _, w := range []float64{0.5, 0.6, 0.7} {
			fusions = append(fusions, fusion{fmt.Sprintf("weighted RRF k %.0f, keyword %.2f", k, w), func(kw, vec []retrieval.ScoredID) []string {
				sc := map[string]float64{}
				for r, x := range kw {
					sc[x.ID] += w / (k + float64(r+1))
				}
				for r, x := range vec[:min(20, len(vec))] {
					sc[x.ID] += (1 - w) / (k + float64(r+1))
				}
				var l []retrieval.ScoredID
				for id, v := range sc {
					l = append(l, retrieval.ScoredID{ID: id, Score: v})
				}
				return fusedIDs(retrieval.Blend(l, nil, 1))
			}})
		}
	}
	for _, w := range []float64{0.3, 0.35, 0.4, 0.5, 0.6} {
		fusions = append(fusions, fusion{fmt.Sprintf("score / best %.2f, vector top 20, both lists x1.1", w), func(kw, vec []retrieval.ScoredID) []string {
			v := vec[:min(20, len(vec))]
			in := map[string]bool{}
			for _, x := range v {
				in[x.ID] = true
			}
			fs := retrieval.Blend(kw, v, w)
			for i := range fs {
				for _, x := range kw {
					if x.ID == fs[i].ID && in[x.ID] {
						fs[i].Score *= 1.1
					}
				}
			}
			l := make([]retrieval.ScoredID, len(fs))
			for i, f := range fs {
				l[i] = retrieval.ScoredID{ID: f.ID, Score: f.Score}
			}
			return fusedIDs(retrieval.Blend(l, nil, 1))
		}})
	}
	for _, w := range []float64{0.3, 0.4, 0.6} {
		fusions = append(fusions, fusion{fmt.Sprintf("min-max blend %.2f", w), func(kw, vec []retrieval.ScoredID) []string {
			return fusedIDs(retrieval.Blend(retrieval.MinMax(kw), retrieval.MinMax(vec), w))
		}})
	}
	// keyword confidence: the top-1 / top-2 score ratio picks the weight
	for _, c := range []struct{ lo, hi, at float64 }{{0.55, 0.75, 1.15}, {0.6, 0.8, 1.1}, {0.6, 0.75, 1.2}, {0.5, 0.7, 1.15}} {
		for _, vw := range []int{10, 20} {
			fusions = append(fusions, fusion{fmt.Sprintf("score / best, vector top %d, keyword %.2f or %.2f at top ratio %.2f", vw, c.lo, c.hi, c.at), func(kw, vec []retrieval.ScoredID) []string {
				w := c.lo
				if len(kw) == 1 || len(kw) > 1 && kw[0].Score >= c.at*kw[1].Score {
					w = c.hi
				}
				if len(kw) == 0 {
					w = 0
				}
				return fusedIDs(retrieval.Blend(kw, vec[:min(vw, len(vec))], w))
			}})
		}
	}
	// keyword's margin, continuously: its weight goes from lo at a top-1 /
	// top-2 ratio of 1 to hi at 1 + span
	for _, c := range []struct{ lo, hi, span float64 }{{0.4, 0.7, 0.5}, {0.4, 0.6, 0.3}, {0.3, 0.7, 1}, {0.45, 0.65, 0.2}, {0.5, 0.8, 0.5}} {
		fusions = append(fusions, fusion{fmt.Sprintf("score / best, vector top 20, keyword %.2f..%.2f over top ratio 1..%.1f", c.lo, c.hi, 1+c.span), func(kw, vec []retrieval.ScoredID) []string {
			return fusedIDs(retrieval.Blend(kw, vec[:min(20, len(vec))], c.lo+(c.hi-c.lo)*min(1, max(0, (topRatio(kw)-1)/c.span))))
		}})
	}
	var b strings.Builder
	b.WriteString("| fusion |")
	for _, s := range sets {
		fmt.Fprintf(&b, " %s (%d) |", s.name, len(s.queries))
	}
	b.WriteString(" worst gain over better input |\n|---|" + strings.Repeat("---|", len(sets)+1) + "\n")
	results := make([][]float64, len(fusions))
	for _, s := range sets {
		kw, vec := sweepLists(t, s.notes, s.queries, emb)
		for fi, f := range fusions {
			results[fi] = append(results[fi], mrrOf(s.queries, func(i int) []string { return f.fuse(kw[i], vec[i]) }))
		}
	}
	for fi, f := range fusions {
		fmt.Fprintf(&b, "| %s |", f.name)
		worst := 1.0
		for si := range sets {
			fmt.Fprintf(&b, " %.3f |", results[fi][si])
			worst = min(worst, results[fi][si]-max(results[0][si], results[1][si]))
		}
		fmt.Fprintf(&b, " %+.3f |\n", worst)
	}
	t.Logf("MRR@10 per fusion of the same windows\n%s", b.String())
}

// sweepSet is one evaluation set as the sweeps measure it.
type sweepSet struct {
	name    string
	notes   []Note
	queries []sweepQuery
}

// sweepSets is every set the sweeps measure: go-doc, man-pages, and the
// notes' exact, paraphrased and held-out queries.
func sweepSets(t *testing.T) []sweepSet {
	t.Helper()
	var sets []sweepSet
	for _, ks := range knownItemSets(t) {
		s := sweepSet{name: ks.Name}
		for _, d := range ks.Docs {
			s.notes = append(s.notes, Note{Key: d.Key, Item: d.item()})
		}
		for _, q := range ks.Queries {
			s.queries = append(s.queries, sweepQuery{q.Text, []string{q.Target}})
		}
		sets = append(sets, s)
	}
	notes, err := Corpus()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"notes exact", "notes paraphrase", "notes held-out"} {
		var qs []Query
		if name == "notes held-out" {
			qs, err = HoldoutQueries()
		} else {
			qs, err = Queries()
		}
		if err != nil {
			t.Fatal(err)
		}
		s := sweepSet{name: name, notes: notes}
		for _, q := range qs {
			if name == "notes exact" && q.Kind != KindExact || name == "notes paraphrase" && q.Kind != KindParaphrase {
				continue
			}
			s.queries = append(s.queries, sweepQuery{q.Text, q.Relevant})
		}
		sets = append(sets, s)
	}
	return sets
}

// topRatio is a list's top-1 / top-2 score ratio (10 for a single hit, 0
// for none).
func topRatio(l []retrieval.ScoredID) float64 {
	switch {
	case len(l) == 0:
		return 0
	case len(l) == 1 || l[1].Score <= 0:
		return 10
	}
	return l[0].Score / l[1].Score
}

// withOne puts a score-1 sentinel first, so Blend keeps raw cosines.
func withOne(l []retrieval.ScoredID) []retrieval.ScoredID {
	return append([]retrieval.ScoredID{{ID: "\x00top", Score: 1}}, l...)
}
