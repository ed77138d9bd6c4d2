package eval

import (
	"context"
	"os"
	"slices"
	"testing"

	"mnemo/contract"
	"mnemo/engine/bolt"
	"mnemo/engine/retrieval"
)

func TestZZDiff(t *testing.T) {
	if os.Getenv("ZZ") == "" {
		t.Skip()
	}
	convs := GenConversations(28, 8, 24)
	ctx := context.Background()
	dir := t.TempDir()
	e, _ := bolt.Open(dir, bolt.Options{})
	keyOf, err := StoreConversations(ctx, e, convs)
	if err != nil {
		t.Fatal(err)
	}
	e.Close()
	text := map[string]string{}
	prev := map[string]string{}
	for _, c := range convs {
		for i, tn := range c.Turns {
			text[tn.Key] = tn.Speaker + ": " + tn.Text
			if i > 0 {
				prev[tn.Key] = c.Turns[i-1].Speaker + ": " + c.Turns[i-1].Text
			}
		}
	}
	run := func(w float64) map[string][]string {
		cfg := retrieval.DefaultConvConfig()
		cfg.Neighbour = w
		e, _ := bolt.Open(dir, bolt.Options{Conversation: &cfg})
		defer e.Close()
		_ = e.WaitEmbedder(ctx)
		out := map[string][]string{}
		for _, c := range convs {
			ns, _ := contract.ParseNamespace(c.Namespace)
			reach := contract.ReachSubtree(ns)
			for _, q := range c.Questions {
				if q.Type != ConvSingleHop && q.Type != ConvMultiHop {
					continue
				}
				page, _ := e.Fetch(ctx, contract.FetchRequest{Query: q.Text, Mode: contract.ModeHybrid, Filter: contract.MetaFilter{Reach: &reach}, Limit: K})
				var ks []string
				for _, h := range page.Hits {
					ks = append(ks, keyOf[h.ID])
				}
				out[c.Namespace+q.Text] = ks
			}
		}
		return out
	}
	off, on := run(0), run(0.3)
	for _, c := range convs {
		for _, q := range c.Questions {
			k := c.Namespace + q.Text
			if off[k] == nil {
				continue
			}
			for _, ev := range q.Evidence {
				if slices.Contains(off[k], ev) && !slices.Contains(on[k], ev) {
					t.Logf("LOST %s | %s", q.Text, text[ev])
					for i, h := range on[k] {
						if !slices.Contains(off[k], h) {
							t.Logf("   new %d: %s   <- after %s", i+1, text[h], prev[h])
						}
					}
				}
			}
		}
	}
}
