package remote_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"testing"

	"mnemo/contract"
	"mnemo/engine/bolt"
	"mnemo/engine/remote"
	"mnemo/server/httpapi"
)

// BenchmarkOverHTTP measures what serving adds: the same operations on a bolt
// store of 5,000 records, called directly and through httpapi + remote on
// loopback with a confined principal.
func BenchmarkOverHTTP(b *testing.B) {
	store, err := bolt.Open(b.TempDir(), bolt.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer store.Close()
	ctx := context.Background()
	var ids []string
	for start := 0; start < 5000; start += 100 {
		items := make([]contract.StoreItem, 100)
		for i := range items {
			meta := contract.MetaFromSource(contract.SourceAgent, nil)
			meta.Namespace = contract.MustNamespace(fmt.Sprintf("team:acme/agent:a%d", (start+i)%7))
			meta.Tags = []string{fmt.Sprintf("t%d", (start+i)%13)}
			items[i] = contract.Document(fmt.Sprintf("note %d about deploys and tabs and tests", start+i), meta)
		}
		recs, err := contract.StoreMany(ctx, store, items)
		if err != nil {
			b.Fatal(err)
		}
		ids = append(ids, recs[0].ID)
	}
	srv := httptest.NewServer(httpapi.New(store, httpapi.Options{OwnerToken: "tok", ListingRate: httpapi.Rate{PerSecond: -1}}))
	defer srv.Close()
	cl, err := remote.New(srv.URL, "tok")
	if err != nil {
		b.Fatal(err)
	}
	engines := []struct {
		name string
		e    contract.Engine
	}{{"direct", store}, {"http", cl}}
	for _, en := range engines {
		b.Run("browse200/"+en.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := en.e.Browse(ctx, contract.BrowseQuery{Limit: 200}); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("get1/"+en.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := en.e.Get(ctx, contract.GetRequest{IDs: ids[:1]}); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("explore_root/"+en.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := en.e.Explore(ctx, contract.ExploreRequest{Facet: "tag", Limit: 20}); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("fetch10/"+en.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := en.e.Fetch(ctx, contract.FetchRequest{Query: "deploys tabs", Mode: contract.ModeKeyword, Limit: 10}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkLiveRefresh is what one live refresh of the TUI costs over
// loopback on a store of 30,000 records (the size the serve-mode load test
// reaches): the header's counts (records, candidates to review), plus, on
// Explore, every facet's count and the first page of records, or, on
// Browse, the first page of the list. The live session runs at most one per
// coalescing window (ui/live.go).
func BenchmarkLiveRefresh(b *testing.B) {
	store, err := bolt.Open(b.TempDir(), bolt.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer store.Close()
	ctx := context.Background()
	for start := 0; start < 30_000; start += 100 {
		items := make([]contract.StoreItem, 100)
		for i := range items {
			item, _ := loadItem((start+i)%8, start+i)
			items[i] = item
		}
		if _, err := store.StoreManyWith(ctx, items, contract.WriteOptions{Wait: contract.WaitAccepted}); err != nil {
			b.Fatal(err)
		}
	}
	srv := httptest.NewServer(httpapi.New(store, httpapi.Options{OwnerToken: "tok", ListingRate: httpapi.Rate{PerSecond: -1}}))
	defer srv.Close()
	cl, err := remote.New(srv.URL, "tok")
	if err != nil {
		b.Fatal(err)
	}
	header := func() {
		if _, err := cl.Browse(ctx, contract.BrowseQuery{Limit: 1}); err != nil {
			b.Fatal(err)
		}
		if _, err := cl.Browse(ctx, contract.BrowseQuery{Status: []contract.Status{contract.StatusCandidate}, Limit: 1}); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("header", func(b *testing.B) {
		for b.Loop() {
			header()
		}
	})
	b.Run("explore", func(b *testing.B) {
		for b.Loop() {
			header()
			for _, f := range contract.Facets() {
				if _, err := cl.Explore(ctx, contract.ExploreRequest{Facet: f, Limit: 1}); err != nil {
					b.Fatal(err)
				}
			}
			if _, err := cl.Browse(ctx, contract.BrowseQuery{Limit: 100}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("browse", func(b *testing.B) {
		for b.Loop() {
			header()
			if _, err := cl.Browse(ctx, contract.BrowseQuery{Limit: 200}); err != nil {
				b.Fatal(err)
			}
		}
	})
}
