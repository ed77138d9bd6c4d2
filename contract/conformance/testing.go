package conformance

import (
	"testing"

	"mnemo/contract"
)

// Test runs the suite as the tests of an engine: one subtest per check, in
// the suite's order on one engine (checks share the run's fixture, and
// cleanup runs last), a skipped check a skipped subtest, then one more,
// cancelled_context (Cancelled). newEngine opens the engine under test;
// closing it is its own cleanup's business.
func Test(t *testing.T, newEngine func(t *testing.T) contract.Engine) {
	t.Helper()
	e := newEngine(t)
	r := newRun(t.Context(), e)
	for _, c := range checks() {
		t.Run(c.name, func(t *testing.T) {
			res := runOne(c, r)
			switch {
			case res.Skipped:
				t.Skip(res.Detail)
			case !res.Passed:
				t.Fatal(res.Detail)
			}
		})
	}
	t.Run("cancelled_context", func(t *testing.T) {
		if err := Cancelled(e); err != nil {
			t.Fatal(err)
		}
	})
}
