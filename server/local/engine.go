package local

import (
	"context"
	"net"
	"time"

	"mnemo/contract"
	"mnemo/engine/curate"
)

// The contract's operations go to the current engine through call, which
// finds the store a new holder when the one a call reached has stopped; the
// retry class of each (again or once) is the package comment's rule.

// Descriptor describes the engine holding the store.
func (s *Store) Descriptor() contract.Descriptor {
	e, _, err := s.current()
	if err != nil {
		return contract.Descriptor{ID: "mnemo", Label: "mnemo (closed)", FetchModes: []contract.FetchMode{}, Consolidation: contract.ConsolidationNone}
	}
	return e.Descriptor()
}

// Health is the holder's health; a store with no holder to be found is down.
func (s *Store) Health(ctx context.Context) contract.Health {
	h, err := call(s, ctx, "health", again, func(ctx context.Context, e contract.Engine) (contract.Health, error) {
		h := e.Health(ctx)
		if h.State == contract.HealthDown && s.Role() == Attached {
			// The client reports an unreachable holder as down: find another.
			c, err := net.DialTimeout("unix", s.sock, time.Second)
			if err != nil {
				ce := contract.Unavailable("%s", h.Reason)
				ce.Err = err
				return h, ce
			}
			_ = c.Close()
		}
		return h, nil
	})
	if err != nil {
		return contract.Health{State: contract.HealthDown, Reason: contract.AsError(err).Message}
	}
	return h
}

// StoreWith is the contract's StoreWith.
func (s *Store) StoreWith(ctx context.Context, item contract.StoreItem, opts contract.WriteOptions) (contract.StoreReceipt, error) {
	return call(s, ctx, "store", again, func(ctx context.Context, e contract.Engine) (contract.StoreReceipt, error) {
		return e.StoreWith(ctx, item, opts)
	})
}

// StoreManyWith is the contract's StoreManyWith.
func (s *Store) StoreManyWith(ctx context.Context, items []contract.StoreItem, opts contract.WriteOptions) ([]contract.StoreReceipt, error) {
	return call(s, ctx, "store_many", again, func(ctx context.Context, e contract.Engine) ([]contract.StoreReceipt, error) {
		return e.StoreManyWith(ctx, items, opts)
	})
}

// Recall is the contract's Recall.
func (s *Store) Recall(ctx context.Context, req contract.RecallRequest) (contract.RecallAnswer, error) {
	return call(s, ctx, "recall", again, func(ctx context.Context, e contract.Engine) (contract.RecallAnswer, error) { return e.Recall(ctx, req) })
}

// Fetch is the contract's Fetch.
func (s *Store) Fetch(ctx context.Context, req contract.FetchRequest) (contract.FetchPage, error) {
	return call(s, ctx, "fetch", again, func(ctx context.Context, e contract.Engine) (contract.FetchPage, error) { return e.Fetch(ctx, req) })
}

// List is the contract's List.
func (s *Store) List(ctx context.Context, req contract.ListRequest) (contract.ListPage, error) {
	return call(s, ctx, "list", again, func(ctx context.Context, e contract.Engine) (contract.ListPage, error) { return e.List(ctx, req) })
}

// Export is the contract's Export.
func (s *Store) Export(ctx context.Context, req contract.ListRequest) (contract.ExportPage, error) {
	return call(s, ctx, "export", again, func(ctx context.Context, e contract.Engine) (contract.ExportPage, error) { return e.Export(ctx, req) })
}

// Explore is the contract's Explore.
func (s *Store) Explore(ctx context.Context, req contract.ExploreRequest) (contract.ExplorePage, error) {
	return call(s, ctx, "explore", again, func(ctx context.Context, e contract.Engine) (contract.ExplorePage, error) { return e.Explore(ctx, req) })
}

// Get is the contract's Get.
func (s *Store) Get(ctx context.Context, req contract.GetRequest) ([]contract.Hit, error) {
	return call(s, ctx, "get", again, func(ctx context.Context, e contract.Engine) ([]contract.Hit, error) { return e.Get(ctx, req) })
}

// Forget is the contract's Forget.
func (s *Store) Forget(ctx context.Context, target contract.ForgetTarget) (contract.ForgetReport, error) {
	return call(s, ctx, "forget", once, func(ctx context.Context, e contract.Engine) (contract.ForgetReport, error) {
		return e.Forget(ctx, target)
	})
}

// ForgetWithin is the contract's ForgetWithin.
func (s *Store) ForgetWithin(ctx context.Context, ids []string, reach contract.Reach) (contract.ForgetReport, error) {
	return call(s, ctx, "forget", once, func(ctx context.Context, e contract.Engine) (contract.ForgetReport, error) {
		return contract.ForgetWithin(ctx, e, ids, reach)
	})
}

// Erase is the contract's Erase.
func (s *Store) Erase(ctx context.Context, req contract.EraseRequest) (contract.EraseReport, error) {
	return call(s, ctx, "erase", once, func(ctx context.Context, e contract.Engine) (contract.EraseReport, error) {
		return contract.Erase(ctx, e, req)
	})
}

// Consolidate is the contract's Consolidate.
func (s *Store) Consolidate(ctx context.Context, req contract.ConsolidateRequest) (contract.ConsolidateReceipt, error) {
	return call(s, ctx, "consolidate", once, func(ctx context.Context, e contract.Engine) (contract.ConsolidateReceipt, error) {
		return contract.Consolidate(ctx, e, req)
	})
}

// Beliefs is the contract's Beliefs.
func (s *Store) Beliefs(ctx context.Context, req contract.BeliefsRequest) ([]contract.Hit, error) {
	return call(s, ctx, "beliefs", again, func(ctx context.Context, e contract.Engine) ([]contract.Hit, error) {
		return contract.Beliefs(ctx, e, req)
	})
}

// KeptClusters reads the clusters the store keeps (curate.Kept): this
// process's own when it holds the store, else the holder's through its
// socket.
func (s *Store) KeptClusters(ctx context.Context, filter contract.MetaFilter, cfg curate.Config) (curate.KeptAnswer, error) {
	return call(s, ctx, "clusters", again, func(ctx context.Context, e contract.Engine) (curate.KeptAnswer, error) {
		if k, ok := e.(curate.Kept); ok {
			return k.KeptClusters(ctx, filter, cfg)
		}
		return curate.KeptAnswer{}, nil
	})
}

// Browse is the contract's Browse.
func (s *Store) Browse(ctx context.Context, q contract.BrowseQuery) (contract.BrowsePage, error) {
	return call(s, ctx, "browse", again, func(ctx context.Context, e contract.Engine) (contract.BrowsePage, error) { return e.Browse(ctx, q) })
}

// Review is the contract's Review.
func (s *Store) Review(ctx context.Context, req contract.ReviewRequest) (contract.ReviewResult, error) {
	return call(s, ctx, "review", once, func(ctx context.Context, e contract.Engine) (contract.ReviewResult, error) { return e.Review(ctx, req) })
}

// Supersede is the contract's Supersede.
func (s *Store) Supersede(ctx context.Context, req contract.SupersedeRequest) (contract.Record, error) {
	return call(s, ctx, "supersede", once, func(ctx context.Context, e contract.Engine) (contract.Record, error) { return e.Supersede(ctx, req) })
}

// GetRecords is the contract's GetRecords.
func (s *Store) GetRecords(ctx context.Context, req contract.GetRequest) ([]contract.Record, error) {
	return call(s, ctx, "get", again, func(ctx context.Context, e contract.Engine) ([]contract.Record, error) { return e.GetRecords(ctx, req) })
}

// Changes is the contract's Changes.
func (s *Store) Changes(ctx context.Context, req contract.ChangesRequest) (contract.ChangesPage, error) {
	return call(s, ctx, "changes", again, func(ctx context.Context, e contract.Engine) (contract.ChangesPage, error) { return e.Changes(ctx, req) })
}

// Restore writes whole records as they were (contract.Restorer); a held id
// is a replay, so a call cut off by a takeover is sent again.
func (s *Store) Restore(ctx context.Context, recs []contract.Record) ([]contract.StoreReceipt, error) {
	return call(s, ctx, "restore", again, func(ctx context.Context, e contract.Engine) ([]contract.StoreReceipt, error) {
		r, ok := e.(contract.Restorer)
		if !ok {
			return nil, contract.Unsupported("the store's holder does not restore whole records")
		}
		return r.Restore(ctx, recs)
	})
}
