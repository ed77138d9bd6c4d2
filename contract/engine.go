package contract

import (
	"context"
	"strings"
)

func trimSpace(s string) string { return strings.TrimSpace(s) }

// Engine is what every engine implements: tinymemory's MemoryEngine without
// its default methods, plus mnemo's browse, review, supersede and full-record
// get. The convenience forms are plain functions over it, written once in
// defaults.go: Store and StoreMany (no options), and Erase, Consolidate,
// Beliefs and ForgetWithin, whose defaults an engine overrides by
// implementing Eraser, Consolidator, BeliefSource or ScopedForgetter. Call
// those through the functions, never by asserting the optional interface.
// Every method validates its request first, so every engine refuses the same
// malformed call with the same error. Engines are safe for concurrent use.
type Engine interface {
	// Descriptor statically describes the engine.
	Descriptor() Descriptor
	// Health never fails; trouble is reported as degraded or down.
	Health(ctx context.Context) Health

	// StoreWith writes one item with options (wait, status, expiry); an
	// identical item is a replay. Unless opts.Wait is accepted, on return the
	// item is readable by list, get and forget and ranked by fetch and recall.
	StoreWith(ctx context.Context, item StoreItem, opts WriteOptions) (StoreReceipt, error)
	// StoreManyWith writes 1..100 items at once; in-batch duplicates replay their first copy.
	StoreManyWith(ctx context.Context, items []StoreItem, opts WriteOptions) ([]StoreReceipt, error)

	Recall(ctx context.Context, req RecallRequest) (RecallAnswer, error)
	Fetch(ctx context.Context, req FetchRequest) (FetchPage, error)
	List(ctx context.Context, req ListRequest) (ListPage, error)
	Export(ctx context.Context, req ListRequest) (ExportPage, error)
	Explore(ctx context.Context, req ExploreRequest) (ExplorePage, error)
	Get(ctx context.Context, req GetRequest) ([]Hit, error)

	Forget(ctx context.Context, target ForgetTarget) (ForgetReport, error)

	// Browse is the exactly counted, sorted, keyset-paged listing (docs/spec/contract.md §4).
	Browse(ctx context.Context, q BrowseQuery) (BrowsePage, error)
	// Review approves or rejects a candidate.
	Review(ctx context.Context, req ReviewRequest) (ReviewResult, error)
	// Supersede marks a record as superseded by another.
	Supersede(ctx context.Context, req SupersedeRequest) (Record, error)
	// GetRecords reads whole records (system fields and the stored item) by id,
	// in the order named, leaving out ids outside the reach.
	GetRecords(ctx context.Context, req GetRequest) ([]Record, error)

	// Changes reads the change feed after req.Since in order, confined by
	// req.Reach, waiting up to req.Wait for a change when none is there
	// (changes.go). A since the feed no longer holds is an Expired error.
	Changes(ctx context.Context, req ChangesRequest) (ChangesPage, error)
}

// UnsupportedErase is the default erase: validate, then Unsupported.
func UnsupportedErase(d Descriptor, req EraseRequest) (EraseReport, error) {
	if err := req.Validate(); err != nil {
		return EraseReport{}, err
	}
	return EraseReport{}, Unsupported("engine `%s` does not erase", d.ID)
}

// UnsupportedConsolidate is the default consolidate: validate, then Unsupported.
func UnsupportedConsolidate(d Descriptor, req ConsolidateRequest) (ConsolidateReceipt, error) {
	if err := req.Validate(); err != nil {
		return ConsolidateReceipt{}, err
	}
	return ConsolidateReceipt{}, Unsupported("engine `%s` does not consolidate memory", d.ID)
}

// NoBeliefs is the default beliefs: validate, then none.
func NoBeliefs(req BeliefsRequest) ([]Hit, error) {
	if err := req.Validate(); err != nil {
		return nil, err
	}
	return []Hit{}, nil
}
