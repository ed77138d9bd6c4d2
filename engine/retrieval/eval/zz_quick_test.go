package eval

import (
	"context"
	"os"
	"strconv"
	"testing"

	"mnemo/contract"
	"mnemo/engine/bolt"
	"mnemo/engine/retrieval"
)

func TestZZQuick(t *testing.T) {
	if os.Getenv("ZZ") == "" {
		t.Skip()
	}
	n, _ := strconv.Atoi(os.Getenv("ZZN"))
	def := retrieval.DefaultConvConfig()
	set := func(f func(c *retrieval.ConvConfig)) retrieval.ConvConfig { c := def; f(&c); return c }
	cfgs := []struct {
		name string
		cfg  retrieval.ConvConfig
	}{
		{"off", set(func(c *retrieval.ConvConfig) { c.Neighbour = 0 })},
		{"0.3", set(func(c *retrieval.ConvConfig) { c.Neighbour = 0.3 })},
		{"0.5", set(func(c *retrieval.ConvConfig) { c.Neighbour = 0.5 })},
		{"0.8", set(func(c *retrieval.ConvConfig) { c.Neighbour = 0.8 })},
		{"1.0", set(func(c *retrieval.ConvConfig) { c.Neighbour = 1.0 })},
	}
	for _, s := range []struct {
		name  string
		convs []Conv
	}{{"tuning", GenConversations(28, n, 24)}, {"held-out", GenConversationsHeldOut(1028, n, 24)}} {
		ctx := context.Background()
		dir := t.TempDir()
		e, _ := bolt.Open(dir, bolt.Options{})
		keyOf, err := StoreConversations(ctx, e, s.convs)
		if err != nil {
			t.Fatal(err)
		}
		e.Close()
		var res ConvResult
		table := ""
		for _, c := range cfgs {
			cfg := c.cfg
			e, _ := bolt.Open(dir, bolt.Options{Conversation: &cfg})
			_ = e.WaitEmbedder(ctx)
			res, err = MeasureConversations(ctx, e, s.convs, keyOf, contract.ModeHybrid)
			e.Close()
			if err != nil {
				t.Fatal(err)
			}
			table += res.Row(c.name, contract.ModeHybrid) + "\n"
		}
		t.Logf("%s\n%s\n%s", s.name, res.Header("x"), table)
	}
}
