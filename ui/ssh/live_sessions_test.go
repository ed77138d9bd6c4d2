package ssh_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"mnemo/contract"
	"mnemo/ui/common"
)

// TestLiveSessionsFollowOnlyTheirReach opens alice's (curator, team:acme's
// subtree) and bob's (reader, exactly user:bob) SSH sessions on one store,
// both on the Activity view, each following the change feed through its own
// session's subscription. Another writer of the store then stores a record in
// each reach and one in neither, forgets all three (the stray first, then
// bob's, then alice's), and stores one more record in each reach. Each
// session lists exactly its own three changes (its store, its forget, its
// last store): never the other's store, nor the forget of the other's record,
// nor anything of the stray, neither on screen nor anywhere in the bytes
// sent to it.
func TestLiveSessionsFollowOnlyTheirReach(t *testing.T) {
	t.Parallel()
	aliceID, bobID := newIdentity(t), newIdentity(t)
	srv := startScopedWith(t, scopedKeys(aliceID, bobID))
	ctx := context.Background()
	store := func(ns, text string) string {
		t.Helper()
		meta := contract.MetaFromSource(contract.SourceAgent, nil)
		meta.Namespace = contract.MustNamespace(ns)
		rec, err := contract.Store(ctx, srv.store, contract.Document(text, meta))
		if err != nil {
			t.Fatal(err)
		}
		return rec.ID
	}
	forget := func(id string) {
		t.Helper()
		if _, err := srv.store.Forget(ctx, contract.ForgetIDs(id)); err != nil {
			t.Fatal(err)
		}
	}

	// The records' texts are unique words, so seeing one on a screen means
	// its change reached that session. The ids are known only once stored, so
	// each session's foreign list gets them before anything is looked at.
	aliceText, aliceLast := "acme live note quokka", "acme sentinel note numbat"
	bobText, bobLast := "bob live note wombat", "bob sentinel note bilby"
	strayText := "other team live note platypus"
	alice := openTUI(t, srv.addr, aliceID, "alice", append(foreign(bobRecords, strayRecords), "wombat", "bilby", "platypus"))
	bob := openTUI(t, srv.addr, bobID, "bob", append(foreign(aliceRecords, strayRecords), "quokka", "numbat", "platypus"))
	sessions := []*tuiSession{alice, bob}
	for _, s := range sessions {
		s.press(t, "5")
	}
	// Both follow the feed (the Activity view is empty, the indicator live)
	// before anything is written.
	waitBoth(t, sessions, map[*tuiSession][]string{
		alice: {"Activity", "waiting for changes", "* live"},
		bob:   {"Activity", "waiting for changes", "* live"},
	})

	aliceRec := store("team:acme/agent:writer", aliceText)
	bobRec := store("user:bob", bobText)
	strayRec := store("team:other", strayText)
	alice.foreign = append(alice.foreign, "id "+common.ShortID(bobRec), "id "+common.ShortID(strayRec))
	bob.foreign = append(bob.foreign, "id "+common.ShortID(aliceRec), "id "+common.ShortID(strayRec))
	forget(strayRec)
	forget(bobRec)
	forget(aliceRec)
	store("team:acme", aliceLast)
	store("user:bob", bobLast)

	// The last store of each reach comes after every forget in the feed's
	// order, so once a session shows it, it has been shown every change
	// before it that it may see.
	screens := waitBoth(t, sessions, map[*tuiSession][]string{
		alice: {aliceLast, "(forgotten) " + aliceText, "id " + common.ShortID(aliceRec), "Activity  3 changes"},
		bob:   {bobLast, "(forgotten) " + bobText, "id " + common.ShortID(bobRec), "Activity  3 changes"},
	})
	for _, s := range sessions {
		if n := strings.Count(screens[s], " forget "); n != 1 {
			t.Fatalf("%s's activity lists %d forgets, want its own one:\n%s", s.name, n, screens[s])
		}
	}
}

// waitBoth waits for every session's screen to show its wants (or a foreign
// record) and checks each on the test goroutine.
func waitBoth(t *testing.T, sessions []*tuiSession, wants map[*tuiSession][]string) map[*tuiSession]string {
	t.Helper()
	var wg sync.WaitGroup
	var mu sync.Mutex
	screens := map[*tuiSession]string{}
	for _, s := range sessions {
		wg.Go(func() {
			screen := waitScreen(s, wants[s])
			mu.Lock()
			screens[s] = screen
			mu.Unlock()
		})
	}
	wg.Wait()
	for _, s := range sessions {
		s.check(t, screens[s], wants[s]...)
		if !strings.Contains(screens[s], fmt.Sprintf("%s@shared", s.name)) {
			t.Fatalf("%s's header does not name the session:\n%s", s.name, screens[s])
		}
	}
	return screens
}
