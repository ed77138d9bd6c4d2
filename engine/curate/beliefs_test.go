package curate_test

import (
	"context"
	"slices"
	"testing"

	"mnemo/contract"
	"mnemo/engine/curate"
	"mnemo/engine/memory"
)

// TestBeliefs derives beliefs from a real engine's records: one learning per
// cluster, tagged belief, the members as evidence, inside the reach.
func TestBeliefs(t *testing.T) {
	ctx := context.Background()
	e := memory.New()
	meta := contract.MemoryMeta{Source: contract.SourceRef{Kind: contract.SourceAgent}}
	text := "The worker runs as a systemd unit with Restart=on-failure and a RestartSec of five seconds."
	var ids []string
	for _, it := range []contract.StoreItem{
		contract.Learning(text, contract.LearningKinds()[0], 0.9, meta),
		contract.Learning(text, contract.LearningKinds()[0], 0.5, contract.MemoryMeta{Source: meta.Source, AgentID: contract.Ptr("b")}),
		contract.Learning("Prune roses in late winter just as buds swell.", contract.LearningKinds()[0], 0.8, meta),
	} {
		r, err := contract.Store(ctx, e, it)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, r.ID)
	}
	reach := contract.ReachSubtree(contract.Namespace{})
	if _, err := curate.Beliefs(ctx, e, contract.BeliefsRequest{Reach: reach, Limit: 0}, curate.DefaultConfig()); err == nil {
		t.Fatal("limit 0 accepted")
	}
	hits, err := curate.Beliefs(ctx, e, contract.BeliefsRequest{Reach: reach, Limit: 10, Query: contract.Ptr("systemd worker restart")}, curate.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != 1 {
		t.Fatalf("beliefs %+v: want one", hits)
	}
	h := hits[0]
	slices.Sort(h.Evidence)
	want := slices.Clone(ids[:2])
	slices.Sort(want)
	if h.Kind != contract.KindLearning || !slices.Contains(h.Meta.Tags, contract.BeliefTag) || !slices.Equal(h.Evidence, want) || h.Text != text {
		t.Fatalf("belief %+v: want a learning tagged belief with both copies as evidence", h)
	}
	if c := float32(*h.Confidence); c < 0.69 || c > 0.71 {
		t.Fatalf("confidence %v, want the members' mean 0.7", c)
	}
	rec, err := curate.Consolidate(ctx, e, contract.ConsolidateRequest{Reach: reach}, curate.DefaultConfig())
	if err != nil || rec.Status != contract.ConsolidateCompleted || rec.Built == nil || *rec.Built != 1 {
		t.Fatalf("consolidate %+v %v: want completed with 1 built", rec, err)
	}
}
