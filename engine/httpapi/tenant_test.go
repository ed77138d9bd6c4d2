package httpapi_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"mnemo/contract"
	"mnemo/engine/httpapi"
)

// wipeNamespaces are where seedWipe puts five records tagged wipe-test each.
var wipeNamespaces = []string{"team:acme", "team:acme/agent:bot", "team:acme/agent:other", "team:gamma", "root"}

// seedWipe stores five records tagged wipe-test in each of wipeNamespaces.
func (f *fixture) seedWipe(t *testing.T) {
	t.Helper()
	var items []contract.StoreItem
	for _, ns := range wipeNamespaces {
		for i := range 5 {
			meta := contract.MetaFromSource(contract.SourceAgent, nil)
			meta.Namespace = contract.MustNamespace(ns)
			meta.Tags = []string{"wipe-test"}
			items = append(items, contract.Document(fmt.Sprintf("wipe candidate %d at %s", i, ns), meta))
		}
	}
	if _, err := f.owner.StoreMany(context.Background(), items); err != nil {
		t.Fatal(err)
	}
}

// wipeCounts counts, as the owner, the records tagged wipe-test left in each
// of wipeNamespaces.
func (f *fixture) wipeCounts(t *testing.T) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, ns := range wipeNamespaces {
		r := contract.ReachExact(contract.MustNamespace(ns))
		page, err := f.owner.Explore(context.Background(), contract.ExploreRequest{Facet: contract.FacetKind,
			Filter: contract.MetaFilter{Reach: &r, TagsAny: []string{"wipe-test"}}, Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		out[ns] = int(page.Total)
	}
	return out
}

// TestForgetByFilterOnlyEverNarrows is defect 1 of issue 12 as it was shown:
// a curator confined to team:acme (subtree, no inherit) forgets by filter.
// Her bound narrows what the filter selects (the records both reaches admit)
// and never replaces it: a reach wholly outside forgets nothing and is refused
// naming it; a reach that inherits forgets what it names inside her bound and
// nothing of its siblings; the count a dry run (explore) gives is what forget
// removes.
func TestForgetByFilterOnlyEverNarrows(t *testing.T) {
	f := newFixture(t, httpapi.Options{})
	f.seedWipe(t)
	ctx := context.Background()
	before := f.wipeCounts(t)
	for _, ns := range wipeNamespaces {
		if before[ns] != 5 {
			t.Fatalf("seeded %v", before)
		}
	}

	// Another tenant's reach: refused, naming it; nothing forgotten.
	status, out, _ := post(t, f.srv.URL, aliceToken, "forget",
		`{"filter": {"reach": {"at": "team:gamma", "descendants": true, "inherit": false}, "tags_any": ["wipe-test"]}}`)
	kind, _, msg := errorOf(t, out)
	if status != http.StatusForbidden || kind != "unauthorized" || !strings.Contains(msg, "`team:gamma` with everything below it") {
		t.Fatalf("forget in team:gamma: %d %v", status, out)
	}
	if after := f.wipeCounts(t); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Fatalf("a refused forget changed the store: %v -> %v", before, after)
	}
	// The same for a read: another tenant's namespace is not answered with
	// alice's own records.
	status, out, _ = post(t, f.srv.URL, aliceToken, "list", `{"filter": {"reach": {"at": "team:gamma", "descendants": true}}, "limit": 50}`)
	if status != http.StatusForbidden || out["items"] != nil {
		t.Fatalf("list in team:gamma: %d %v", status, out)
	}

	// inherit left out (so true): team:acme/agent:bot and its ancestors, of
	// which alice's bound keeps team:acme. Not agent:other, not the root.
	body := `{"filter": {"reach": {"at": "team:acme/agent:bot"}, "tags_any": ["wipe-test"]}}`
	alice := client(t, f.srv.URL, aliceToken)
	var target contract.ForgetTarget
	if err := target.UnmarshalJSON([]byte(body)); err != nil {
		t.Fatal(err)
	}
	dry, err := alice.Explore(ctx, contract.ExploreRequest{Facet: contract.FacetKind, Filter: *target.Filter, Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	status, out, _ = post(t, f.srv.URL, aliceToken, "forget", body)
	if status != http.StatusOK || out["forgotten"] != float64(10) || dry.Total != 10 {
		t.Fatalf("forget at agent:bot with inherit: %d %v (dry run said %d), want 10", status, out, dry.Total)
	}
	after := f.wipeCounts(t)
	want := map[string]int{"team:acme": 0, "team:acme/agent:bot": 0, "team:acme/agent:other": 5, "team:gamma": 5, "root": 5}
	if fmt.Sprint(after) != fmt.Sprint(want) {
		t.Fatalf("left %v, want %v", after, want)
	}

	// inherit false: agent:other only.
	status, out, _ = post(t, f.srv.URL, aliceToken, "forget",
		`{"filter": {"reach": {"at": "team:acme/agent:other", "inherit": false}, "tags_any": ["wipe-test"]}}`)
	if status != http.StatusOK || out["forgotten"] != float64(5) {
		t.Fatalf("forget at agent:other without inherit: %d %v", status, out)
	}
	// forget_within with another tenant's reach: refused, nothing gone.
	status, out, _ = post(t, f.srv.URL, aliceToken, "forget_within", fmt.Sprintf(`{"ids": [%q], "reach": {"at": "team:gamma", "inherit": false}}`, f.other))
	if status != http.StatusForbidden {
		t.Fatalf("forget_within in team:gamma: %d %v", status, out)
	}
	if after := f.wipeCounts(t); after["team:gamma"] != 5 || after["root"] != 5 {
		t.Fatalf("other tenants lost records: %v", after)
	}
}
