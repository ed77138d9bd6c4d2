package feed

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	bbolt "go.etcd.io/bbolt"

	"mnemo/contract"
)

var testCodes = StatusCodes{
	Code: func(s contract.Status) uint8 {
		return uint8(slices.Index([]contract.Status{contract.StatusCandidate, contract.StatusActive, contract.StatusSuperseded}, s))
	},
	ByCode: []contract.Status{contract.StatusCandidate, contract.StatusActive, contract.StatusSuperseded},
}

var metaBucket = []byte("meta")

// open makes a real bbolt file with the feed's and a meta bucket, and a
// feed loaded from it with retention r.
func open(t *testing.T, r contract.ChangeRetention) (*bbolt.DB, *Feed) {
	t.Helper()
	db, err := bbolt.Open(filepath.Join(t.TempDir(), "feed.db"), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	f := &Feed{}
	if err := db.Update(func(tx *bbolt.Tx) error {
		meta, err := tx.CreateBucketIfNotExists(metaBucket)
		if err != nil {
			return err
		}
		for _, b := range [][]byte{Bucket, NSBucket} {
			if _, err := tx.CreateBucketIfNotExists(b); err != nil {
				return err
			}
		}
		f.Load(meta, r, testCodes)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return db, f
}

func logged(t *testing.T, db *bbolt.DB, f *Feed, at time.Time, cs ...Change) {
	t.Helper()
	var seq uint64
	if err := db.Update(func(tx *bbolt.Tx) error {
		var err error
		seq, err = f.Log(tx, tx.Bucket(metaBucket), at.UnixMilli(), cs)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	f.Committed(seq)
	f.Wake()
}

func read(t *testing.T, db *bbolt.DB, f *Feed, since uint64, reach *contract.Reach) (contract.ChangesPage, error) {
	t.Helper()
	var page contract.ChangesPage
	err := db.View(func(tx *bbolt.Tx) error {
		var err error
		page, err = f.Read(tx, tx.Bucket(metaBucket), since, 100, reach, false, func(id string) (*contract.Record, error) {
			return &contract.Record{ID: id, Text: "now " + id}, nil
		})
		return err
	})
	return page, err
}

// Changes logged in a transaction read back in order, as written, each with
// the record as it is now unless the change removed it; a reach leaves out
// what it does not admit; a wait is woken by the commit.
func TestLogAndRead(t *testing.T) {
	db, f := open(t, contract.DefaultChangeRetention())
	at := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	wait := f.Signal()()
	logged(t, db, f, at,
		Change{Op: contract.OpStore, ID: "a", NS: contract.MustNamespace("team:acme"), Status: contract.StatusActive},
		Change{Op: contract.OpStore, ID: "b", NS: contract.MustNamespace("user:kim"), Status: contract.StatusCandidate})
	select {
	case <-wait:
	default:
		t.Fatal("a reader waiting at the head was not woken by the commit")
	}
	logged(t, db, f, at.Add(time.Minute), Change{Op: contract.OpForget, ID: "a", NS: contract.MustNamespace("team:acme"), Status: contract.StatusActive})
	if f.Head() != 3 || f.Seq() != 3 {
		t.Fatalf("head %d seq %d, want 3", f.Head(), f.Seq())
	}
	page, err := read(t, db, f, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range page.Changes {
		rec := "-"
		if c.Record != nil {
			rec = c.Record.Text
		}
		got = append(got, strings.Join([]string{string(c.Op), c.ID, c.Namespace.String(), string(c.Status), c.At.Format(time.TimeOnly), rec}, " "))
	}
	want := []string{"store a team:acme active 09:00:00 now a", "store b user:kim candidate 09:00:00 now b", "forget a team:acme active 09:01:00 -"}
	if !slices.Equal(got, want) || page.Next != 3 || page.Head != 3 {
		t.Fatalf("read %q (next %d, head %d), want %q", got, page.Next, page.Head, want)
	}
	kim := contract.ReachOf(contract.MustNamespace("user:kim"))
	page, err = read(t, db, f, 0, &kim)
	if err != nil || len(page.Changes) != 1 || page.Changes[0].ID != "b" || page.Next != 3 {
		t.Fatalf("read under user:kim: %+v, %v; want b alone, next 3", page, err)
	}
	if _, err := read(t, db, f, 4, nil); contract.KindOf(err) != contract.KindExpired {
		t.Fatalf("a since past the head: %v, want expired", err)
	}
}

// Entries past the retention are pruned by later writes, a since older
// than what is kept is refused, and the whole feed still verifies.
func TestPruneAndVerify(t *testing.T) {
	db, f := open(t, contract.ChangeRetention{MaxAge: time.Hour, MaxChanges: 2})
	at := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	for i := range 5 {
		logged(t, db, f, at.Add(time.Duration(i)*2*time.Hour), Change{Op: contract.OpStore, ID: string(rune('a' + i)), NS: contract.Root(), Status: contract.StatusActive})
	}
	if f.Pruned() != 3 {
		t.Fatalf("pruned through %d, want 3 (every entry over an hour old, two kept behind the head)", f.Pruned())
	}
	if _, err := read(t, db, f, 1, nil); contract.KindOf(err) != contract.KindExpired {
		t.Fatalf("since 1 after pruning: %v, want expired", err)
	}
	var faults []string
	_ = db.View(func(tx *bbolt.Tx) error {
		n, last := f.Verify(tx, tx.Bucket(metaBucket), nsOf, func(format string, args ...any) {
			faults = append(faults, format)
		})
		if n != 2 || len(last) != 2 || last["e"].Seq != 5 {
			t.Errorf("verified %d entries, last %v; want 2, e at 5", n, last)
		}
		return nil
	})
	if len(faults) > 0 {
		t.Fatalf("a sound feed verifies with faults %q", faults)
	}
}

// Decode refuses what is not an entry, saying why: a long entry (the form
// every entry had before schema 9) and a compact one.
func TestDecodeRefusesBrokenEntries(t *testing.T) {
	db, f := open(t, contract.DefaultChangeRetention())
	_ = db.Update(func(tx *bbolt.Tx) error {
		codes := map[string]uint64{}
		long, err := f.encode(nil, codes, &Change{Op: contract.OpStore, ID: "abc", NS: contract.MustNamespace("team:acme"), Status: contract.StatusActive}, 42)
		if err != nil {
			t.Fatal(err)
		}
		compact, err := f.encode(tx.Bucket(NSBucket), codes, &Change{Op: contract.OpStore, ID: fingerprint(1), NS: contract.MustNamespace("team:acme"), Status: contract.StatusActive}, 42)
		if err != nil {
			t.Fatal(err)
		}
		if en, err := f.Decode(tx, long, nsOf); err != nil || en.ID != "abc" || en.At != 42 || en.NS.String() != "team:acme" {
			t.Fatalf("long decode = %+v, %v", en, err)
		}
		if en, err := f.Decode(tx, compact, nsOf); err != nil || en.ID != fingerprint(1) || en.At != 42 || en.NS.String() != "team:acme" {
			t.Fatalf("compact decode = %+v, %v", en, err)
		}
		for name, v := range map[string][]byte{
			"short":      long[:5],
			"bad status": append([]byte{long[0], 9}, long[2:]...),
			"id too long": func() []byte {
				b := slices.Clone(long)
				b[10] = 200
				return b
			}(),
			"compact, cut in its id":        compact[:20],
			"compact, without its code":     compact[:len(compact)-1],
			"compact, an unknown code":      append(slices.Clone(compact[:len(compact)-1]), 9),
			"compact, bytes after its code": append(slices.Clone(compact), 1),
		} {
			if _, err := f.Decode(tx, v, nsOf); err == nil {
				t.Errorf("%s: decoded", name)
			}
		}
		return nil
	})
}

func fingerprint(i int) string { return fmt.Sprintf("%040x", i*7919+0xabc) }

// A store's own ids are fingerprints: their entries are compact (the id as
// its 20 bytes, the namespace as a code), kept in blocks of about forty
// under one key, each without the prefix it shares with the one before, read back exactly, also by a feed that has never seen the
// codes (another process), beside long entries a store written before
// schema 9 holds.
func TestFingerprintEntriesAreCompact(t *testing.T) {
	db, f := open(t, contract.DefaultChangeRetention())
	at := time.Date(2026, 12, 7, 9, 0, 0, 0, time.UTC)
	agent := contract.MustNamespace("team:acme/agent:researcher")
	logged(t, db, f, at, Change{Op: contract.OpStore, ID: "old-form-id", NS: agent, Status: contract.StatusActive})
	var cs []Change
	for i := range 300 {
		ns := []contract.Namespace{contract.Root(), agent, contract.MustNamespace("user:kim")}[i%3]
		cs = append(cs, Change{Op: contract.OpStore, ID: fingerprint(i), NS: ns, Status: contract.StatusCandidate})
	}
	logged(t, db, f, at, cs[:100]...)
	logged(t, db, f, at.Add(time.Second), cs[100:]...)
	logged(t, db, f, at.Add(time.Minute), Change{Op: contract.OpForget, ID: fingerprint(4), NS: agent, Status: contract.StatusCandidate})
	_ = db.View(func(tx *bbolt.Tx) error {
		// The entries are in blocks of about forty, the compact ones (2 to
		// 302) 32 bytes each, of which a block keeps what the entry before
		// does not share: the id and the namespace's code, 21 bytes, and two
		// of lengths.
		var sizes []int
		keys, blockBytesUsed := 0, 0
		_ = tx.Bucket(Bucket).ForEach(func(k, v []byte) error {
			keys++
			if u64(k) > 1 && (v[0] != prefixBlockMark || len(v) > blockBytes) {
				t.Errorf("the value at seq %d is not a block of at most %d bytes", u64(k), blockBytes)
			}
			if u64(k) > 1 {
				blockBytesUsed += len(v)
			}
			return eachEntry(k, v, func(seq uint64, e []byte) bool {
				if seq > 1 {
					sizes = append(sizes, len(e))
				}
				return true
			})
		})
		if len(sizes) != 301 || slices.Max(sizes) != 11+idBytes+1 || slices.Min(sizes) != 11+idBytes+1 {
			t.Errorf("%d compact entries of %d to %d bytes, want 301 of %d", len(sizes), slices.Min(sizes), slices.Max(sizes), 11+idBytes+1)
		}
		if want := 2 + 301/36; keys > want {
			t.Errorf("the feed takes %d keys, want at most %d (blocks of about %d entries)", keys, want, blockBytes/24)
		}
		if want := 301*24 + keys*40; blockBytesUsed > want {
			t.Errorf("the blocks take %d bytes for 301 entries, want at most %d", blockBytesUsed, want)
		}
		codes := 0
		_ = tx.Bucket(NSBucket).ForEach(func(k, _ []byte) error {
			codes++
			return nil
		})
		if codes != 4 {
			t.Errorf("the namespaces' codes take %d keys, want 4 (two namespaces, both ways; the root has none)", codes)
		}
		return nil
	})
	for _, reader := range []*Feed{f, {codes: testCodes}} {
		var got []string
		_ = db.View(func(tx *bbolt.Tx) error {
			return reader.Scan(tx, 0, nsOf, func(seq uint64, en Entry) (bool, error) {
				got = append(got, fmt.Sprint(seq, en.Op, en.ID, en.NS.String(), en.Status))
				return true, nil
			})
		})
		want := []string{fmt.Sprint(1, contract.OpStore, "old-form-id", agent.String(), contract.StatusActive)}
		for i, c := range cs {
			want = append(want, fmt.Sprint(i+2, c.Op, c.ID, c.NS.String(), c.Status))
		}
		want = append(want, fmt.Sprint(302, contract.OpForget, fingerprint(4), agent.String(), contract.StatusCandidate))
		if !slices.Equal(got, want) {
			t.Fatalf("scanned %d entries %q..., want %d %q...", len(got), got[:min(3, len(got))], len(want), want[:3])
		}
	}
	kim := contract.ReachOf(contract.MustNamespace("user:kim"))
	page, err := read(t, db, f, 0, &kim)
	if err != nil || len(page.Changes) != 100 || page.Changes[1].ID != fingerprint(2) || page.Changes[1].Namespace.String() != "user:kim" ||
		!page.Changes[0].Namespace.IsRoot() {
		t.Fatalf("read under user:kim: %d changes, the first two %+v, %v; want the root's %s, then %s", len(page.Changes), page.Changes[:2], err, fingerprint(0), fingerprint(2))
	}
	var faults []string
	_ = db.View(func(tx *bbolt.Tx) error {
		n, last := f.Verify(tx, tx.Bucket(metaBucket), nsOf, func(format string, args ...any) { faults = append(faults, format) })
		if n != 302 || !last[fingerprint(4)].Removed {
			t.Errorf("verified %d entries, last of %s %+v; want 302, removed", n, fingerprint(4), last[fingerprint(4)])
		}
		return nil
	})
	if len(faults) > 0 {
		t.Fatalf("faults %q", faults)
	}
}

func nsOf(s string) contract.Namespace {
	ns, err := contract.ParseNamespace(s)
	if err != nil {
		return contract.Root()
	}
	return ns
}

// legacyEntries writes n entries after the feed's head as schema 11 and
// earlier wrote them, each under its own key, and moves the head past them.
func legacyEntries(t *testing.T, db *bbolt.DB, f *Feed, at time.Time, n int) {
	t.Helper()
	if err := db.Update(func(tx *bbolt.Tx) error {
		codes := map[string]uint64{}
		for range n {
			f.seq++
			v, err := f.encode(tx.Bucket(NSBucket), codes, &Change{Op: contract.OpStore, ID: fingerprint(int(f.seq)), NS: contract.Root(), Status: contract.StatusActive}, at.UnixMilli())
			if err != nil {
				return err
			}
			if err := tx.Bucket(Bucket).Put(key(f.seq), v); err != nil {
				return err
			}
		}
		return tx.Bucket(metaBucket).Put(keySeq, key(f.seq))
	}); err != nil {
		t.Fatal(err)
	}
	f.head.Store(f.seq)
}

// asWholeBlocks rewrites every block of shared prefixes in the feed as a
// block of whole entries, as schema 12 wrote them.
func asWholeBlocks(t *testing.T, db *bbolt.DB) {
	t.Helper()
	if err := db.Update(func(tx *bbolt.Tx) error {
		b := tx.Bucket(Bucket)
		var keys, blocks [][]byte
		err := b.ForEach(func(k, v []byte) error {
			if len(v) == 0 || v[0] != prefixBlockMark {
				return nil
			}
			whole := []byte{blockMark}
			if err := eachEntry(k, v, func(_ uint64, e []byte) bool {
				whole = append(binary.AppendUvarint(whole, uint64(len(e))), e...)
				return true
			}); err != nil {
				return err
			}
			keys, blocks = append(keys, slices.Clone(k)), append(blocks, whole)
			return nil
		})
		if err != nil {
			return err
		}
		for i, k := range keys {
			if err := b.Put(k, blocks[i]); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// Blocks read from any position: after entries of a key each (as schema
// 11 wrote them), blocks of whole entries (as schema 12 wrote them) and
// transactions of one to forty changes, a millisecond apart, a scan from
// every since gives exactly the entries after it, and paging through
// reads (seven at a time, so pages end inside blocks) gives all of them.
// Pruning lets go exactly the entries retention allows, whole blocks and
// the first part of one, and the feed still verifies without a gap.
func TestBlocksReadFromAnySince(t *testing.T) {
	db, f := open(t, contract.ChangeRetention{MaxAge: time.Minute, MaxChanges: 1})
	at := time.Date(2026, 12, 7, 9, 0, 0, 0, time.UTC)
	rng := rand.New(rand.NewPCG(20, 12))
	legacyEntries(t, db, f, at, 5)
	for f.seq < 400 {
		cs := make([]Change, 1+rng.IntN(40))
		for i := range cs {
			cs[i] = Change{Op: contract.OpStore, ID: fingerprint(int(f.seq) + i + 1), NS: contract.Root(), Status: contract.StatusActive}
		}
		logged(t, db, f, at.Add(time.Duration(f.seq)*time.Millisecond), cs...)
		if f.seq < 100 {
			asWholeBlocks(t, db)
		}
	}
	head := f.seq
	scanned := func(since uint64) []uint64 {
		var got []uint64
		_ = db.View(func(tx *bbolt.Tx) error {
			return f.Scan(tx, since, nsOf, func(seq uint64, en Entry) (bool, error) {
				if en.ID != fingerprint(int(seq)) {
					t.Fatalf("seq %d holds %s, want %s", seq, en.ID, fingerprint(int(seq)))
				}
				got = append(got, seq)
				return true, nil
			})
		})
		return got
	}
	for since := uint64(0); since <= head; since++ {
		got := scanned(since)
		if uint64(len(got)) != head-since || (len(got) > 0 && (got[0] != since+1 || got[len(got)-1] != head)) {
			t.Fatalf("a scan after %d gave %d entries (%v...), want %d..%d", since, len(got), got[:min(3, len(got))], since+1, head)
		}
	}
	var paged []uint64
	for since := uint64(0); since < head; {
		var page contract.ChangesPage
		if err := db.View(func(tx *bbolt.Tx) error {
			var err error
			page, err = f.Read(tx, tx.Bucket(metaBucket), since, 7, nil, false, func(id string) (*contract.Record, error) { return nil, nil })
			return err
		}); err != nil {
			t.Fatal(err)
		}
		for _, c := range page.Changes {
			paged = append(paged, c.Seq)
		}
		if page.Next <= since {
			t.Fatalf("a read after %d moved nowhere", since)
		}
		since = page.Next
	}
	if uint64(len(paged)) != head || paged[0] != 1 || !slices.IsSorted(paged) {
		t.Fatalf("paging read %d entries, want %d in order", len(paged), head)
	}

	// Everything but the head is a minute old by now: a write lets go up
	// to pruneBatch entries, whole blocks and then the head of one.
	logged(t, db, f, at.Add(2*time.Minute), Change{Op: contract.OpForget, ID: fingerprint(int(head) + 1), NS: contract.Root(), Status: contract.StatusActive})
	if f.Pruned() != head {
		t.Fatalf("pruned through %d, want %d (every entry older than a minute, the new one kept)", f.Pruned(), head)
	}
	if got := scanned(head); len(got) != 1 || got[0] != head+1 {
		t.Fatalf("after pruning, the scan from %d gave %v", head, got)
	}
	var faults []string
	_ = db.View(func(tx *bbolt.Tx) error {
		if n, _ := f.Verify(tx, tx.Bucket(metaBucket), nsOf, func(format string, args ...any) { faults = append(faults, fmt.Sprintf(format, args...)) }); n != 1 {
			t.Errorf("verified %d entries, want 1", n)
		}
		return nil
	})
	if len(faults) > 0 {
		t.Fatalf("faults %q", faults)
	}
}

// A block is pruned in part: retention that keeps the newest entries of
// the oldest block lets the older ones go and keeps the rest, readable, in
// a block of its own, of the same kind: a block of shared prefixes keeps
// its first entry whole (its prefix was the pruned entry's), a block of
// whole entries (schema 12) its entries as they are.
func TestPruneKeepsTheRestOfABlock(t *testing.T) {
	for _, whole := range []bool{false, true} {
		t.Run(fmt.Sprintf("whole=%v", whole), func(t *testing.T) {
			db, f := open(t, contract.ChangeRetention{MaxAge: time.Minute, MaxChanges: 1})
			at := time.Date(2026, 12, 7, 9, 0, 0, 0, time.UTC)
			var cs []Change
			for i := range 20 {
				cs = append(cs, Change{Op: contract.OpStore, ID: fingerprint(i + 1), NS: contract.Root(), Status: contract.StatusActive})
			}
			logged(t, db, f, at, cs[:10]...)
			logged(t, db, f, at.Add(30*time.Second), cs[10:]...)
			if f.Pruned() != 0 {
				t.Fatalf("pruned %d before any entry was a minute old", f.Pruned())
			}
			if whole {
				asWholeBlocks(t, db)
			}
			// 75 s on, the first ten are past retention; the next ten, in the
			// same block, are not.
			logged(t, db, f, at.Add(75*time.Second), Change{Op: contract.OpForget, ID: fingerprint(1), NS: contract.Root(), Status: contract.StatusActive})
			if f.Pruned() != 10 {
				t.Fatalf("pruned through %d, want 10: the first transaction's entries, in the same block as the next ones", f.Pruned())
			}
			mark := byte(prefixBlockMark)
			if whole {
				mark = blockMark
			}
			_ = db.View(func(tx *bbolt.Tx) error {
				k, v := tx.Bucket(Bucket).Cursor().First()
				if u64(k) != 11 || v[0] != mark {
					t.Errorf("the first block is at seq %d of mark %x, want 11 of %x", u64(k), v[0], mark)
				}
				return nil
			})
			page, err := read(t, db, f, 10, nil)
			if err != nil || len(page.Changes) != 11 || page.Changes[0].Seq != 11 || page.Changes[10].Op != contract.OpForget {
				t.Fatalf("read after 10: %d changes, %v", len(page.Changes), err)
			}
			for i, c := range page.Changes[:10] {
				if c.ID != fingerprint(11+i) || !c.At.Equal(at.Add(30*time.Second)) {
					t.Fatalf("change %d reads %s at %v", c.Seq, c.ID, c.At)
				}
			}
		})
	}
}

// eachEntry never reads past a value, whatever its bytes: no entry is
// longer than the value, a block holds no more entries than it has bytes,
// and what pruning keeps of a block (its first half let go) reads back as
// the entries it kept.
func FuzzEachEntry(f *testing.F) {
	f.Add([]byte{blockMark, 3, 1, 2, 3, 1, 9})
	f.Add([]byte{blockMark, 200})
	f.Add([]byte{prefixBlockMark, 0, 3, 1, 2, 3, 2, 1, 9, 1, 1, 7})
	f.Add([]byte{prefixBlockMark, 0, 2, 1, 2, 5, 1, 9})
	f.Add([]byte{1, 2, 3})
	f.Fuzz(func(t *testing.T, v []byte) {
		var all [][]byte
		err := eachEntry(key(1), v, func(_ uint64, e []byte) bool {
			if len(e) > len(v) {
				t.Fatalf("an entry of %d bytes in a value of %d", len(e), len(v))
			}
			all = append(all, slices.Clone(e))
			return true
		})
		if len(all) > len(v)+1 {
			t.Fatalf("%d entries in a value of %d bytes", len(all), len(v))
		}
		upto, rest, perr := prunablePrefix(key(1), v, func(seq uint64, _ []byte) bool { return seq <= uint64(len(all)/2) })
		if err != nil || perr != nil || rest == nil {
			return
		}
		var kept [][]byte
		if err := eachEntry(key(upto+1), rest, func(_ uint64, e []byte) bool { kept = append(kept, slices.Clone(e)); return true }); err != nil {
			t.Fatalf("the rest of a block does not read: %v", err)
		}
		if want := all[upto:]; len(kept) != len(want) || !slices.EqualFunc(kept, want, bytes.Equal) {
			t.Fatalf("the rest of a block reads %q, want %q", kept, want)
		}
	})
}

// A block cut short is an error for a read and a scan that reach it,
// naming its seq, and a fault for Verify; the entries before the cut
// still read.
func TestACutBlockIsAnError(t *testing.T) {
	db, f := open(t, contract.DefaultChangeRetention())
	at := time.Date(2026, 12, 7, 9, 0, 0, 0, time.UTC)
	var cs []Change
	for i := range 5 {
		cs = append(cs, Change{Op: contract.OpStore, ID: fingerprint(i + 1), NS: contract.Root(), Status: contract.StatusActive})
	}
	logged(t, db, f, at, cs...)
	if err := db.Update(func(tx *bbolt.Tx) error {
		b := tx.Bucket(Bucket)
		v := b.Get(key(1))
		return b.Put(key(1), slices.Clone(v[:len(v)-3]))
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := read(t, db, f, 0, nil); err == nil || !strings.Contains(err.Error(), "the block of changes at seq 1") {
		t.Errorf("a read over the cut block: %v", err)
	}
	var seen []uint64
	err := db.View(func(tx *bbolt.Tx) error {
		return f.Scan(tx, 0, nsOf, func(seq uint64, _ Entry) (bool, error) { seen = append(seen, seq); return true, nil })
	})
	if err == nil || !slices.Equal(seen, []uint64{1, 2, 3, 4}) {
		t.Errorf("a scan over the cut block saw %v, %v; want 1 to 4 and an error", seen, err)
	}
	var faults []string
	_ = db.View(func(tx *bbolt.Tx) error {
		f.Verify(tx, tx.Bucket(metaBucket), nsOf, func(format string, args ...any) { faults = append(faults, fmt.Sprintf(format, args...)) })
		return nil
	})
	if len(faults) == 0 {
		t.Error("Verify found no fault in a cut block")
	}
}
