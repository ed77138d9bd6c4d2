package bolt_test

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"mnemo/contract"
	"mnemo/engine/bolt"
)

// tableView is what the table answers: every facet's root explore and the
// first browse page under a few orders and filters.
func tableView(t *testing.T, e *bolt.Engine) string {
	t.Helper()
	ctx := context.Background()
	out := map[string]any{}
	for _, f := range contract.Facets() {
		page, err := e.Explore(ctx, contract.ExploreRequest{Facet: f, Limit: contract.MaxBuckets})
		if err != nil {
			t.Fatal(err)
		}
		out["explore "+string(f)] = page
		narrowed, err := e.Explore(ctx, contract.ExploreRequest{Facet: f, Limit: 20,
			Filter: contract.MetaFilter{Kinds: []contract.ItemKind{contract.KindLearning}}})
		if err != nil {
			t.Fatal(err)
		}
		out["explore learning "+string(f)] = narrowed
		for _, at := range []string{"team:acme", "team:globex"} {
			reach := contract.ReachSubtree(contract.MustNamespace(at))
			within, err := e.Explore(ctx, contract.ExploreRequest{Facet: f, Limit: 50, Filter: contract.MetaFilter{Reach: &reach}})
			if err != nil {
				t.Fatal(err)
			}
			out["explore "+at+" "+string(f)] = within
		}
	}
	for i, q := range []contract.BrowseQuery{
		{Limit: 100},
		{Limit: 100, OrderBy: []contract.SortKey{{Field: contract.BrowseFieldConfidence, Dir: contract.SortDesc}}},
		{Limit: 100, Filters: []contract.BrowseFilter{{Field: "status", Op: "in", Values: []string{"candidate"}}}},
	} {
		page, err := e.Browse(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		ids := []string{}
		for _, r := range page.Records {
			ids = append(ids, r.ID+" "+string(r.Status))
		}
		out[string(rune('a'+i))] = map[string]any{"total": page.Total, "ids": ids}
	}
	b, err := json.Marshal(out)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A large store saves its table when a load from the records ends; the next
// process reads it back and replays what processes that never loaded the
// table did meanwhile (a store, a forget, a review, a record stored again
// after its forget, which takes a new ordinal), and answers exactly what a
// load from the records answers.
func TestSavedTableIsReadBackAndReplayed(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	opts := bolt.Options{SyncRebuildBelow: -1}
	e := openStore(t, dir, opts)
	storeCorpus(t, e, 400)
	again := contract.Document("stored, forgotten and stored again", contract.MemoryMeta{Tags: []string{"again"}})
	if _, err := contract.Store(ctx, e, again); err != nil {
		t.Fatal(err)
	}
	if err := e.WaitIndex(ctx); err != nil {
		t.Fatal(err)
	}
	if e.TableFromFile() {
		t.Fatal("a new store's table came from a file")
	}
	page, err := e.Browse(ctx, contract.BrowseQuery{Limit: 2, Filters: []contract.BrowseFilter{{Field: "status", Op: "in", Values: []string{"candidate"}}}})
	if err != nil || len(page.Records) < 2 {
		t.Fatalf("candidates: %v %v", page, err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, bolt.TableFileName)); err != nil {
		t.Fatalf("no saved table: %v", err)
	}

	e = openStore(t, dir, bolt.WithLoadGate(opts, make(chan struct{})))
	storeText(t, e, "a record stored by a process that never loaded the table")
	if _, err := e.Review(ctx, contract.ReviewRequest{ID: page.Records[0].ID, Action: contract.ReviewApprove}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Forget(ctx, contract.ForgetTarget{IDs: []string{page.Records[1].ID, again.Fingerprint()}}); err != nil {
		t.Fatal(err)
	}
	if _, err := contract.Store(ctx, e, again); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}

	e = openStore(t, dir, opts)
	if !e.TableFromFile() {
		t.Fatal("the saved table was not used")
	}
	fromFile := tableView(t, e)
	rep, err := e.Check(ctx, false, nil)
	if err != nil || !rep.Consistent {
		t.Fatalf("check: %v %v", disagreements(rep), err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, bolt.TableFileName)); err != nil {
		t.Fatal(err)
	}
	e = openStore(t, dir, opts)
	if e.TableFromFile() {
		t.Fatal("the table came from a file that was removed")
	}
	if got := tableView(t, e); got != fromFile {
		t.Fatalf("the saved table answers otherwise than the records:\nfile    %s\nrecords %s", fromFile, got)
	}
}

// A saved table damaged on disk is never misread: the load notices (a
// checksum, a length, a reference out of range), loads from the records and
// answers as they do.
func TestSavedTableDamageFallsBackToTheRecords(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	opts := bolt.Options{SyncRebuildBelow: -1}
	e := openStore(t, dir, opts)
	storeCorpus(t, e, 300)
	if err := e.WaitIndex(ctx); err != nil {
		t.Fatal(err)
	}
	want := tableView(t, e)
	if err := e.SaveTable(); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, bolt.TableFileName)
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	e = openStore(t, dir, opts)
	if !e.TableFromFile() || tableView(t, e) != want {
		t.Fatal("the undamaged file was not used, or answers otherwise")
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	for name, damage := range map[string]func(b []byte) []byte{
		"the header":    func(b []byte) []byte { b[9] ^= 1; return b },
		"a row":         func(b []byte) []byte { b[4096+64+3] ^= 0x40; return b },
		"truncated":     func(b []byte) []byte { return b[:len(b)*2/3] },
		"a length":      func(b []byte) []byte { b[4096] ^= 0x10; return b },
		"a room":        func(b []byte) []byte { b[4096+13] ^= 0x01; return b },
		"an empty file": func([]byte) []byte { return nil },
		"a later row":   func(b []byte) []byte { b[4096+64+16000] ^= 0xff; return b },
	} {
		if err := os.WriteFile(path, damage(append([]byte(nil), good...)), 0o600); err != nil {
			t.Fatal(err)
		}
		e = openStore(t, dir, opts)
		if e.TableFromFile() {
			t.Fatalf("%s: a damaged table file was used", name)
		}
		if got := tableView(t, e); got != want {
			t.Fatalf("%s: answers differ after the damage", name)
		}
		if err := e.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// A forgotten record's metadata (its id, a URL, a tag of its own) leaves the
// saved table soon after the forget in a process that has the table loaded,
// and, when another process forgot it, when the next process that loads
// the table closes.
func TestSavedTableForgetsForgottenMetadata(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	opts := bolt.Options{SyncRebuildBelow: -1}
	secret := func(i int) contract.StoreItem {
		u := "https://vault.example/token-" + string(rune('a'+i)) + "-7f3e9c"
		return contract.Document("a note with a secret link", contract.MemoryMeta{URL: &u, Tags: []string{"tag-only-here-" + string(rune('a'+i))}})
	}
	e := openStore(t, dir, opts)
	storeCorpus(t, e, 300)
	for i := range 2 {
		if _, err := contract.Store(ctx, e, secret(i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.WaitIndex(ctx); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, bolt.TableFileName)
	holds := func(needle string) bool {
		b, err := os.ReadFile(path)
		return err == nil && strings.Contains(string(b), needle)
	}
	if err := e.SaveTable(); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	// The table keeps an id as its 20 bytes.
	idName := func(i int) string {
		b, _ := hex.DecodeString(secret(i).Fingerprint())
		return string(b)
	}
	for _, n := range []string{"token-a-7f3e9c", "tag-only-here-a", idName(0), "token-b-7f3e9c"} {
		if !holds(n) {
			t.Fatalf("the saved table lacks %q before any forget", n)
		}
	}

	// Forgotten here, with the table loaded: a background save.
	e = openStore(t, dir, opts)
	if err := e.WaitIndex(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Forget(ctx, contract.ForgetTarget{IDs: []string{secret(0).Fingerprint()}}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the saved table without the forgotten record", func() bool {
		return !holds("token-a-7f3e9c") && !holds("tag-only-here-a") && !holds(idName(0))
	})
	if !holds("token-b-7f3e9c") {
		t.Fatal("the save dropped a live record's metadata")
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}

	// Forgotten by a process that never loaded the table: the next one
	// that does replays it and saves at Close.
	e = openStore(t, dir, bolt.WithLoadGate(opts, make(chan struct{})))
	if _, err := e.Forget(ctx, contract.ForgetTarget{IDs: []string{secret(1).Fingerprint()}}); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	e = openStore(t, dir, opts)
	if !e.TableFromFile() {
		t.Fatal("the saved table was not used")
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if holds("token-b-7f3e9c") || holds("tag-only-here-b") {
		t.Fatal("the saved table still holds a record forgotten by another process")
	}
	e = openStore(t, dir, opts)
	rep, err := e.Check(ctx, false, nil)
	if err != nil || !rep.Consistent {
		t.Fatalf("check: %v %v", disagreements(rep), err)
	}
}

// TestAStoreThatGrewLargeIsSavedAsLarge: a store that was small when opened
// and large when closed (an import into a new store) leaves its table, its
// content index and its root explore behind, so the next process reads them
// back instead of decoding every record, and answers the root explore
// before it has. A record forgotten before the close is not in the content
// index's file.
func TestAStoreThatGrewLargeIsSavedAsLarge(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	e := openStore(t, dir, bolt.Options{SyncRebuildBelow: 300})
	storeCorpus(t, e, 400)
	kept := storeText(t, e, "the grownwombat runbook lives in the ops wiki")
	gone := storeText(t, e, "the grownwombat password is hunter2")
	if _, err := e.Forget(ctx, contract.ForgetTarget{IDs: []string{gone}}); err != nil {
		t.Fatal(err)
	}
	want, err := e.Explore(ctx, contract.ExploreRequest{Facet: contract.FacetKind, Limit: 5})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, bolt.TableFileName)); err != nil {
		t.Fatalf("no saved table: %v", err)
	}
	if n, _, err := bolt.ContentFileCandidates(dir, "grownwombat"); err != nil || n != 1 {
		t.Fatalf("the saved content index offers %d candidates for the needle, want 1 (%v)", n, err)
	}
	gate := make(chan struct{})
	e = openStore(t, dir, bolt.WithLoadGate(bolt.Options{SyncRebuildBelow: 300}, gate))
	defer e.Close()
	cold, err := e.Explore(ctx, contract.ExploreRequest{Facet: contract.FacetKind, Limit: 5})
	if err != nil || fmt.Sprint(cold.Buckets, cold.Total) != fmt.Sprint(want.Buckets, want.Total) {
		t.Fatalf("root explore before the table loads: %v %v, want %v", cold, err, want)
	}
	close(gate)
	if err := e.WaitIndex(ctx); err != nil {
		t.Fatal(err)
	}
	if !e.TableFromFile() {
		t.Fatal("the next process loaded the table from the records")
	}
	if got := containsIDs(t, e, "grownwombat"); len(got) != 1 || got[0] != kept {
		t.Fatalf("contains after reopening: %v, want [%s]", got, kept)
	}
	rep, err := e.Check(ctx, false, nil)
	if err != nil || !rep.Consistent {
		t.Fatalf("check after reopening: %v %+v", err, rep.Checks)
	}
}

// observed_at is held exactly for every year the contract takes and to the
// nanosecond: a filter on it admits what the contract's own rule admits (a
// table row holds it as unix ms and the nanoseconds past them, since unix ns
// does not reach before 1678 or past 2262), and a browse by it sorts by its
// milliseconds, whether the table came from the records or from its file.
func TestObservedAtIsHeldToTheNanosecondInAnyYear(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	opts := bolt.Options{SyncRebuildBelow: -1}
	at := func(s string) time.Time {
		tm, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			t.Fatal(err)
		}
		return tm
	}
	times := []time.Time{
		at("0001-01-01T00:00:00.000000001Z"),
		at("1600-05-01T00:00:00.000000100Z"),
		at("1600-05-01T00:00:00.000000200Z"),
		at("1969-12-31T23:59:59.999999999Z"),
		at("2026-03-01T12:00:00.123456789Z"),
		at("2026-03-01T12:00:00.123456790Z"),
		at("2026-03-01T12:00:00.123999999Z"),
		at("2300-06-01T00:00:00Z"),
		at("9999-12-31T23:59:59.999999999Z"),
	}
	e := openStore(t, dir, opts)
	for i, tm := range times {
		if _, err := contract.Store(ctx, e, contract.Document(fmt.Sprintf("observed %d", i), contract.MemoryMeta{ObservedAt: &tm})); err != nil {
			t.Fatal(err)
		}
	}
	storeText(t, e, "never observed")
	var bounds []*time.Time
	bounds = append(bounds, nil)
	for _, tm := range times {
		for _, d := range []time.Duration{-1, 0, 1} {
			bounds = append(bounds, contract.Ptr(tm.Add(d)))
		}
	}
	check := func(e *bolt.Engine) {
		t.Helper()
		all, err := e.Browse(ctx, contract.BrowseQuery{Limit: 100, OrderBy: []contract.SortKey{{Field: "observed_at", Dir: "asc"}}})
		if err != nil || len(all.Records) != len(times)+1 {
			t.Fatalf("browse by observed_at: %v %v", all, err)
		}
		for i, r := range all.Records[:len(times)] {
			// A browse orders by the millisecond: the three of 2026 tie.
			if r.Meta.ObservedAt == nil || r.Meta.ObservedAt.UnixMilli() != times[i].UnixMilli() {
				t.Fatalf("record %d by observed_at is observed at %v, want %v", i, r.Meta.ObservedAt, times[i])
			}
		}
		for _, a := range bounds {
			for _, b := range bounds {
				f := contract.MetaFilter{ObservedAfter: a, ObservedBefore: b}
				want := 0
				for _, r := range all.Records {
					if f.Matches(r.Kind, &r.Meta) {
						want++
					}
				}
				got, err := e.Browse(ctx, contract.BrowseQuery{Filter: f, Limit: 100})
				if err != nil || got.Total != want || len(got.Records) != want {
					t.Fatalf("observed in [%v, %v): %d records (total %d), the contract's rule admits %d (%v)", a, b, len(got.Records), got.Total, want, err)
				}
				for _, r := range got.Records {
					if !f.Matches(r.Kind, &r.Meta) {
						t.Fatalf("observed in [%v, %v): admitted %v", a, b, r.Meta.ObservedAt)
					}
				}
			}
		}
	}
	check(e)
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	e = openStore(t, dir, opts)
	defer e.Close()
	if !e.TableFromFile() {
		t.Fatal("the saved table was not used")
	}
	check(e)
}
