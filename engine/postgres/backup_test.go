package postgres_test

import (
	"bytes"
	"context"
	"fmt"
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
	"mnemo/engine/postgres"
	"mnemo/engine/postgres/pgtest"
	"mnemo/server/audit"
)

var sandbox = contract.MustNamespace("team:acme/service:nightly-digest")

var dumpReaches = []contract.Reach{contract.ReachSubtree(contract.Root()), contract.ReachSubtree(sandbox)}

func fillForBackup(t *testing.T, e *postgres.Engine) {
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
	past, future := time.Now().Add(-time.Hour), time.Now().Add(240*time.Hour)
	for _, b := range []struct {
		lo, hi int
		opts   contract.WriteOptions
	}{{0, 30, contract.WriteOptions{}}, {30, 40, contract.WriteOptions{Status: contract.StatusCandidate}},
		{40, 50, contract.WriteOptions{ExpiresAt: &past}}, {50, 60, contract.WriteOptions{ExpiresAt: &future}}} {
		if _, err := e.StoreManyWith(ctx, items[b.lo:b.hi], b.opts); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(5 * time.Millisecond)
	if _, err := e.Review(ctx, contract.ReviewRequest{ID: items[31].Fingerprint(), Action: contract.ReviewApprove}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Supersede(ctx, contract.SupersedeRequest{ID: items[1].Fingerprint(), By: items[2].Fingerprint()}); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		ev := audit.Event{At: time.Now().Add(time.Duration(i) * time.Millisecond), Principal: "alice", Role: "writer", Via: "http", Op: "forget", Count: i}
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

// A logical backup taken while writers store restores, into a new schema and
// into a directory store, every record it holds field by field and the
// audit log.
func TestBackupRestoresEveryRecordExactly(t *testing.T) {
	ctx := context.Background()
	src := openStore(t, pgtest.URL(t), postgres.Options{})
	fillForBackup(t, src)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var stored atomic.Int64
	wg.Go(func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			items := make([]contract.StoreItem, 20)
			for j := range items {
				items[j] = contract.Document(fmt.Sprintf("writer batch %d item %d", i, j), contract.MemoryMeta{Namespace: sandbox})
			}
			if _, err := contract.StoreMany(ctx, src, items); err != nil {
				t.Error(err)
				return
			}
			stored.Add(20)
		}
	})
	for stored.Load() < 100 {
		time.Sleep(time.Millisecond)
	}
	var buf bytes.Buffer
	info, err := src.Backup(ctx, &buf)
	close(stop)
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	if info.Format != backup.FormatLogical || info.Records <= 60 || info.Audit != 3 || info.Bytes != int64(buf.Len()) {
		t.Fatalf("backup info %+v (file %d bytes)", info, buf.Len())
	}
	want := dump(t, src)
	check := func(t *testing.T, got string) {
		t.Helper()
		if n := strings.Count(got, "record "); n != info.Records {
			t.Fatalf("the restored store lists %d records; the backup holds %d", n, info.Records)
		}
		for _, line := range strings.Split(strings.TrimSpace(got), "\n") {
			if !strings.Contains(want, line+"\n") {
				t.Fatalf("the restored store holds a line the source does not:\n%s", line)
			}
		}
	}
	t.Run("into a new schema", func(t *testing.T) {
		dst := openStore(t, pgtest.URL(t), postgres.Options{})
		got, err := dst.RestoreBackup(ctx, bytes.NewReader(buf.Bytes()))
		if err != nil || got.Records != info.Records || got.Audit != 3 {
			t.Fatalf("restore: %+v %v", got, err)
		}
		check(t, dump(t, dst))
		if _, err := dst.RestoreBackup(ctx, bytes.NewReader(buf.Bytes())); err == nil || !strings.Contains(err.Error(), "already holds records") {
			t.Fatalf("a restore into a store that holds records answered %v", err)
		}
	})
	t.Run("into a directory", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "restored")
		rep, err := bolt.RestoreBackup(ctx, bytes.NewReader(buf.Bytes()), dir, bolt.Options{})
		if err != nil || !rep.Check.Consistent {
			t.Fatalf("restore: %+v %v", rep, err)
		}
		dst, err := bolt.Open(dir, bolt.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer dst.Close()
		check(t, dump(t, dst))
	})
}
