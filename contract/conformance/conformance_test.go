package conformance_test

import (
	"context"
	"testing"

	"mnemo/contract/conformance"
	"mnemo/engine/memory"
)

func logReport(t *testing.T, rep conformance.Report) {
	t.Helper()
	for _, res := range rep.Results {
		switch {
		case res.Passed:
			t.Logf("ok   %-18s %v", res.Name, res.Duration)
		case res.Skipped:
			t.Logf("skip %-18s %s", res.Name, res.Detail)
		default:
			t.Logf("FAIL %-18s %s", res.Name, res.Detail)
		}
	}
}

func TestMemoryEnginePasses(t *testing.T) {
	rep := conformance.Run(context.Background(), memory.New())
	logReport(t, rep)
	if err := rep.Err(); err != nil {
		t.Fatal(err)
	}
}
