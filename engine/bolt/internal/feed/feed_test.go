package feed

import (
	"fmt"
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
// its 20 bytes, the namespace as a code), read back exactly, also by a feed
// that has never seen the codes (another process), beside long entries a
// store written before schema 9 holds.
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
		v := tx.Bucket(Bucket).Get(key(3))
		if len(v) != 11+idBytes+1 {
			t.Errorf("a fingerprint's entry takes %d bytes, want %d", len(v), 11+idBytes+1)
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
