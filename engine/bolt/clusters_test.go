package bolt

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"testing"
	"time"

	bbolt "go.etcd.io/bbolt"

	"mnemo/contract"
	"mnemo/engine/curate"
	"mnemo/importer"
)

// A first pass stopped by the process closing resumes where it stopped (it
// reads every record's words again, and relates only the records it had not
// reached), and what it keeps is what Find answers. A forgotten record leaves nothing in what is
// kept: no edges of its own, and no mention in another record's.
func TestKeptClustersResumeAndForget(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	opts := Options{clusterChunk: 40}
	e, err := Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open("../../testdata/demo/demo.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := (&importer.Importer{Engine: e, Batch: 100}).Run(ctx, f); err != nil {
		t.Fatal(err)
	}
	cfg := curate.DefaultConfig()
	e.KeepClusters(cfg)
	deadline := time.Now().Add(time.Minute)
	for e.ClusterStatus().Done < 200 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	stopped := e.ClusterStatus()
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if stopped.Ready || stopped.Done == 0 {
		t.Fatalf("the pass was not stopped half way: %+v", stopped)
	}

	e, err = Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	var next uint32
	_ = e.db.View(func(tx *bbolt.Tx) error {
		if p := tx.Bucket(bucketClusters).Get(keyClustersPass); len(p) == 16 {
			next = binary.BigEndian.Uint32(p)
		}
		return nil
	})
	if int64(next) < stopped.Done {
		t.Fatalf("the stopped pass kept its place at %d, having done %d", next, stopped.Done)
	}
	e.KeepClusters(cfg)
	if err := e.WaitClusters(ctx); err != nil {
		t.Fatal(err)
	}
	if st := e.ClusterStatus(); st.Warmed != st.Total || st.Done != st.Total {
		t.Errorf("the resumed pass: %+v", st)
	}
	records, err := curate.Scope(ctx, e, contract.MetaFilter{})
	if err != nil {
		t.Fatal(err)
	}
	want := curate.Find(records, cfg)
	a, err := e.KeptClusters(ctx, contract.MetaFilter{}, cfg)
	got, ok := a.Clusters, a.Kept
	if err != nil || !ok || len(got) != len(want) || len(want) == 0 {
		t.Fatalf("after resuming: kept %d clusters (%v, %v), Find %d", len(got), ok, err, len(want))
	}
	for i := range want {
		if got[i].Key != want[i].Key {
			t.Fatalf("cluster %d: kept %s, Find %s", i, got[i].Key, want[i].Key)
		}
	}

	gone := want[0].Members[1].ID
	if _, err := e.Forget(ctx, contract.ForgetTarget{IDs: []string{gone}}); err != nil {
		t.Fatal(err)
	}
	if err := e.WaitClusters(ctx); err != nil {
		t.Fatal(err)
	}
	err = e.db.View(func(tx *bbolt.Tx) error {
		return tx.Bucket(bucketClusters).ForEach(func(k, v []byte) error {
			if bytes.Contains(k, []byte(gone)) || bytes.Contains(v, []byte(gone)) {
				t.Errorf("the forgotten record %s is still in the kept clusters, at key %q", gone, k)
			}
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	e.clusters.Load().mu.RLock()
	defer e.clusters.Load().mu.RUnlock()
	for id, m := range e.clusters.Load().adj {
		if _, ok := m[gone]; ok || id == gone {
			t.Errorf("the forgotten record %s is still in memory, beside %s", gone, id)
		}
	}
}

// mnemo check verifies the kept clusters (each edge kept on both records, on
// records the store holds), and a repair drops them: the holder clusters
// the store again, to the same clusters.
func TestCheckVerifiesKeptClusters(t *testing.T) {
	ctx := context.Background()
	e, err := Open(t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	f, err := os.Open("../../testdata/demo/demo.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := (&importer.Importer{Engine: e, Batch: 100}).Run(ctx, f); err != nil {
		t.Fatal(err)
	}
	entry := func(rep CheckReport) CheckEntry {
		for _, c := range rep.Checks {
			if c.Name == checkClusters {
				return c
			}
		}
		t.Fatalf("check reported no %q: %+v", checkClusters, rep)
		return CheckEntry{}
	}
	rep, err := e.Check(ctx, false, nil)
	if err != nil || entry(rep).Note == "" {
		t.Fatalf("before the store is clustered: %+v, %v", entry(rep), err)
	}
	cfg := curate.DefaultConfig()
	e.KeepClusters(cfg)
	if err := e.WaitClusters(ctx); err != nil {
		t.Fatal(err)
	}
	before, err := e.KeptClusters(ctx, contract.MetaFilter{}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	rep, err = e.Check(ctx, false, nil)
	if err != nil || !rep.Consistent || entry(rep).Checked == 0 {
		t.Fatalf("a clustered store: %+v, %v", entry(rep), err)
	}
	// One side of an edge lost.
	a := before.Clusters[0].Members[0].ID
	err = e.db.Update(func(tx *bbolt.Tx) error {
		return tx.Bucket(bucketClusters).Delete(append([]byte("e/"), a...))
	})
	if err != nil {
		t.Fatal(err)
	}
	rep, err = e.Check(ctx, false, nil)
	if err != nil || rep.Consistent || entry(rep).Disagreements == 0 {
		t.Fatalf("a lost edge: %+v, %v", entry(rep), err)
	}
	if rep, err = e.Check(ctx, true, nil); err != nil || !rep.Repaired {
		t.Fatalf("repair: %+v, %v", rep, err)
	}
	if err := e.WaitClusters(ctx); err != nil {
		t.Fatal(err)
	}
	after, err := e.KeptClusters(ctx, contract.MetaFilter{}, cfg)
	if err != nil || !after.Kept || len(after.Clusters) != len(before.Clusters) || after.Clusters[0].Key != before.Clusters[0].Key {
		t.Fatalf("clustered again after the repair: %d clusters (%v), before %d", len(after.Clusters), err, len(before.Clusters))
	}
	if rep, err := e.Check(ctx, false, nil); err != nil || !rep.Consistent {
		t.Fatalf("after the repair: %+v, %v", entry(rep), err)
	}
}

// The clusterer starts, passes and follows the feed while writers write:
// neither waits on the other for good (the writers take the engine's lock
// before bbolt's, and so must the clusterer).
func TestKeptClustersBesideWriters(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	e, err := Open(t.TempDir(), Options{clusterChunk: 7})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	stop := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				done <- nil
				return
			default:
			}
			text := fmt.Sprintf("The nightly export of batch %d runs at %d:00 on the worker host and mails the team", i%40, i%24)
			if _, err := contract.Store(ctx, e, contract.Learning(text, contract.LearningFact, 0.7, contract.MemoryMeta{})); err != nil {
				done <- err
				return
			}
		}
	}()
	time.Sleep(50 * time.Millisecond)
	e.KeepClusters(curate.DefaultConfig())
	e.ClusterNow()
	for range 15 {
		if err := e.WaitClusters(ctx); err != nil {
			t.Fatalf("the clusterer beside writers: %v", err)
		}
		// Dropped (as a repair drops them): the clusterer begins a new
		// pass, in a write transaction, while the writers write.
		if err := e.db.Update(func(tx *bbolt.Tx) error { return tx.DeleteBucket(bucketClusters) }); err != nil {
			t.Fatal(err)
		}
		cs := e.clusters.Load()
		cs.mu.Lock()
		cs.ready = false
		cs.mu.Unlock()
	}
	close(stop)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if err := e.WaitClusters(ctx); err != nil {
		t.Fatal(err)
	}
	records, err := curate.Scope(ctx, e, contract.MetaFilter{})
	if err != nil {
		t.Fatal(err)
	}
	want := curate.Find(records, curate.DefaultConfig())
	a, err := e.KeptClusters(ctx, contract.MetaFilter{}, curate.DefaultConfig())
	if err != nil || !a.Kept || len(a.Clusters) != len(want) || len(want) == 0 {
		t.Fatalf("kept %d clusters (%v, %v), Find %d", len(a.Clusters), a.Kept, err, len(want))
	}
}
