package index

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"mnemo/contract"
)

// Value pools are small so random filters hit often; they hold the awkward
// cases: empty strings, trailing and doubled slashes, service sandboxes,
// redacted ids and instants Bleve dates cannot represent.
var (
	poolNamespaces = []string{"root", "team:a", "team:a/agent:x", "team:a/service:s", "team:a/service:s/agent:y",
		"service:z", "service:z/team:a", "user:u", "user:u/team:a/agent:x", "team:ab", "team:a/project:p/service:q"}
	poolPaths = []string{"", "/", "/a", "/a/b", "/a/bc", "/ab", "a", "a/b", "a/b/", "/a//b", "//", "/a/b/c.go"}
	poolWants = []string{"", "/", "/a", "/a/", "/a/b", "a", "a/", "a/b", "//", "/a//", "/ab", "/a/b/c.go", "b"}
	poolWords = []string{"", "alpha", "beta", "gamma", "Δέλτα"}
	poolIDs   = []string{"t1", "t2", "", contract.RedactedID("t1"), contract.RedactedID("t3")}
	poolTags  = []string{"x", "y", "z", "", "x y"}
	poolTimes = []time.Time{
		time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC),
		time.Date(2026, 3, 1, 12, 0, 0, 1, time.UTC),
		time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC),
		time.Date(1999, 12, 31, 23, 59, 59, 999999999, time.UTC),
		time.Date(1500, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(3000, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(1677, 12, 1, 0, 0, 0, 0, time.UTC), time.Date(2262, 4, 11, 11, 59, 59, 0, time.UTC),
	}
)

func pick[T any](r *rand.Rand, pool []T) T { return pool[r.IntN(len(pool))] }

func maybe[T any](r *rand.Rand, p float64, pool []T) *T {
	if r.Float64() >= p {
		return nil
	}
	v := pick(r, pool)
	return &v
}

type propItem struct {
	doc  Doc
	kind contract.ItemKind
}

func randomDoc(r *rand.Rand, i int) Doc {
	m := contract.MemoryMeta{
		Namespace: contract.MustNamespace(pick(r, poolNamespaces)),
		Workspace: maybe(r, 0.6, poolWords),
		Folder:    maybe(r, 0.6, poolPaths),
		FilePath:  maybe(r, 0.5, poolPaths),
		Language:  maybe(r, 0.5, poolWords),
		Repo:      maybe(r, 0.4, poolWords),
		Commit:    maybe(r, 0.4, poolWords),
		URL:       maybe(r, 0.4, poolWords),
		ThreadID:  maybe(r, 0.6, poolIDs),
		AgentID:   maybe(r, 0.6, poolIDs),
		Source:    contract.SourceRef{Kind: pick(r, append([]contract.SourceKind{""}, contract.SourceKinds()...)), ID: maybe(r, 0.6, poolIDs)},
	}
	if r.IntN(2) == 0 {
		m.Turns = &contract.TurnRange{First: uint32(r.IntN(3)), Last: uint32(r.IntN(3))}
	}
	if r.IntN(2) == 0 {
		m.ToolCall = &contract.ToolCallRef{Name: pick(r, poolWords)}
	}
	for range r.IntN(4) {
		m.Tags = append(m.Tags, pick(r, poolTags))
	}
	m.ObservedAt = maybe(r, 0.7, poolTimes)
	statuses := append([]contract.Status{""}, contract.Statuses()...)
	d := Doc{
		ID:        fmt.Sprintf("%040x", i),
		Kind:      pick(r, contract.ItemKinds()),
		Text:      "common " + pick(r, poolWords),
		Meta:      m,
		Status:    pick(r, statuses),
		CreatedAt: time.Date(2026, 1, 1, 0, 0, i, 0, time.UTC),
		UpdatedAt: time.Date(2026, 1, 1, 0, 0, i, 0, time.UTC),
	}
	if d.Kind == contract.KindLearning {
		c := float32(r.IntN(11)) / 10
		d.Confidence = &c
	}
	return d
}

func randomFilter(r *rand.Rand) contract.MetaFilter {
	var f contract.MetaFilter
	if r.IntN(3) > 0 {
		reach := contract.Reach{At: contract.MustNamespace(pick(r, poolNamespaces)), Inherit: r.IntN(2) == 0, Descendants: r.IntN(2) == 0}
		if reach.Inherit && r.IntN(3) == 0 {
			reach.Floor = r.IntN(reach.At.Depth() + 1)
		}
		f.Reach = &reach
	}
	p := 0.15
	f.Workspace = maybe(r, p, poolWords)
	f.Folder = maybe(r, p, poolWants)
	f.FilePath = maybe(r, p, poolWants)
	f.Language = maybe(r, p, poolWords)
	f.Repo = maybe(r, p, poolWords)
	f.Commit = maybe(r, p, poolWords)
	f.URL = maybe(r, p, poolWords)
	f.ThreadID = maybe(r, p, []string{"t1", "t2", "t3", ""})
	f.AgentID = maybe(r, p, []string{"t1", "t2", "t3", ""})
	f.SourceID = maybe(r, p, []string{"t1", "t2", "t3", ""})
	f.ToolCall = maybe(r, p, poolWords)
	if r.Float64() < p {
		f.Turns = &contract.TurnRange{First: uint32(r.IntN(3)), Last: uint32(r.IntN(3))}
	}
	if r.Float64() < p {
		for range 1 + r.IntN(2) {
			f.Kinds = append(f.Kinds, pick(r, contract.ItemKinds()))
		}
	}
	if r.Float64() < p {
		for range 1 + r.IntN(3) {
			f.Sources = append(f.Sources, pick(r, contract.SourceKinds()))
		}
	}
	if r.Float64() < p {
		for range 1 + r.IntN(3) {
			f.TagsAny = append(f.TagsAny, pick(r, poolTags))
		}
	}
	f.ObservedAfter = maybe(r, 0.2, poolTimes)
	f.ObservedBefore = maybe(r, 0.2, poolTimes)
	if r.Float64() < 0.3 {
		for range 1 + r.IntN(2) {
			f.Statuses = append(f.Statuses, pick(r, contract.Statuses()))
		}
	}
	return f
}

// oracle is the contract's own rule over the same documents.
func oracle(docs []Doc, f contract.MetaFilter, ranked bool) []string {
	var out []string
	for _, d := range docs {
		if f.Matches(d.Kind, &d.Meta) && f.AdmitsStatus(statusOf(d.Status), ranked) {
			out = append(out, d.ID)
		}
	}
	slices.Sort(out)
	return out
}

func TestFilterTranslationAgreesWithContract(t *testing.T) {
	ctx := context.Background()
	r := rand.New(rand.NewPCG(1, 2))
	ix, _ := openTemp(t)
	const n = 600
	docs := make([]Doc, n)
	for i := range docs {
		docs[i] = randomDoc(r, i)
	}
	// Several batches, with deletes and rewrites, so the index holds more
	// than one segment and replaced documents.
	for start := 0; start < n; start += 150 {
		if err := ix.Apply(docs[start:start+150], nil, uint64(start+150)); err != nil {
			t.Fatal(err)
		}
	}
	var deleted []string
	for i := 0; i < n; i += 7 {
		deleted = append(deleted, docs[i].ID)
	}
	var rewritten []Doc
	for i := 3; i < n; i += 11 {
		docs[i] = randomDoc(r, i)
		rewritten = append(rewritten, docs[i])
	}
	if err := ix.Apply(rewritten, deleted, uint64(n+1)); err != nil {
		t.Fatal(err)
	}
	live := slices.DeleteFunc(slices.Clone(docs), func(d Doc) bool {
		return slices.Contains(deleted, d.ID) && !slices.ContainsFunc(rewritten, func(w Doc) bool { return w.ID == d.ID })
	})

	rounds := 400
	if testing.Short() {
		rounds = 100
	}
	nonEmpty := 0
	for round := range rounds {
		f := randomFilter(r)
		ranked := r.IntN(2) == 0
		want := oracle(live, f, false)
		if len(want) > 0 {
			nonEmpty++
		}
		if !NeedsResidual(f) {
			got, err := ix.Count(ctx, f)
			if err != nil {
				t.Fatal(err)
			}
			if got != uint64(len(want)) {
				t.Fatalf("round %d: Count(%s) = %d; want %d", round, describe(f), got, len(want))
			}
		}

		// The clauses the index does not hold are answered by the oracle,
		// as the engine's table answers them.
		wantRanked := oracle(live, f, ranked)
		admitted := map[string]bool{}
		for _, id := range wantRanked {
			admitted[id] = true
		}
		listed := &Residual{Admit: func(id string) bool { return admitted[id] },
			Sample: func(int) ([]string, bool, float64) { return wantRanked, true, float64(len(wantRanked)) / n }}
		// The same residual as a filter too broad to list: the window path.
		sampled := &Residual{Admit: listed.Admit,
			Sample: func(int) ([]string, bool, float64) { return nil, false, float64(len(wantRanked)) / n }}
		res := listed
		if round%2 == 1 {
			res = sampled
		}
		hits, err := ix.Keyword(ctx, "common", f, ranked, 0, n, res)
		if err != nil {
			t.Fatal(err)
		}
		gotIDs := ids(hits)
		slices.Sort(gotIDs)
		if !slices.Equal(gotIDs, wantRanked) {
			t.Fatalf("round %d: Keyword(ranked=%v, %s) = %v; want %v", round, ranked, describe(f), gotIDs, wantRanked)
		}
		// KeywordAmong, led by the filter, finds what Keyword finds.
		among, err := ix.KeywordAmong(ctx, "common alpha", f, ranked, n, res)
		if err != nil {
			t.Fatal(err)
		}
		all, err := ix.Keyword(ctx, "common alpha", f, ranked, 0, n, res)
		if err != nil {
			t.Fatal(err)
		}
		if a, b := ids(among), ids(all); !slices.Equal(sorted(a), sorted(b)) {
			t.Fatalf("round %d: KeywordAmong(%s) = %v; Keyword has %v", round, describe(f), a, b)
		}
		// Pages of five are the full ranking's, through the window of best
		// hits (many tie: the texts are two words) or the listed ids.
		full, err := ix.Keyword(ctx, "common alpha", f, ranked, 0, n, res)
		if err != nil {
			t.Fatal(err)
		}
		for offset := 0; offset < min(len(full), 15); offset += 5 {
			for _, r := range []*Residual{listed, sampled} {
				page, err := ix.Keyword(ctx, "common alpha", f, ranked, offset, 5, r)
				if err != nil {
					t.Fatal(err)
				}
				if want := full[offset:min(len(full), offset+5)]; !slices.Equal(ids(page), ids(want)) {
					t.Fatalf("round %d: page at %d of %s = %v; the full ranking has %v", round, offset, describe(f), ids(page), ids(want))
				}
			}
		}
	}
	if nonEmpty < rounds/4 {
		t.Fatalf("only %d of %d random filters matched anything; the pools are too sparse to test", nonEmpty, rounds)
	}
}

func sorted(l []string) []string {
	l = slices.Clone(l)
	slices.Sort(l)
	return l
}

func describe(f contract.MetaFilter) string {
	b, _ := f.MarshalJSON()
	s := string(b)
	if f.ObservedAfter != nil || f.ObservedBefore != nil {
		s += fmt.Sprintf(" observed [%v, %v)", f.ObservedAfter, f.ObservedBefore)
	}
	return s
}
