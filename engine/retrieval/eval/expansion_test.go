package eval

import (
	"cmp"
	"flag"
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/blevesearch/snowballstem"
	"github.com/blevesearch/snowballstem/english"

	"mnemo/engine/retrieval"
	"mnemo/engine/retrieval/lexicon/wordnet"
)

// hybridOf is engine/bolt's hybrid ranking of a query's keyword and vector
// windows (sweepLists fetches both HybridWindow long).
func hybridOf(kw, vec []retrieval.ScoredID) []retrieval.Fused {
	return retrieval.Blend(kw, retrieval.MinMax(vec[:min(retrieval.HybridVectorWindow, len(vec))]), retrieval.HybridKeywordWeight)
}

func scoredIDs(l []retrieval.ScoredID) []string {
	out := make([]string, len(l))
	for i, x := range l {
		out[i] = x.ID
	}
	return out
}

func fusedIDs(l []retrieval.Fused) []string {
	out := make([]string, len(l))
	for i, x := range l {
		out[i] = x.ID
	}
	return out
}

// TestParaphraseMisses lists every paraphrased query that keyword, vector
// and hybrid do not all answer at rank 1: its relevant note, each mode's
// rank of it (0: not in the top 10) and each mode's top three. It is the
// per-query evidence behind the README's account of the paraphrase goals.
//
//	go test ./engine/retrieval/eval -run TestParaphraseMisses -v -args -eval
func TestParaphraseMisses(t *testing.T) {
	if !*runEval {
		t.Skip("run with -eval")
	}
	var set sweepSet
	for _, s := range sweepSets(t) {
		if s.name == "notes paraphrase" {
			set = s
		}
	}
	title := map[string]string{}
	for _, n := range set.notes {
		if n.Item.Title != nil {
			title[n.Key] = *n.Item.Title
		} else {
			f := strings.Fields(n.Item.RenderText())
			title[n.Key] = strings.Join(f[:min(6, len(f))], " ") + "…"
		}
	}
	kw, vec := sweepLists(t, set.notes, set.queries, nil)
	var b strings.Builder
	allFirst, none := 0, 0
	for i, q := range set.queries {
		lists := [][]string{scoredIDs(kw[i]), scoredIDs(vec[i][:min(retrieval.HybridVectorWindow, len(vec[i]))]), fusedIDs(hybridOf(kw[i], vec[i]))}
		var ranks [3]int
		for m, l := range lists {
			ranks[m] = firstRelevant(l, q.relevant, K)
		}
		if ranks == [3]int{1, 1, 1} {
			allFirst++
			continue
		}
		if ranks == [3]int{} {
			none++
		}
		fmt.Fprintf(&b, "%q -> %s %q: keyword %d, vector %d, hybrid %d\n", q.text, q.relevant[0], title[q.relevant[0]], ranks[0], ranks[1], ranks[2])
		for m, name := range []string{"keyword", "vector", "hybrid"} {
			var top []string
			for _, id := range lists[m][:min(3, len(lists[m]))] {
				top = append(top, fmt.Sprintf("%s %q", id, title[id]))
			}
			fmt.Fprintf(&b, "    %-8s %s\n", name, strings.Join(top, ", "))
		}
	}
	t.Logf("%d of %d paraphrases at rank 1 in every mode, %d found by no mode in the top %d:\n%s", allFirst, len(set.queries), none, K, b.String())
}

// sweepStop is the function words the expansions skip, on either side.
func sweepStop() map[string]bool {
	out := map[string]bool{}
	for _, w := range strings.Fields("a an and are as at be but by do does for from get how if in into is it its make my no not of on or our such that the their then there these they this to use was way what when which who why will with without your") {
		out[w] = true
	}
	return out
}

func snowball(w string) string {
	env := snowballstem.NewEnv(w)
	english.Stem(env)
	return env.Current()
}

// stemmedTokens is the baseline's analysis, Snowball-stemmed as mnemo's
// keyword index stems, so an expansion word meets its inflections.
func stemmedTokens(text string) []string {
	toks := baselineTokens(text)
	for i, t := range toks {
		toks[i] = snowball(t)
	}
	return toks
}

// wnExpansion is one way of expanding a query from WordNet.
type wnExpansion struct {
	name string
	// senses: how many of a word's senses (most frequent first, per part of
	// speech) give related words.
	senses int
	// hypernyms and similar: besides a sense's synonyms, its hypernyms'
	// words (nouns, verbs) and its similar adjectives' words.
	hypernyms, similar bool
	// maxSenses leaves out related words with more senses than this (in
	// all parts of speech together: "go", "set", "case"); 0 keeps all.
	maxSenses int
	// absent expands only the query words the store does not hold.
	absent bool
}

// expand is the related words (stemmed, distinct, none a query word) of
// the query's content words.
func (x wnExpansion) expand(db *wordnet.DB, stop map[string]bool, inStore func(string) bool, query string) []string {
	words := baselineTokens(query)
	have := map[string]bool{}
	for _, w := range words {
		have[snowball(w)] = true
	}
	var out []string
	add := func(lemma string) {
		for _, part := range strings.FieldsFunc(lemma, func(r rune) bool { return r == '_' || r == '-' || r == '/' }) {
			if stop[part] || x.maxSenses > 0 && senseCount(db, part) > x.maxSenses {
				continue
			}
			if s := snowball(part); !have[s] {
				have[s] = true
				out = append(out, s)
			}
		}
	}
	for _, w := range words {
		if stop[w] || len(w) < 3 || x.absent && inStore(snowball(w)) {
			continue
		}
		for _, p := range wordnet.AllPOS() {
			bases := db.BaseForms(w, p)
			if len(bases) == 0 {
				continue
			}
			ss, _ := db.Senses(bases[0], p)
			for _, s := range ss[:min(x.senses, len(ss))] {
				for _, syn := range s.Words {
					add(syn)
				}
				for _, ptr := range s.Pointers {
					if x.hypernyms && (ptr.Symbol == "@" || ptr.Symbol == "@i") || x.similar && ptr.Symbol == "&" {
						if r, err := db.SynsetAt(ptr.POS, ptr.Offset); err == nil {
							for _, rw := range r.Words[:min(3, len(r.Words))] {
								add(rw)
							}
						}
					}
				}
			}
		}
	}
	return out
}

// senseCount is a word's senses in every part of speech.
func senseCount(db *wordnet.DB, w string) int {
	n := 0
	for _, p := range wordnet.AllPOS() {
		if bases := db.BaseForms(w, p); len(bases) > 0 {
			ss, _ := db.Senses(bases[0], p)
			n += len(ss)
		}
	}
	return n
}

// expandedHybrid re-ranks hybrid's fused list, widened by every document
// holding an expansion term, by fused score + beta x the expansion terms'
// BM25 (weighted) over the best BM25 of the query's own terms: an expansion
// weighs beta of a document that matches the query as well as any does.
func expandedHybrid(bm *bm25, keyAt map[string]int, query string, fused []retrieval.Fused, terms []string, weights []float64, beta float64) []string {
	norm := 0.0
	for _, v := range bm.scores(bm.tokens(query), nil) {
		norm = max(norm, v)
	}
	if len(terms) == 0 || norm == 0 {
		return fusedIDs(fused)
	}
	exp := bm.scores(terms, weights)
	score := map[string]float64{}
	for _, f := range fused {
		score[f.ID] = f.Score
	}
	for d := range exp {
		if _, ok := score[bm.keys[d]]; !ok {
			score[bm.keys[d]] = 0
		}
	}
	ids := make([]string, 0, len(score))
	for id, s := range score {
		if d, ok := keyAt[id]; ok {
			s += beta * exp[d] / norm
		}
		score[id] = s
		ids = append(ids, id)
	}
	slices.SortFunc(ids, func(a, b string) int {
		if c := cmp.Compare(score[b], score[a]); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	return ids
}

// rm3Terms is relevance model 3's expansion: the terms (not in the query,
// not stop words) of the top documents of a ranking, each weighted by its
// share of a document's length x idf x the document's score, the best n,
// weights summing to 1.
func rm3Terms(bm *bm25, keyAt map[string]int, docTerms []map[string]float64, stop map[string]bool, query string, top []retrieval.ScoredID, n int) ([]string, []float64) {
	inQuery := map[string]bool{}
	for _, t := range bm.tokens(query) {
		inQuery[t] = true
	}
	w := map[string]float64{}
	N := float64(len(bm.keys))
	for _, d := range top {
		at, ok := keyAt[d.ID]
		if !ok {
			continue
		}
		total := 0.0
		for _, tf := range docTerms[at] {
			total += tf
		}
		for term, tf := range docTerms[at] {
			if inQuery[term] || stop[term] {
				continue
			}
			df := float64(len(bm.index[term]))
			w[term] += d.Score * tf / total * math.Log(1+(N-df+0.5)/(df+0.5))
		}
	}
	terms := make([]string, 0, len(w))
	for t := range w {
		terms = append(terms, t)
	}
	slices.SortFunc(terms, func(a, b string) int {
		if c := cmp.Compare(w[b], w[a]); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	terms = terms[:min(n, len(terms))]
	sum := 0.0
	for _, t := range terms {
		sum += w[t]
	}
	weights := make([]float64, len(terms))
	for i, t := range terms {
		weights[i] = w[t] / sum * float64(len(terms)) / 3 // about three terms' worth in all
	}
	return terms, weights
}

var expansionDetail = flag.String("expansiondetail", "", "TestExpansionSweep: list every query whose rank this row (its name up to the beta) moves")

// TestExpansionSweep measures expansions of hybrid's query that need no
// model: pseudo-relevance feedback (RM3, from keyword's or hybrid's top
// documents) and WordNet's related words (Debian's wordnet-base, skipped
// where /usr/share/wordnet is missing). Each re-ranks engine/bolt's hybrid
// list (keyword and vector as shipped) widened by the documents holding an
// expansion term, scored by a Snowball-stemmed textbook BM25 of the set
// (expandedHybrid), so keyword and vector stay untouched. MRR@10 per set.
//
//	go test ./engine/retrieval/eval -run TestExpansionSweep -v -args -eval
func TestExpansionSweep(t *testing.T) {
	if !*runEval {
		t.Skip("run with -eval")
	}
	const wnDir = "/usr/share/wordnet"
	var db *wordnet.DB
	if _, err := os.Stat(wnDir); err == nil {
		if db, err = wordnet.Open(wnDir); err != nil {
			t.Fatal(err)
		}
	} else {
		t.Logf("no WordNet at %s (Debian's wordnet-base): its rows are left out", wnDir)
	}
	stop := sweepStop()
	expansions := []wnExpansion{
		{name: "synonyms, first sense", senses: 1},
		{name: "synonyms, first sense, related words of <= 5 senses", senses: 1, maxSenses: 5},
		{name: "synonyms, first sense, related words of <= 3 senses", senses: 1, maxSenses: 3},
		{name: "synonyms + similar, first sense, related words of <= 5 senses", senses: 1, similar: true, maxSenses: 5},
		{name: "synonyms + hypernyms, first sense, related words of <= 5 senses", senses: 1, hypernyms: true, maxSenses: 5},
		{name: "synonyms + hypernyms + similar, first sense", senses: 1, hypernyms: true, similar: true},
		{name: "the same, first two senses", senses: 2, hypernyms: true, similar: true},
		{name: "the same, first sense, related words of <= 5 senses", senses: 1, hypernyms: true, similar: true, maxSenses: 5},
		{name: "the same, only query words the store lacks", senses: 2, hypernyms: true, similar: true, absent: true},
	}
	type row struct {
		name string
		mrr  []float64
	}
	var rows []row
	at := map[string]int{}
	put := func(name string, v float64) {
		i, ok := at[name]
		if !ok {
			i = len(rows)
			at[name] = i
			rows = append(rows, row{name: name})
		}
		rows[i].mrr = append(rows[i].mrr, v)
	}
	sets := sweepSets(t)
	for _, s := range sets {
		kw, vec := sweepLists(t, s.notes, s.queries, nil)
		keys := make([]string, len(s.notes))
		texts := make([]string, len(s.notes))
		keyAt := map[string]int{}
		for i, n := range s.notes {
			keys[i], texts[i], keyAt[n.Key] = n.Key, n.Item.RenderText(), i
		}
		bm := newBM25With(keys, texts, stemmedTokens)
		docTerms := make([]map[string]float64, len(keys))
		for term, ps := range bm.index {
			for _, p := range ps {
				if docTerms[p.doc] == nil {
					docTerms[p.doc] = map[string]float64{}
				}
				docTerms[p.doc][term] = p.tf
			}
		}
		inStore := func(stem string) bool { return len(bm.index[stem]) > 0 }
		fused := make([][]retrieval.Fused, len(s.queries))
		for i := range s.queries {
			fused[i] = hybridOf(kw[i], vec[i])
		}
		mrr := func(ranked func(i int) []string) float64 { return mrrOf(s.queries, ranked) }
		put("keyword", mrr(func(i int) []string { return scoredIDs(kw[i]) }))
		put("hybrid (shipped)", mrr(func(i int) []string { return fusedIDs(fused[i]) }))
		for _, src := range []string{"keyword", "hybrid"} {
			for _, fb := range []int{1, 3, 5} {
				for _, beta := range []float64{0.1, 0.2, 0.4} {
					put(fmt.Sprintf("RM3 from %s's top %d, 10 terms, beta %.1f", src, fb, beta), mrr(func(i int) []string {
						top := kw[i][:min(fb, len(kw[i]))]
						if src == "hybrid" {
							top = nil
							for _, f := range fused[i][:min(fb, len(fused[i]))] {
								top = append(top, retrieval.ScoredID{ID: f.ID, Score: f.Score})
							}
						}
						terms, weights := rm3Terms(bm, keyAt, docTerms, stop, s.queries[i].text, top, 10)
						return expandedHybrid(bm, keyAt, s.queries[i].text, fused[i], terms, weights, beta)
					}))
				}
			}
		}
		if db == nil {
			continue
		}
		for _, x := range expansions {
			terms := make([][]string, len(s.queries))
			for i, q := range s.queries {
				terms[i] = x.expand(db, stop, inStore, q.text)
			}
			for _, beta := range []float64{0.1, 0.2, 0.3, 0.5} {
				name := fmt.Sprintf("WordNet: %s, beta %.1f", x.name, beta)
				put(name, mrr(func(i int) []string {
					r := expandedHybrid(bm, keyAt, s.queries[i].text, fused[i], terms[i], nil, beta)
					if name == *expansionDetail {
						q := s.queries[i]
						if a, b := firstRelevant(fusedIDs(fused[i]), q.relevant, K), firstRelevant(r, q.relevant, K); a != b {
							t.Logf("%s: %d -> %d %q, expanded by %v", s.name, a, b, q.text, terms[i])
						}
					}
					return r
				}))
			}
		}
	}
	var b strings.Builder
	b.WriteString("| hybrid expanded by |")
	for _, s := range sets {
		fmt.Fprintf(&b, " %s (%d) |", s.name, len(s.queries))
	}
	b.WriteString(" worst against shipped hybrid |\n|---|" + strings.Repeat("---|", len(sets)+1) + "\n")
	ref := rows[at["hybrid (shipped)"]].mrr
	for _, r := range rows {
		fmt.Fprintf(&b, "| %s |", r.name)
		worst := 1.0
		for si, v := range r.mrr {
			fmt.Fprintf(&b, " %.4f |", v)
			worst = min(worst, v-ref[si])
		}
		fmt.Fprintf(&b, " %+.4f |\n", worst)
	}
	t.Logf("MRR@10 of hybrid re-ranked with expansion terms\n%s", b.String())
}
