package conformance_test

import (
	"testing"

	"mnemo/contract"
	"mnemo/contract/conformance"
	"mnemo/engine/memory"
)

func logReport(t *testing.T, rep conformance.Report) {
	t.Helper()
	for _, res := range rep.Results {
		t.Log(res.String())
	}
}

func TestMemoryEnginePasses(t *testing.T) {
	t.Parallel()
	conformance.Test(t, func(*testing.T) contract.Engine { return memory.New() })
}
