package bolt_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"mnemo/contract"
	"mnemo/engine/bolt"
	"mnemo/engine/retrieval"
)

// TestConcurrentReadersAndWriters runs writers and every kind of reader at
// once (run it with -race); every read must succeed and browse totals must
// stay within what was written.
func TestConcurrentReadersAndWriters(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := openStore(t, t.TempDir(), bolt.Options{})
	var wg sync.WaitGroup
	var written atomic.Int64
	errs := make(chan error, 64)
	for w := 0; w < 3; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 15; i++ {
				items := markerItems(10, fmt.Sprintf("w%d-%d", w, i))
				// Counted before the write: a reader may see it before StoreMany returns.
				written.Add(10)
				if _, err := contract.StoreMany(ctx, e, items); err != nil {
					errs <- err
					return
				}
				if i%5 == 4 {
					if _, err := e.Forget(ctx, contract.ForgetIDs(items[0].Fingerprint())); err != nil {
						errs <- err
						return
					}
				}
			}
		}()
	}
	for r := 0; r < 3; r++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 30; i++ {
				page, err := e.Browse(ctx, contract.BrowseQuery{Limit: 20, Filters: []contract.BrowseFilter{{Field: "content", Op: "contains", Text: marker}}})
				if err == nil && int64(page.Total) > written.Load() {
					err = fmt.Errorf("browse total %d above the %d written", page.Total, written.Load())
				}
				if err == nil {
					_, err = e.Fetch(ctx, contract.FetchRequest{Query: marker, Mode: contract.ModeHybrid, Limit: 5})
				}
				if err == nil {
					_, err = e.Explore(ctx, contract.ExploreRequest{Facet: contract.FacetTag, Limit: 5, Filter: contract.MetaFilter{Kinds: []contract.ItemKind{contract.KindDocument}}})
				}
				if err == nil {
					_, err = e.List(ctx, contract.ListRequest{Limit: 7})
				}
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if err := e.WaitIndex(ctx); err != nil {
		t.Fatal(err)
	}
	page, err := e.Browse(ctx, contract.BrowseQuery{Limit: 1})
	if err != nil || page.Total != 3*15*10-3*3 {
		t.Fatalf("final total %d, %v", page.Total, err)
	}
}

type countingEmbedder struct {
	retrieval.Embedder
	texts atomic.Int64
}

func (c *countingEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	c.texts.Add(int64(len(texts)))
	return c.Embedder.Embed(ctx, texts)
}

// TestVectorsPersist checks that a reopened store ranks from the stored
// vectors without embedding its records again, and re-embeds when the
// model changes.
func TestVectorsPersist(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	e, err := bolt.Open(dir, bolt.Options{Embedder: retrieval.NewHashEmbedder()})
	if err != nil {
		t.Fatal(err)
	}
	items := markerItems(30, "vectors")
	if _, err := contract.StoreMany(ctx, e, items); err != nil {
		t.Fatal(err)
	}
	q := contract.FetchRequest{Query: marker + " note 7", Mode: contract.ModeVector, Limit: 5}
	before, err := e.Fetch(ctx, q)
	if err != nil || len(before.Hits) == 0 {
		t.Fatalf("vector fetch: %v %v", before.Hits, err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	emb := &countingEmbedder{Embedder: retrieval.NewHashEmbedder()}
	e = openStore(t, dir, bolt.Options{Embedder: emb, SyncRebuildBelow: 1}) // vectors load in the background
	after, err := e.Fetch(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	if got := emb.texts.Load(); got != 1 {
		t.Fatalf("reopen embedded %d texts, want only the query", got)
	}
	// Stored vectors are int8: near ties may swap, the best match may not,
	// and scores move by quantisation error only.
	if before.Hits[0].ID != after.Hits[0].ID || len(before.Hits) != len(after.Hits) {
		t.Fatalf("ranking changed after reopen: %v vs %v", before.Hits, after.Hits)
	}
	for i := range before.Hits {
		if d := float64(before.Hits[i].Score - after.Hits[i].Score); d > 0.02 || d < -0.02 {
			t.Fatalf("score %d moved from %v to %v", i, before.Hits[i].Score, after.Hits[i].Score)
		}
	}
}
