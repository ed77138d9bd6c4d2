package memory_test

import (
	"context"
	"testing"

	"mnemo/contract/conformance"
	"mnemo/engine/memory"
)

// TestUndoRestoresExactly: the reference engine puts forgotten records back
// exactly (conformance.UndoProperty).
func TestUndoRestoresExactly(t *testing.T) {
	for seed := range uint64(3) {
		if err := conformance.UndoProperty(context.Background(), memory.New(), seed, 25); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
	}
}
