package conformance

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"mnemo/contract"
)

// cancelledPromptly bounds how long an operation called with an ended
// context may take to say so.
const cancelledPromptly = 2 * time.Second

// Cancelled calls every operation that reads or writes the store with a
// context that has already been cancelled, and requires each to return
// promptly an unavailable error for which errors.Is(err, context.Canceled)
// holds, and nothing to have been written. It is not one of the suite's
// checks (a report's list of checks stays the reference's); each engine's
// tests run it beside the suite.
func Cancelled(e contract.Engine) error {
	live := context.Background()
	ctx, cancel := context.WithCancel(live)
	cancel()
	ws := fmt.Sprintf("mnemo-conformance/cancelled-%d", time.Now().UnixNano())
	meta := contract.MemoryMeta{Workspace: &ws, Source: contract.SourceRef{Kind: contract.SourceAgent}}
	item := contract.Document("a note stored with a cancelled context", meta)
	filter := contract.MetaFilter{Workspace: &ws}
	id := item.Fingerprint()
	get := contract.GetRequest{IDs: []string{id}}
	calls := []struct {
		op   string
		call func() error
	}{
		{"store", func() error { _, err := contract.Store(ctx, e, item); return err }},
		{"store_with", func() error { _, err := e.StoreWith(ctx, item, contract.WriteOptions{}); return err }},
		{"store_many", func() error { _, err := contract.StoreMany(ctx, e, []contract.StoreItem{item}); return err }},
		{"store_many_with", func() error {
			_, err := e.StoreManyWith(ctx, []contract.StoreItem{item}, contract.WriteOptions{})
			return err
		}},
		{"list", func() error { _, err := e.List(ctx, contract.ListRequest{Filter: filter, Limit: 10}); return err }},
		{"export", func() error { _, err := e.Export(ctx, contract.ListRequest{Filter: filter, Limit: 10}); return err }},
		{"explore", func() error {
			_, err := e.Explore(ctx, contract.ExploreRequest{Facet: contract.FacetKind, Filter: filter, Limit: 10})
			return err
		}},
		{"get", func() error { _, err := e.Get(ctx, get); return err }},
		{"get_records", func() error { _, err := e.GetRecords(ctx, get); return err }},
		{"browse", func() error { _, err := e.Browse(ctx, contract.BrowseQuery{Filter: filter}); return err }},
		{"changes", func() error { _, err := e.Changes(ctx, contract.ChangesRequest{Limit: 10}); return err }},
		{"changes_wait", func() error {
			_, err := e.Changes(ctx, contract.ChangesRequest{Limit: 10, Wait: time.Second})
			return err
		}},
		{"recall", func() error {
			_, err := e.Recall(ctx, contract.RecallRequest{Question: "what was stored?", Filter: filter, Limit: 5})
			return err
		}},
		{"forget_by_id", func() error { _, err := e.Forget(ctx, contract.ForgetIDs(id)); return err }},
		{"forget_by_filter", func() error { _, err := e.Forget(ctx, contract.ForgetFilter(filter)); return err }},
		{"forget_within", func() error {
			_, err := contract.ForgetWithin(ctx, e, []string{id}, contract.ReachSubtree(contract.Root()))
			return err
		}},
		{"review", func() error {
			_, err := e.Review(ctx, contract.ReviewRequest{ID: id, Action: contract.ReviewApprove})
			return err
		}},
		{"supersede", func() error {
			_, err := e.Supersede(ctx, contract.SupersedeRequest{ID: id, By: strings.Repeat("0", len(id))})
			return err
		}},
	}
	for _, mode := range e.Descriptor().FetchModes {
		calls = append(calls, struct {
			op   string
			call func() error
		}{"fetch " + string(mode), func() error {
			_, err := e.Fetch(ctx, contract.FetchRequest{Query: "note", Mode: mode, Filter: filter, Limit: 5})
			return err
		}})
	}
	var problems []string
	for _, c := range calls {
		start := time.Now()
		err := c.call()
		took := time.Since(start)
		switch {
		case err == nil:
			problems = append(problems, c.op+" succeeded")
		case !errors.Is(err, context.Canceled):
			problems = append(problems, fmt.Sprintf("%s answered `%v`, for which errors.Is(err, context.Canceled) is false", c.op, err))
		case contract.KindOf(err) != contract.KindUnavailable:
			problems = append(problems, fmt.Sprintf("%s answered `%v`, not unavailable", c.op, err))
		case took > cancelledPromptly:
			problems = append(problems, fmt.Sprintf("%s took %s to answer", c.op, took.Round(time.Millisecond)))
		}
	}
	// Nothing a cancelled call was asked to write may have been written.
	if hits, err := e.Get(live, get); err != nil {
		problems = append(problems, fmt.Sprintf("get after the cancelled calls: %v", err))
	} else if len(hits) > 0 {
		problems = append(problems, "a store with a cancelled context wrote its item")
		_, _ = e.Forget(live, contract.ForgetIDs(id))
	}
	if len(problems) > 0 {
		return fmt.Errorf("a cancelled context: %s", strings.Join(problems, "; "))
	}
	return nil
}
