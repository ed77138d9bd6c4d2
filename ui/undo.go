package ui

import (
	"context"

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
	return contract.GetRecordsInChunks(ctx, engine, ids, nil)
}

// restore stores forgotten records again with their status and expiry
// (contract.Restore).
func restore(ctx context.Context, engine contract.Engine, records []contract.Record) (int, error) {
	return contract.Restore(ctx, engine, records)
}
