package contract

import "context"

// The convenience forms of the contract, written once over Engine. An engine
// implements only what it does itself; these give every caller the rest.

// Eraser is an engine that erases a subtree itself. Without it, Erase answers
// Unsupported and callers fall back to forget.
type Eraser interface {
	Erase(ctx context.Context, req EraseRequest) (EraseReport, error)
}

// Consolidator is an engine that consolidates memory. Without it, Consolidate
// answers Unsupported.
type Consolidator interface {
	Consolidate(ctx context.Context, req ConsolidateRequest) (ConsolidateReceipt, error)
}

// BeliefSource is an engine that holds beliefs. Without it, Beliefs answers
// none.
type BeliefSource interface {
	Beliefs(ctx context.Context, req BeliefsRequest) ([]Hit, error)
}

// ScopedForgetter is an engine that forgets ids within a reach itself.
// Without it, ForgetWithin reads the ids back under the reach and forgets
// those found (ForgetWithinByGet).
type ScopedForgetter interface {
	ForgetWithin(ctx context.Context, ids []string, reach Reach) (ForgetReport, error)
}

// Store writes one active item with the default options (wait until visible).
func Store(ctx context.Context, e Engine, item StoreItem) (StoreReceipt, error) {
	return e.StoreWith(ctx, item, WriteOptions{})
}

// StoreMany writes 1..100 active items with the default options.
func StoreMany(ctx context.Context, e Engine, items []StoreItem) ([]StoreReceipt, error) {
	return e.StoreManyWith(ctx, items, WriteOptions{})
}

// Erase erases through the engine, or answers the contract's default:
// validate, then Unsupported.
func Erase(ctx context.Context, e Engine, req EraseRequest) (EraseReport, error) {
	if x, ok := e.(Eraser); ok {
		return x.Erase(ctx, req)
	}
	return UnsupportedErase(e.Descriptor(), req)
}

// Consolidate consolidates through the engine, or answers the contract's
// default: validate, then Unsupported.
func Consolidate(ctx context.Context, e Engine, req ConsolidateRequest) (ConsolidateReceipt, error) {
	if x, ok := e.(Consolidator); ok {
		return x.Consolidate(ctx, req)
	}
	return UnsupportedConsolidate(e.Descriptor(), req)
}

// Beliefs reads the engine's beliefs, or answers the contract's default:
// validate, then none.
func Beliefs(ctx context.Context, e Engine, req BeliefsRequest) ([]Hit, error) {
	if x, ok := e.(BeliefSource); ok {
		return x.Beliefs(ctx, req)
	}
	return NoBeliefs(req)
}

// ForgetWithin forgets only the ids found inside the reach: through the
// engine when it does so itself, else by reading them back (ForgetWithinByGet).
func ForgetWithin(ctx context.Context, e Engine, ids []string, reach Reach) (ForgetReport, error) {
	if x, ok := e.(ScopedForgetter); ok {
		return x.ForgetWithin(ctx, ids, reach)
	}
	return ForgetWithinByGet(ctx, e, ids, reach)
}
