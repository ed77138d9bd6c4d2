package bolt_test

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	bbolt "go.etcd.io/bbolt"

	"mnemo/contract"
	"mnemo/contract/conformance"
	"mnemo/engine/bolt"
)

func TestChangesResumeAcrossReopen(t *testing.T) {
	dir := t.TempDir()
	open := func() (contract.Engine, error) { return bolt.Open(dir, bolt.Options{}) }
	closeIt := func(e contract.Engine) error { return e.(*bolt.Engine).Close() }
	if err := conformance.CheckChangesResume(context.Background(), open, closeIt); err != nil {
		t.Fatal(err)
	}
}

func TestChangesRetentionPrunesAndExpires(t *testing.T) {
	dir := t.TempDir()
	opts := bolt.Options{ChangeRetention: contract.ChangeRetention{MaxAge: time.Nanosecond, MaxChanges: 5}}
	e := openStore(t, dir, opts)
	if err := conformance.CheckChangesRetention(context.Background(), e, 5); err != nil {
		t.Fatal(err)
	}
	rep, err := e.Check(context.Background(), false, nil)
	if err != nil || !rep.Consistent {
		t.Fatalf("check after pruning: %v %+v", err, rep.Checks)
	}
	head := e.FeedHead()
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	// The pruned mark survives a reopen: a since before it is still refused.
	e = openStore(t, dir, opts)
	if _, err := e.Changes(context.Background(), contract.ChangesRequest{Since: 1, Limit: 10}); !errors.Is(err, contract.ErrExpired) {
		t.Fatalf("since 1 after reopen: %v; want expired", err)
	}
	if p, err := e.Changes(context.Background(), contract.ChangesRequest{Since: head - 5, Limit: 10}); err != nil || len(p.Changes) != 5 {
		t.Fatalf("the last 5 after reopen: %v %v", p.Changes, err)
	}
}

// TestStoreFromVersion2Migrates opens a store written by the release before
// the change feed (schema 2): it opens, its feed starts empty at the
// migration, and the store then logs and checks like a new one.
func TestStoreFromVersion2Migrates(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	untar(t, filepath.Join("testdata", "store-v2.tar.gz"), dir)
	e := openStore(t, dir, bolt.Options{})
	if n := e.Len(); n != 57 {
		t.Fatalf("len %d, want 57", n)
	}
	p, err := e.Changes(ctx, contract.ChangesRequest{Limit: 10})
	if err != nil || len(p.Changes) != 0 || p.Head != 0 {
		t.Fatalf("a migrated store's feed: %+v %v; want empty at head 0", p, err)
	}
	r, err := contract.Store(ctx, e, contract.Document("after the migration", contract.MemoryMeta{Namespace: contract.MustNamespace("team:t1")}))
	if err != nil {
		t.Fatal(err)
	}
	p, err = e.Changes(ctx, contract.ChangesRequest{Limit: 10})
	if err != nil || len(p.Changes) != 1 || p.Changes[0].Seq != 1 || p.Changes[0].ID != r.ID || p.Changes[0].Record == nil {
		t.Fatalf("after one store: %+v %v", p, err)
	}
	rep, err := e.Check(ctx, false, nil)
	if err != nil || !rep.Consistent {
		t.Fatalf("check: %v %+v", err, rep.Checks)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	db, err := bbolt.Open(filepath.Join(dir, bolt.DBFile), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	_ = db.View(func(tx *bbolt.Tx) error {
		if v := string(tx.Bucket([]byte("meta")).Get([]byte("schema"))); v != bolt.SchemaVersion {
			t.Fatalf("schema %q after the migration, want %s", v, bolt.SchemaVersion)
		}
		return nil
	})
}

// TestStoreFromVersion8KeepsItsFeed: a store of schema 8 wrote every feed
// entry long (the id's 40 digits, the namespace spelled out). It migrates
// to 9 with its feed as it was: the old entries read back as written, the
// next ones are compact, and check finds the store consistent.
func TestStoreFromVersion8KeepsItsFeed(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	e := openStore(t, dir, bolt.Options{})
	for i, ns := range []string{"team:acme/agent:researcher", "user:kim", ""} {
		if _, err := contract.Store(ctx, e, contract.Document(fmt.Sprintf("written at schema 8, %d", i), contract.MemoryMeta{Namespace: contract.MustNamespace(ns)})); err != nil {
			t.Fatal(err)
		}
	}
	before, err := e.Changes(ctx, contract.ChangesRequest{Limit: 10})
	if err != nil || len(before.Changes) != 3 {
		t.Fatalf("changes: %+v %v", before, err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	// Write the entries as schema 8 did, a key each, and mark the store so.
	damage(t, dir, func(tx *bbolt.Tx) error {
		b := tx.Bucket([]byte("changes"))
		first := binary.BigEndian.AppendUint64(nil, 1)
		entries := feedBlock(t, b.Get(first))
		if len(entries) != len(before.Changes) {
			return fmt.Errorf("the feed's first block holds %d entries, want %d", len(entries), len(before.Changes))
		}
		if err := b.Delete(first); err != nil {
			return err
		}
		for i, c := range before.Changes {
			v := entries[i]
			if len(v) != 32 {
				return fmt.Errorf("change %d's entry takes %d bytes, want a compact one's 32", c.Seq, len(v))
			}
			long := append(append(append(slices.Clone(v[:10]), byte(len(c.ID))), c.ID...), c.Namespace.String()...)
			if err := b.Put(binary.BigEndian.AppendUint64(nil, c.Seq), long); err != nil {
				return err
			}
		}
		if err := tx.DeleteBucket([]byte("changes_ns")); err != nil {
			return err
		}
		return tx.Bucket([]byte("meta")).Put([]byte("schema"), []byte("8"))
	})
	e = openStore(t, dir, bolt.Options{})
	r, err := contract.Store(ctx, e, contract.Document("written at schema 9", contract.MemoryMeta{Namespace: contract.MustNamespace("user:kim")}))
	if err != nil {
		t.Fatal(err)
	}
	after, err := e.Changes(ctx, contract.ChangesRequest{Limit: 10})
	if err != nil || len(after.Changes) != 4 {
		t.Fatalf("changes after the migration: %+v %v", after, err)
	}
	for i, c := range before.Changes {
		if got := after.Changes[i]; got.ID != c.ID || !got.Namespace.Equal(c.Namespace) || got.At != c.At || got.Op != c.Op {
			t.Errorf("change %d reads %+v after the migration, was %+v", c.Seq, got, c)
		}
	}
	if got := after.Changes[3]; got.ID != r.ID || got.Namespace.String() != "user:kim" {
		t.Errorf("the new change reads %+v", got)
	}
	rep, err := e.Check(ctx, false, nil)
	if err != nil || !rep.Consistent {
		t.Fatalf("check: %v %+v", err, rep.Checks)
	}
}

// feedBlock is the entries of a block of the change feed, whole
// (internal/feed's blocks.go): 0xFD, then each entry as the length of the
// prefix it shares with the one before, the length of the rest and the
// rest; or 0xFE, then each entry's length and its bytes.
func feedBlock(t *testing.T, v []byte) [][]byte {
	t.Helper()
	if len(v) == 0 || v[0] != 0xFE && v[0] != 0xFD {
		t.Fatalf("not a block of the feed: %x", v)
	}
	var out [][]byte
	for rest := v[1:]; len(rest) > 0; {
		shared := uint64(0)
		if v[0] == 0xFD {
			n, w := binary.Uvarint(rest)
			if w <= 0 || len(out) == 0 && n != 0 || len(out) > 0 && n > uint64(len(out[len(out)-1])) {
				t.Fatalf("a block cut short: %x", v)
			}
			shared, rest = n, rest[w:]
		}
		n, w := binary.Uvarint(rest)
		if w <= 0 || n > uint64(len(rest)-w) {
			t.Fatalf("a block cut short: %x", v)
		}
		var e []byte
		if shared > 0 {
			e = slices.Clone(out[len(out)-1][:shared])
		}
		out = append(out, append(e, rest[w:w+int(n)]...))
		rest = rest[w+int(n):]
	}
	return out
}

func TestCheckFindsAFeedThatDisagrees(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	e := openStore(t, dir, bolt.Options{})
	r, err := contract.Store(ctx, e, contract.Document("checked by the feed", contract.MemoryMeta{}))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := contract.Store(ctx, e, contract.Document("a second one", contract.MemoryMeta{})); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	// Remove a record behind the feed's back, and a change from its middle.
	db, err := bbolt.Open(filepath.Join(dir, bolt.DBFile), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bbolt.Tx) error {
		if err := tx.Bucket([]byte("records")).Delete(bolt.RecordKey(tx, r.ID)); err != nil {
			return err
		}
		// The two changes share the block at seq 1: keep the first.
		b := tx.Bucket([]byte("changes"))
		first := []byte{0, 0, 0, 0, 0, 0, 0, 1}
		entries := feedBlock(t, b.Get(first))
		if len(entries) != 2 {
			return fmt.Errorf("the feed's block holds %d entries, want 2", len(entries))
		}
		return b.Put(first, append([]byte{0xFE, byte(len(entries[0]))}, entries[0]...))
	})
	_ = db.Close()
	if err != nil {
		t.Fatal(err)
	}
	e = openStore(t, dir, bolt.Options{})
	rep, err := e.Check(ctx, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	if d := disagreements(rep)["change feed"]; d < 2 {
		t.Fatalf("the change feed check found %d disagreements, want the gap and the lost removal: %+v", d, rep.Checks)
	}
}

// feedKillChild writes until it is killed: store_many batches, forgets by
// ids and approvals, printing each operation's changes before it starts
// ("? op id...") and once it is acknowledged ("! op id...").
func feedKillChild(dir string, round int) {
	ctx := context.Background()
	e, err := bolt.Open(dir, bolt.Options{})
	if err != nil {
		fmt.Println("ERR", err)
		os.Exit(2)
	}
	w := bufio.NewWriter(os.Stdout)
	say := func(mark string, op contract.ChangeOp, ids []string) {
		fmt.Fprintf(w, "%s %s %s\n", mark, op, strings.Join(ids, " "))
		_ = w.Flush()
	}
	var batches [][]string
	for b := 0; ; b++ {
		items := make([]contract.StoreItem, 10)
		ids := make([]string, len(items))
		for j := range items {
			items[j] = contract.Document(fmt.Sprintf("feed crash round %d batch %d item %d", round, b, j),
				contract.MemoryMeta{Namespace: contract.MustNamespace("team:kill")})
			ids[j] = items[j].Fingerprint()
		}
		opts := contract.WriteOptions{}
		if b%2 == 1 {
			opts.Status = contract.StatusCandidate
		}
		say("?", contract.OpStore, ids)
		if _, err := e.StoreManyWith(ctx, items, opts); err != nil {
			fmt.Println("ERR", err)
			os.Exit(2)
		}
		say("!", contract.OpStore, ids)
		batches = append(batches, ids)
		if b%2 == 1 {
			say("?", contract.OpApprove, ids[:1])
			if _, err := e.Review(ctx, contract.ReviewRequest{ID: ids[0], Action: contract.ReviewApprove}); err != nil {
				fmt.Println("ERR", err)
				os.Exit(2)
			}
			say("!", contract.OpApprove, ids[:1])
		}
		if b%3 == 2 {
			gone := batches[b-2][1:]
			say("?", contract.OpForget, gone)
			if _, err := e.Forget(ctx, contract.ForgetIDs(gone...)); err != nil {
				fmt.Println("ERR", err)
				os.Exit(2)
			}
			say("!", contract.OpForget, gone)
		}
	}
}

// TestKilledWriterFeedHoldsExactlyTheAcknowledged kills (SIGKILL) a writer at
// random points, round after round on one store, and checks after each
// reopen that the feed holds every acknowledged change once, in order, with
// no gap, plus at most the one operation under way when the process died,
// whole or not at all.
func TestKilledWriterFeedHoldsExactlyTheAcknowledged(t *testing.T) {
	if dir := os.Getenv("MNEMO_FEED_KILL_DIR"); dir != "" {
		round, _ := strconv.Atoi(os.Getenv("MNEMO_FEED_KILL_ROUND"))
		feedKillChild(dir, round)
		return
	}
	ctx := context.Background()
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(3, 5))
	var acked []string // "op id", in order
	for round := range 4 {
		cmd := exec.Command(os.Args[0], "-test.run=^TestKilledWriterFeedHoldsExactlyTheAcknowledged$")
		cmd.Env = append(os.Environ(), "MNEMO_FEED_KILL_DIR="+dir, "MNEMO_FEED_KILL_ROUND="+strconv.Itoa(round))
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		killAfter := 10 + rng.IntN(120)
		var pending []string
		lines := 0
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			f := strings.Fields(sc.Text())
			if f[0] == "ERR" {
				t.Fatalf("child: %s", sc.Text())
			}
			var expanded []string
			for _, id := range f[2:] {
				expanded = append(expanded, f[1]+" "+id)
			}
			if f[0] == "?" {
				pending = expanded
			} else {
				acked = append(acked, expanded...)
				pending = nil
			}
			if lines++; lines == killAfter {
				_ = cmd.Process.Signal(syscall.SIGKILL)
			}
		}
		_ = cmd.Wait()

		e := openStore(t, dir, bolt.Options{})
		var feed []string
		var since uint64
		for {
			p, err := e.Changes(ctx, contract.ChangesRequest{Since: since, Limit: contract.MaxChangesLimit})
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range p.Changes {
				if c.Seq != since+1 {
					t.Fatalf("round %d: the feed goes from seq %d to %d", round, since, c.Seq)
				}
				since = c.Seq
				feed = append(feed, string(c.Op)+" "+c.ID)
			}
			if p.Next == p.Head {
				break
			}
		}
		if len(feed) < len(acked) || strings.Join(feed[:len(acked)], ",") != strings.Join(acked, ",") {
			t.Fatalf("round %d: the feed's %d changes do not start with the %d acknowledged", round, len(feed), len(acked))
		}
		extra := feed[len(acked):]
		switch {
		case len(extra) == 0:
		case strings.Join(extra, ",") == strings.Join(pending, ","):
			acked = append(acked, pending...) // it committed before the kill
		default:
			t.Fatalf("round %d: after the acknowledged changes the feed holds %v; want nothing or the whole operation under way %v", round, extra, pending)
		}
		rep, err := e.Check(ctx, false, nil)
		if err != nil || !rep.Consistent {
			t.Fatalf("round %d: check: %v %+v", round, err, rep.Checks)
		}
		if err := e.Close(); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("%d changes acknowledged over 4 kills", len(acked))
}

// TestChangesUnderConcurrentWriters: writers storing and forgetting at once
// while followers long-poll; each follower sees every seq once, in order.
func TestChangesUnderConcurrentWriters(t *testing.T) {
	ctx := context.Background()
	e := openStore(t, t.TempDir(), bolt.Options{})
	const writers, each = 4, 40
	total := writers * (each + each/4)
	var wg sync.WaitGroup
	follow := func() error {
		var since uint64
		for n := 0; n < total; {
			p, err := e.Changes(ctx, contract.ChangesRequest{Since: since, Limit: 9, Wait: 5 * time.Second})
			if err != nil {
				return err
			}
			if len(p.Changes) == 0 {
				return fmt.Errorf("a follower waited 5s for nothing at seq %d of %d", since, total)
			}
			for _, c := range p.Changes {
				if c.Seq != since+1 {
					return fmt.Errorf("a follower saw seq %d after %d", c.Seq, since)
				}
				since = c.Seq
				n++
			}
		}
		return nil
	}
	errs := make(chan error, 3)
	for range 3 {
		go func() { errs <- follow() }()
	}
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				it := contract.Document(fmt.Sprintf("writer %d item %d", w, i), contract.MemoryMeta{})
				if _, err := e.StoreWith(ctx, it, contract.WriteOptions{Wait: contract.WaitAccepted}); err != nil {
					t.Error(err)
					return
				}
				if i%4 == 3 {
					if _, err := e.Forget(ctx, contract.ForgetIDs(it.Fingerprint())); err != nil {
						t.Error(err)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	for range 3 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}

// TestChangesSharedFollowTheRecord: readers share the changes near the head
// (changes.go's cache), yet a change's record is always the record as it is
// when the feed is read: approving, superseding or forgetting a record shows
// on the changes already read by others.
func TestChangesSharedFollowTheRecord(t *testing.T) {
	ctx := context.Background()
	e := openStore(t, t.TempDir(), bolt.Options{})
	x := contract.Document("a candidate to approve", contract.MemoryMeta{})
	y := contract.Document("a record superseded later", contract.MemoryMeta{})
	if _, err := e.StoreManyWith(ctx, []contract.StoreItem{x}, contract.WriteOptions{Status: contract.StatusCandidate, Wait: contract.WaitAccepted}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.StoreWith(ctx, y, contract.WriteOptions{Wait: contract.WaitAccepted}); err != nil {
		t.Fatal(err)
	}
	read := func() map[string]*contract.Record {
		t.Helper()
		var first map[string]*contract.Record
		for range 3 { // three readers of the same page agree
			p, err := e.Changes(ctx, contract.ChangesRequest{Limit: 100})
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]*contract.Record{}
			for _, c := range p.Changes {
				if c.Op == contract.OpStore {
					got[c.ID] = c.Record
				}
			}
			if first == nil {
				first = got
			}
		}
		return first
	}
	if got := read(); got[x.Fingerprint()] == nil || got[x.Fingerprint()].Status != contract.StatusCandidate {
		t.Fatalf("x before the review: %+v", got[x.Fingerprint()])
	}
	if _, err := e.Review(ctx, contract.ReviewRequest{ID: x.Fingerprint(), Action: contract.ReviewApprove}); err != nil {
		t.Fatal(err)
	}
	if got := read(); got[x.Fingerprint()].Status != contract.StatusActive {
		t.Fatalf("x's store change after the approve shows %s", got[x.Fingerprint()].Status)
	}
	if _, err := e.Supersede(ctx, contract.SupersedeRequest{ID: y.Fingerprint(), By: x.Fingerprint()}); err != nil {
		t.Fatal(err)
	}
	if got := read(); got[y.Fingerprint()].Status != contract.StatusSuperseded || got[y.Fingerprint()].SupersededBy == nil || *got[y.Fingerprint()].SupersededBy != x.Fingerprint() {
		t.Fatalf("y's store change after the supersede shows %+v", got[y.Fingerprint()])
	}
	if _, err := e.Forget(ctx, contract.ForgetIDs(x.Fingerprint())); err != nil {
		t.Fatal(err)
	}
	if got := read(); got[x.Fingerprint()] != nil {
		t.Fatalf("x's store change carries the record after its forget: %+v", got[x.Fingerprint()])
	}
	// Stored again after its forget: its first store change has it again.
	if _, err := e.StoreWith(ctx, x, contract.WriteOptions{Wait: contract.WaitAccepted}); err != nil {
		t.Fatal(err)
	}
	if got := read(); got[x.Fingerprint()] == nil || got[x.Fingerprint()].Status != contract.StatusActive {
		t.Fatalf("x stored again: %+v", got[x.Fingerprint()])
	}
}

// TestChangesSharedUnderConcurrentReviews: while writers store candidates
// and approve or forget them, followers read the feed; within one page every
// change of a record carries the same record (one snapshot's), and none
// after its removal in that page.
func TestChangesSharedUnderConcurrentReviews(t *testing.T) {
	ctx := context.Background()
	e := openStore(t, t.TempDir(), bolt.Options{})
	const writers, each = 3, 40
	var wg sync.WaitGroup
	done := make(chan struct{})
	errs := make(chan error, 4)
	for range 4 {
		go func() {
			var since uint64
			for {
				select {
				case <-done:
					errs <- nil
					return
				default:
				}
				p, err := e.Changes(ctx, contract.ChangesRequest{Since: since, Limit: 50, Wait: 20 * time.Millisecond})
				if err != nil {
					errs <- err
					return
				}
				if err := samePageSameRecord(p); err != nil {
					errs <- err
					return
				}
				// Read the same page again from where it began, now and then.
				if len(p.Changes) > 0 && p.Next%3 != 0 {
					since = p.Next
				}
			}
		}()
	}
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				it := contract.Document(fmt.Sprintf("writer %d candidate %d", w, i), contract.MemoryMeta{})
				if _, err := e.StoreManyWith(ctx, []contract.StoreItem{it}, contract.WriteOptions{Status: contract.StatusCandidate, Wait: contract.WaitAccepted}); err != nil {
					t.Error(err)
					return
				}
				var err error
				if i%2 == 0 {
					_, err = e.Review(ctx, contract.ReviewRequest{ID: it.Fingerprint(), Action: contract.ReviewApprove})
				}
				if err == nil && i%3 == 0 {
					_, err = e.Forget(ctx, contract.ForgetIDs(it.Fingerprint()))
				}
				if err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(done)
	for range 4 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}

// samePageSameRecord: every change but a removal attaches the record as the
// read's snapshot has it, so within one page all of a record's changes that
// are not removals carry the same record (or none), and removals none.
func samePageSameRecord(p contract.ChangesPage) error {
	type state struct {
		has    bool
		status contract.Status
	}
	first := map[string]state{}
	for _, c := range p.Changes {
		if c.Op.Removes() {
			if c.Record != nil {
				return fmt.Errorf("seq %d, a %s, carries its record", c.Seq, c.Op)
			}
			continue
		}
		now := state{has: c.Record != nil}
		if c.Record != nil {
			now.status = c.Record.Status
		}
		if s, ok := first[c.ID]; ok && s != now {
			return fmt.Errorf("seq %d of %s shows the record %+v, an earlier change of it in the same page %+v", c.Seq, c.ID, now, s)
		}
		first[c.ID] = now
	}
	return nil
}
