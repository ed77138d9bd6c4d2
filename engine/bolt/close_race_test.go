package bolt_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"mnemo/contract"
	"mnemo/engine/bolt"
)

// Reads racing a Close answer unavailable, never an engine error: Close
// waits for the calls inside the engine before closing bbolt and the index,
// and refuses the calls after it. Run with -race.
func TestReadsRacingCloseAreUnavailable(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for round := range 5 {
		e, err := bolt.Open(t.TempDir(), bolt.Options{})
		if err != nil {
			t.Fatal(err)
		}
		// Enough records that a read is still inside the engine when Close
		// begins.
		var ids []string
		for batch := range 5 {
			items := make([]contract.StoreItem, 100)
			for i := range items {
				items[i] = contract.Document(fmt.Sprintf("racing note %d-%d about closing", batch, i), contract.MemoryMeta{Tags: []string{"race"}})
			}
			recs, err := contract.StoreMany(ctx, e, items)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range recs {
				ids = append(ids, r.ID)
			}
		}
		reads := []func() error{
			func() error { _, err := e.Get(ctx, contract.GetRequest{IDs: ids[:200]}); return err },
			func() error { _, err := e.List(ctx, contract.ListRequest{Limit: 500}); return err },
			func() error { _, err := e.Export(ctx, contract.ListRequest{Limit: 500}); return err },
			func() error { _, err := e.GetRecords(ctx, contract.GetRequest{IDs: ids[:200]}); return err },
			func() error { _, err := e.Browse(ctx, contract.BrowseQuery{}); return err },
			func() error {
				_, err := e.Explore(ctx, contract.ExploreRequest{Facet: contract.FacetTag, Limit: 10})
				return err
			},
			func() error {
				_, err := e.Fetch(ctx, contract.FetchRequest{Query: "closing", Mode: contract.ModeKeyword, Limit: 5})
				return err
			},
		}
		var wg sync.WaitGroup
		errs := make(chan error, len(reads))
		started := make(chan struct{}, len(reads))
		for _, read := range reads {
			wg.Go(func() {
				started <- struct{}{}
				for {
					if err := read(); err != nil {
						errs <- err
						return
					}
				}
			})
		}
		for range reads {
			<-started
		}
		if err := e.Close(); err != nil {
			t.Fatal(err)
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if contract.KindOf(err) != contract.KindUnavailable {
				t.Fatalf("round %d: a read racing Close answered %v", round, err)
			}
		}
	}
}
