package ssh_test

import (
	"context"
	"fmt"
	"testing"

	"mnemo/contract"
)

// TestForgetScopeOverSSHRemovesWhatItCounted is defect 1 of issue 12 in the
// TUI over SSH: the count the forget dialog asks to confirm is the number the
// forget removes, all of it inside alice's reach, and every record outside
// it survives (counted before and after).
func TestForgetScopeOverSSHRemovesWhatItCounted(t *testing.T) {
	aliceID, bobID := newIdentity(t), newIdentity(t)
	srv := startScopedWith(t, scopedKeys(aliceID, bobID))
	ctx := context.Background()
	count := func(ns string, sub bool) int {
		r := contract.ReachExact(contract.MustNamespace(ns))
		r.Descendants = sub
		page, err := srv.store.Explore(ctx, contract.ExploreRequest{Facet: contract.FacetKind, Filter: contract.MetaFilter{Reach: &r}, Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		return int(page.Total)
	}
	outside := count("root", true) - count("team:acme", true)
	alice := openTUI(t, srv.addr, aliceID, "alice", foreign(bobRecords, strayRecords))
	n := len(aliceRecords)
	alice.see(t, fmt.Sprintf("%d records", n), "namespace                3")
	alice.press(t, "\r") // expand kind
	alice.see(t, "    document         4")
	alice.press(t, "j", "\r") // kind=document
	alice.see(t, "kind=document")
	alice.press(t, "D")
	want := fmt.Sprintf("Forget %d records matching kind=document?", n)
	alice.see(t, want)
	alice.press(t, fmt.Sprint(n))
	alice.see(t, fmt.Sprintf("forgot %d records", n))
	if got := count("team:acme", true); got != 0 {
		t.Fatalf("%d of alice's records left", got)
	}
	if got := count("root", true) - count("team:acme", true); got != outside {
		t.Fatalf("%d records outside alice's reach before the forget, %d after", outside, got)
	}
}

// see waits until the session's screen shows every want and fails the test
// when it never does or shows a record from outside the session's reach.
func (s *tuiSession) see(t *testing.T, wants ...string) string {
	t.Helper()
	screen := waitScreen(s, wants)
	s.check(t, screen, wants...)
	return screen
}
