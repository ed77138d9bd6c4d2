package memory

import (
	"context"
	"fmt"
	"testing"

	"mnemo/contract"
)

func filled(b *testing.B, n int) *Engine {
	b.Helper()
	e := New()
	ctx := context.Background()
	for i := range n {
		it := doc(fmt.Sprintf("note %d about deploys, tabs and the release train number %d", i, i%97))
		if _, err := contract.Store(ctx, e, it); err != nil {
			b.Fatal(err)
		}
	}
	return e
}

func BenchmarkFetchHybrid10k(b *testing.B) {
	e := filled(b, 10_000)
	req := contract.FetchRequest{Query: "release train tabs", Mode: contract.ModeHybrid, Limit: 20}
	b.ResetTimer()
	for b.Loop() {
		if _, err := e.Fetch(context.Background(), req); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkList10k(b *testing.B) {
	e := filled(b, 10_000)
	b.ResetTimer()
	for b.Loop() {
		if _, err := e.List(context.Background(), contract.ListRequest{Limit: 50}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkBrowse10k(b *testing.B) {
	e := filled(b, 10_000)
	b.ResetTimer()
	for b.Loop() {
		if _, err := e.Browse(context.Background(), contract.BrowseQuery{Limit: 50}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkStore(b *testing.B) {
	e := New()
	i := 0
	for b.Loop() {
		i++
		if _, err := contract.Store(context.Background(), e, doc(fmt.Sprintf("stored note %d", i))); err != nil {
			b.Fatal(err)
		}
	}
}
