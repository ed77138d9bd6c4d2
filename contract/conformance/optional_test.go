package conformance_test

import (
	"context"
	"slices"
	"testing"

	"mnemo/contract"
	"mnemo/contract/conformance"
	"mnemo/engine/curate"
	"mnemo/engine/memory"
)

// optional gives the reference engine the operations it leaves out (erase and
// consolidation), so the suite's checks of them run their full paths.
type optional struct {
	*memory.Engine
	consolidation contract.Consolidation
	// eraseWhole ignores the reach's subtree boundary (a deliberate fault).
	eraseWhole bool
	// answerAnyway consolidates even when declaring none (a deliberate fault).
	answerAnyway bool
}

func (o optional) Descriptor() contract.Descriptor {
	d := o.Engine.Descriptor()
	d.Consolidation = o.consolidation
	return d
}

func (o optional) Erase(ctx context.Context, req contract.EraseRequest) (contract.EraseReport, error) {
	if err := req.Validate(); err != nil {
		return contract.EraseReport{}, err
	}
	reach := contract.Reach{At: req.Reach.At, Descendants: req.Reach.Descendants}
	if o.eraseWhole {
		parent, _ := req.Reach.At.Parent()
		reach = contract.ReachSubtree(parent)
	}
	rep, err := o.Forget(ctx, contract.ForgetFilter(contract.MetaFilter{Reach: &reach, Kinds: req.Kinds}))
	if err != nil {
		return contract.EraseReport{}, err
	}
	return contract.EraseReport{ErasedScopes: rep.Forgotten}, nil
}

func (o optional) Consolidate(ctx context.Context, req contract.ConsolidateRequest) (contract.ConsolidateReceipt, error) {
	if err := req.Validate(); err != nil {
		return contract.ConsolidateReceipt{}, err
	}
	switch {
	case o.consolidation == contract.ConsolidationScheduled:
		return contract.ConsolidateReceipt{Status: contract.ConsolidateScheduled}, nil
	case o.consolidation != contract.ConsolidationNone || o.answerAnyway:
		return contract.ConsolidateReceipt{Status: contract.ConsolidateCompleted, Scopes: 1, Built: contract.Ptr(0)}, nil
	}
	return contract.Consolidate(ctx, o.Engine, req)
}

// Beliefs derives beliefs as mnemo's engines do (engine/curate).
func (o optional) Beliefs(ctx context.Context, req contract.BeliefsRequest) ([]contract.Hit, error) {
	if o.consolidation == contract.ConsolidationNone || o.consolidation == contract.ConsolidationScheduled {
		return contract.Beliefs(ctx, o.Engine, req)
	}
	return curate.Beliefs(ctx, o, req, curate.DefaultConfig())
}

func resultOf(rep conformance.Report, name string) conformance.Result {
	for _, r := range rep.Results {
		if r.Name == name {
			return r
		}
	}
	return conformance.Result{}
}

func TestOptionalOperationsRunTheirFullChecks(t *testing.T) {
	for _, c := range []contract.Consolidation{contract.ConsolidationOnDemand, contract.ConsolidationScheduled, contract.ConsolidationAutomatic} {
		e := optional{Engine: memory.New(), consolidation: c}
		rep := conformance.Run(context.Background(), e)
		if err := rep.Err(); err != nil {
			logReport(t, rep)
			t.Fatalf("%s: %v", c, err)
		}
		if r := resultOf(rep, "erase"); !r.Passed {
			t.Fatalf("erase did not run its full check: %s", r)
		}
		if e.Len() != 0 {
			t.Fatalf("%s: the run left %d records", c, e.Len())
		}
	}
}

func TestOptionalOperationFaultsAreCaught(t *testing.T) {
	cases := []struct {
		name  string
		e     contract.Engine
		check string
	}{
		{"erase crosses the subtree", optional{Engine: memory.New(), consolidation: contract.ConsolidationNone, eraseWhole: true}, "erase"},
		{"declares none but consolidates", optional{Engine: memory.New(), consolidation: contract.ConsolidationNone, answerAnyway: true}, "consolidate"},
	}
	for _, c := range cases {
		rep := conformance.Run(context.Background(), c.e)
		if !slices.Contains(rep.Failed(), c.check) {
			logReport(t, rep)
			t.Fatalf("%s was not caught by `%s`", c.name, c.check)
		}
	}
}
