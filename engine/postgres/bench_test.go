package postgres_test

import (
	"context"
	"os"
	"strconv"
	"testing"

	"mnemo/bench/corpus"
	"mnemo/contract"
	"mnemo/engine/postgres"
)

// benchStore opens the store MNEMO_BENCH_POSTGRES names (a URL with its
// schema, kept between runs) and loads MNEMO_BENCH_RECORDS corpus entries
// (default 100,000) when it is empty. `mnemo bench --db` is the reported
// figure; these benchmarks are for profiling one operation at a time.
func benchStore(b *testing.B) *postgres.Engine {
	url := os.Getenv("MNEMO_BENCH_POSTGRES")
	if url == "" {
		b.Skip("set MNEMO_BENCH_POSTGRES to a postgres:// URL with a schema to keep the loaded store in")
	}
	n := 100_000
	if s := os.Getenv("MNEMO_BENCH_RECORDS"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil {
			b.Fatal(err)
		}
		n = v
	}
	e := openStore(b, url, postgres.Options{})
	ctx := context.Background()
	if held, err := e.Len(ctx); err != nil {
		b.Fatal(err)
	} else if held == 0 {
		var batch []contract.StoreItem
		flush := func() {
			if _, err := contract.StoreMany(ctx, e, batch); err != nil {
				b.Fatal(err)
			}
			batch = batch[:0]
		}
		corpus.Each(n, 1, func(_ int, en corpus.Entry) bool {
			batch = append(batch, en.Item)
			if len(batch) == contract.MaxStoreMany {
				flush()
			}
			return true
		})
		if len(batch) > 0 {
			flush()
		}
	}
	return e
}

func BenchmarkBrowse(b *testing.B) {
	e := benchStore(b)
	ctx := context.Background()
	for _, c := range []struct {
		name string
		q    contract.BrowseQuery
	}{
		{"default-200", contract.BrowseQuery{Limit: 200}},
		{"head-1000", contract.BrowseQuery{Limit: 1000}},
		{"active-200", contract.BrowseQuery{Limit: 200, Filters: []contract.BrowseFilter{{Field: "status", Op: "in", Values: []string{"active"}}}}},
		{"confidence-200", contract.BrowseQuery{Limit: 200, OrderBy: []contract.SortKey{{Field: "confidence", Dir: "desc"}}}},
		{"needle-200", contract.BrowseQuery{Limit: 200, Filters: []contract.BrowseFilter{{Field: "content", Op: "contains", Text: corpus.RareNeedle}}}},
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := e.Browse(ctx, c.q); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkExplore(b *testing.B) {
	e := benchStore(b)
	ctx := context.Background()
	narrowed := contract.MetaFilter{Kinds: []contract.ItemKind{contract.KindLearning}, TagsAny: []string{"billing"}}
	for _, facet := range []contract.Facet{contract.FacetURL, contract.FacetTag, contract.FacetFolder} {
		b.Run("root-"+string(facet), func(b *testing.B) {
			for b.Loop() {
				if _, err := e.Explore(ctx, contract.ExploreRequest{Facet: facet, Limit: 50}); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("narrowed-"+string(facet), func(b *testing.B) {
			for b.Loop() {
				if _, err := e.Explore(ctx, contract.ExploreRequest{Facet: facet, Filter: narrowed, Limit: 50}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkKeyword(b *testing.B) {
	e := benchStore(b)
	ctx := context.Background()
	qs := corpus.Queries(20, 1)
	i := 0
	for b.Loop() {
		if _, err := e.Fetch(ctx, contract.FetchRequest{Query: qs[i%len(qs)], Mode: contract.ModeKeyword, Limit: 10}); err != nil {
			b.Fatal(err)
		}
		i++
	}
}
