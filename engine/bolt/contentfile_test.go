package bolt_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"mnemo/contract"
	"mnemo/engine/bolt"
)

// containsIDs browses every record whose content holds needle.
func containsIDs(t *testing.T, e *bolt.Engine, needle string) []string {
	t.Helper()
	page, err := e.Browse(context.Background(), contract.BrowseQuery{Limit: 200,
		Filters: []contract.BrowseFilter{{Field: "content", Op: "contains", Text: needle}}})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, h := range page.Records {
		ids = append(ids, h.ID)
	}
	return ids
}

func storeText(t *testing.T, e *bolt.Engine, text string) string {
	t.Helper()
	it := contract.Document(text, contract.MemoryMeta{Tags: []string{"content-file"}})
	if _, err := contract.Store(context.Background(), e, it); err != nil {
		t.Fatal(err)
	}
	return it.Fingerprint()
}

// waitFor polls until cond holds: the content index file is rewritten in the
// background after the open that replays the changes.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A large store's content index is written to its file and, in the next
// process, read from it: records stored and forgotten meanwhile by a process
// that never built the index are replayed from the change feed (the new
// record is found, the forgotten one is not), the file is rewritten without
// the forgotten record's trigrams, and check finds everything consistent.
func TestContentIndexFilePersistsAndReplays(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	e := openStore(t, dir, bolt.Options{SyncRebuildBelow: -1})
	storeCorpus(t, e, 300)
	gone := storeText(t, e, "the wombatpassword for the staging database is hunter2")
	if err := e.WaitIndex(ctx); err != nil {
		t.Fatal(err)
	}
	if got := containsIDs(t, e, "wombatpassword"); len(got) != 1 || got[0] != gone {
		t.Fatalf("before: %v", got)
	}
	// The records stored since the open sit in the overlay until a rewrite
	// is due; force one, so the file holds them.
	if err := e.RewriteContentFile(); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	n, written, err := bolt.ContentFileCandidates(dir, "wombatpassword")
	if err != nil || n != 1 {
		t.Fatalf("the file offers %d candidates for the needle (%v)", n, err)
	}

	// A short process: its table and content index never load.
	e = openStore(t, dir, bolt.WithLoadGate(bolt.Options{SyncRebuildBelow: -1}, make(chan struct{})))
	added := storeText(t, e, "a quokkazebra was seen near the billing service")
	if _, err := e.Forget(ctx, contract.ForgetTarget{IDs: []string{gone}}); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if _, seq, _ := bolt.ContentFileCandidates(dir, "wombatpassword"); seq != written {
		t.Fatalf("a process without the content index rewrote its file (%d -> %d)", written, seq)
	}

	e = openStore(t, dir, bolt.Options{SyncRebuildBelow: -1})
	if err := e.WaitIndex(ctx); err != nil {
		t.Fatal(err)
	}
	if got := containsIDs(t, e, "quokkazebra"); len(got) != 1 || got[0] != added {
		t.Fatalf("a record stored since the file was written: %v", got)
	}
	if got := containsIDs(t, e, "wombatpassword"); len(got) != 0 {
		t.Fatalf("a forgotten record came back: %v", got)
	}
	waitFor(t, "the content index file's rewrite", func() bool {
		n, seq, err := bolt.ContentFileCandidates(dir, "wombatpassword")
		return err == nil && seq > written && n == 0
	})
	if n, _, _ := bolt.ContentFileCandidates(dir, "quokkazebra"); n != 1 {
		t.Fatalf("the rewritten file offers %d candidates for the new record", n)
	}
	rep, err := e.Check(ctx, false, nil)
	if err != nil || !rep.Consistent {
		t.Fatalf("check: %v %v", disagreements(rep), err)
	}
}

// A content index file damaged on disk is detected (the trailer's checksum
// at open, a posting's when it is read), never misread: content filters
// answer right meanwhile and the file is rebuilt from the records.
func TestContentIndexFileDamageIsDetectedAndRebuilt(t *testing.T) {
	t.Parallel()
	for name, damage := range map[string]func(b []byte) []byte{
		"the postings": func(b []byte) []byte {
			for i := range len(b) / 3 {
				b[i] ^= 0x5a
			}
			return b
		},
		"the trailer": func(b []byte) []byte { b[len(b)-20] ^= 0x5a; return b },
		"truncated":   func(b []byte) []byte { return b[:len(b)/2] },
		"empty":       func([]byte) []byte { return nil },
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			dir := t.TempDir()
			e := openStore(t, dir, bolt.Options{SyncRebuildBelow: -1})
			var ids []string
			for _, w := range []string{"aardvarkone", "aardvarktwo", "aardvarkthree"} {
				ids = append(ids, storeText(t, e, "a note about the "+w+" incident"))
			}
			storeCorpus(t, e, 200)
			if err := e.WaitIndex(ctx); err != nil {
				t.Fatal(err)
			}
			if err := e.RewriteContentFile(); err != nil {
				t.Fatal(err)
			}
			if err := e.Close(); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, bolt.ContentFileName)
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, damage(b), 0o600); err != nil {
				t.Fatal(err)
			}
			e = openStore(t, dir, bolt.Options{SyncRebuildBelow: -1})
			if err := e.WaitIndex(ctx); err != nil {
				t.Fatal(err)
			}
			for i, w := range []string{"aardvarkone", "aardvarktwo", "aardvarkthree", "aardvark"} {
				got := containsIDs(t, e, w)
				want := 1
				if w == "aardvark" {
					want = 3
				}
				if len(got) != want || (want == 1 && got[0] != ids[i]) {
					t.Fatalf("contains %q: %v", w, got)
				}
			}
			waitFor(t, "a sound content index file", func() bool {
				n, _, err := bolt.ContentFileCandidates(dir, "aardvarktwo")
				return err == nil && n == 1
			})
			rep, err := e.Check(ctx, false, nil)
			if err != nil || !rep.Consistent {
				t.Fatalf("check: %v %v", disagreements(rep), err)
			}
		})
	}
}
