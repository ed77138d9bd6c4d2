package bolt_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"mnemo/contract"
	"mnemo/engine/bolt"
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
		if _, err := e.StoreMany(ctx, chunk); err != nil {
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
