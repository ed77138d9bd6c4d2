package postgres_test

import (
	"context"
	"testing"

	"mnemo/contract/conformance"
	"mnemo/engine/postgres"
	"mnemo/engine/postgres/pgtest"
)

// TestUndoRestoresExactly: random forgets by id and by filter, each undone
// (the TUI's snapshot, then contract.Restore), leave every record, browse
// order and explore count as it was.
func TestUndoRestoresExactly(t *testing.T) {
	e := openStore(t, pgtest.URL(t), postgres.Options{})
	for seed := range uint64(2) {
		if err := conformance.UndoProperty(context.Background(), e, seed, 15); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
	}
}
