package bolt_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"mnemo/contract"
	"mnemo/engine/bolt"
)

func exportAll(t *testing.T, e *bolt.Engine) string {
	t.Helper()
	var all []contract.Exported
	req := contract.ListRequest{Limit: 500}
	for {
		page, err := e.Export(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, page.Items...)
		if page.NextCursor == nil {
			break
		}
		req.Cursor = page.NextCursor
	}
	b, err := json.Marshal(all)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Compact gives back the space of half-full pages and of forgotten records,
// and changes nothing a reader sees: the export, the change feed's position,
// the saved table and the search keep working, and check passes. It refuses
// a store another process holds.
func TestCompactShrinksTheFileAndKeepsEverything(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	e := openStore(t, dir, bolt.Options{SyncRebuildBelow: -1})
	entries := storeCorpus(t, e, 1500)
	var gone []string
	for i, en := range entries {
		if i%2 == 0 {
			gone = append(gone, en.Item.Fingerprint())
		}
	}
	if _, err := e.Forget(ctx, contract.ForgetTarget{IDs: gone}); err != nil {
		t.Fatal(err)
	}
	if err := e.WaitIndex(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := bolt.Compact(dir); !errors.As(err, new(*bolt.LockedError)) {
		t.Fatalf("compact of a store in use: %v", err)
	}
	before := exportAll(t, e)
	head, err := e.Changes(ctx, contract.ChangesRequest{Since: 0, Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	rep, err := bolt.Compact(dir)
	if err != nil {
		t.Fatal(err)
	}
	if rep.After >= rep.Before {
		t.Fatalf("compact left %d bytes of %d", rep.After, rep.Before)
	}
	e = openStore(t, dir, bolt.Options{SyncRebuildBelow: -1})
	if !e.TableFromFile() {
		t.Fatal("the saved table was not used after compacting")
	}
	if got := exportAll(t, e); got != before {
		t.Fatal("the export changed")
	}
	again, err := e.Changes(ctx, contract.ChangesRequest{Since: 0, Limit: 1})
	if err != nil || again.Next != head.Next {
		t.Fatalf("the feed moved: %v -> %v (%v)", head.Next, again.Next, err)
	}
	if len(gone) > 0 {
		storeText(t, e, "written after the compaction")
	}
	chk, err := e.Check(ctx, false, nil)
	if err != nil || !chk.Consistent {
		t.Fatalf("check: %v %v", disagreements(chk), err)
	}
}
