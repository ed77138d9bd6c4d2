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
		t.Log(res.String())
	}
}

func TestMemoryEnginePasses(t *testing.T) {
	rep := conformance.Run(context.Background(), memory.New())
	logReport(t, rep)
	if err := rep.Err(); err != nil {
		t.Fatal(err)
	}
}
