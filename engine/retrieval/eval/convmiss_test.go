package eval

import (
	"context"
	"flag"
	"fmt"
	"strings"
	"testing"

	"mnemo/contract"
	"mnemo/engine/bolt"
)

var convMissMode = flag.String("convmode", "hybrid", "fetch mode TestConvMisses lists")

// TestConvMisses lists, with -eval, every conversation question whose
// evidence is not all in the top 10 of -convmode: the question, the evidence
// turns, and the top three hits. A diagnostic, not a gate.
func TestConvMisses(t *testing.T) {
	if !*runEval {
		t.Skip("diagnostic: run with -eval")
	}
	convs := GenConversations(28, 3, 24)
	e, err := bolt.Open(t.TempDir(), bolt.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	ctx := context.Background()
	text := map[string]string{}
	keyOf := map[string]string{}
	for _, c := range convs {
		items, _ := ConvItems(c)
		for lo := 0; lo < len(items); lo += contract.MaxStoreMany {
			hi := min(lo+contract.MaxStoreMany, len(items))
			rec, err := e.StoreManyWith(ctx, items[lo:hi], contract.WriteOptions{})
			if err != nil {
				t.Fatal(err)
			}
			for i, r := range rec {
				tn := c.Turns[lo+i]
				keyOf[r.ID] = tn.Key
				text[tn.Key] = tn.Speaker + " " + tn.At.Format("2006-01-02") + ": " + tn.Text
			}
		}
	}
	_ = e.WaitEmbedder(ctx)
	var b strings.Builder
	for _, c := range convs {
		ns, _ := contract.ParseNamespace(c.Namespace)
		reach := contract.ReachSubtree(ns)
		for _, q := range c.Questions {
			page, err := e.Fetch(ctx, contract.FetchRequest{Query: q.Text, Mode: contract.FetchMode(*convMissMode), Filter: contract.MetaFilter{Reach: &reach}, Limit: K})
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]int{}
			for i, h := range page.Hits {
				got[keyOf[h.ID]] = i + 1
			}
			miss := false
			for _, k := range q.Evidence {
				if got[k] == 0 {
					miss = true
				}
			}
			if !miss {
				continue
			}
			fmt.Fprintf(&b, "\n[%s] %s (speakers %s, %s)\n", q.Type, q.Text, c.Speakers[0], c.Speakers[1])
			for _, k := range q.Evidence {
				fmt.Fprintf(&b, "  evidence rank %d: %s\n", got[k], text[k])
			}
			for i, h := range page.Hits[:min(3, len(page.Hits))] {
				fmt.Fprintf(&b, "  top %d: %s\n", i+1, text[keyOf[h.ID]])
			}
		}
	}
	t.Log(b.String())
}
