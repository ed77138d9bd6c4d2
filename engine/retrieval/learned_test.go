package retrieval

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// learnedCorpus: "automobile" and "car" never share a text but share their
// neighbours (engine, wheels, fuel), as synonyms do in real text.
var learnedCorpus = []string{
	"the car has an engine, four wheels and a tank of fuel",
	"an automobile needs fuel for its engine and tyres on its wheels",
	"fuel prices rose and every car owner paid more at the pump",
	"the automobile industry builds engines and wheels by the million",
	"a violin has four strings and a bow made of horsehair",
	"the orchestra tuned its violins, cellos and the bow strings",
	"bread rises when yeast ferments the dough in a warm oven",
	"the baker kneads dough, adds yeast and bakes loaves in the oven",
}

func learnModel(t *testing.T, texts []string, gen uint64) *LearnedModel {
	t.Helper()
	m, err := Learn(context.Background(), texts, gen, DefaultLearnConfig())
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestLearnedEmbedderFindsATextByAWordItNeverUses(t *testing.T) {
	e := NewLearnedEmbedder(DefaultLearnConfig())
	if err := e.Use(learnModel(t, learnedCorpus, 1)); err != nil {
		t.Fatal(err)
	}
	docs := []string{"my car will not start in the morning", "the cello sounds warm", "fresh bread from the oven"}
	vs := embed(t, e, append(docs, "automobile")...)
	q := vs[len(docs)]
	best, bestScore := -1, -2.0
	for i := range docs {
		if c := cosine(q, vs[i]); c > bestScore {
			best, bestScore = i, c
		}
	}
	if best != 0 || bestScore <= 0 {
		t.Errorf("query \"automobile\" ranks %q first (cosine %.3f), want the text about a car", docs[best], bestScore)
	}
	// The hashed embedder alone sees only bucket collisions: the words share
	// no n-gram.
	h := embed(t, NewHashEmbedder(), docs[0], "automobile")
	if c := cosine(h[0], h[1]); bestScore <= c+0.02 {
		t.Errorf("learned cosine %.3f is not above the hashed one, %.3f", bestScore, c)
	}
}

func TestLearnedModelIsDeterministicAndVersioned(t *testing.T) {
	a := learnModel(t, learnedCorpus, 1)
	shuffled := slices.Clone(learnedCorpus)
	slices.Reverse(shuffled)
	b := learnModel(t, shuffled, 1)
	if a.ID() != b.ID() {
		t.Fatalf("the same texts in another order learned %s and %s", a.ID(), b.ID())
	}
	if !strings.HasPrefix(a.ID(), LearnedModelPrefix+"-g1-") {
		t.Errorf("model id %q does not name generation 1", a.ID())
	}
	if c := learnModel(t, learnedCorpus, 2); c.ID() == a.ID() || !strings.HasPrefix(c.ID(), LearnedModelPrefix+"-g2-") {
		t.Errorf("generation 2 has id %q (generation 1: %q)", c.ID(), a.ID())
	}
	if c := learnModel(t, append(slices.Clone(learnedCorpus), "a ninth text about cars"), 1); c.ID() == a.ID() {
		t.Errorf("other texts learned the same model id %q", c.ID())
	}
	raw, err := a.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	back, err := UnmarshalLearnedModel(raw)
	if err != nil {
		t.Fatal(err)
	}
	if back.ID() != a.ID() || back.Docs() != len(learnedCorpus) || back.Vocabulary() != a.Vocabulary() {
		t.Fatalf("round trip: %s/%d/%d, want %s/%d/%d", back.ID(), back.Docs(), back.Vocabulary(), a.ID(), len(learnedCorpus), a.Vocabulary())
	}
	e1, e2 := NewLearnedEmbedder(DefaultLearnConfig()), NewLearnedEmbedder(DefaultLearnConfig())
	_ = e1.Use(a)
	_ = e2.Use(back)
	text := "the engine of my automobile burns fuel"
	v1, v2 := embed(t, e1, text)[0], embed(t, e2, text)[0]
	if !slices.Equal(v1, v2) {
		t.Error("a stored and reloaded model embeds differently")
	}
	if _, err := UnmarshalLearnedModel(raw[:len(raw)-3]); err == nil {
		t.Error("a truncated model decoded without an error")
	}
}

func TestLearnedEmbedderBeforeLearningRanksAsTheHashedOne(t *testing.T) {
	e := NewLearnedEmbedder(DefaultLearnConfig())
	if e.Model() != LearnedModelPrefix+"-g0" {
		t.Errorf("model before learning = %q", e.Model())
	}
	texts := []string{"raft leader election heartbeat", "leader elected by raft", "sourdough bread"}
	lv, hv := embed(t, e, texts...), embed(t, NewHashEmbedder(), texts...)
	for i := range texts {
		if len(lv[i]) != e.Dim() {
			t.Fatalf("len %d, want %d", len(lv[i]), e.Dim())
		}
		for j := range texts {
			if d := cosine(lv[i], lv[j]) - cosine(hv[i], hv[j]); d > 1e-6 || d < -1e-6 {
				t.Errorf("cosine %d/%d differs from the hashed embedder's by %g", i, j, d)
			}
		}
	}
}

func TestLearnHonoursContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Learn(ctx, learnedCorpus, 1, DefaultLearnConfig()); err == nil {
		t.Error("Learn with a cancelled context returned no error")
	}
}

func TestLearnSampleLearnsWhatLearnSamples(t *testing.T) {
	cfg := DefaultLearnConfig()
	cfg.MaxDocs = 5
	var texts []string
	for i := 0; i < 40; i++ {
		texts = append(texts, learnedCorpus[i%len(learnedCorpus)]+" number "+strings.Repeat("x", i%7))
	}
	s := NewLearnSample(cfg.MaxDocs)
	for _, x := range texts {
		s.Add(x)
	}
	if s.Len() != 5 {
		t.Fatalf("kept %d texts, want 5", s.Len())
	}
	a, err := Learn(context.Background(), texts, 1, cfg)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Learn(context.Background(), s.Texts(), 1, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if a.ID() != b.ID() || a.Docs() != 5 {
		t.Errorf("learned from the sample %s (%d texts), from all %s (%d)", b.ID(), b.Docs(), a.ID(), a.Docs())
	}
}

// A text said many times keeps its copies in the sample in proportion to
// how often it is said, whatever the order the texts come in: keyed by the
// text alone, its copies were all kept or all left out, and a word left out
// counts as the rarest.
func TestLearnSampleKeepsCopiesInProportion(t *testing.T) {
	const said, unique, keep = 1000, 2000, 300
	var texts []string
	for i := range unique {
		texts = append(texts, fmt.Sprintf("note %d about the cello", i))
	}
	for range said {
		texts = append(texts, "Same here, honestly.")
	}
	cfg := DefaultLearnConfig()
	cfg.MaxDocs = keep
	count := func(order []string) (int, string) {
		s := NewLearnSample(keep)
		for _, x := range order {
			s.Add(x)
		}
		n := 0
		for _, x := range s.Texts() {
			if x == "Same here, honestly." {
				n++
			}
		}
		m, err := Learn(context.Background(), s.Texts(), 1, cfg)
		if err != nil {
			t.Fatal(err)
		}
		return n, m.ID()
	}
	n, id := count(texts)
	// 1000 of 3000 texts: a third of the sample, give or take.
	if n < keep/6 || n > keep/2 {
		t.Errorf("the sample of %d holds %d copies of a text that is a third of the texts", keep, n)
	}
	shuffled := slices.Clone(texts)
	rand.New(rand.NewPCG(1, 2)).Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	if n2, id2 := count(shuffled); n2 != n || id2 != id {
		t.Errorf("another order kept %d copies (model %s), first %d (%s)", n2, id2, n, id)
	}
	all, err := Learn(context.Background(), shuffled, 1, cfg)
	if err != nil || all.ID() != id {
		t.Errorf("Learn of every text: %s %v, the sample's %s", all.ID(), err, id)
	}
	if sp := all.Specificity("Same here, honestly."); sp > 0.5 {
		t.Errorf("small talk said a thousand times has specificity %.2f", sp)
	}
}

// TestLearnedHashIDF: with HashIDF the hashed part weights a store's rare
// words above its common ones, the weight is part of the model (another
// HashIDF is another model id), and a model of the format before it is
// reported as superseded, not damaged.
func TestLearnedHashIDF(t *testing.T) {
	corpus := append(slices.Clone(learnedCorpus), "the oven and the engine", "an oven, an engine and wheels")
	plain := DefaultLearnConfig()
	plain.HashIDF = 0
	m0, err := Learn(context.Background(), corpus, 1, plain)
	if err != nil {
		t.Fatal(err)
	}
	m1 := learnModel(t, corpus, 1)
	if m0.ID() == m1.ID() {
		t.Errorf("HashIDF 0 and %.2f learned the same model id %s", DefaultLearnConfig().HashIDF, m1.ID())
	}
	// "violin" is in one text, "engine" in five: the query of both leans
	// towards the violin text once rare words count more.
	docs := []string{"violin", "engine"}
	lean := func(m *LearnedModel, cfg LearnConfig) float64 {
		e := NewLearnedEmbedder(cfg)
		if err := e.Use(m); err != nil {
			t.Fatal(err)
		}
		vs := embed(t, e, append(docs, "violin engine")...)
		return cosine(vs[2], vs[0]) - cosine(vs[2], vs[1])
	}
	if a, b := lean(m0, plain), lean(m1, DefaultLearnConfig()); b <= a {
		t.Errorf("the rare word's lead is %.3f with HashIDF, %.3f without", b, a)
	}
	raw, err := m1.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	raw[0] = 1 // the format before HashIDF
	if _, err := UnmarshalLearnedModel(raw); !errors.Is(err, ErrOldLearnedModel) {
		t.Errorf("a format 1 model: %v, want ErrOldLearnedModel", err)
	}
}
