package contract_test

import (
	"context"
	"testing"

	"mnemo/contract"
	"mnemo/engine/memory"
)

// eraser is an engine that erases itself: the defaults must ask it.
type eraser struct {
	*memory.Engine
	erased int
}

func (e *eraser) Erase(_ context.Context, req contract.EraseRequest) (contract.EraseReport, error) {
	e.erased++
	return contract.EraseReport{ErasedScopes: 1}, nil
}

// TestDefaultsAskTheEngineOrAnswerTheContractsDefault: the convenience forms
// call what an engine implements and otherwise answer the reference's
// defaults, validating the request first.
func TestDefaultsAskTheEngineOrAnswerTheContractsDefault(t *testing.T) {
	ctx := context.Background()
	mem := memory.New()
	team := contract.MustNamespace("team:acme")
	other := contract.MustNamespace("team:other")
	in, err := contract.Store(ctx, mem, contract.Document("kept inside", contract.MemoryMeta{Namespace: team}))
	if err != nil {
		t.Fatal(err)
	}
	out, err := contract.Store(ctx, mem, contract.Document("kept outside", contract.MemoryMeta{Namespace: other}))
	if err != nil {
		t.Fatal(err)
	}
	rs, err := contract.StoreMany(ctx, mem, []contract.StoreItem{contract.Document("kept inside", contract.MemoryMeta{Namespace: team})})
	if err != nil || len(rs) != 1 || !rs[0].Replayed || rs[0].ID != in.ID {
		t.Fatalf("StoreMany of a held item = %+v, %v; want a replay of %s", rs, err, in.ID)
	}

	whole := contract.EraseRequest{Reach: contract.ReachSubtree(contract.Namespace{})}
	if _, err := contract.Erase(ctx, mem, whole); contract.KindOf(err) != contract.KindInvalidRequest {
		t.Errorf("Erase of the whole tree without whole_tree: %v, want invalid request", err)
	}
	if _, err := contract.Erase(ctx, mem, contract.EraseRequest{Reach: contract.ReachSubtree(team)}); contract.KindOf(err) != contract.KindUnsupported {
		t.Errorf("Erase on an engine without it: %v, want unsupported", err)
	}
	own := &eraser{Engine: mem}
	if r, err := contract.Erase(ctx, own, contract.EraseRequest{Reach: contract.ReachSubtree(team)}); err != nil || r.ErasedScopes != 1 || own.erased != 1 {
		t.Errorf("Erase on an engine with it = %+v, %v (called %d times), want its own answer", r, err, own.erased)
	}
	if _, err := contract.Consolidate(ctx, mem, contract.ConsolidateRequest{}); contract.KindOf(err) != contract.KindUnsupported {
		t.Errorf("Consolidate on an engine without it: %v, want unsupported", err)
	}
	if hits, err := contract.Beliefs(ctx, mem, contract.BeliefsRequest{Limit: 5}); err != nil || hits == nil || len(hits) != 0 {
		t.Errorf("Beliefs on an engine without them = %#v, %v, want an empty list", hits, err)
	}
	rep, err := contract.ForgetWithin(ctx, mem, []string{in.ID, out.ID}, contract.ReachOf(team))
	if err != nil || rep.Forgotten != 1 {
		t.Fatalf("ForgetWithin team:acme = %+v, %v, want the one inside forgotten", rep, err)
	}
	left, err := mem.Get(ctx, contract.GetRequest{IDs: []string{in.ID, out.ID}})
	if err != nil || len(left) != 1 || left[0].ID != out.ID {
		t.Errorf("after ForgetWithin, held %+v, %v; want only %s", left, err, out.ID)
	}
}
