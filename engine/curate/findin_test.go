package curate_test

import (
	"context"
	"os"
	"reflect"
	"strings"
	"testing"

	"mnemo/contract"
	"mnemo/engine/bolt"
	"mnemo/engine/curate"
	"mnemo/importer"
)

// demoStore is a real engine/bolt store holding the demo corpus, which has
// repeats and conflicts of its own.
func demoStore(t *testing.T) *bolt.Engine {
	t.Helper()
	return demoStoreIn(t, t.TempDir())
}

// demoStoreIn is demoStore in a given directory.
func demoStoreIn(t *testing.T, dir string) *bolt.Engine {
	t.Helper()
	e, err := bolt.Open(dir, bolt.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Close() })
	f, err := os.Open("../../testdata/demo/demo.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sum, err := (&importer.Importer{Engine: e, Batch: 100}).Run(context.Background(), f)
	if err != nil || sum.Failed > 0 {
		t.Fatalf("demo corpus: %+v %v", sum, err)
	}
	return e
}

// FindIn, which keeps only what clustering needs of each record and reads
// the members whole at the end, answers exactly what Find answers over the
// records themselves: the same clusters in the same order, the same
// members with their text, the same conflicts, differences and sides.
func TestFindInAnswersWhatFindAnswers(t *testing.T) {
	ctx := context.Background()
	e := demoStore(t)
	cfg := curate.DefaultConfig()
	for _, f := range []contract.MetaFilter{
		{},
		{Reach: contract.Ptr(contract.ReachSubtree(contract.MustNamespace("team:acme")))},
	} {
		records, err := curate.Scope(ctx, e, f)
		if err != nil {
			t.Fatal(err)
		}
		want := curate.Find(records, cfg)
		got, n, err := curate.FindIn(ctx, e, f, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if n != len(records) {
			t.Errorf("FindIn read %d records, Scope %d", n, len(records))
		}
		if len(want) == 0 {
			t.Fatal("the demo corpus has no clusters: the test compares nothing")
		}
		if !reflect.DeepEqual(got, want) {
			for i := range min(len(got), len(want)) {
				if !reflect.DeepEqual(got[i], want[i]) {
					g, w := got[i], want[i]
					for j := range min(len(g.Members), len(w.Members)) {
						gm, wm := g.Members[j], w.Members[j]
						if !reflect.DeepEqual(gm, wm) {
							gm.Text, wm.Text = "", ""
							t.Fatalf("cluster %d member %d differs:\nFindIn %+v\nFind   %+v\nitem %v / %v", i, j, gm, wm, gm.Item != nil, wm.Item != nil)
						}
					}
					g.Members, w.Members = nil, nil
					t.Fatalf("cluster %d differs:\nFindIn %+v\nFind   %+v", i, g, w)
				}
			}
			t.Fatalf("FindIn answered %d clusters, Find %d", len(got), len(want))
		}
		conflicts := 0
		for _, c := range got {
			if c.Conflict {
				conflicts++
			}
			if strings.TrimSpace(c.Members[0].Text) == "" {
				t.Errorf("cluster %s: a member without its text", c.Key)
			}
		}
		t.Logf("%d records, %d clusters, %d conflicting", n, len(got), conflicts)
	}
}

// After a member is forgotten, the next pass leaves it out and names its
// cluster by the members it keeps (hydrate_test.go covers a forget between
// the pass's two reads).
func TestFindInAfterAForget(t *testing.T) {
	ctx := context.Background()
	e := demoStore(t)
	cfg := curate.DefaultConfig()
	before, _, err := curate.FindIn(ctx, e, contract.MetaFilter{}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	var big curate.Cluster
	for _, c := range before {
		if len(c.Members) > 2 {
			big = c
			break
		}
	}
	if big.Key == "" {
		t.Fatal("no cluster of three or more in the demo corpus")
	}
	gone := big.Members[len(big.Members)-1].ID
	if _, err := e.Forget(ctx, contract.ForgetTarget{IDs: []string{gone}}); err != nil {
		t.Fatal(err)
	}
	after, _, err := curate.FindIn(ctx, e, contract.MetaFilter{}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range after {
		for _, id := range c.IDs() {
			if id == gone {
				t.Fatalf("the forgotten record %s is still in cluster %s", gone, c.Key)
			}
		}
		if c.Key == big.Key {
			t.Errorf("the cluster kept its key %s without %s", c.Key, gone)
		}
	}
}
