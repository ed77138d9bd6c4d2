package ui

import (
	"context"
	"errors"
	"time"

	"mnemo/contract"
)

// snapshotScope reads every record of a filter (with its stored item) before a
// forget, so undo can store them again; ids are fingerprints, so they come back
// under the same ids.
func snapshotScope(ctx context.Context, engine contract.Engine, filter contract.MetaFilter) ([]contract.Record, error) {
	var ids []string
	q := contract.BrowseQuery{Filter: filter, Limit: contract.BrowseMaxLimit}
	for {
		page, err := engine.Browse(ctx, q)
		if err != nil {
			return nil, err
		}
		for _, r := range page.Records {
			ids = append(ids, r.ID)
		}
		if page.Continuation == nil || len(ids) > maxUndo {
			break
		}
		q.Cursor = *page.Continuation
	}
	return snapshotIDs(ctx, engine, ids)
}

func snapshotIDs(ctx context.Context, engine contract.Engine, ids []string) ([]contract.Record, error) {
	var out []contract.Record
	for start := 0; start < len(ids); start += contract.MaxGetIDs {
		end := min(start+contract.MaxGetIDs, len(ids))
		recs, err := engine.GetRecords(ctx, contract.GetRequest{IDs: ids[start:end]})
		if err != nil {
			return nil, err
		}
		out = append(out, recs...)
	}
	return out, nil
}

type restoreGroup struct {
	status  contract.Status
	expires string
}

// restore stores forgotten records again with their status and expiry. A
// superseded record comes back active, then is superseded again by its successor.
func restore(ctx context.Context, engine contract.Engine, records []contract.Record) (int, error) {
	groups := map[restoreGroup][]contract.StoreItem{}
	expiry := map[restoreGroup]*time.Time{}
	var order []restoreGroup
	var superseded []contract.Record
	for _, r := range records {
		if r.Item == nil {
			continue
		}
		g := restoreGroup{status: r.Status}
		if g.status == contract.StatusSuperseded {
			g.status = contract.StatusActive
			superseded = append(superseded, r)
		}
		if r.ExpiresAt != nil {
			g.expires = contract.FormatMillis(*r.ExpiresAt)
			expiry[g] = r.ExpiresAt
		}
		if _, ok := groups[g]; !ok {
			order = append(order, g)
		}
		groups[g] = append(groups[g], *r.Item)
	}
	n := 0
	for _, g := range order {
		items := groups[g]
		for start := 0; start < len(items); start += contract.MaxStoreMany {
			end := min(start+contract.MaxStoreMany, len(items))
			rec, err := engine.StoreManyWith(ctx, items[start:end], contract.WriteOptions{Status: g.status, ExpiresAt: expiry[g]})
			if err != nil {
				return n, err
			}
			n += len(rec)
		}
	}
	for _, r := range superseded {
		if r.SupersededBy == nil {
			continue
		}
		if _, err := engine.Supersede(ctx, contract.SupersedeRequest{ID: r.ID, By: *r.SupersededBy}); err != nil &&
			!errors.Is(err, contract.ErrNotFound) {
			return n, err
		}
	}
	return n, nil
}
