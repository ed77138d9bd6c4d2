package bench

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode"

	"mnemo/bench/corpus"
	"mnemo/contract"
)

// FetchTop is the page size of the fetch rows; RecallTop the citation limit
// of the recall row.
const (
	FetchTop  = 10
	RecallTop = 5
)

// retrievalRows builds the ranked-read rows: fetch top 10 in every mode the
// engine declares, then recall top 5. Every round asks the next query of
// corpus.Queries, the same list for every row.
func retrievalRows(ctx context.Context, e contract.Engine, opts Options) ([]shape, error) {
	queries := corpus.Queries(max(opts.Iterations, 1)+1, opts.Seed)
	live := &liveWords{records: opts.Records, seed: opts.Seed, queries: queries}
	queryOf := func(round int) string { return queries[(round+1)%len(queries)] }

	var shapes []shape
	desc := e.Descriptor()
	for _, mode := range contract.FetchModes() {
		if !desc.Supports(mode) {
			continue
		}
		budget := budgetVector // docs/spec/design.md §8: vector or hybrid fetch top 10
		if mode == contract.ModeKeyword {
			budget = budgetKeyword
		}
		shapes = append(shapes, fetchShape(e, mode, budget, queryOf, live))
	}
	if desc.Supports(contract.ModeKeyword) {
		// Filters on values the search index leaves to the table: a broad one
		// (a top-level folder) and one that admits a record or two (a commit).
		if folder, commit, ok := filterValues(opts.Seed); ok {
			shapes = append(shapes,
				filteredFetchShape(e, "keyword fetch top 10 in a folder", contract.MetaFilter{Folder: &folder}, queryOf),
				filteredFetchShape(e, "keyword fetch top 10 at a commit", contract.MetaFilter{Commit: &commit}, queryOf))
		}
	}

	// The row is named after the answerer, as the answer's cost depends on it:
	// a probe before sampling reads the model id (like page one of the cursor row).
	probe, err := e.Recall(ctx, contract.RecallRequest{Question: queries[0], Limit: RecallTop})
	switch {
	case contract.KindOf(err) == contract.KindUnsupported:
		return shapes, nil
	case err != nil:
		return nil, fmt.Errorf("recall probe: %w", err)
	}
	name := fmt.Sprintf("recall top %d", RecallTop)
	if probe.Model != nil && *probe.Model != "" {
		name += " (" + *probe.Model + ")"
	}
	return append(shapes, recallShape(e, name, queryOf, live)), nil
}

func fetchShape(e contract.Engine, mode contract.FetchMode, b budgets, queryOf func(int) string, live *liveWords) shape {
	// The last answer, kept for the untimed check.
	var last contract.FetchPage
	var lastQuery string
	return shape{
		name:   fmt.Sprintf("%s fetch top %d", mode, FetchTop),
		budget: b,
		run: func(ctx context.Context, round int) (string, error) {
			lastQuery = queryOf(round)
			p, err := e.Fetch(ctx, contract.FetchRequest{Query: lastQuery, Mode: mode, Limit: FetchTop})
			if err != nil {
				return "", err
			}
			last = p
			return fmt.Sprintf("%d hits for %q", len(p.Hits), lastQuery), nil
		},
		check: func(ctx context.Context) (string, error) {
			ids := make([]string, len(last.Hits))
			for i, h := range last.Hits {
				ids[i] = h.ID
			}
			if mode == contract.ModeKeyword {
				// Keyword ranking only ever matches words; vector and
				// hybrid may rank records that share none.
				for _, h := range last.Hits {
					if !holdsAWord(h.Text, lastQuery) {
						return fmt.Sprintf("hit %s holds no word of %q", h.ID, lastQuery), nil
					}
				}
			}
			return judgeRanked(ctx, e, "hits", lastQuery, ids, FetchTop, live)
		},
	}
}

// filterValues picks, from the corpus's first records, the top-level folder
// of the first one with a folder and the commit of the first with a commit.
func filterValues(seed int64) (folder, commit string, ok bool) {
	for _, en := range corpus.Generate(64, seed) {
		m := en.Item.Meta
		if folder == "" && m.Folder != nil && *m.Folder != "" {
			folder, _, _ = strings.Cut(strings.TrimPrefix(*m.Folder, "/"), "/")
			if strings.HasPrefix(*m.Folder, "/") {
				folder = "/" + folder
			}
		}
		if commit == "" && m.Commit != nil && *m.Commit != "" {
			commit = *m.Commit
		}
	}
	return folder, commit, folder != "" && commit != ""
}

// filteredFetchShape is keyword fetch top 10 under a filter; its check is
// that every hit passes the filter and holds a word of the query.
func filteredFetchShape(e contract.Engine, name string, f contract.MetaFilter, queryOf func(int) string) shape {
	var last contract.FetchPage
	var lastQuery string
	return shape{
		name: name,
		run: func(ctx context.Context, round int) (string, error) {
			lastQuery = queryOf(round)
			p, err := e.Fetch(ctx, contract.FetchRequest{Query: lastQuery, Mode: contract.ModeKeyword, Filter: f, Limit: FetchTop})
			if err != nil {
				return "", err
			}
			last = p
			return fmt.Sprintf("%d hits for %q", len(p.Hits), lastQuery), nil
		},
		check: func(context.Context) (string, error) {
			if len(last.Hits) > FetchTop {
				return fmt.Sprintf("%d hits for limit %d", len(last.Hits), FetchTop), nil
			}
			for _, h := range last.Hits {
				if !f.Matches(h.Kind, &h.Meta) {
					return fmt.Sprintf("hit %s is outside the filter", h.ID), nil
				}
				if !holdsAWord(h.Text, lastQuery) {
					return fmt.Sprintf("hit %s holds no word of %q", h.ID, lastQuery), nil
				}
			}
			return "", nil
		},
	}
}

func recallShape(e contract.Engine, name string, queryOf func(int) string, live *liveWords) shape {
	var last contract.RecallAnswer
	var lastQuery string
	return shape{
		name: name,
		run: func(ctx context.Context, round int) (string, error) {
			lastQuery = queryOf(round)
			a, err := e.Recall(ctx, contract.RecallRequest{Question: lastQuery, Limit: RecallTop})
			if err != nil {
				return "", err
			}
			last = a
			return fmt.Sprintf("%d citations for %q, answer of %d chars", len(a.Citations), lastQuery, len(a.Answer)), nil
		},
		check: func(ctx context.Context) (string, error) {
			if strings.TrimSpace(last.Answer) == "" {
				return "empty answer", nil
			}
			ids := make([]string, len(last.Citations))
			for i, c := range last.Citations {
				ids[i] = c.ID
			}
			return judgeRanked(ctx, e, "citations", lastQuery, ids, RecallTop, live)
		},
	}
}

// judgeRanked checks a ranked answer: at most limit distinct ids, none when
// the corpus has no live record holding a query word and some otherwise, and
// every id readable through get (with the same, empty, reach as the query).
// It returns what is wrong, or "".
func judgeRanked(ctx context.Context, e contract.Engine, what, query string, ids []string, limit int, live *liveWords) (string, error) {
	if len(ids) > limit {
		return fmt.Sprintf("%d %s for limit %d", len(ids), what, limit), nil
	}
	seen := make(map[string]bool, len(ids))
	for _, id := range ids {
		if seen[id] {
			return fmt.Sprintf("%s names %s twice", what, id), nil
		}
		seen[id] = true
	}
	if len(ids) == 0 {
		// Scanning the corpus is slow at 1M, so it only runs when an engine
		// answers nothing.
		if live.holdsAny(query) {
			return fmt.Sprintf("no %s for %q, which live records contain", what, query), nil
		}
		return "", nil
	}
	got, err := e.Get(ctx, contract.GetRequest{IDs: ids})
	if err != nil {
		return "", fmt.Errorf("get the %s: %w", what, err)
	}
	if len(got) != len(ids) {
		found := make(map[string]bool, len(got))
		for _, h := range got {
			found[h.ID] = true
		}
		for _, id := range ids {
			if !found[id] {
				return fmt.Sprintf("get knows %d of %d %s (not %s)", len(got), len(ids), what, id), nil
			}
		}
		return fmt.Sprintf("get returned %d records for %d %s", len(got), len(ids), what), nil
	}
	return "", nil
}

// liveWords tells which query words occur in live records: active, not
// expired, outside the service sandbox (what fetch and recall see without a
// reach). It scans the corpus once, on first use.
type liveWords struct {
	records int
	seed    int64
	queries []string
	present map[string]bool
}

func (l *liveWords) holdsAny(query string) bool {
	if l.present == nil {
		l.scan()
	}
	for _, w := range textWords(query) {
		if l.present[w] {
			return true
		}
	}
	return false
}

func (l *liveWords) scan() {
	l.present = map[string]bool{}
	wanted := map[string]bool{}
	for _, q := range l.queries {
		for _, w := range textWords(q) {
			wanted[w] = true
		}
	}
	now := time.Now()
	corpus.Each(l.records, l.seed, func(_ int, en corpus.Entry) bool {
		if en.Status != contract.StatusActive || !contract.AdmittedBy(nil, en.Item.Meta.Namespace) ||
			(en.ExpiresAt != nil && !en.ExpiresAt.After(now)) {
			return true
		}
		for _, w := range textWords(en.Item.RenderText()) {
			if wanted[w] {
				l.present[w] = true
			}
		}
		return len(l.present) < len(wanted)
	})
}

// holdsAWord tells whether text holds one of the query's words.
func holdsAWord(text, query string) bool {
	words := textWords(text)
	for _, q := range textWords(query) {
		if slices.Contains(words, q) {
			return true
		}
	}
	return false
}

// textWords splits text on every rune that is not a letter or digit and
// lowercases the pieces. For the corpus's text (words joined by spaces and full
// stops only) that gives the terms a Unicode word tokenizer gives; text with
// apostrophes or underscores inside words would differ.
func textWords(text string) []string {
	fields := strings.FieldsFunc(text, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	for i, f := range fields {
		fields[i] = strings.ToLower(f)
	}
	return fields
}
