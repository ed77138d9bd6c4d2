package curate_test

import (
	"context"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"mnemo/contract"
	"mnemo/engine/bolt"
	"mnemo/engine/curate"
	"mnemo/importer"
)

// keptMatchesFind checks that the clusters engine/bolt keeps for a scope
// are the ones Find answers over the scope's records: the same members in
// the same order, the same conflicts, differences and sides.
func keptMatchesFind(t *testing.T, e *bolt.Engine, f contract.MetaFilter, cfg curate.Config) []curate.Cluster {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := e.WaitClusters(ctx); err != nil {
		t.Fatal(err)
	}
	records, err := curate.Scope(ctx, e, f)
	if err != nil {
		t.Fatal(err)
	}
	want := curate.Find(records, cfg)
	a, err := e.KeptClusters(ctx, f, cfg)
	if err != nil || !a.Kept {
		t.Fatalf("KeptClusters: %v, answered %+v", err, a)
	}
	got, n := a.Clusters, a.Records
	if n != len(records) {
		t.Errorf("the scope holds %d records, KeptClusters says %d", len(records), n)
	}
	g, w := got, want
	if !reflect.DeepEqual(g, w) {
		for i := range min(len(g), len(w)) {
			if !reflect.DeepEqual(g[i].IDs(), w[i].IDs()) || g[i].Conflict != w[i].Conflict {
				t.Fatalf("cluster %d: kept %v (conflict %v), Find %v (conflict %v)", i, g[i].IDs(), g[i].Conflict, w[i].IDs(), w[i].Conflict)
			}
			if !reflect.DeepEqual(g[i], w[i]) {
				a, b := g[i], w[i]
				a.Members, b.Members = nil, nil
				t.Fatalf("cluster %d differs:\nkept %+v\nFind %+v", i, a, b)
			}
		}
		t.Fatalf("kept %d clusters, Find %d", len(g), len(w))
	}
	return got
}

// A store that keeps its clusters answers what Find answers over the same
// records: after the first pass, after stores that repeat and contradict a
// clustered record and a forget, and from what a new process reads back.
func TestKeptClustersAreFindsClusters(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	e := demoStoreIn(t, dir)
	cfg := curate.DefaultConfig()
	e.KeepClusters(cfg)
	acme := contract.MetaFilter{Reach: contract.Ptr(contract.ReachSubtree(contract.MustNamespace("team:acme")))}
	first := keptMatchesFind(t, e, contract.MetaFilter{}, cfg)
	if len(first) == 0 {
		t.Fatal("the demo corpus has no clusters: the test compares nothing")
	}
	keptMatchesFind(t, e, acme, cfg)

	// A repeat and a contradiction of the largest cluster's newest member
	// join it; forgetting another member takes it out.
	var c curate.Cluster
	for _, k := range first {
		if k.Kind != contract.KindConversation {
			c = k
			break
		}
	}
	m := c.Members[0]
	like := func(text string) contract.StoreItem {
		meta := contract.MemoryMeta{Namespace: m.Meta.Namespace}
		if m.Kind == contract.KindLearning {
			return contract.Learning(text, contract.LearningFact, 0.6, meta)
		}
		return contract.Document(text, meta)
	}
	changed := strings.Replace(m.Text, " ", " not ", 1)
	res, err := contract.StoreMany(ctx, e, []contract.StoreItem{like(m.Text + " Still true."), like(changed)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Forget(ctx, contract.ForgetTarget{IDs: []string{c.Members[len(c.Members)-1].ID}}); err != nil {
		t.Fatal(err)
	}
	after := keptMatchesFind(t, e, contract.MetaFilter{}, cfg)
	joined := false
	for _, k := range after {
		if slices.Contains(k.IDs(), res[0].ID) && slices.Contains(k.IDs(), m.ID) {
			joined = true
		}
		if slices.Contains(k.IDs(), c.Members[len(c.Members)-1].ID) {
			t.Errorf("a forgotten record is still in cluster %s", k.Key)
		}
	}
	if !joined {
		t.Errorf("the repeat %s did not join its cluster", res[0].ID)
	}
	keptMatchesFind(t, e, acme, cfg)

	// A new process reads the kept clusters back, without a new pass.
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	e2, err := bolt.Open(dir, bolt.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e2.Close() })
	e2.KeepClusters(cfg)
	keptMatchesFind(t, e2, contract.MetaFilter{}, cfg)
	if st := e2.ClusterStatus(); !st.Ready || st.Done != st.Total || st.Clustered == 0 {
		t.Errorf("a reopened store's clustering: %+v", st)
	}

	// Other thresholds are not answered from edges found with these.
	other := cfg
	other.Repeat = 0.8
	if a, _ := e2.KeptClusters(ctx, contract.MetaFilter{}, other); a.Kept {
		t.Error("KeptClusters answered for thresholds it did not cluster with")
	}
}

// A store kept clustered from empty (mnemo demo: the TUI's holder keeps
// them at once, then the corpus is imported in batches, bulk) answers what
// Find answers once the feed is clustered.
func TestKeptClustersFromAnEmptyStore(t *testing.T) {
	dir := t.TempDir()
	e, err := bolt.Open(dir, bolt.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Close() })
	cfg := curate.DefaultConfig()
	e.KeepClusters(cfg)
	f, err := os.Open("../../testdata/demo/demo.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if sum, err := (&importer.Importer{Engine: e, Batch: contract.MaxStoreMany, DefaultStatus: contract.StatusActive}).Run(context.Background(), f); err != nil || sum.Failed > 0 {
		t.Fatalf("demo corpus: %+v %v", sum, err)
	}
	if got := keptMatchesFind(t, e, contract.MetaFilter{}, cfg); len(got) == 0 {
		t.Fatal("no clusters kept for the demo corpus")
	}
}
