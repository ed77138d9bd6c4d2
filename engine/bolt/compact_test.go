package bolt_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bbolt "go.etcd.io/bbolt"

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
	ranked := func() string {
		t.Helper()
		var out strings.Builder
		for _, q := range []string{"worker restarts", "host failures", "the on after"} {
			page, err := e.Fetch(ctx, contract.FetchRequest{Query: q, Mode: contract.ModeKeyword, Limit: 10})
			if err != nil {
				t.Fatal(err)
			}
			for _, h := range page.Hits {
				out.WriteString(h.ID + " ")
			}
		}
		return out.String()
	}
	rankedBefore := ranked()
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
	// The search index answers from one segment, and ranks as before.
	if rep.IndexAfter <= 0 || rep.IndexBefore <= 0 {
		t.Fatalf("compact reported the search index's size %d -> %d", rep.IndexBefore, rep.IndexAfter)
	}
	e = openStore(t, dir, bolt.Options{SyncRebuildBelow: -1})
	if n := e.IndexSegments(); n != 1 {
		t.Fatalf("the search index answers from %d segments after compacting", n)
	}
	if got := ranked(); got != rankedBefore || got == "" {
		t.Fatalf("keyword fetch after compacting:\n%s\nbefore:\n%s", got, rankedBefore)
	}
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

// TestStoreFromVersion3MigratesAndCompacts opens a store written by the
// release before compressed records (schema 3: 300 bench records and one more, 2 of them
// forgotten, one superseded, one candidate approved, one with C++ and
// Unicode; its index removed). Every record reads as that release exported
// it, before and after mnemo compact rewrites them compressed; the file
// shrinks, check passes, and writers write the new layout meanwhile.
func TestStoreFromVersion3MigratesAndCompacts(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	untar(t, filepath.Join("testdata", "store-v3.tar.gz"), dir)
	// The release's export (mnemo export): each record's item, status,
	// expiry and successor.
	type line struct {
		ID           string             `json:"id"`
		Item         contract.StoreItem `json:"item"`
		Status       contract.Status    `json:"status,omitempty"`
		ExpiresAt    string             `json:"expires_at,omitempty"`
		SupersededBy string             `json:"superseded_by,omitempty"`
	}
	canonical := func(l line) string {
		if l.Status == "" {
			l.Status = contract.StatusActive
		}
		if l.ExpiresAt != "" {
			at, err := time.Parse(time.RFC3339Nano, l.ExpiresAt)
			if err != nil {
				t.Fatal(err)
			}
			l.ExpiresAt = at.UTC().Format(time.RFC3339Nano)
		}
		b, _ := json.Marshal(l)
		return string(b)
	}
	golden := map[string]string{}
	raw, err := os.ReadFile(filepath.Join("testdata", "store-v3-export.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	liveGolden := 0
	for _, text := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		var l line
		if err := json.Unmarshal([]byte(text), &l); err != nil {
			t.Fatal(err)
		}
		golden[l.ID] = canonical(l)
		if at, err := time.Parse(time.RFC3339Nano, l.ExpiresAt); err != nil || at.After(time.Now().Add(time.Hour)) {
			liveGolden++
		}
	}
	// agrees reads every record as the export does and compares it with the
	// release's line; a record may have expired since, none may be missing.
	agrees := func(stage string, e *bolt.Engine, except string) {
		t.Helper()
		var items []contract.Exported
		if err := json.Unmarshal([]byte(exportAll(t, e)), &items); err != nil {
			t.Fatal(err)
		}
		ids := make([]string, len(items))
		for i, it := range items {
			ids[i] = it.ID
		}
		recs, err := contract.GetRecordsInChunks(ctx, e, ids, nil)
		if err != nil || len(recs) != len(items) {
			t.Fatalf("%s: %d records for %d exported: %v", stage, len(recs), len(items), err)
		}
		seen := 0
		for i, it := range items {
			if it.ID == except {
				continue
			}
			seen++
			r := recs[i]
			l := line{ID: it.ID, Item: it.Item, Status: r.Status}
			if r.ExpiresAt != nil {
				l.ExpiresAt = r.ExpiresAt.Format(time.RFC3339Nano)
			}
			if r.SupersededBy != nil {
				l.SupersededBy = *r.SupersededBy
			}
			if got := canonical(l); golden[it.ID] != got {
				t.Fatalf("%s: record %s reads\n%s\nwhere the release that wrote it exported\n%s", stage, it.ID, got, golden[it.ID])
			}
		}
		if seen < liveGolden {
			t.Fatalf("%s: %d records read, want at least the %d unexpired ones", stage, seen, liveGolden)
		}
	}

	e := openStore(t, dir, bolt.Options{})
	agrees("opened", e, "")
	if err := e.WaitIndex(ctx); err != nil {
		t.Fatal(err)
	}
	if h, err := e.Fetch(ctx, contract.FetchRequest{Query: "libfoo-dev", Mode: contract.ModeKeyword, Limit: 3}); err != nil || len(h.Hits) != 1 {
		t.Fatalf("keyword fetch on the migrated store: %v %v", h, err)
	}
	if p, err := e.Browse(ctx, contract.BrowseQuery{Filters: []contract.BrowseFilter{{Field: "content", Op: "contains", Text: "ünïcödé"}}}); err != nil || p.Total != 1 {
		t.Fatalf("contains on a version 1 record: %+v %v", p, err)
	}
	fresh, err := contract.Store(ctx, e, contract.Document(strings.Repeat("written after the migration, compressed ", 30), contract.MemoryMeta{}))
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	// layouts counts the records of each layout; n[0] is their bytes.
	layouts := func() map[byte]int {
		db, err := bbolt.Open(filepath.Join(dir, bolt.DBFile), 0o600, &bbolt.Options{ReadOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		n := map[byte]int{}
		_ = db.View(func(tx *bbolt.Tx) error {
			if v := string(tx.Bucket([]byte("meta")).Get([]byte("schema"))); v != bolt.SchemaVersion {
				t.Fatalf("schema %q after the migration, want %s", v, bolt.SchemaVersion)
			}
			return tx.Bucket([]byte("records")).ForEach(func(_, v []byte) error { n[v[0]]++; n[0] += len(v); return nil })
		})
		return n
	}
	before := layouts()
	if before[1] != 299 || before[4] != 1 {
		t.Fatalf("record layouts before compacting: %v, want the 299 old ones and the new one (its item in binary)", before)
	}
	if _, err := bolt.Compact(dir); err != nil {
		t.Fatal(err)
	}
	after := layouts()
	if after[1] != 0 || after[2] != 299 || after[4] != 1 {
		t.Fatalf("record layouts after compacting: %v, want the 299 compressed, the new one as it was", after)
	}
	// (The file's size moves in bbolt's growth steps, too coarse for 300
	// records; the records' own bytes are what compression changes.)
	if after[0]*10 > before[0]*8 {
		t.Fatalf("compacting took the records from %d to %d bytes", before[0], after[0])
	}
	e = openStore(t, dir, bolt.Options{})
	defer e.Close()
	if !strings.Contains(exportAll(t, e), fresh.ID) {
		t.Fatal("the record stored after the migration is gone")
	}
	agrees("compacted", e, fresh.ID)
	if p, err := e.Browse(ctx, contract.BrowseQuery{Filters: []contract.BrowseFilter{{Field: "content", Op: "contains", Text: "ÜNÏCÖDÉ"}}}); err != nil || p.Total != 1 {
		t.Fatalf("contains on a compressed record: %+v %v", p, err)
	}
	if rep, err := e.Check(ctx, false, nil); err != nil || !rep.Consistent {
		t.Fatalf("check after compacting: %v %+v", err, rep.Checks)
	}
}
