package bench

import (
	"context"
	"fmt"
	"strings"
	"time"

	"mnemo/bench/corpus"
	"mnemo/contract"
	"mnemo/engine/curate"
)

// wrongAnswer starts the note of a row whose answer was not what the corpus
// says it must be; such a row fails whatever its timing.
const wrongAnswer = "WRONG: "

// shape is one timed operation. run is called with round -1 to warm up, then
// with 0..Iterations-1; it returns a short note describing the answer. check,
// when set, is called after each run, outside the timing, to judge that answer
// further (reads such as get that must not count in the row's latency); it
// returns what is wrong, or "".
type shape struct {
	name, peer string
	budget     budgets
	run        func(ctx context.Context, round int) (string, error)
	check      func(ctx context.Context) (string, error)
	// apart: the shape holds much memory while it runs, so it is timed on
	// its own after the others, and release lets go of what it holds.
	apart   bool
	release func()
}

// The browse shapes, named after the peer's shape ids.
const (
	PeerWindowed  = "windowed-fetch"
	PeerFiltered  = "filtered-count"
	PeerHead      = "head-refresh"
	PeerSort      = "non-default-sort"
	PeerContains  = "content-contains"
	PeerKeysetTwo = "keyset-page2"
)

func browseNote(p contract.BrowsePage, wantRows, wantTotal int) string {
	note := fmt.Sprintf("%d rows, total %d", len(p.Records), p.Total)
	if wantTotal >= 0 && p.Total != wantTotal {
		return fmt.Sprintf("%s%s, want total %d", wrongAnswer, note, wantTotal)
	}
	if len(p.Records) != wantRows {
		return fmt.Sprintf("%s%s, want %d rows", wrongAnswer, note, wantRows)
	}
	return note
}

func buildShapes(ctx context.Context, e contract.Engine, opts Options, exp expected, withRetrieval bool) ([]shape, error) {
	// skip is how many matching records come before the page.
	browseAfter := func(name, peer string, b budgets, q contract.BrowseQuery, wantTotal, skip int) shape {
		return shape{name: name, peer: peer, budget: b, run: func(ctx context.Context, _ int) (string, error) {
			p, err := e.Browse(ctx, q)
			if err != nil {
				return "", err
			}
			return browseNote(p, max(0, min(q.EffectiveLimit(), p.Total-skip)), wantTotal), nil
		}}
	}
	browse := func(name, peer string, b budgets, q contract.BrowseQuery, wantTotal int) shape {
		return browseAfter(name, peer, b, q, wantTotal, 0)
	}
	shapes := []shape{
		browse("browse 200, default order, exact total", PeerWindowed, budgetWindowed,
			contract.BrowseQuery{Limit: 200}, exp.visible),
		browse("browse 200, status in [active], exact total", PeerFiltered, budgetFiltered,
			contract.BrowseQuery{Limit: 200, Filters: []contract.BrowseFilter{{Field: "status", Op: "in", Values: []string{"active"}}}}, exp.active),
		browse("browse 1000 (head refresh)", PeerHead, budgetHead,
			contract.BrowseQuery{Limit: 1000}, exp.visible),
		browse("browse 200, confidence desc", PeerSort, budgetSort,
			contract.BrowseQuery{Limit: 200, OrderBy: []contract.SortKey{{Field: "confidence", Dir: "desc"}}}, exp.visible),
		browse("browse 200, content contains a rare needle", PeerContains, budgetContains,
			contract.BrowseQuery{Limit: 200, Filters: []contract.BrowseFilter{{Field: "content", Op: "contains", Text: corpus.RareNeedle}}}, exp.needles),
	}

	// Page two: page one is read once, before sampling, as the peer does.
	first, err := e.Browse(ctx, contract.BrowseQuery{Limit: 200})
	if err != nil {
		return nil, fmt.Errorf("browse page one: %w", err)
	}
	if first.Continuation != nil {
		shapes = append(shapes, browseAfter("browse page 2 through the cursor", PeerKeysetTwo, budgetPage2,
			contract.BrowseQuery{Limit: 200, Cursor: *first.Continuation}, exp.visible, len(first.Records)))
	}

	for _, f := range contract.Facets() {
		shapes = append(shapes, exploreShape(e, "explore at the root: "+string(f), budgetExploreRoot,
			[]contract.Facet{f}, contract.MetaFilter{}, exp.visible))
	}

	// Two narrows a user would make: learnings, then the most used tag among them.
	narrowed, err := contract.FacetKind.Narrow(contract.MetaFilter{}, string(contract.KindLearning))
	if err != nil {
		return nil, err
	}
	tags, err := e.Explore(ctx, contract.ExploreRequest{Facet: contract.FacetTag, Filter: narrowed, Limit: 1})
	if err != nil {
		return nil, fmt.Errorf("explore tags of learnings: %w", err)
	}
	if len(tags.Buckets) > 0 {
		narrowed, err = contract.FacetTag.Narrow(narrowed, tags.Buckets[0].Value)
		if err != nil {
			return nil, err
		}
		shapes = append(shapes, exploreShape(e, fmt.Sprintf("explore after two narrows (kind=learning, tag=%s), every facet", tags.Buckets[0].Value),
			budgetExploreNarrow, contract.Facets(), narrowed, -1))
	}

	if !withRetrieval {
		// A browsing process never searches nor clusters: even the recall
		// probe would load the vectors it is measured without, and a
		// clustering holds its scope's records.
		return shapes, nil
	}
	clusters, err := clustersShape(ctx, e)
	if err != nil {
		return nil, err
	}
	shapes = append(shapes, clusters)
	retrieval, err := retrievalRows(ctx, e, opts)
	if err != nil {
		return nil, err
	}
	// Last: the upkeep row holds a live TUI's index (its records and word
	// ids) from its first call on, which no other row should run beside.
	return append(append(shapes, retrieval...), upkeepShape(e)), nil
}

// exploreShape explores facets[round % len] under filter; wantTotal < 0 skips
// the total check.
func exploreShape(e contract.Engine, name string, b budgets, facets []contract.Facet, filter contract.MetaFilter, wantTotal int) shape {
	return shape{name: name, budget: b, run: func(ctx context.Context, round int) (string, error) {
		f := facets[(round+len(facets))%len(facets)]
		p, err := e.Explore(ctx, contract.ExploreRequest{Facet: f, Filter: filter, Limit: 50})
		if err != nil {
			return "", err
		}
		note := fmt.Sprintf("%d buckets, total %d", len(p.Buckets), p.Total)
		if len(facets) > 1 {
			note = fmt.Sprintf("last facet %s: %s", f, note)
		}
		if wantTotal >= 0 && int(p.Total) != wantTotal {
			return fmt.Sprintf("%s%s, want total %d", wrongAnswer, note, wantTotal), nil
		}
		if p.Truncated {
			return wrongAnswer + note + ", truncated", nil
		}
		return note, nil
	}}
}

// judge runs the shape's untimed check on the answer run just gave and marks
// the note wrong when the check finds a fault.
func (s shape) judge(ctx context.Context, note string) (string, error) {
	if s.check == nil || strings.HasPrefix(note, wrongAnswer) {
		return note, nil
	}
	fault, err := s.check(ctx)
	if err != nil || fault == "" {
		return note, err
	}
	return wrongAnswer + fault + " (" + note + ")", nil
}

// upkeepShape times what a live TUI does for each change of the feed: one
// record into the curate.Index of its reach (the curate.MaxLiveScope most
// recently observed records) and, as a forget would, out again. The index
// is built by the row's first, untimed call; the note says how long that took.
func upkeepShape(e contract.Engine) shape {
	var (
		rs    []contract.Record
		ix    *curate.Index
		built time.Duration
		n     int
	)
	name := fmt.Sprintf("cluster upkeep: one change into a live TUI's index of its reach (at most %d records)", curate.MaxLiveScope)
	return shape{name: name, budget: budgetUpkeep, apart: true, release: func() { rs, ix = nil, nil }, run: func(ctx context.Context, _ int) (string, error) {
		if ix == nil {
			filter, err := curate.RecentScope(ctx, e, curate.MaxLiveScope)
			if err != nil {
				return "", fmt.Errorf("upkeep scope: %w", err)
			}
			if rs, err = curate.Scope(ctx, e, filter); err != nil {
				return "", fmt.Errorf("upkeep scope: %w", err)
			}
			start := time.Now()
			ix = curate.NewIndex(curate.DefaultConfig())
			for _, r := range rs {
				ix.Add(r)
			}
			built = time.Since(start)
		}
		if len(rs) == 0 {
			return "no records", nil
		}
		n++
		r := rs[n%len(rs)]
		r.ID = fmt.Sprintf("upkeep-%d", n)
		ix.Add(r)
		ix.Remove(r.ID)
		return fmt.Sprintf("%d records, index built in %.1f s", len(rs), built.Seconds()), nil
	}}
}

// clustersScope is the scope size the clusters row reads (issue 26's 10k).
const clustersScope = 10_000

// clustersShape times `mnemo clusters` on a scope of about 10k records (the
// most recently observed, curate.RecentScope): read with browse to the end
// and clustered, its members then read whole (curate.FindIn).
func clustersShape(ctx context.Context, e contract.Engine) (shape, error) {
	filter, err := curate.RecentScope(ctx, e, clustersScope)
	if err != nil {
		return shape{}, fmt.Errorf("clusters scope: %w", err)
	}
	want := -1
	name := fmt.Sprintf("clusters of a scope (the %d most recently observed records)", clustersScope)
	return shape{name: name, budget: budgetClusters, apart: true, run: func(ctx context.Context, _ int) (string, error) {
		cs, n, err := curate.FindIn(ctx, e, filter, curate.DefaultConfig())
		if err != nil {
			return "", err
		}
		note := fmt.Sprintf("%d records, %d clusters", n, len(cs))
		if want >= 0 && n != want {
			return wrongAnswer + note + fmt.Sprintf(", want %d records as before", want), nil
		}
		want = n
		return note, nil
	}}, nil
}
