package eval

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"mnemo/contract"
	"mnemo/engine/bolt"
	"mnemo/engine/retrieval"
)

// losoSet is a set as the leave-one-set-out sweep measures it: per query the
// keyword and vector windows and the relevant keys, and whether its figure
// is evidence recall@10 (conversations) or MRR@10.
type losoSet struct {
	name     string
	kw, vec  [][]retrieval.ScoredID
	relevant [][]string
	recall   bool
}

func (s losoSet) score(rank func(kw, vec []retrieval.ScoredID) []string) float64 {
	sum := 0.0
	for i := range s.kw {
		top := rank(s.kw[i], s.vec[i])
		top = top[:min(K, len(top))]
		if s.recall {
			found := 0
			for _, k := range s.relevant[i] {
				if slices.Contains(top, k) {
					found++
				}
			}
			sum += float64(found) / float64(len(s.relevant[i]))
		} else if r := firstRelevant(top, s.relevant[i], K); r > 0 {
			sum += 1 / float64(r)
		}
	}
	return sum / float64(len(s.kw))
}

// convSweepLists stores convs in engine/bolt and fetches each question's
// keyword and vector windows within its conversation, as turn keys.
func convSweepLists(t *testing.T, name string, convs []Conv) losoSet {
	t.Helper()
	ctx := context.Background()
	e, err := bolt.Open(t.TempDir(), bolt.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	keyOf, err := StoreConversations(ctx, e, convs)
	if err != nil {
		t.Fatal(err)
	}
	s := losoSet{name: name, recall: true}
	for _, c := range convs {
		ns, _ := contract.ParseNamespace(c.Namespace)
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
		for _, q := range c.Questions {
			s.kw = append(s.kw, fetch(q.Text, contract.ModeKeyword))
			s.vec = append(s.vec, fetch(q.Text, contract.ModeVector))
			s.relevant = append(s.relevant, q.Evidence)
		}
	}
	return s
}

// topOverlap is the share of the two lists' top 10 ids they have in common.
func topOverlap(a, b []retrieval.ScoredID) float64 {
	in := map[string]bool{}
	for _, x := range a[:min(10, len(a))] {
		in[x.ID] = true
	}
	n := 0
	for _, x := range b[:min(10, len(b))] {
		if in[x.ID] {
			n++
		}
	}
	return float64(n) / 10
}

// vecSpread is how far the vector window's best stands above its 20th, over
// the best: near 0 when every candidate looks alike to the vectors.
func vecSpread(v []retrieval.ScoredID) float64 {
	if len(v) == 0 || v[0].Score <= 0 {
		return 0
	}
	return (v[0].Score - v[min(19, len(v)-1)].Score) / v[0].Score
}

// losoFusions are the fusions the leave-one-set-out sweep chooses among:
// the shipped blend at fixed weights, and blends whose keyword weight follows
// the two rankings' agreement or the vector scores' spread per query.
func losoFusions() []losoFusion {
	blend := func(w float64) func(kw, vec []retrieval.ScoredID) []string {
		return func(kw, vec []retrieval.ScoredID) []string {
			return fusedIDs(retrieval.Blend(kw, retrieval.MinMax(vec[:min(retrieval.HybridVectorWindow, len(vec))]), w))
		}
	}
	fs := []losoFusion{
		{"keyword", func(kw, _ []retrieval.ScoredID) []string { return scoredIDs(kw) }},
		{"vector", func(_, vec []retrieval.ScoredID) []string { return scoredIDs(vec) }},
	}
	for _, w := range []float64{0.5, 0.6, 0.7, 0.8, 0.9} {
		fs = append(fs, losoFusion{fmt.Sprintf("blend %.2f", w), blend(w)})
	}
	for _, c := range [][2]float64{{0.5, 0.8}, {0.5, 0.9}, {0.6, 0.8}, {0.6, 0.9}, {0.4, 0.8}, {0.4, 0.7}} {
		fs = append(fs, losoFusion{fmt.Sprintf("agreement: %.2f at full top-10 overlap .. %.2f at none", c[0], c[1]), func(kw, vec []retrieval.ScoredID) []string {
			o := topOverlap(kw, vec)
			return blend(c[1]-(c[1]-c[0])*o)(kw, vec)
		}})
	}
	for _, c := range [][3]float64{{0.6, 0.8, 0.3}, {0.6, 0.9, 0.3}, {0.5, 0.8, 0.5}, {0.6, 0.8, 0.5}} {
		fs = append(fs, losoFusion{fmt.Sprintf("vector spread: %.2f at spread >= %.1f .. %.2f at 0", c[0], c[2], c[1]), func(kw, vec []retrieval.ScoredID) []string {
			s := min(1, vecSpread(vec)/c[2])
			return blend(c[1]-(c[1]-c[0])*s)(kw, vec)
		}})
	}
	for _, c := range [][2]float64{{0.6, 0.8}, {0.5, 0.8}} {
		fs = append(fs, losoFusion{fmt.Sprintf("agreement x spread(0.3): %.2f .. %.2f", c[0], c[1]), func(kw, vec []retrieval.ScoredID) []string {
			trust := topOverlap(kw, vec) * min(1, vecSpread(vec)/0.3)
			return blend(c[1]-(c[1]-c[0])*min(1, 2*trust))(kw, vec)
		}})
	}
	return fs
}

type losoFusion struct {
	name string
	fuse func(kw, vec []retrieval.ScoredID) []string
}

// TestFusionLOSO chooses a fusion on three of the four tuning sets (go-doc,
// man-pages, the notes' paraphrases, the tuning conversations: MRR@10, or
// evidence recall@10 for conversations) and measures it on the fourth, for
// each set in turn; the notes' held-out queries and the held-out
// conversations are measured for every choice and never choose. A fusion is
// chosen by its worst gain over keyword on the three, then its mean gain.
// It fails when the shipped blend is below keyword on any set.
//
//	go test ./engine/retrieval/eval -run TestFusionLOSO -v -args -eval
func TestFusionLOSO(t *testing.T) {
	if !*runEval {
		t.Skip("run with -eval")
	}
	var tune, held []losoSet
	for _, s := range sweepSets(t) {
		if s.name == "notes exact" {
			continue
		}
		kw, vec := sweepLists(t, s.notes, s.queries, nil)
		ls := losoSet{name: s.name, kw: kw, vec: vec}
		for _, q := range s.queries {
			ls.relevant = append(ls.relevant, q.relevant)
		}
		if s.name == "notes held-out" {
			held = append(held, ls)
		} else {
			tune = append(tune, ls)
		}
	}
	tune = append(tune, convSweepLists(t, "conversations", GenConversations(28, 8, 24)))
	held = append(held, convSweepLists(t, "conversations held-out", GenConversationsHeldOut(1028, 8, 24)))
	fs := losoFusions()
	all := append(slices.Clone(tune), held...)
	score := make([][]float64, len(fs)) // [fusion][set]
	for fi, f := range fs {
		for _, s := range all {
			score[fi] = append(score[fi], s.score(f.fuse))
		}
	}
	var b strings.Builder
	b.WriteString("| fusion |")
	for _, s := range all {
		fmt.Fprintf(&b, " %s |", s.name)
	}
	b.WriteString("\n|---|" + strings.Repeat("---|", len(all)) + "\n")
	for fi, f := range fs {
		fmt.Fprintf(&b, "| %s |", f.name)
		for si := range all {
			fmt.Fprintf(&b, " %.3f |", score[fi][si])
		}
		b.WriteString("\n")
	}
	b.WriteString("\nleave one set out (chosen on the other three; gain over keyword on the set left out and the held-out sets):\n")
	for out := range tune {
		best, bestWorst, bestMean := -1, -9.0, -9.0
		for fi := 2; fi < len(fs); fi++ {
			worst, mean := 9.0, 0.0
			for si := range tune {
				if si == out {
					continue
				}
				g := score[fi][si] - score[0][si]
				worst, mean = min(worst, g), mean+g
			}
			if worst > bestWorst+1e-9 || worst > bestWorst-1e-9 && mean > bestMean {
				best, bestWorst, bestMean = fi, worst, mean
			}
		}
		fmt.Fprintf(&b, "- left out %s: chose %q (worst gain on the three %+.3f); on %s %.3f against keyword %.3f (%+.3f)",
			tune[out].name, fs[best].name, bestWorst, tune[out].name, score[best][out], score[0][out], score[best][out]-score[0][out])
		for hi := range held {
			si := len(tune) + hi
			fmt.Fprintf(&b, "; %s %+.3f", held[hi].name, score[best][si]-score[0][si])
		}
		b.WriteString("\n")
	}
	t.Logf("fusions of the same windows\n%s", b.String())
	// The shipped blend is never below keyword, on any set, tuned or not.
	for fi, f := range fs {
		if f.name != fmt.Sprintf("blend %.2f", retrieval.HybridKeywordWeight) {
			continue
		}
		for si, s := range all {
			if score[fi][si] < score[0][si] {
				t.Errorf("%s: the shipped blend %.3f is below keyword %.3f", s.name, score[fi][si], score[0][si])
			}
		}
	}
}
