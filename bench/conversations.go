package bench

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"time"

	"mnemo/contract"
	"mnemo/engine/retrieval/eval"
)

// convSeed picks the generated conversations of the conversation rows.
const convSeed = 4242

// ConvTable is the conversation rows of a run: fetch over a store of long
// multi-session conversations, one turn per record as `mnemo import` stores
// a transcript (eval.ConversationsOfTurns), each question asked within its
// conversation.
type ConvTable struct {
	Engine                          string
	Turns, Conversations, Questions int
	Rounds                          int
	GoVersion                       string
	GOMAXPROCS                      int
	LoadAvg, LoadAvgEnd             string
	// Load is how long storing the turns took, the learned embedder's
	// learning and re-embedding included (the rows are timed after it).
	Load time.Duration
	Rows []Row
}

// Passed tells whether every conversation row met its budget and answered right.
func (t ConvTable) Passed() bool {
	for _, r := range t.Rows {
		if !r.Pass {
			return false
		}
	}
	return true
}

// convAsk is one question of the rows: its text, its conversation's reach
// and the turn keys of its evidence.
type convAsk struct {
	q        string
	typ      string
	reach    contract.Reach
	evidence []string
}

// RunConversations stores opts.Records turns of generated conversations in
// e (which must be empty) and times fetch top 10 of their questions, each
// within its conversation: keyword, and hybrid with whatever conversation
// levers e applies (engine/bolt: its Options.Conversation), over every
// question, the temporal ones (the dates' window), the multi-hop ones (the
// second round) and the relative ones (an anchor's search, then its dates). Each row runs 5 x opts.Iterations rounds after a
// warm-up, round-robin, the questions spread over the whole store; its
// answer note is the evidence recall@10 over the questions it asked, and a
// hit outside the question's conversation is a wrong answer.
func RunConversations(ctx context.Context, e contract.Engine, opts Options) (ConvTable, error) {
	opts = opts.withDefaults()
	t := ConvTable{Engine: e.Descriptor().ID, Rounds: 5 * opts.Iterations, GoVersion: runtime.Version(), GOMAXPROCS: runtime.GOMAXPROCS(0)}
	before, err := e.Browse(ctx, contract.BrowseQuery{Limit: 1})
	if err != nil {
		return t, fmt.Errorf("counting existing records: %w", err)
	}
	if before.Total > 0 {
		return t, fmt.Errorf("the conversation rows need an empty store, this one holds %d records", before.Total)
	}
	convs := eval.ConversationsOfTurns(convSeed, opts.Records)
	start := time.Now()
	keyOf, err := eval.StoreConversations(ctx, e, convs)
	if err != nil {
		return t, err
	}
	t.Load = time.Since(start)
	if w, ok := e.(interface{ WaitIndex(context.Context) error }); ok {
		if err := w.WaitIndex(ctx); err != nil {
			return t, err
		}
	}
	var asks []convAsk
	for _, c := range convs {
		t.Conversations++
		t.Turns += len(c.Turns)
		ns, err := contract.ParseNamespace(c.Namespace)
		if err != nil {
			return t, err
		}
		for _, q := range c.Questions {
			asks = append(asks, convAsk{q: q.Text, typ: q.Type, reach: contract.ReachSubtree(ns), evidence: q.Evidence})
		}
	}
	t.Questions = len(asks)
	fmt.Fprintf(opts.Out, "stored %d turns of %d conversations in %s (learned and re-embedded)\n", t.Turns, t.Conversations, t.Load.Round(time.Millisecond))
	t.LoadAvg = loadAvg()

	only := func(typ string) []convAsk {
		var out []convAsk
		for _, a := range asks {
			if a.typ == typ {
				out = append(out, a)
			}
		}
		return out
	}
	shapes := []shape{convShape(e, "conversation keyword fetch top 10", contract.ModeKeyword, budgetKeyword, asks, keyOf, t.Rounds)}
	if e.Descriptor().Supports(contract.ModeHybrid) {
		shapes = append(shapes,
			convShape(e, "conversation hybrid fetch top 10, every question", contract.ModeHybrid, budgetVector, asks, keyOf, t.Rounds),
			convShape(e, "conversation hybrid fetch top 10, single-hop questions (a kind named, the thing in the turn)", contract.ModeHybrid, budgetVector, only(eval.ConvSingleHop), keyOf, t.Rounds),
			convShape(e, "conversation hybrid fetch top 10, temporal questions (a date named)", contract.ModeHybrid, budgetVector, only(eval.ConvTemporal), keyOf, t.Rounds),
			convShape(e, "conversation hybrid fetch top 10, multi-hop questions", contract.ModeHybrid, budgetVector, only(eval.ConvMultiHop), keyOf, t.Rounds),
			convShape(e, "conversation hybrid fetch top 10, relative questions (dated by another event)", contract.ModeHybrid, budgetVector, only(eval.ConvRelative), keyOf, t.Rounds),
			convShape(e, "conversation hybrid fetch top 10, exchange questions (the answer to the other speaker's question)", contract.ModeHybrid, budgetVector, only(eval.ConvExchange), keyOf, t.Rounds))
	}
	samples := make([][]time.Duration, len(shapes))
	notes := make([]string, len(shapes))
	idx := make([]int, len(shapes))
	for i := range shapes {
		idx[i] = i
	}
	rounds := opts
	rounds.Iterations = t.Rounds
	if err := measureRounds(ctx, rounds, shapes, idx, samples, notes); err != nil {
		return t, err
	}
	scale := scaleOf(t.Turns)
	for i, s := range shapes {
		row := Row{Name: s.name, Samples: len(samples[i]), Note: notes[i]}
		row.P50, row.P95 = percentile(samples[i], 50), percentile(samples[i], 95)
		row.Budget = s.budget.at(scale)
		row.Pass = row.Budget.admits(row.P50, row.P95) && !strings.HasPrefix(notes[i], wrongAnswer)
		t.Rows = append(t.Rows, row)
	}
	t.LoadAvgEnd = loadAvg()
	return t, nil
}

// convShape asks the questions of asks in turn, spread over the list so
// that rounds rounds reach every part of the store; its note is the
// evidence recall@10 so far.
func convShape(e contract.Engine, name string, mode contract.FetchMode, b budgets, asks []convAsk, keyOf map[string]string, rounds int) shape {
	var sum float64
	var asked int
	var wrong string
	return shape{name: name, budget: b, run: func(ctx context.Context, round int) (string, error) {
		if len(asks) == 0 {
			return "no questions of this kind in the store", nil
		}
		a := asks[(round+1)*len(asks)/(rounds+1)%len(asks)]
		p, err := e.Fetch(ctx, contract.FetchRequest{Query: a.q, Mode: mode, Filter: contract.MetaFilter{Reach: &a.reach}, Limit: FetchTop})
		if err != nil {
			return "", err
		}
		found, seen := 0, map[string]bool{}
		for _, h := range p.Hits {
			if seen[h.ID] {
				wrong = fmt.Sprintf("hit %s twice for %q", h.ID, a.q)
			}
			seen[h.ID] = true
			if !a.reach.Admits(h.Meta.Namespace) {
				wrong = fmt.Sprintf("hit %s in %s, outside the question's conversation, for %q", h.ID, h.Meta.Namespace, a.q)
			}
			for _, k := range a.evidence {
				if keyOf[h.ID] == k {
					found++
				}
			}
		}
		if round >= 0 && len(a.evidence) > 0 { // the warm-up call does not count
			sum += float64(found) / float64(len(a.evidence))
			asked++
		}
		note := fmt.Sprintf("evidence recall@%d %.3f over %d questions (%d in the store)", FetchTop, sum/float64(max(asked, 1)), asked, len(asks))
		if wrong != "" {
			return wrongAnswer + wrong, nil
		}
		return note, nil
	}}
}

// Markdown renders the conversation rows.
func (t ConvTable) Markdown() string {
	var b strings.Builder
	scale := scaleOf(t.Turns)
	fmt.Fprintf(&b, "Conversation fetch: engine `%s`, %d turns of %d generated conversations (one record a turn, a question within its conversation; %d questions), stored, learned and re-embedded in %s; %d rounds after one warm-up call per row; %s, GOMAXPROCS %d",
		t.Engine, t.Turns, t.Conversations, t.Questions, t.Load.Round(time.Millisecond), t.Rounds, t.GoVersion, t.GOMAXPROCS)
	if t.LoadAvg != "" {
		fmt.Fprintf(&b, "; load average %s at start, %s at end", t.LoadAvg, t.LoadAvgEnd)
	}
	fmt.Fprintf(&b, "; budgets of the %s column of docs/spec/design.md §8 (keyword fetch, and vector or hybrid fetch).\n\n", scale)
	fmt.Fprintf(&b, "| operation | samples | p50 ms | p95 ms | budget | result | answer |\n|---|---:|---:|---:|---|---|---|\n")
	for _, r := range t.Rows {
		fmt.Fprintf(&b, "| %s | %d | %s | %s | %s | %s | %s |\n",
			r.Name, r.Samples, msNum(r.P50), msNum(r.P95), r.Budget, r.result(), strings.ReplaceAll(r.Note, "|", "\\|"))
	}
	return b.String()
}
