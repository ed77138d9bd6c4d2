package ui

import (
	"context"

	"mnemo/contract"
)

// snapshotScope reads every record of a filter (with its stored item) before a
// forget, so undo can put them back exactly (contract.SnapshotForget).
func snapshotScope(ctx context.Context, engine contract.Engine, filter contract.MetaFilter) ([]contract.Record, error) {
	return contract.SnapshotForget(ctx, engine, contract.ForgetTarget{Filter: &filter}, nil, maxUndo)
}

func snapshotIDs(ctx context.Context, engine contract.Engine, ids []string) ([]contract.Record, error) {
	return contract.SnapshotForget(ctx, engine, contract.ForgetTarget{IDs: ids}, nil, 0)
}

// restore puts forgotten records back: whole and exact (same id, times,
// status, expiry, successor) when the engine offers contract.Restorer, which
// every engine mnemo opens does (contract.Restore).
func restore(ctx context.Context, engine contract.Engine, records []contract.Record) (int, error) {
	return contract.Restore(ctx, engine, records)
}
