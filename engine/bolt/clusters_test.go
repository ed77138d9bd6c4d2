package bolt

import (
	"bytes"
	"context"
	"encoding/binary"
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
