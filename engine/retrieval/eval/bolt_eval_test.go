package eval

import (
	"context"
	"fmt"
	"testing"

	"mnemo/contract"
	"mnemo/engine/bolt"
	"mnemo/engine/retrieval"
)

// evalBolt runs the harness against a fresh engine/bolt store in a temporary
// directory, with the given embedder.
func evalBolt(t *testing.T, emb retrieval.Embedder) Report {
	t.Helper()
	e, err := bolt.Open(t.TempDir(), bolt.Options{Embedder: emb})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	rep, err := Run(context.Background(), e)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// TestEvalBolt is the product's figure: engine/bolt (Bleve BM25 + the default
// hashed embedder, fused by retrieval.Blend). Its targets: keyword at least
// 0.02 above the textbook BM25 on paraphrased queries, and hybrid not below
// keyword on paraphrased or exact queries.
func TestEvalBolt(t *testing.T) {
	if !*runEval {
		t.Skip("run with -eval")
	}
	rep := evalBolt(t, retrieval.NewHashEmbedder())
	t.Logf("corpus stored in %s\n%s", rep.LoadTime, rep.Table())
	t.Logf("hybrid against keyword, per query:\n%s", rep.Misses(contract.ModeKeyword, contract.ModeHybrid))
	queries, err := Queries()
	if err != nil {
		t.Fatal(err)
	}
	bm, err := BM25Notes(queries)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("textbook BM25 (MRR / recall): exact %s, paraphrase %s, all %s", cells(bm[KindExact]), cells(bm[KindParaphrase]), cells(bm[KindAll]))
	kw, hy := rep.Modes[0].ByKind, rep.Modes[2].ByKind
	if kw[KindParaphrase].MRR < bm[KindParaphrase].MRR+0.02 {
		t.Errorf("keyword paraphrase MRR %.3f is below textbook BM25 %.3f + 0.02", kw[KindParaphrase].MRR, bm[KindParaphrase].MRR)
	}
	if hy[KindParaphrase].MRR < kw[KindParaphrase].MRR {
		t.Errorf("hybrid paraphrase MRR %.3f is below keyword %.3f", hy[KindParaphrase].MRR, kw[KindParaphrase].MRR)
	}
	if hy[KindExact].MRR < kw[KindExact].MRR-0.02 || hy[KindExact].Recall < kw[KindExact].Recall {
		t.Errorf("hybrid loses on exact queries: %+v against keyword %+v", hy[KindExact], kw[KindExact])
	}
}

// TestEvalBoltHoldout repeats the bolt evaluation on the held-out queries,
// written after the embedder's tuning.
func TestEvalBoltHoldout(t *testing.T) {
	if !*runEval {
		t.Skip("run with -eval")
	}
	queries, err := HoldoutQueries()
	if err != nil {
		t.Fatal(err)
	}
	e, err := bolt.Open(t.TempDir(), bolt.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	rep, err := RunWith(context.Background(), e, queries)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("held-out queries\n%s", rep.Table())
	if bm, err := BM25Notes(queries); err == nil {
		t.Logf("textbook BM25 on the held-out queries (MRR / recall): %s", cells(bm[KindAll]))
	}
	out := "| embedder | held-out paraphrase MRR | recall@10 |\n| --- | --- | --- |\n"
	for _, v := range []struct {
		name string
		edit func(*retrieval.HashConfig)
	}{
		{"default", func(*retrieval.HashConfig) {}},
		{"dim 256, char weight 0.8 (first untuned guess)", func(c *retrieval.HashConfig) { c.Dim, c.CharWeight = 256, 0.8 }},
		{"words only", func(c *retrieval.HashConfig) { c.CharWeight, c.BigramWeight = 0, 0 }},
		{"no stemming", func(c *retrieval.HashConfig) { c.Stem = false }},
	} {
		cfg := retrieval.DefaultHashConfig()
		v.edit(&cfg)
		res, err := RunEmbedderWith(context.Background(), retrieval.NewHashEmbedderWith(cfg), queries)
		if err != nil {
			t.Fatal(err)
		}
		out += fmt.Sprintf("| %s | %.3f | %.3f |\n", v.name, res.Float32[KindAll].MRR, res.Float32[KindAll].Recall)
	}
	t.Logf("vector search alone, held-out queries\n%s", out)
}

// TestEvalEmbedders compares hashed-embedder configurations on vector search
// alone (no engine), float32 and int8: the tuning loop behind
// DefaultHashConfig.
func TestEvalEmbedders(t *testing.T) {
	if !*runEval {
		t.Skip("run with -eval")
	}
	variants := []struct {
		name string
		edit func(*retrieval.HashConfig)
	}{
		{"default", func(*retrieval.HashConfig) {}},
		{"dim 128", func(c *retrieval.HashConfig) { c.Dim = 128 }},
		{"dim 256", func(c *retrieval.HashConfig) { c.Dim = 256 }},
		{"dim 1024", func(c *retrieval.HashConfig) { c.Dim = 1024 }},
		{"words only", func(c *retrieval.HashConfig) { c.CharWeight, c.BigramWeight = 0, 0 }},
		{"chars only", func(c *retrieval.HashConfig) { c.WordWeight, c.BigramWeight = 0, 0 }},
		{"no bigrams", func(c *retrieval.HashConfig) { c.BigramWeight = 0 }},
		{"no stemming", func(c *retrieval.HashConfig) { c.Stem = false }},
		{"keep stop words", func(c *retrieval.HashConfig) { c.KeepStopWords = true }},
		{"char 3 only", func(c *retrieval.HashConfig) { c.CharMax = 3 }},
		{"char 3..5", func(c *retrieval.HashConfig) { c.CharMax = 5 }},
		{"char weight 0.5", func(c *retrieval.HashConfig) { c.CharWeight = 0.5 }},
		{"char weight 1.2", func(c *retrieval.HashConfig) { c.CharWeight = 1.2 }},
	}
	out := "| embedder | exact MRR | paraphrase MRR | all MRR | all recall | int8 all MRR | int8 agreement@10 |\n| --- | --- | --- | --- | --- | --- | --- |\n"
	for _, v := range variants {
		cfg := retrieval.DefaultHashConfig()
		v.edit(&cfg)
		res, err := RunEmbedder(context.Background(), retrieval.NewHashEmbedderWith(cfg))
		if err != nil {
			t.Fatal(err)
		}
		out += fmt.Sprintf("| %s | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f |\n", v.name,
			res.Float32[KindExact].MRR, res.Float32[KindParaphrase].MRR, res.Float32[KindAll].MRR, res.Float32[KindAll].Recall,
			res.Int8[KindAll].MRR, res.Int8Agreement)
	}
	t.Logf("\n%s", out)
}
