package retrieval_test

import (
	"context"
	"os"
	"runtime"
	"strconv"
	"testing"
	"time"

	"mnemo/bench/corpus"
	"mnemo/engine/retrieval"
)

// TestLearnCost measures what one generation costs on the benchmark corpus
// (MNEMO_LEARN_RECORDS records, default 100,000): streaming every text
// through the sample, learning from it, and re-embedding every record, with
// the heap the model and the learning hold. It only logs (run it with -v).
//
//	MNEMO_LEARN_RECORDS=1000000 go test ./engine/retrieval -run TestLearnCost -v
func TestLearnCost(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("MNEMO_LEARN_RECORDS"))
	if n == 0 {
		t.Skip("set MNEMO_LEARN_RECORDS to measure")
	}
	ctx := context.Background()
	cfg := retrieval.DefaultLearnConfig()
	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	t0 := time.Now()
	sample := retrieval.NewLearnSample(cfg.MaxDocs)
	var bytes int64
	corpus.Each(n, 1, func(_ int, e corpus.Entry) bool {
		text := e.Item.RenderText()
		bytes += int64(len(text))
		sample.Add(text)
		return true
	})
	sampled := time.Since(t0)
	t1 := time.Now()
	m, err := retrieval.Learn(ctx, sample.Texts(), 1, cfg)
	if err != nil {
		t.Fatal(err)
	}
	learned := time.Since(t1)
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	emb := retrieval.NewLearnedEmbedder(cfg)
	if err := emb.Use(m); err != nil {
		t.Fatal(err)
	}
	hash := retrieval.NewHashEmbedder()
	var texts []string
	corpus.Each(min(n, 20000), 2, func(_ int, e corpus.Entry) bool {
		texts = append(texts, e.Item.RenderText())
		return true
	})
	t2 := time.Now()
	if _, err := emb.Embed(ctx, texts); err != nil {
		t.Fatal(err)
	}
	perLearned := time.Since(t2) / time.Duration(len(texts))
	t3 := time.Now()
	if _, err := hash.Embed(ctx, texts); err != nil {
		t.Fatal(err)
	}
	perHash := time.Since(t3) / time.Duration(len(texts))
	t.Logf("%d records (%d MB of text): sample of %d in %s, learned in %s (vocabulary %d, model %d MB, %d MB allocated while learning, heap %d MB after); embedding %s a text (hashed alone %s): re-embedding all %d records ~%s of CPU",
		n, bytes>>20, sample.Len(), sampled.Round(time.Millisecond), learned.Round(time.Millisecond), m.Vocabulary(), m.Bytes()>>20,
		(after.TotalAlloc-before.TotalAlloc)>>20, after.HeapAlloc>>20, perLearned, perHash, n, (perLearned * time.Duration(n)).Round(time.Second))
}
