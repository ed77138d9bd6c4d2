package bolt_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"mnemo/contract"
	"mnemo/engine/bolt"
	"mnemo/engine/retrieval"
)

// TestKeywordFiltersTheIndexDoesNotHold: filters on fields the search index
// leaves to the table (file path, folder, url, commit, thread, source id,
// observed_at) rank exactly the records they admit, as deep as the ranking
// goes, whether they admit most of the text's matches or one in a hundred.
func TestKeywordFiltersTheIndexDoesNotHold(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := openStore(t, t.TempDir(), bolt.Options{})
	defer e.Close()
	base := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	var items []contract.StoreItem
	for i := range 400 {
		at := base.Add(time.Duration(i) * time.Hour)
		m := contract.MemoryMeta{
			Folder:     contract.Ptr(fmt.Sprintf("/src/pkg%d", i%100)),
			FilePath:   contract.Ptr(fmt.Sprintf("/src/pkg%d/file%d.go", i%100, i)),
			URL:        contract.Ptr(fmt.Sprintf("https://git.test/r/%d", i)),
			Commit:     contract.Ptr(fmt.Sprintf("c%d", i%3)),
			ObservedAt: &at,
		}
		// Texts of different lengths, so the scores differ, and repeats,
		// so some tie.
		text := "deploy the canary " + fmt.Sprint(slices.Repeat([]string{"rollout"}, i%7))
		items = append(items, contract.Document(text, m))
	}
	for chunk := range slices.Chunk(items, 100) {
		if _, err := contract.StoreMany(ctx, e, chunk); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.WaitIndex(ctx); err != nil {
		t.Fatal(err)
	}
	all := fetchAll(t, e, contract.MetaFilter{})
	if len(all) != 400 {
		t.Fatalf("unfiltered ranking holds %d, want 400", len(all))
	}
	after, before := base.Add(100*time.Hour), base.Add(110*time.Hour)
	for _, f := range []contract.MetaFilter{
		{Folder: contract.Ptr("/src/pkg7")},
		{FilePath: contract.Ptr("/src/pkg42/file342.go")},
		{URL: contract.Ptr("https://git.test/r/5")},
		{Commit: contract.Ptr("c1")},
		{ObservedAfter: &after, ObservedBefore: &before},
		{Commit: contract.Ptr("c2"), Folder: contract.Ptr("/src")},
		{URL: contract.Ptr("https://nowhere.test")},
	} {
		var want []string
		for _, h := range all {
			if f.Matches(h.Kind, &h.Meta) {
				want = append(want, h.ID)
			}
		}
		got := fetchAll(t, e, f)
		var gotIDs []string
		for _, h := range got {
			gotIDs = append(gotIDs, h.ID)
		}
		if !slices.Equal(gotIDs, want) {
			b, _ := f.MarshalJSON()
			t.Fatalf("filter %s ranked %d records %v; the unfiltered ranking admits %d: %v", b, len(gotIDs), gotIDs, len(want), want)
		}
	}
}

// fetchAll pages through a keyword fetch of "deploy canary rollout".
func fetchAll(t *testing.T, e *bolt.Engine, f contract.MetaFilter) []contract.Hit {
	t.Helper()
	var out []contract.Hit
	req := contract.FetchRequest{Query: "deploy canary rollout", Mode: contract.ModeKeyword, Filter: f, Limit: 7}
	for {
		p, err := e.Fetch(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, p.Hits...)
		if p.NextCursor == nil {
			return out
		}
		req.Cursor = p.NextCursor
	}
}

// gatedEmbedder embeds with inner; a batch (the records' re-embedding, never
// a query's one text) waits until open is closed.
type gatedEmbedder struct {
	inner retrieval.Embedder
	model string
	open  chan struct{}
}

func (g *gatedEmbedder) Model() string { return g.model }
func (g *gatedEmbedder) Dim() int      { return g.inner.Dim() }
func (g *gatedEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if len(texts) > 1 {
		select {
		case <-g.open:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return g.inner.Embed(ctx, texts)
}

// TestVectorFetchWaitsForTheEmbedding: a store whose vectors are another
// model's answers vector fetch unavailable, with the progress, while its
// records are embedded again (an empty ranking would look like an answer);
// keyword and hybrid answer meanwhile, and vector fetch once it is done. (A
// large store's open path: a small one embeds before Open returns.)
func TestVectorFetchWaitsForTheEmbedding(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	e := openStore(t, dir, bolt.Options{Embedder: retrieval.NewHashEmbedder()})
	storeCorpus(t, e, 300)
	if err := e.WaitEmbedder(ctx); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	gate := &gatedEmbedder{inner: retrieval.NewHashEmbedder(), model: "another-model", open: make(chan struct{})}
	e = openStore(t, dir, bolt.Options{Embedder: gate, SyncRebuildBelow: -1})
	defer e.Close()
	var release sync.Once
	opened := func() { release.Do(func() { close(gate.open) }) }
	defer opened() // before Close, which waits for the embedding
	req := contract.FetchRequest{Query: "deploy", Mode: contract.ModeVector, Limit: 5}
	_, err := e.Fetch(ctx, req)
	if contract.KindOf(err) != contract.KindUnavailable || !strings.Contains(err.Error(), "0 of 300 done") {
		t.Fatalf("vector fetch while every record is embedded again: %v", err)
	}
	for _, mode := range []contract.FetchMode{contract.ModeKeyword, contract.ModeHybrid} {
		if p, err := e.Fetch(ctx, contract.FetchRequest{Query: "deploy", Mode: mode, Limit: 5}); err != nil || len(p.Hits) == 0 {
			t.Fatalf("%s fetch meanwhile: %v %v", mode, p.Hits, err)
		}
	}
	opened()
	if err := e.WaitEmbedder(ctx); err != nil {
		t.Fatal(err)
	}
	if p, err := e.Fetch(ctx, req); err != nil || len(p.Hits) == 0 {
		t.Fatalf("vector fetch once embedded: %v %v", p.Hits, err)
	}
}
