package bolt_test

import (
	"context"
	"testing"

	"mnemo/contract/conformance"
	"mnemo/engine/bolt"
)

// TestUndoRestoresExactly: random forgets by id and by filter, each undone
// (the TUI's snapshot, then contract.Restore), leave every record, browse
// order and explore count as it was.
func TestUndoRestoresExactly(t *testing.T) {
	e := openStore(t, t.TempDir(), bolt.Options{})
	for seed := range uint64(3) {
		if err := conformance.UndoProperty(context.Background(), e, seed, 25); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
	}
}
