package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"mnemo/contract"
	"mnemo/server/audit"
	"mnemo/server/httpapi"
	"mnemo/server/wire"
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
	if _, err := contract.StoreMany(context.Background(), f.owner, items); err != nil {
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
	t.Parallel()
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

// getAudit reads GET /v1/audit with a token and raw query.
func getAudit(t *testing.T, url, token, query string) (int, []audit.Event) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url+"/v1/audit"+query, nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var events []audit.Event
	if resp.StatusCode == http.StatusOK {
		if err := json.NewDecoder(resp.Body).Decode(&events); err != nil {
			t.Fatal(err)
		}
	}
	return resp.StatusCode, events
}

// TestAuditLogIsConfinedByTheReadersReach is defect 2 of issue 12: an admin
// whose reach is user:priya read every tenant's operations, filters and ids
// from GET /v1/audit. Entries are now confined like records: a reach-limited
// admin reads the entries that lie wholly inside her reach, the owner reads
// all, and no query parameter widens it.
func TestAuditLogIsConfinedByTheReadersReach(t *testing.T) {
	t.Parallel()
	f := newFixture(t, httpapi.Options{})
	ctx := context.Background()
	// Activity of every kind, in and out of user:priya.
	priyaRec := f.seed(t, ctx, "user:priya", "priya's own note")
	priyaAgent := f.seed(t, ctx, "user:priya/agent:helper", "priya's agent note")
	f.seed(t, ctx, "user:priya/service:billing", "sandboxed under priya")
	f.seedWipe(t)
	alice := client(t, f.srv.URL, aliceToken)
	if _, err := contract.Store(ctx, alice, doc("team:acme/agent:bot", "alice writes")); err != nil {
		t.Fatal(err)
	}
	if _, err := contract.Store(ctx, alice, doc("team:gamma", "alice tries gamma")); !wire.IsForbidden(err) {
		t.Fatalf("alice stored outside: %v", err)
	}
	post(t, f.srv.URL, aliceToken, "forget", fmt.Sprintf(`{"ids":[%q,%q]}`, f.acme1, f.other))
	post(t, f.srv.URL, aliceToken, "forget", `{"filter":{"reach":{"at":"team:acme/agent:bot"},"tags_any":["wipe-test"]}}`)
	post(t, f.srv.URL, "not-a-token", "list", `{"limit":1}`)
	priya := client(t, f.srv.URL, priyaToken)
	if _, err := contract.Store(ctx, priya, doc("user:priya/agent:helper", "priya writes")); err != nil {
		t.Fatal(err)
	}
	if _, err := priya.Forget(ctx, contract.ForgetIDs(priyaAgent)); err != nil {
		t.Fatal(err)
	}

	status, all := getAudit(t, f.srv.URL, ownerToken, "")
	if status != http.StatusOK {
		t.Fatalf("owner audit: %d", status)
	}
	// What lies in user:priya: the namespaces of every record the store holds.
	inPriya := map[string]bool{priyaRec: true, priyaAgent: true}
	for _, query := range []string{"", "?limit=1000", "?reach=root&principal=owner", "?since=2000-01-01T00:00:00Z"} {
		status, mine := getAudit(t, f.srv.URL, priyaToken, query)
		if status != http.StatusOK {
			t.Fatalf("priya's audit %s: %d", query, status)
		}
		if len(mine) == 0 || len(mine) >= len(all) {
			t.Fatalf("priya reads %d of the %d entries", len(mine), len(all))
		}
		for _, ev := range mine {
			if ev.Principal != "owner" && ev.Principal != "priya" {
				t.Fatalf("priya read %s's entry %+v", ev.Principal, ev)
			}
			for _, ns := range ev.Where {
				if !ns.IsWithin(contract.MustNamespace("user:priya")) || strings.Contains(ns.String(), "service:") {
					t.Fatalf("priya read an entry at %s: %+v", ns, ev)
				}
			}
			for _, id := range ev.IDs {
				if !inPriya[id] {
					// ids priya's own stores created are hers too
					if ev.Principal != "priya" || ev.Op != "store" {
						t.Fatalf("priya read id %s of another namespace in %+v", id, ev)
					}
				}
			}
		}
		// Her own store and forget, the owner's two stores under user:priya;
		// not the sandboxed one.
		ops := []string{}
		for _, ev := range mine {
			ops = append(ops, ev.Principal+" "+ev.Op)
		}
		if fmt.Sprint(ops) != "[owner store owner store priya store priya forget]" {
			t.Fatalf("priya's audit %s: %v", query, ops)
		}
	}
	// ada (team:acme) reads alice's store and filtered forget, not the forget
	// naming team:other's id, nor the refusals at team:gamma and of the
	// unknown token, nor anything of priya's.
	_, ada := getAudit(t, f.srv.URL, adminToken, "")
	var adaOps []string
	for _, ev := range ada {
		adaOps = append(adaOps, ev.Principal+" "+ev.Op)
		if ev.Principal == "priya" || ev.Op == "authenticate" || ev.Refused != "" || slices.Contains(ev.IDs, f.other) {
			t.Fatalf("ada read %+v", ev)
		}
	}
	if !slices.Contains(adaOps, "alice store") || !slices.Contains(adaOps, "alice forget") {
		t.Fatalf("ada's audit: %v", adaOps)
	}
	// The owner reads everything, the refusals included.
	refusals := 0
	for _, ev := range all {
		if ev.Refused != "" {
			refusals++
		}
	}
	if refusals < 2 {
		t.Fatalf("the owner's audit: %+v", all)
	}
	// Readers and curators still read no audit at all.
	if status, _ := getAudit(t, f.srv.URL, aliceToken, ""); status != http.StatusForbidden {
		t.Fatalf("a curator's audit: %d", status)
	}
	if status, _ := getAudit(t, f.srv.URL, "", ""); status != http.StatusUnauthorized {
		t.Fatalf("an anonymous audit: %d", status)
	}
}

func doc(ns, text string) contract.StoreItem {
	meta := contract.MetaFromSource(contract.SourceAgent, nil)
	meta.Namespace = contract.MustNamespace(ns)
	return contract.Document(text, meta)
}
