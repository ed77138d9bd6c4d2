package bolt

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	bbolt "go.etcd.io/bbolt"

	"mnemo/contract"
	"mnemo/engine/bolt/internal/vecblock"
	"mnemo/engine/retrieval"
)

// countingEmbedder records the texts it is asked to embed.
type countingEmbedder struct {
	retrieval.Embedder
	mu    sync.Mutex
	texts []string
}

func (c *countingEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	c.mu.Lock()
	c.texts = append(c.texts, texts...)
	c.mu.Unlock()
	return c.Embedder.Embed(ctx, texts)
}

// TestReembedEmbedsOnlyWhatLacksTheModel: a generation's re-embedding
// embeds the records without a vector of that generation (none, or an
// earlier model's) and leaves those that hold one (the index's catch-up
// embedded them with it meanwhile), which the embedder would give the same
// vector again; afterwards every record holds one of the generation.
func TestReembedEmbedsOnlyWhatLacksTheModel(t *testing.T) {
	ctx := context.Background()
	e, err := Open(t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Close() })
	var items []contract.StoreItem
	for i := range 150 {
		items = append(items, contract.Document(fmt.Sprintf("note %d about the %s", i, []string{"car", "violin", "bread"}[i%3]), contract.MemoryMeta{}))
	}
	for lo := 0; lo < len(items); lo += contract.MaxStoreMany {
		if _, err := contract.StoreMany(ctx, e, items[lo:min(lo+contract.MaxStoreMany, len(items))]); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.WaitEmbedder(ctx); err != nil {
		t.Fatal(err)
	}
	model := e.embedder.Model()
	tag := vecblock.ModelTag(model)
	lacking := map[uint32]bool{3: true, 50: true, 120: true}
	older := uint32(7)
	e.mu.Lock()
	for ord := range lacking {
		e.vec.store.setTag(ord, 0)
	}
	e.vec.store.setTag(older, vecblock.ModelTag("an earlier generation"))
	var ids []string
	for ord := range uint32(150) {
		if lacking[ord] || ord == older {
			ids = append(ids, e.t.idOf(ord))
		}
	}
	counting := &countingEmbedder{Embedder: e.embedder}
	e.embedder = counting
	e.mu.Unlock()
	var want []string
	err = e.db.View(func(tx *bbolt.Tx) error {
		for _, id := range ids {
			s, err := e.codec.decode(e.records(tx).Get(id), partHit, parseNS)
			if err != nil {
				return err
			}
			want = append(want, s.text)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}

	if err := e.reembed(ctx, model); err != nil {
		t.Fatal(err)
	}
	slices.Sort(want)
	slices.Sort(counting.texts)
	if !slices.Equal(counting.texts, want) {
		t.Errorf("re-embedded %q, want only the records lacking the generation's vector %q", counting.texts, want)
	}
	e.mu.RLock()
	defer e.mu.RUnlock()
	for ord := range uint32(150) {
		if !e.vec.store.holds(ord, tag) {
			t.Errorf("ordinal %d holds no vector of %s after the re-embedding", ord, model)
		}
	}
}

// TestCheckNamesAReembeddingUnderWay: while a new generation re-embeds the
// store, records that still hold the previous generation's vector are work
// under way, which check names in a note and does not count as damage (a
// CI run's check met 173 of them right after a bulk load); once no
// re-embedding runs, a record without the generation's vector disagrees.
func TestCheckNamesAReembeddingUnderWay(t *testing.T) {
	ctx := context.Background()
	e, err := Open(t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Close() })
	if e.learn == nil {
		t.Fatal("the default embedder is not the learned one; this test needs a learner")
	}
	var items []contract.StoreItem
	for i := range 60 {
		items = append(items, contract.Document(fmt.Sprintf("note %d about the %s", i, []string{"car", "violin", "bread"}[i%3]), contract.MemoryMeta{}))
	}
	if _, err := contract.StoreMany(ctx, e, items); err != nil {
		t.Fatal(err)
	}
	if err := e.WaitEmbedder(ctx); err != nil {
		t.Fatal(err)
	}
	vectorsEntry := func() CheckEntry {
		t.Helper()
		rep, err := e.Check(ctx, false, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range rep.Checks {
			if c.Name == checkVectors {
				return c
			}
		}
		t.Fatalf("check reported no %q entry", checkVectors)
		return CheckEntry{}
	}
	if c := vectorsEntry(); c.Disagreements != 0 || c.Note != "" {
		t.Fatalf("a settled store's vectors: %+v", c)
	}

	// A new generation is put in use and its re-embedding has reached all
	// but 20 records; one record's vector was lost outright.
	e.learn.busy.Store(true)
	e.mu.Lock()
	prev := e.vec.store.tag
	e.vec.store.use("a next generation")
	next := e.vec.store.tag
	for ord := uint32(20); ord < 60; ord++ {
		e.vec.store.setTag(ord, next)
	}
	e.vec.store.setTag(5, 0)
	e.mu.Unlock()
	if e.vec.store.prev != prev {
		t.Fatalf("the previous tag is %d, want %d", e.vec.store.prev, prev)
	}
	c := vectorsEntry()
	if c.Disagreements != 1 || !strings.Contains(c.Examples[0], "has no vector") {
		t.Errorf("during the re-embedding, the record without any vector: %+v", c)
	}
	if want := "19 records still hold the previous generation's vector: the store is being re-embedded"; c.Note != want {
		t.Errorf("note %q, want %q", c.Note, want)
	}

	// The re-embedding stopped without reaching them: they disagree.
	e.learn.busy.Store(false)
	if c := vectorsEntry(); c.Disagreements != 20 || c.Note != "" {
		t.Errorf("after the re-embedding stopped: %d disagreements, note %q; want 20 and none", c.Disagreements, c.Note)
	}
}
