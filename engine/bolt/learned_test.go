package bolt_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	bbolt "go.etcd.io/bbolt"

	"mnemo/contract"
	"mnemo/engine/bolt"
	"mnemo/engine/retrieval"
)

// vehicleItems: a fifth of the records about cars, never saying "automobile"; three
// that do, and records on other topics.
func vehicleItems(n int) []contract.StoreItem {
	car := []string{"the car needs fuel for its engine", "new wheels and tyres for the car", "the car engine stalls when cold",
		"fuel consumption of my car rose", "the car dealer checked engine and wheels"}
	other := []string{"the violin has four strings and a bow", "yeast makes the bread dough rise in the oven",
		"the cello and violin played strings together", "the baker kneads dough before the oven"}
	var items []contract.StoreItem
	for i := 0; len(items) < n; i++ {
		var text string
		switch {
		case i < 3:
			text = fmt.Sprintf("the automobile engine burns fuel and turns the wheels (%d)", i)
		case i%5 == 0:
			text = fmt.Sprintf("%s, note %d", car[i%len(car)], i)
		default:
			text = fmt.Sprintf("%s, note %d", other[i%len(other)], i)
		}
		items = append(items, contract.Document(text, contract.MemoryMeta{Tags: []string{"vehicles"}}))
	}
	return items
}

func carHits(t *testing.T, e *bolt.Engine, q string) (cars int, top []string) {
	t.Helper()
	page, err := e.Fetch(context.Background(), contract.FetchRequest{Query: q, Mode: contract.ModeVector, Limit: 20})
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range page.Hits {
		if strings.Contains(h.Text, " car") && !strings.Contains(h.Text, "automobile") {
			cars++
		}
		top = append(top, h.Text)
	}
	return cars, top
}

// TestLearnedEmbedderLearnsFromTheStore: the default embedder learns from
// the store's own text once it holds enough records, so a vector search
// finds records by a word they never use; it relearns (a new generation)
// as the store grows, and a reopened store keeps its generation.
func TestLearnedEmbedderLearnsFromTheStore(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	e, err := bolt.Open(dir, bolt.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := e.EmbedderModel(); got != retrieval.LearnedModelPrefix+"-g0" {
		t.Errorf("a new store embeds with %q, want the generation 0 id", got)
	}
	if _, err := contract.StoreMany(ctx, e, vehicleItems(100)); err != nil {
		t.Fatal(err)
	}
	if _, err := contract.StoreMany(ctx, e, vehicleItems(140)[100:]); err != nil {
		t.Fatal(err)
	}
	// Keyword search does not wait for the learning.
	if page, err := e.Fetch(ctx, contract.FetchRequest{Query: "bread", Mode: contract.ModeKeyword, Limit: 3}); err != nil || len(page.Hits) == 0 {
		t.Fatalf("keyword fetch while learning: %v %v", page.Hits, err)
	}
	if err := e.WaitEmbedder(ctx); err != nil {
		t.Fatal(err)
	}
	gen1 := e.EmbedderModel()
	if !strings.HasPrefix(gen1, retrieval.LearnedModelPrefix+"-g") || strings.HasSuffix(gen1, "-g0") {
		t.Fatalf("after 140 records the store embeds with %q, want a learned generation", gen1)
	}
	if cars, top := carHits(t, e, "automobile"); cars < 15 {
		t.Errorf("vector search for \"automobile\" has %d records about cars that never say it in its top 20, want >= 15: %q", cars, top)
	}
	// Growth by more than a tenth learns the next generation.
	more := vehicleItems(200)[140:]
	for i := range more {
		more[i].Text += " (later)"
	}
	if _, err := contract.StoreMany(ctx, e, more); err != nil {
		t.Fatal(err)
	}
	if err := e.WaitEmbedder(ctx); err != nil {
		t.Fatal(err)
	}
	gen2 := e.EmbedderModel()
	if gen2 == gen1 || strings.HasSuffix(gen2, "-g0") {
		t.Fatalf("after growing to 200 records the model is %q (before: %q)", gen2, gen1)
	}
	_, before := carHits(t, e, "automobile")
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	e = openStore(t, dir, bolt.Options{})
	if got := e.EmbedderModel(); got != gen2 {
		t.Errorf("reopened with %q, want the stored generation %q", got, gen2)
	}
	if err := e.WaitEmbedder(ctx); err != nil {
		t.Fatal(err)
	}
	if got := e.EmbedderModel(); got != gen2 {
		t.Errorf("a reopened store that did not change learned again: %q, was %q", got, gen2)
	}
	// Stored vectors are int8: near ties further down may swap.
	if _, after := carHits(t, e, "automobile"); strings.Join(after[:10], "\n") != strings.Join(before[:10], "\n") {
		t.Errorf("vector results changed across a reopen:\n%q\n%q", before, after)
	}
}

// TestLearnedEmbedderIsDeterministic: two stores holding the same text embed
// it the same, whatever the batches it came in.
func TestLearnedEmbedderIsDeterministic(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	items := vehicleItems(180)
	results := make([][]string, 2)
	for i, batch := range []int{100, 7} {
		e := openStore(t, t.TempDir(), bolt.Options{})
		for lo := 0; lo < len(items); lo += batch {
			if _, err := contract.StoreMany(ctx, e, items[lo:min(lo+batch, len(items))]); err != nil {
				t.Fatal(err)
			}
		}
		if err := e.WaitEmbedder(ctx); err != nil {
			t.Fatal(err)
		}
		page, err := e.Fetch(ctx, contract.FetchRequest{Query: "automobile fuel", Mode: contract.ModeVector, Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range page.Hits {
			results[i] = append(results[i], fmt.Sprintf("%.6f %s", h.Score, h.Text))
		}
		m := e.EmbedderModel()
		results[i] = append(results[i], m[strings.LastIndex(m, "-"):])
	}
	if strings.Join(results[0], "\n") != strings.Join(results[1], "\n") {
		t.Errorf("the same text embeds differently:\n%s\n--\n%s", strings.Join(results[0], "\n"), strings.Join(results[1], "\n"))
	}
}

// TestLearnedEmbedderUpgradesAnOlderModel: a store whose stored model is of
// the format before the current one (mnemo-ri-v1, before HashIDF) is not
// used; the store learns a current generation and re-embeds, and vector
// search works throughout.
func TestLearnedEmbedderUpgradesAnOlderModel(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	e, err := bolt.Open(dir, bolt.Options{})
	if err != nil {
		t.Fatal(err)
	}
	items := vehicleItems(140)
	for _, batch := range [][]contract.StoreItem{items[:100], items[100:]} {
		if _, err := contract.StoreMany(ctx, e, batch); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.WaitEmbedder(ctx); err != nil {
		t.Fatal(err)
	}
	gen := e.EmbedderModel()
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	damage(t, dir, func(tx *bbolt.Tx) error {
		b := tx.Bucket([]byte("learned"))
		raw := append([]byte(nil), b.Get([]byte("model"))...)
		if len(raw) == 0 {
			return fmt.Errorf("no stored model")
		}
		raw[0] = 1 // the format of mnemo-ri-v1
		return b.Put([]byte("model"), raw)
	})
	e = openStore(t, dir, bolt.Options{})
	if err := e.WaitEmbedder(ctx); err != nil {
		t.Fatal(err)
	}
	if got := e.EmbedderModel(); got != gen {
		t.Errorf("after the upgrade the store embeds with %q, want %q learned again from the same text", got, gen)
	}
	if cars, top := carHits(t, e, "automobile"); cars < 15 {
		t.Errorf("after the upgrade vector search for \"automobile\" has %d records about cars in its top 20: %q", cars, top)
	}
}

// TestLearnFirstPutsAGenerationInUseBeforeEmbedding: a process that opens a
// store whose bulk-loaded records hold no vector yet (mnemo import's
// finisher) learns the generation first, so its catch-up embeds with it;
// the learner then has nothing left to learn, and vector search finds the
// records by a word they never use. A store too small to learn from keeps
// generation 0.
func TestLearnFirstPutsAGenerationInUseBeforeEmbedding(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	e, err := bolt.Open(dir, bolt.Options{})
	if err != nil {
		t.Fatal(err)
	}
	e.SetBulk(true)
	items := vehicleItems(2500)
	for start := 0; start < len(items); start += contract.MaxStoreBulk {
		if _, err := e.StoreBulk(ctx, items[start:min(start+contract.MaxStoreBulk, len(items))], contract.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	e.SetBulk(false)
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if n := bucketLen(t, dir, "vector_blocks"); n != 0 {
		t.Fatalf("the loading process embedded %d blocks: nothing is left to learn first", n)
	}
	e, err = bolt.Open(dir, bolt.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if err := e.LearnFirst(ctx); err != nil {
		t.Fatal(err)
	}
	gen1 := e.EmbedderModel()
	if gen1 != retrieval.LearnedModelPrefix+"-g1" && !strings.HasPrefix(gen1, retrieval.LearnedModelPrefix+"-g1-") {
		t.Fatalf("after LearnFirst the store embeds with %q, want generation 1", gen1)
	}
	if err := e.WaitEmbedder(ctx); err != nil {
		t.Fatal(err)
	}
	if got := e.EmbedderModel(); got != gen1 {
		t.Errorf("the learner learned again after LearnFirst: %q, want %q", got, gen1)
	}
	if cars, top := carHits(t, e, "automobile"); cars < 10 {
		t.Errorf("vector search for a word the car records never use found %d of them: %q", cars, top)
	}

	small, err := bolt.Open(t.TempDir(), bolt.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer small.Close()
	if _, err := contract.StoreMany(ctx, small, vehicleItems(20)); err != nil {
		t.Fatal(err)
	}
	if err := small.LearnFirst(ctx); err != nil {
		t.Fatal(err)
	}
	if got := small.EmbedderModel(); got != retrieval.LearnedModelPrefix+"-g0" {
		t.Errorf("a store of 20 records learned %q", got)
	}
}

// bucketLen counts the keys of a bucket of the closed store in dir.
func bucketLen(t *testing.T, dir, bucket string) int {
	t.Helper()
	db, err := bbolt.Open(dir+"/"+bolt.DBFile, 0o600, &bbolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	n := 0
	_ = db.View(func(tx *bbolt.Tx) error {
		if b := tx.Bucket([]byte(bucket)); b != nil {
			n = b.Stats().KeyN
		}
		return nil
	})
	return n
}
