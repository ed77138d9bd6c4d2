package httpapi_test

import (
	"context"
	"slices"
	"testing"

	"mnemo/contract"
	"mnemo/engine/curate"
	"mnemo/server/httpapi"
)

// The clusters op answers the clusters the store keeps within the caller's
// reach: a reader confined to team:acme gets the repeats stored there and
// never one of team:other, whose records repeat each other too; asked for
// team:other, it is refused. Before the store keeps clusters the op answers
// kept false, and a client then finds them by a pass (curate.Clusters).
func TestClustersOpIsConfined(t *testing.T) {
	f := newFixture(t, httpapi.Options{})
	ctx := context.Background()
	cfg := curate.DefaultConfig()
	rita := client(t, f.srv.URL, readerToken)
	if a, err := rita.KeptClusters(ctx, contract.MetaFilter{}, cfg); err != nil || a.Kept {
		t.Fatalf("before the store keeps clusters: %+v, %v", a, err)
	}
	acme := []string{
		f.seed(t, ctx, "team:acme/agent:writer", "The billing replica lags the primary by about 40 seconds at peak"),
		f.seed(t, ctx, "team:acme/agent:other", "The billing replica lags the primary by about 90 seconds at peak"),
	}
	other := []string{
		f.seed(t, ctx, "team:other", "Roadmap: the payments rewrite ships in the third quarter of the year"),
		f.seed(t, ctx, "team:other", "Roadmap: the payments rewrite ships in the third quarter of the year, as planned"),
	}
	f.store.KeepClusters(cfg)
	if err := f.store.WaitClusters(ctx); err != nil {
		t.Fatal(err)
	}
	all, err := f.owner.KeptClusters(ctx, contract.MetaFilter{}, cfg)
	if err != nil || !all.Kept || len(all.Clusters) != 2 {
		t.Fatalf("the owner's clusters: %+v, %v; want the two of the seed", all, err)
	}
	a, err := rita.KeptClusters(ctx, contract.MetaFilter{}, cfg)
	if err != nil || !a.Kept || len(a.Clusters) != 1 {
		t.Fatalf("rita's clusters: %+v, %v; want team:acme's one", a, err)
	}
	got := a.Clusters[0].IDs()
	slices.Sort(got)
	slices.Sort(acme)
	if !slices.Equal(got, acme) || !a.Clusters[0].Conflict {
		t.Errorf("rita's cluster holds %v (conflict %v), want the conflict %v", got, a.Clusters[0].Conflict, acme)
	}
	if a.Records != 4 {
		t.Errorf("rita's scope holds %d records, want the 4 of team:acme", a.Records)
	}
	r := contract.ReachSubtree(contract.MustNamespace("team:other"))
	if _, err := rita.KeptClusters(ctx, contract.MetaFilter{Reach: &r}, cfg); contract.KindOf(err) != contract.KindUnauthorized {
		t.Errorf("rita asking for team:other's clusters: %v, want refused", err)
	}
	slices.Sort(other)
	found := false
	for _, c := range all.Clusters {
		ids := c.IDs()
		slices.Sort(ids)
		found = found || slices.Equal(ids, other)
	}
	if !found {
		t.Errorf("the owner's clusters %+v lack team:other's repeat %v", all.Clusters, other)
	}
}
