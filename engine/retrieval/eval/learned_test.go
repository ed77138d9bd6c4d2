package eval

import (
	"context"
	"strconv"
	"testing"

	"mnemo/engine/retrieval"
)

// learnedOn is a learned embedder whose one generation learned from texts.
func learnedOn(t *testing.T, texts []string, cfg retrieval.LearnConfig) retrieval.Embedder {
	t.Helper()
	m, err := retrieval.Learn(context.Background(), texts, 1, cfg)
	if err != nil {
		t.Fatal(err)
	}
	e := retrieval.NewLearnedEmbedder(cfg)
	if err := e.Use(m); err != nil {
		t.Fatal(err)
	}
	return e
}

func docTexts(ds []KnownDoc) []string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = d.Text()
	}
	return out
}

// TestLearnedEmbedderSweep: vector search alone with the learned embedder,
// each set's model learned from that set's documents, over its settings.
//
//	go test ./engine/retrieval/eval -run TestLearnedEmbedderSweep -v -args -eval
func TestLearnedEmbedderSweep(t *testing.T) {
	if !*runEval {
		t.Skip("run with -eval")
	}
	sets := knownItemSets(t)
	notes, _ := Corpus()
	hold, _ := HoldoutQueries()
	var nt []string
	for _, n := range notes {
		nt = append(nt, n.Item.RenderText())
	}
	ctx := context.Background()
	variants := []struct {
		name string
		edit func(*retrieval.LearnConfig)
	}{
		{"default", func(*retrieval.LearnConfig) {}},
		{"index weight 0", func(c *retrieval.LearnConfig) { c.IndexWeight = 0 }},
		{"index weight 0.5", func(c *retrieval.LearnConfig) { c.IndexWeight = 0.5 }},
		{"weight 0.5", func(c *retrieval.LearnConfig) { c.Weight = 0.5 }},
		{"weight 1.5", func(c *retrieval.LearnConfig) { c.Weight = 1.5 }},
		{"no stemming", func(c *retrieval.LearnConfig) { c.Stem = false }},
		{"min df 2", func(c *retrieval.LearnConfig) { c.MinDF = 2 }},
		{"vocabulary 5,000", func(c *retrieval.LearnConfig) { c.MaxVocab = 5000 }},
		{"sample 1,000 texts", func(c *retrieval.LearnConfig) { c.MaxDocs = 1000 }},
		{"full queries (query dims 0)", func(c *retrieval.LearnConfig) { c.QueryDims = 0 }},
		{"query dims 32", func(c *retrieval.LearnConfig) { c.QueryDims = 32 }},
		{"query dims 96", func(c *retrieval.LearnConfig) { c.QueryDims = 96 }},
		{"query dims 128", func(c *retrieval.LearnConfig) { c.QueryDims = 128 }},
		{"weight 1.0", func(c *retrieval.LearnConfig) { c.Weight = 1 }},
		{"weight 1.0, full queries", func(c *retrieval.LearnConfig) { c.Weight, c.QueryDims = 1, 0 }},
		{"dim 128", func(c *retrieval.LearnConfig) { c.Dim = 128 }},
		{"dim 512", func(c *retrieval.LearnConfig) { c.Dim = 512 }},
		{"hashed part unweighted (HashIDF 0, mnemo-ri-v1), full queries", func(c *retrieval.LearnConfig) { c.HashIDF, c.QueryDims = 0, 0 }},
		{"HashIDF 0.5, full queries", func(c *retrieval.LearnConfig) { c.HashIDF, c.QueryDims = 0.5, 0 }},
		{"HashIDF 1, full queries", func(c *retrieval.LearnConfig) { c.HashIDF, c.QueryDims = 1, 0 }},
	}
	out := "| learned embedder | notes paraphrase | held-out | go-doc | man-pages |\n|---|---|---|---|---|\n"
	hash := retrieval.NewHashEmbedder()
	r, _ := RunEmbedder(ctx, hash)
	h, _ := RunEmbedderWith(ctx, hash, hold)
	out += "| " + retrieval.HashModelID + " | " + f3(r.Float32[KindParaphrase].MRR) + " | " + f3(h.Float32[KindAll].MRR) + " | " +
		f3(knownVectorMRR(t, sets[0], hash)) + " | " + f3(knownVectorMRR(t, sets[1], hash)) + " |\n"
	for _, v := range variants {
		cfg := retrieval.DefaultLearnConfig()
		v.edit(&cfg)
		en := learnedOn(t, nt, cfg)
		r, _ := RunEmbedder(ctx, en)
		h, _ := RunEmbedderWith(ctx, en, hold)
		out += "| " + v.name + " | " + f3(r.Float32[KindParaphrase].MRR) + " | " + f3(h.Float32[KindAll].MRR) + " | " +
			f3(knownVectorMRR(t, sets[0], learnedOn(t, docTexts(sets[0].Docs), cfg))) + " | " +
			f3(knownVectorMRR(t, sets[1], learnedOn(t, docTexts(sets[1].Docs), cfg))) + " |\n"
	}
	t.Logf("vector search alone, MRR@10\n%s", out)
}

func f3(x float64) string { return strconv.FormatFloat(x, 'f', 3, 64) }
