package bench

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"mnemo/bench/corpus"
	"mnemo/contract"
	"mnemo/engine/memory"
)

// faultyRanking wraps the reference engine and spoils the answers of one
// fetch mode or of recall, the way a broken index or a stale id map would.
type faultyRanking struct {
	*memory.Engine
	mode   contract.FetchMode
	fetch  func(*memory.Engine, contract.FetchPage) contract.FetchPage
	recall func(contract.RecallAnswer) contract.RecallAnswer
}

func (f faultyRanking) Fetch(ctx context.Context, req contract.FetchRequest) (contract.FetchPage, error) {
	p, err := f.Engine.Fetch(ctx, req)
	if err == nil && f.fetch != nil && req.Mode == f.mode {
		p = f.fetch(f.Engine, p)
	}
	return p, err
}

func (f faultyRanking) Recall(ctx context.Context, req contract.RecallRequest) (contract.RecallAnswer, error) {
	a, err := f.Engine.Recall(ctx, req)
	if err == nil && f.recall != nil {
		a = f.recall(a)
	}
	return a, err
}

const unknownID = "ffffffffffffffffffffffffffffffffffffffff"

func rowNamed(t *testing.T, tab Table, prefix string) Row {
	t.Helper()
	for _, r := range tab.Rows {
		if strings.HasPrefix(r.Name, prefix) {
			return r
		}
	}
	t.Fatalf("no row %q among %d rows", prefix, len(tab.Rows))
	return Row{}
}

func TestRunFlagsBrokenRankedReads(t *testing.T) {
	const records, seed = 1_000, 2
	// The empty-answer case needs a query whose words live records hold.
	queries := corpus.Queries(2, seed)
	live := &liveWords{records: records, seed: seed, queries: queries}
	if !live.holdsAny(queries[0]) && !live.holdsAny(queries[1]) {
		t.Fatalf("no query of %q occurs in the first %d live records; pick another seed", queries, records)
	}
	for _, tc := range []struct {
		name   string
		engine faultyRanking
		row    string
		fault  string
	}{
		{"keyword answers nothing", faultyRanking{mode: contract.ModeKeyword,
			fetch: func(_ *memory.Engine, p contract.FetchPage) contract.FetchPage { p.Hits = []contract.Hit{}; return p }},
			"keyword fetch", "no hits for"},
		{"keyword ranks records without the query's words", faultyRanking{mode: contract.ModeKeyword,
			fetch: func(e *memory.Engine, p contract.FetchPage) contract.FetchPage {
				// The newest records, whatever they say: an index that lost its terms.
				page, err := e.Browse(context.Background(), contract.BrowseQuery{Limit: FetchTop})
				if err != nil {
					return p // the row then passes, and the case fails
				}
				p.Hits = p.Hits[:0]
				for _, r := range page.Records {
					p.Hits = append(p.Hits, contract.Hit{ID: r.ID, Kind: r.Kind, Text: r.Text, Meta: r.Meta})
				}
				return p
			}},
			"keyword fetch", "holds no word of"},
		{"vector returns more than asked", faultyRanking{mode: contract.ModeVector,
			fetch: func(_ *memory.Engine, p contract.FetchPage) contract.FetchPage {
				p.Hits = append(p.Hits, p.Hits...)
				return p
			}},
			"vector fetch", "20 hits for limit 10"},
		{"hybrid names a record that does not exist", faultyRanking{mode: contract.ModeHybrid,
			fetch: func(_ *memory.Engine, p contract.FetchPage) contract.FetchPage {
				p.Hits = slices.Clone(p.Hits)
				p.Hits[len(p.Hits)-1].ID = unknownID
				return p
			}},
			"hybrid fetch", "hits (not " + unknownID + ")"},
		{"hybrid repeats a hit", faultyRanking{mode: contract.ModeHybrid,
			fetch: func(_ *memory.Engine, p contract.FetchPage) contract.FetchPage {
				p.Hits = slices.Clone(p.Hits)
				p.Hits[1] = p.Hits[0]
				return p
			}},
			"hybrid fetch", "twice"},
		{"recall answers blank", faultyRanking{
			recall: func(a contract.RecallAnswer) contract.RecallAnswer { a.Answer = " \n"; return a }},
			"recall top 5", "empty answer"},
		{"recall cites a forgotten record", faultyRanking{
			recall: func(a contract.RecallAnswer) contract.RecallAnswer {
				a.Citations = slices.Clone(a.Citations)
				a.Citations[0].ID = unknownID
				return a
			}},
			"recall top 5", "citations (not " + unknownID + ")"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.engine.Engine = memory.New()
			tab, err := Run(context.Background(), tc.engine, Options{Records: records, Seed: seed, Iterations: 1})
			if err != nil {
				t.Fatal(err)
			}
			broken := rowNamed(t, tab, tc.row)
			if broken.Pass || !strings.HasPrefix(broken.Note, wrongAnswer) || !strings.Contains(broken.Note, tc.fault) {
				t.Fatalf("%s: pass=%v note=%q, want a wrong answer naming %q", broken.Name, broken.Pass, broken.Note, tc.fault)
			}
			if tab.Passed() {
				t.Error("the run passed with a wrong answer")
			}
			if !strings.Contains(tab.Markdown(), "| "+broken.Name+" | 1 |") {
				t.Errorf("markdown lacks the row %q", broken.Name)
			}
			// Only the spoiled rows are wrong (a keyword fault spoils the
			// filtered keyword rows too).
			for _, r := range tab.Rows {
				if !strings.HasPrefix(r.Name, tc.row) && strings.HasPrefix(r.Note, wrongAnswer) {
					t.Errorf("%s: %s", r.Name, r.Note)
				}
			}
			if got := broken.result(); got != "FAIL" {
				t.Errorf("%s: result column %q, want FAIL", broken.Name, got)
			}
		})
	}
}

func TestFetchRowsFollowTheDescriptor(t *testing.T) {
	for _, tc := range []struct {
		name  string
		modes []contract.FetchMode
		want  []string
	}{
		{"every mode", contract.FetchModes(), []string{"keyword fetch top 10", "vector fetch top 10", "hybrid fetch top 10", "keyword fetch top 10 in a folder", "keyword fetch top 10 at a commit"}},
		{"keyword only", []contract.FetchMode{contract.ModeKeyword}, []string{"keyword fetch top 10", "keyword fetch top 10 in a folder", "keyword fetch top 10 at a commit"}},
		{"vector and hybrid", []contract.FetchMode{contract.ModeVector, contract.ModeHybrid}, []string{"vector fetch top 10", "hybrid fetch top 10"}},
		{"no fetch", []contract.FetchMode{}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := memory.New(memory.WithFetchModes(tc.modes...))
			tab, err := Run(context.Background(), e, Options{Records: 300, Iterations: 1})
			if err != nil {
				t.Fatal(err)
			}
			var fetchRows []string
			recall := 0
			for _, r := range tab.Rows {
				if strings.Contains(r.Name, "fetch top") {
					fetchRows = append(fetchRows, r.Name)
				}
				if strings.HasPrefix(r.Name, "recall top 5") {
					recall++
				}
				if strings.HasPrefix(r.Note, wrongAnswer) {
					t.Errorf("%s: %s", r.Name, r.Note)
				}
			}
			if !slices.Equal(fetchRows, tc.want) {
				t.Errorf("fetch rows %q, want %q", fetchRows, tc.want)
			}
			// Recall does not depend on the declared fetch modes.
			if recall != 1 {
				t.Errorf("%d recall rows, want 1", recall)
			}
		})
	}
}

// TestEmptyRankedAnswerNeedsAnAbsentWord: no hits is right for a word no live
// record holds, and wrong for one that some live record holds.
func TestEmptyRankedAnswerNeedsAnAbsentWord(t *testing.T) {
	const seed = 1
	needleAt := -1
	var needle corpus.Entry
	corpus.Each(20_001, seed, func(i int, en corpus.Entry) bool {
		if corpus.IsNeedle(i) && en.Status == contract.StatusActive && contract.AdmittedBy(nil, en.Item.Meta.Namespace) &&
			(en.ExpiresAt == nil || en.ExpiresAt.After(time.Now())) {
			needleAt, needle = i, en
			return false
		}
		return true
	})
	if needleAt < 0 {
		t.Fatal("no live needle in the first 20,001 entries")
	}
	if !strings.Contains(needle.Item.RenderText(), corpus.RareNeedle) {
		t.Fatalf("entry %d is a needle without %q", needleAt, corpus.RareNeedle)
	}
	e := memory.New()
	query := "nomatch " + corpus.RareNeedle
	for _, tc := range []struct {
		records int
		wrong   bool
	}{{needleAt, false}, {needleAt + 1, true}} {
		live := &liveWords{records: tc.records, seed: seed, queries: []string{query}}
		fault, err := judgeRanked(context.Background(), e, "hits", query, nil, FetchTop, live)
		if err != nil {
			t.Fatal(err)
		}
		if (fault != "") != tc.wrong {
			t.Errorf("%d records: fault %q, want wrong=%v", tc.records, fault, tc.wrong)
		}
	}
}
