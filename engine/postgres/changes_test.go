package postgres_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"mnemo/contract"
	"mnemo/contract/conformance"
	"mnemo/engine/postgres"
	"mnemo/engine/postgres/pgtest"
)

func TestChangesResumeAcrossReopen(t *testing.T) {
	url := pgtest.URL(t)
	open := func() (contract.Engine, error) { return postgres.Open(context.Background(), url, postgres.Options{}) }
	closeIt := func(e contract.Engine) error { return e.(*postgres.Engine).Close() }
	if err := conformance.CheckChangesResume(context.Background(), open, closeIt); err != nil {
		t.Fatal(err)
	}
}

func TestChangesRetention(t *testing.T) {
	e := openStore(t, pgtest.URL(t), postgres.Options{ChangeRetention: contract.ChangeRetention{MaxAge: time.Nanosecond, MaxChanges: 5}})
	if err := conformance.CheckChangesRetention(context.Background(), e, 5); err != nil {
		t.Fatal(err)
	}
}

// TestChangesWakeWhileTheListenerStarts: a waiting read is the first of its
// engine, so its listening connection is still being opened when the other
// engine writes, at once. The write's NOTIFY can reach no one; the read
// still wakes with the change well before the 2 s poll, when the listener
// is up and looks again.
func TestChangesWakeWhileTheListenerStarts(t *testing.T) {
	url := pgtest.URL(t)
	for round := range 3 {
		a := openStore(t, url, postgres.Options{})
		b := openStore(t, url, postgres.Options{})
		if el, _ := wakeAcross(t, a, b, 0, fmt.Sprintf("written at once, round %d", round)); el > time.Second {
			t.Fatalf("round %d: the waiting read woke %s after the other engine's write", round, el)
		}
	}
}

// wakeAcross starts a waiting read on a, lets pause pass, stores text
// through b, checks that the read woke with that store, and answers how
// long after the store began it woke, and the page it woke with.
func wakeAcross(t *testing.T, a, b *postgres.Engine, pause time.Duration, text string) (time.Duration, contract.ChangesPage) {
	t.Helper()
	ctx := context.Background()
	head, err := a.Changes(ctx, contract.ChangesRequest{FromNow: true, Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan contract.ChangesPage, 1)
	go func() {
		p, err := a.Changes(ctx, contract.ChangesRequest{Since: head.Next, Limit: 10, Wait: 20 * time.Second})
		if err != nil {
			t.Error(err)
		}
		got <- p
	}()
	time.Sleep(pause)
	stored := time.Now()
	r, err := contract.Store(ctx, b, contract.Document(text, contract.MemoryMeta{}))
	if err != nil {
		t.Fatal(err)
	}
	p := <-got
	woke := time.Since(stored)
	if len(p.Changes) != 1 || p.Changes[0].ID != r.ID {
		t.Fatalf("the waiting read on a woke with %+v", p)
	}
	return woke, p
}

// TestChangesAcrossEngines runs two engines on one store, as two mnemo
// processes would: a read waiting on one wakes on the other's write, and
// concurrent writers on both leave one feed with every change once, in
// order, without a gap.
func TestChangesAcrossEngines(t *testing.T) {
	ctx := context.Background()
	url := pgtest.URL(t)
	a := openStore(t, url, postgres.Options{})
	b := openStore(t, url, postgres.Options{})
	el, p := wakeAcross(t, a, b, 200*time.Millisecond, "written by the other process")
	// NOTIFY, not the 2 s poll, woke it.
	if el > time.Second {
		t.Fatalf("the waiting read woke %s after the other engine's write", el)
	}

	var wg sync.WaitGroup
	const writers, each = 6, 15
	for w := range writers {
		e := a
		if w%2 == 1 {
			e = b
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				it := contract.Document(fmt.Sprintf("concurrent writer %d item %d", w, i), contract.MemoryMeta{})
				if _, err := contract.Store(ctx, e, it); err != nil {
					t.Error(err)
					return
				}
				if i%5 == 4 {
					if _, err := e.Forget(ctx, contract.ForgetIDs(it.Fingerprint())); err != nil {
						t.Error(err)
						return
					}
				}
			}
		}()
	}
	// A reader follows along while they write: it never sees a later seq
	// before an earlier one.
	done := make(chan struct{})
	var seen []uint64
	go func() {
		defer close(done)
		since := p.Next
		for len(seen) < writers*(each+each/5) {
			page, err := b.Changes(ctx, contract.ChangesRequest{Since: since, Limit: 7, Wait: 5 * time.Second})
			if err != nil {
				t.Error(err)
				return
			}
			if len(page.Changes) == 0 {
				t.Error("the follower waited 5s for nothing while writers wrote")
				return
			}
			for _, c := range page.Changes {
				seen = append(seen, c.Seq)
			}
			since = page.Next
		}
	}()
	wg.Wait()
	<-done
	for i, s := range seen {
		if s != p.Next+uint64(i)+1 {
			t.Fatalf("the follower saw seq %d at position %d; want %d (no gap, no repeat, in order)", s, i, p.Next+uint64(i)+1)
		}
	}
}
