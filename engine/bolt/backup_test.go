package bolt_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"mnemo/backup"
	"mnemo/contract"
	"mnemo/contract/conformance"
	"mnemo/engine/bolt"
	"mnemo/server/audit"
)

var sandbox = contract.MustNamespace("team:acme/service:nightly-digest")

// dumpReaches are the reaches that see every record of fillForBackup.
var dumpReaches = []contract.Reach{contract.ReachSubtree(contract.Root()), contract.ReachSubtree(sandbox)}

// fillForBackup writes what a backup must keep: records in the root, a
// team and a service sandbox, candidates, an approved one (updated after
// created), a superseded one, expiries past and future, and audit events.
func fillForBackup(t *testing.T, e interface {
	contract.Engine
	audit.Log
}) {
	t.Helper()
	ctx := context.Background()
	var items []contract.StoreItem
	for i := range 60 {
		m := contract.MemoryMeta{Tags: []string{fmt.Sprintf("t%d", i%4)}}
		switch i % 3 {
		case 1:
			m.Namespace = contract.MustNamespace("team:acme")
		case 2:
			m.Namespace = sandbox
		}
		if i%5 == 0 {
			items = append(items, contract.Learning(fmt.Sprintf("learning %d", i), contract.LearningKinds()[0], float32(i)/60, m))
		} else {
			items = append(items, contract.Document(fmt.Sprintf("document %d about backups", i), m))
		}
	}
	if _, err := contract.StoreMany(ctx, e, items[:30]); err != nil {
		t.Fatal(err)
	}
	past, future := time.Now().Add(-time.Hour), time.Now().Add(240*time.Hour)
	if _, err := e.StoreManyWith(ctx, items[30:40], contract.WriteOptions{Status: contract.StatusCandidate}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.StoreManyWith(ctx, items[40:50], contract.WriteOptions{ExpiresAt: &past}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.StoreManyWith(ctx, items[50:], contract.WriteOptions{ExpiresAt: &future}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(5 * time.Millisecond)
	if _, err := e.Review(ctx, contract.ReviewRequest{ID: items[31].Fingerprint(), Action: contract.ReviewApprove}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Supersede(ctx, contract.SupersedeRequest{ID: items[1].Fingerprint(), By: items[2].Fingerprint()}); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		ev := audit.Event{At: time.Now().Add(time.Duration(i) * time.Millisecond), Principal: "alice", Role: "writer", Via: "http", Op: "forget", Count: i, Refused: "refused: principal `alice` may not forget here"}
		if err := e.AppendAudit(ctx, ev); err != nil {
			t.Fatal(err)
		}
	}
}

func dump(t *testing.T, e contract.Engine) string {
	t.Helper()
	d, err := conformance.Dump(context.Background(), e, dumpReaches...)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestBackupRestoresEveryRecordExactly(t *testing.T) {
	ctx := context.Background()
	src := openStore(t, t.TempDir(), bolt.Options{})
	fillForBackup(t, src)
	var buf bytes.Buffer
	info, err := src.Backup(ctx, &buf)
	if err != nil {
		t.Fatal(err)
	}
	if info.Format != backup.FormatBolt || info.Records != 60 || info.Audit != 3 || info.Bytes != int64(buf.Len()) {
		t.Fatalf("backup info %+v (file %d bytes); want bolt, 60 records, 3 audit events", info, buf.Len())
	}
	dir := filepath.Join(t.TempDir(), "restored")
	rep, err := bolt.RestoreBackup(ctx, bytes.NewReader(buf.Bytes()), dir, bolt.Options{})
	if err != nil {
		t.Fatalf("restore: %v (%+v)", err, rep)
	}
	if !rep.Check.Consistent || rep.Backup.Records != 60 || rep.Backup.Audit != 3 {
		t.Fatalf("restore report %+v", rep)
	}
	dst := openStore(t, dir, bolt.Options{})
	want, got := dump(t, src), dump(t, dst)
	if d := conformance.FirstDiff(want, got); d != "" {
		t.Fatalf("the restored store differs:\n%s", d)
	}
	if strings.Count(want, "\nrecord ")+1 != 60 || !strings.Contains(want, `"status":"superseded"`) || !strings.Contains(want, "service:nightly-digest") {
		t.Fatalf("the dump misses what it must compare:\n%s", want)
	}
	// Fetch works on the restored store: the search index was rebuilt.
	page, err := dst.Fetch(ctx, contract.FetchRequest{Query: "backups", Mode: contract.ModeKeyword, Limit: 5})
	if err != nil || len(page.Hits) == 0 {
		t.Fatalf("fetch on the restored store: %v %v", page.Hits, err)
	}
}

// A backup taken while writers store holds a consistent snapshot: every
// record in it is whole and identical to the source's, and the restored
// store checks out.
func TestBackupWhileWritersStore(t *testing.T) {
	ctx := context.Background()
	src := openStore(t, t.TempDir(), bolt.Options{})
	fillForBackup(t, src)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var stored atomic.Int64
	for w := range 2 {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				items := make([]contract.StoreItem, 20)
				for j := range items {
					items[j] = contract.Document(fmt.Sprintf("writer %d batch %d item %d", w, i, j), contract.MemoryMeta{Namespace: sandbox})
				}
				if _, err := contract.StoreMany(ctx, src, items); err != nil {
					t.Error(err)
					return
				}
				stored.Add(20)
			}
		})
	}
	for stored.Load() < 200 {
		time.Sleep(time.Millisecond)
	}
	var buf bytes.Buffer
	info, err := src.Backup(ctx, &buf)
	close(stop)
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	if info.Records <= 60 || int64(info.Records) >= 60+stored.Load()+1 {
		t.Fatalf("backup holds %d records; want more than the 60 before the writers and at most %d", info.Records, 60+stored.Load())
	}
	dir := filepath.Join(t.TempDir(), "restored")
	rep, err := bolt.RestoreBackup(ctx, &buf, dir, bolt.Options{})
	if err != nil {
		t.Fatalf("restore: %v (%+v)", err, rep)
	}
	if rep.Backup.Records != info.Records || !rep.Check.Consistent {
		t.Fatalf("restored %d records (check %v); the backup said %d", rep.Backup.Records, rep.Check.Consistent, info.Records)
	}
	dst := openStore(t, dir, bolt.Options{})
	// Every restored record is the source's, field by field.
	got, want := dump(t, dst), dump(t, src)
	for _, line := range strings.Split(strings.TrimSpace(got), "\n") {
		if !strings.Contains(want, line+"\n") {
			t.Fatalf("the restored store holds a line the source does not:\n%s", line)
		}
	}
	if n := strings.Count(got, "record "); n != info.Records {
		t.Fatalf("the restored store lists %d records; the backup said %d", n, info.Records)
	}
}

func TestRestoreRefusesWhatItCannotUse(t *testing.T) {
	ctx := context.Background()
	src := openStore(t, t.TempDir(), bolt.Options{})
	fillForBackup(t, src)
	var buf bytes.Buffer
	if _, err := src.Backup(ctx, &buf); err != nil {
		t.Fatal(err)
	}
	full := t.TempDir()
	if err := os.WriteFile(filepath.Join(full, "notes.txt"), []byte("mine"), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, dir string
		data      []byte
		want      string
	}{
		{"a directory that is not empty", full, buf.Bytes(), "is not empty (it holds notes.txt)"},
		{"a file cut short", filepath.Join(t.TempDir(), "a"), buf.Bytes()[:buf.Len()/2], "bbolt file"},
		{"not a backup", filepath.Join(t.TempDir(), "b"), []byte("hello, this is not a store at all"), "not a mnemo backup"},
		{"a logical backup cut short", filepath.Join(t.TempDir(), "c"), []byte(`{"mnemo_backup":{"version":1,"engine":"postgres","at":"2026-01-01T00:00:00.000Z"}}` + "\n"), "without its end line"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := bolt.RestoreBackup(ctx, bytes.NewReader(c.data), c.dir, bolt.Options{})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("restore: %v; want an error saying %q", err, c.want)
			}
			if !errors.Is(err, contract.ErrInvalidRequest) {
				t.Fatalf("restore: %v; want an invalid-request error", err)
			}
		})
	}
	if b, _ := os.ReadFile(filepath.Join(full, "notes.txt")); string(b) != "mine" {
		t.Fatal("the refused restore touched the directory")
	}
}
