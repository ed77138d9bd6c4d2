package eval

import (
	"context"
	"os"
	"regexp"
	"slices"
	"testing"

	"mnemo/contract"
	"mnemo/engine/bolt"
	"mnemo/engine/retrieval"
)

// TestConvLeverSweep prints, with -eval, hybrid's evidence recall@10 on the
// tuning conversation set (and the held-out one, printed, not chosen on)
// for each conversation lever alone and together: the table in
// docs/retrieval.md. Each store is built once and reopened per setting.
func TestConvLeverSweep(t *testing.T) {
	if !*runEval {
		t.Skip("a sweep: run with -eval")
	}
	def := retrieval.DefaultConvConfig()
	only := func(f func(c *retrieval.ConvConfig)) retrieval.ConvConfig {
		var c retrieval.ConvConfig
		f(&c)
		return c
	}
	without := func(f func(c *retrieval.ConvConfig)) retrieval.ConvConfig {
		c := def
		f(&c)
		return c
	}
	settings := []struct {
		name string
		cfg  retrieval.ConvConfig
	}{
		{"none", retrieval.ConvConfig{}},
		{"speaker only", only(func(c *retrieval.ConvConfig) { c.Speaker = def.Speaker })},
		{"dates only", only(func(c *retrieval.ConvConfig) { c.Time, c.TimeWindow = def.Time, def.TimeWindow })},
		{"second round only", only(func(c *retrieval.ConvConfig) { c.Second, c.SecondSeeds = def.Second, def.SecondSeeds })},
		{"duplicates only", only(func(c *retrieval.ConvConfig) { c.Duplicate = def.Duplicate })},
		{"specificity only", only(func(c *retrieval.ConvConfig) { c.Specific = def.Specific })},
		{"all (default)", def},
		{"all but speaker", without(func(c *retrieval.ConvConfig) { c.Speaker = 0 })},
		{"all but dates", without(func(c *retrieval.ConvConfig) { c.Time, c.TimeWindow = 0, 0 })},
		{"all but second round", without(func(c *retrieval.ConvConfig) { c.Second = 0 })},
		{"all but duplicates", without(func(c *retrieval.ConvConfig) { c.Duplicate = 0 })},
		{"all but specificity", without(func(c *retrieval.ConvConfig) { c.Specific = 0 })},
		{"vector pool only", only(func(c *retrieval.ConvConfig) { c.VectorPool = def.VectorPool })},
		{"time 0.5", without(func(c *retrieval.ConvConfig) { c.Time = 0.5 })},
		{"speaker 0.3", without(func(c *retrieval.ConvConfig) { c.Speaker = 0.3 })},
		{"speaker 1.0", without(func(c *retrieval.ConvConfig) { c.Speaker = 1.0 })},
		{"second 0.5", without(func(c *retrieval.ConvConfig) { c.Second = 0.5 })},
		{"second seeds 3", without(func(c *retrieval.ConvConfig) { c.SecondSeeds = 3 })},
		{"duplicates 0.5", without(func(c *retrieval.ConvConfig) { c.Duplicate = 0.5 })},
		{"vector pool 0 (the fused 20 only)", without(func(c *retrieval.ConvConfig) { c.VectorPool = 0 })},
		{"vector pool 50", without(func(c *retrieval.ConvConfig) { c.VectorPool = 50 })},
		{"vector pool 100", without(func(c *retrieval.ConvConfig) { c.VectorPool = 100 })},
		{"vector pool 400", without(func(c *retrieval.ConvConfig) { c.VectorPool = 400 })},
		{"specific 0.2", without(func(c *retrieval.ConvConfig) { c.Specific = 0.2 })},
		{"specific 0.6", without(func(c *retrieval.ConvConfig) { c.Specific = 0.6 })},
		{"time window 20", without(func(c *retrieval.ConvConfig) { c.TimeWindow = 20 })},
		{"time window 60", without(func(c *retrieval.ConvConfig) { c.TimeWindow = 60 })},
		{"time window 200", without(func(c *retrieval.ConvConfig) { c.TimeWindow = 200 })},
		{"all but anchored dates", without(func(c *retrieval.ConvConfig) { c.AnchorDays = 0 })},
		{"anchor 30 days", without(func(c *retrieval.ConvConfig) { c.AnchorDays = 30 })},
		{"anchor 45 days", without(func(c *retrieval.ConvConfig) { c.AnchorDays = 45 })},
		{"anchor 90 days", without(func(c *retrieval.ConvConfig) { c.AnchorDays = 90 })},
		{"neighbour only", only(func(c *retrieval.ConvConfig) { c.Neighbour = def.Neighbour })},
		{"all but neighbour", without(func(c *retrieval.ConvConfig) { c.Neighbour = 0 })},
		{"neighbour 0.2", without(func(c *retrieval.ConvConfig) { c.Neighbour = 0.2 })},
		{"neighbour 0.3", without(func(c *retrieval.ConvConfig) { c.Neighbour = 0.3 })},
		{"neighbour 0.5", without(func(c *retrieval.ConvConfig) { c.Neighbour = 0.5 })},
		{"neighbour 0.7", without(func(c *retrieval.ConvConfig) { c.Neighbour = 0.7 })},
		{"neighbour 1.0", without(func(c *retrieval.ConvConfig) { c.Neighbour = 1.0 })},
		{"kind only", only(func(c *retrieval.ConvConfig) { c.Kind, c.KindPool = def.Kind, def.KindPool })},
		{"all but kind", without(func(c *retrieval.ConvConfig) { c.Kind = 0 })},
		{"kind, candidates only (no credit)", without(func(c *retrieval.ConvConfig) { c.Kind = 1e-9 })},
		{"kind, credit only (no candidates)", without(func(c *retrieval.ConvConfig) { c.KindPool = 0 })},
		{"kind 0.05", without(func(c *retrieval.ConvConfig) { c.Kind = 0.05 })},
		{"kind 0.2", without(func(c *retrieval.ConvConfig) { c.Kind = 0.2 })},
		{"kind 0.5", without(func(c *retrieval.ConvConfig) { c.Kind = 0.5 })},
		{"kind pool 10", without(func(c *retrieval.ConvConfig) { c.KindPool = 10 })},
		{"kind pool 30", without(func(c *retrieval.ConvConfig) { c.KindPool = 30 })},
		{"kind pool 40", without(func(c *retrieval.ConvConfig) { c.KindPool = 40 })},
	}
	// MNEMO_SWEEP, when set, keeps only the settings whose name it matches.
	if re := os.Getenv("MNEMO_SWEEP"); re != "" {
		keep := regexp.MustCompile(re)
		settings = slices.DeleteFunc(settings, func(s struct {
			name string
			cfg  retrieval.ConvConfig
		}) bool {
			return !keep.MatchString(s.name)
		})
	}
	for _, set := range []struct {
		name  string
		convs []Conv
	}{
		{"tuning", GenConversations(28, 8, 24)},
		{"held-out", GenConversationsHeldOut(1028, 8, 24)},
	} {
		dir := t.TempDir()
		ctx := context.Background()
		e, err := bolt.Open(dir, bolt.Options{})
		if err != nil {
			t.Fatal(err)
		}
		keyOf, err := StoreConversations(ctx, e, set.convs)
		if err != nil {
			t.Fatal(err)
		}
		res, err := MeasureConversations(ctx, e, set.convs, keyOf, contract.ModeKeyword, contract.ModeVector)
		if err != nil {
			t.Fatal(err)
		}
		e.Close()
		table := res.Header("hybrid with") + "\n" +
			res.Row("keyword", contract.ModeKeyword) + "\n" + res.Row("vector", contract.ModeVector) + "\n"
		for _, s := range settings {
			cfg := s.cfg
			e, err := bolt.Open(dir, bolt.Options{Conversation: &cfg})
			if err != nil {
				t.Fatal(err)
			}
			if err := e.WaitEmbedder(ctx); err != nil {
				t.Fatal(err)
			}
			res, err := MeasureConversations(ctx, e, set.convs, keyOf, contract.ModeHybrid)
			e.Close()
			if err != nil {
				t.Fatal(err)
			}
			table += res.Row(s.name, contract.ModeHybrid) + "\n"
		}
		// The same store with the hashed embedder alone: what learning from
		// a store of short turns adds.
		he, err := bolt.Open(t.TempDir(), bolt.Options{Embedder: retrieval.NewHashEmbedder()})
		if err != nil {
			t.Fatal(err)
		}
		hk, err := StoreConversations(ctx, he, set.convs)
		if err != nil {
			t.Fatal(err)
		}
		hres, err := MeasureConversations(ctx, he, set.convs, hk, contract.ModeVector, contract.ModeHybrid)
		he.Close()
		if err != nil {
			t.Fatal(err)
		}
		table += hres.Row("vector, hashed embedder (nothing learned)", contract.ModeVector) + "\n" +
			hres.Row("all (default), hashed embedder", contract.ModeHybrid) + "\n"
		t.Logf("%s conversations (%d questions), evidence recall@10 (MRR@10)\n%s", set.name, res.Questions, table)
	}
}
