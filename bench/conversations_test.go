package bench

import (
	"context"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"mnemo/contract"
	"mnemo/engine/bolt"
	"mnemo/engine/memory"
)

// TestRunConversationsOnBoltStore: the conversation rows on the product
// engine, small: every row answers within its conversations, and hybrid
// with the levers finds more of the evidence than keyword.
func TestRunConversationsOnBoltStore(t *testing.T) {
	if testing.Short() {
		t.Skip("opens a real store")
	}
	e, err := bolt.Open(t.TempDir(), bolt.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := e.Close(); err != nil {
			t.Error(err)
		}
	}()
	tab, err := RunConversations(context.Background(), e, Options{Records: 1_500, Iterations: 4})
	if err != nil {
		t.Fatal(err)
	}
	if tab.Turns != 1_500 || tab.Conversations < 3 || tab.Questions == 0 {
		t.Fatalf("corpus: %d turns of %d conversations, %d questions", tab.Turns, tab.Conversations, tab.Questions)
	}
	recall := map[string]float64{}
	re := regexp.MustCompile(`evidence recall@10 ([0-9.]+) over 20 questions`)
	for _, name := range []string{"conversation keyword fetch top 10", "conversation hybrid fetch top 10, every question",
		"conversation hybrid fetch top 10, temporal questions", "conversation hybrid fetch top 10, multi-hop questions",
		"conversation hybrid fetch top 10, relative questions", "conversation hybrid fetch top 10, exchange questions"} {
		var row *Row
		for i := range tab.Rows {
			if strings.HasPrefix(tab.Rows[i].Name, name) {
				row = &tab.Rows[i]
			}
		}
		if row == nil {
			t.Fatalf("no row %q:\n%s", name, tab.Markdown())
		}
		m := re.FindStringSubmatch(row.Note)
		if row.Samples != 20 || m == nil {
			t.Fatalf("%s: %d samples, note %q", name, row.Samples, row.Note)
		}
		recall[name], _ = strconv.ParseFloat(m[1], 64)
	}
	if kw, hy := recall["conversation keyword fetch top 10"], recall["conversation hybrid fetch top 10, every question"]; hy <= kw {
		t.Errorf("hybrid recall %.3f is not above keyword's %.3f on the same questions", hy, kw)
	}
	md := tab.Markdown()
	for _, want := range []string{"1500 turns", "| conversation hybrid fetch top 10, every question | 20 |", "p95 <= 25.000 ms"} {
		if !strings.Contains(md, want) {
			t.Errorf("table lacks %q:\n%s", want, md)
		}
	}
	t.Log(md)
}

// A hit from another conversation is a wrong answer, whatever its timing.
func TestRunConversationsFlagsAHitOutsideTheConversation(t *testing.T) {
	stray := contract.MustNamespace("project:elsewhere")
	e := faultyRanking{Engine: memory.New(), mode: contract.ModeKeyword, fetch: func(_ *memory.Engine, p contract.FetchPage) contract.FetchPage {
		if len(p.Hits) > 0 {
			p.Hits[0].Meta.Namespace = stray
		}
		return p
	}}
	tab, err := RunConversations(context.Background(), e, Options{Records: 600, Iterations: 1})
	if err != nil {
		t.Fatal(err)
	}
	if tab.Passed() || !strings.HasPrefix(tab.Rows[0].Note, wrongAnswer) || !strings.Contains(tab.Rows[0].Note, "outside the question's conversation") {
		t.Errorf("a stray hit passed: %+v", tab.Rows[0])
	}
}
