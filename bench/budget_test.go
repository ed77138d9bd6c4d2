package bench

import (
	"testing"

	"mnemo/engine/postgres"
)

// TestImportBudgetIsTheSpecs: the import row's floor is docs/spec/design.md
// §8's, 20,000 records/s, and engine/postgres's own 5,000 for that engine.
func TestImportBudgetIsTheSpecs(t *testing.T) {
	for engine, want := range map[string]float64{"mnemo": 20000, "memory": 20000, postgres.EngineID: 5000} {
		if got := importBudget(engine); got != want {
			t.Errorf("import budget of %q = %.0f records/s, want %.0f", engine, got, want)
		}
	}
}
