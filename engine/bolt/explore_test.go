package bolt_test

import (
	"context"
	"fmt"
	"reflect"
	"testing"

	"mnemo/contract"
	"mnemo/engine/bolt"
	"mnemo/engine/memory"
)

// The root explore reads its counters in place (the global counts less the
// namespaces a reach leaves out, or the sum of those it admits); under every
// reach it must give what the reference engine gives, for a facet with a
// value per record and for one with a handful.
func TestRootExploreUnderEveryReachMatchesTheReference(t *testing.T) {
	ctx := context.Background()
	e := openStore(t, t.TempDir(), bolt.Options{})
	ref := memory.New()
	namespaces := []string{"team:a/agent:x", "team:a/agent:y", "team:b", "agent:z/service:job", "agent:z"}
	var items []contract.StoreItem
	for i := range 300 {
		ns, err := contract.ParseNamespace(namespaces[i%len(namespaces)])
		if err != nil {
			t.Fatal(err)
		}
		meta := contract.MemoryMeta{Namespace: ns, FilePath: contract.Ptr(fmt.Sprintf("src/f%03d.go", i%170)),
			Language: contract.Ptr([]string{"go", "rust", "sql"}[i%3])}
		items = append(items, contract.Document(fmt.Sprintf("document %d", i), meta))
	}
	for _, eng := range []contract.Engine{e, ref} {
		for at := 0; at < len(items); at += 100 {
			if _, err := eng.StoreMany(ctx, items[at:at+100]); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := e.WaitIndex(ctx); err != nil {
		t.Fatal(err)
	}
	ns := func(s string) contract.Namespace {
		n, err := contract.ParseNamespace(s)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	reaches := map[string]*contract.Reach{
		"default":          nil,
		"one agent":        contract.Ptr(contract.ReachOf(ns("team:a/agent:x"))),
		"a subtree":        contract.Ptr(contract.ReachSubtree(ns("team:a"))),
		"only the sandbox": contract.Ptr(contract.ReachExact(ns("agent:z/service:job"))),
		"everything":       contract.Ptr(contract.ReachSubtree(contract.Root)),
	}
	for name, reach := range reaches {
		for _, f := range []contract.Facet{contract.FacetFilePath, contract.FacetLanguage, contract.FacetNamespace} {
			for _, limit := range []int{1, 7, contract.MaxBuckets} {
				req := contract.ExploreRequest{Facet: f, Filter: contract.MetaFilter{Reach: reach}, Limit: limit}
				got, err := e.Explore(ctx, req)
				if err != nil {
					t.Fatalf("%s %s: %v", name, f, err)
				}
				want, err := ref.Explore(ctx, req)
				if err != nil {
					t.Fatalf("%s %s (reference): %v", name, f, err)
				}
				if !reflect.DeepEqual(got, want) {
					t.Errorf("%s, %s, limit %d:\n got %+v\nwant %+v", name, f, limit, got, want)
				}
			}
		}
	}
}
