package ssh_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"mnemo/contract"
	"mnemo/server/auth"
)

// TestReloadEndsRevokedSessionsAndNarrowsShrunkOnes is defect 4 of issue 12:
// after the keys file dropped a principal and the server reloaded, its open
// SSH session kept reading (records stored after the revocation too) until a
// timeout. A reload now ends the sessions of principals that are gone, and
// narrows those whose reach or role shrank, within a second.
func TestReloadEndsRevokedSessionsAndNarrowsShrunkOnes(t *testing.T) {
	aliceID, bobID := newIdentity(t), newIdentity(t)
	srv := startScopedWith(t, scopedKeys(aliceID, bobID))
	alice := openTUI(t, srv.addr, aliceID, "alice", foreign(bobRecords, strayRecords))
	bob := openTUI(t, srv.addr, bobID, "bob", foreign(aliceRecords, strayRecords))
	alice.see(t, "alice@shared", fmt.Sprintf("%d records", len(aliceRecords)))
	bob.see(t, "bob@shared", fmt.Sprintf("%d records", len(bobRecords)))
	bobEnded := make(chan error, 1)
	go func() { bobEnded <- bob.sess.Wait() }()

	// bob is dropped; alice shrinks to a reader of team:acme/agent:writer.
	fresh, err := auth.ParseKeys([]byte(fmt.Sprintf(`
[[principal]]
name = "alice"
role = "reader"
reach = { at = "team:acme/agent:writer" }
ssh_keys = [%q]
`, aliceID.line)))
	if err != nil {
		t.Fatal(err)
	}
	srv.keys.Replace(fresh)
	reloaded := time.Now()
	if ended, changed := srv.srv.Reload(); ended != 1 || changed != 1 {
		t.Fatalf("reload ended %d sessions and changed %d, want 1 and 1", ended, changed)
	}
	// Stored after the revocation, in bob's old reach: he must never see it.
	meta := contract.MetaFromSource(contract.SourceAgent, nil)
	meta.Namespace = contract.MustNamespace("user:bob")
	if _, err := contract.Store(context.Background(), srv.store, contract.Document("bob's late zeppelin note", meta)); err != nil {
		t.Fatal(err)
	}
	select {
	case <-bobEnded:
	case <-time.After(time.Second):
		t.Fatal("bob's session outlived his revocation by a second")
	}
	if took := time.Since(reloaded); took > time.Second {
		t.Fatalf("bob's session ended %v after the reload", took)
	}
	if strings.Contains(bob.out.String(), "zeppelin") {
		t.Fatal("bob's revoked session showed a record stored after the revocation")
	}
	if !strings.Contains(bob.out.String(), "this key was removed from the server's keys file") {
		t.Fatalf("bob's session ended without saying why: %q", tail(bob.out.String()))
	}
	// alice's session goes on, narrowed: one record, read-only.
	narrowed := foreign(bobRecords, strayRecords, aliceRecords[:2], aliceRecords[3:])
	wants := []string{"read-only", "1 of 1 record", "writer keeps release", "you now act as alice (reader)"}
	var screen string
	for deadline := time.Now().Add(10 * time.Second); ; {
		screen = alice.screen()
		stale := ""
		for _, m := range narrowed {
			if strings.Contains(screen, m) {
				stale = m
			}
		}
		missing := ""
		for _, w := range wants {
			if !strings.Contains(screen, w) {
				missing = w
			}
		}
		if stale == "" && missing == "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("alice's narrowed screen shows %q / misses %q:\n%s", stale, missing, screen)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if took := time.Since(reloaded); took > time.Second {
		t.Logf("alice's narrowed screen took %v", took)
	}
	alice.check(t, screen, wants...)
	// A new login with bob's key is refused.
	if c, err := dial(t, srv.addr, bobID); err == nil {
		c.Close()
		t.Fatal("bob's key logged in after its revocation")
	}
}
