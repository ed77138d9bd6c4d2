package bolt_test

import (
	"context"
	"strings"
	"testing"

	bbolt "go.etcd.io/bbolt"

	"mnemo/contract"
	"mnemo/engine/bolt"
)

// damage opens a closed store's bbolt file directly and breaks its derived
// structures the way a bug or a bad disk would.
func damage(t *testing.T, dir string, f func(tx *bbolt.Tx) error) {
	t.Helper()
	db, err := bbolt.Open(dir+"/"+bolt.DBFile, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Update(f); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}

func disagreements(rep bolt.CheckReport) map[string]int {
	out := map[string]int{}
	for _, c := range rep.Checks {
		if c.Disagreements > 0 {
			out[c.Name] = c.Disagreements
		}
	}
	return out
}

func TestCheckFindsAndRepairsDamage(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	e := openStore(t, dir, bolt.Options{})
	storeCorpus(t, e, 400)
	rep, err := e.Check(ctx, false, nil)
	if err != nil || !rep.Consistent || rep.Records != 400 {
		t.Fatalf("a fresh store: %+v %v", rep, err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}

	damage(t, dir, func(tx *bbolt.Tx) error {
		// Five browse keys gone, a namespace total off by 3, a ghost vector.
		c := tx.Bucket([]byte("by_created")).Cursor()
		n := 0
		for k, _ := c.First(); k != nil && n < 5; k, _ = c.First() {
			if err := c.Delete(); err != nil {
				return err
			}
			n++
		}
		tot := tx.Bucket([]byte("ns_totals"))
		k, v := tot.Cursor().First()
		if err := tot.Put(k, []byte{0, 0, 0, 0, 0, 0, 0, v[7] + 3}); err != nil {
			return err
		}
		return bolt.PutGhostVector(tx)
	})
	e = openStore(t, dir, bolt.Options{})
	rep, err = e.Check(ctx, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := disagreements(rep)
	if rep.Consistent || got["browse keys (updated_at, created_at, confidence)"] != 5 || got["namespace totals"] != 1 || got["vectors"] != 1 {
		t.Fatalf("check found %v", got)
	}
	rep, err = e.Check(ctx, true, nil)
	if err != nil || !rep.Consistent || !rep.Repaired {
		t.Fatalf("after repair: %v %v", disagreements(rep), err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	e = openStore(t, dir, bolt.Options{})
	if rep, err := e.Check(ctx, false, nil); err != nil || !rep.Consistent {
		t.Fatalf("after reopening the repaired store: %v %v", disagreements(rep), err)
	}
}

func TestCheckFindsAnIndexThatLostDocuments(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	e := openStore(t, dir, bolt.Options{})
	storeCorpus(t, e, 300)
	_ = e.Close()
	// A record the index never saw: written behind the engine's back with
	// its keys, so only the search index disagrees.
	damage(t, dir, func(tx *bbolt.Tx) error {
		recs := tx.Bucket([]byte("records"))
		k, v := recs.Cursor().First()
		id := bolt.RecordKey(tx, strings.Repeat("0", 40))
		if err := recs.Put(id, v); err != nil {
			return err
		}
		_ = k
		return nil
	})
	e = openStore(t, dir, bolt.Options{})
	rep, err := e.Check(ctx, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := disagreements(rep); got["search index"] != 1 {
		t.Fatalf("check found %v, want the search index to disagree", got)
	}
}

// A record forgotten while its vector waited to be written left the vector
// behind: the forget's own transaction wrote the pending vectors back.
func TestForgetLeavesNoVectorBehind(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	e := openStore(t, dir, bolt.Options{})
	entries := storeCorpus(t, e, 60)
	if err := e.WaitIndex(ctx); err != nil { // embeds: vectors now pending
		t.Fatal(err)
	}
	var ids []string
	for _, en := range entries[:30] {
		ids = append(ids, en.Item.Fingerprint())
	}
	if _, err := e.Forget(ctx, contract.ForgetIDs(ids...)); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	e = openStore(t, dir, bolt.Options{})
	rep, err := e.Check(ctx, false, nil)
	if err != nil || !rep.Consistent {
		t.Fatalf("after forgetting records with pending vectors: %v %v", disagreements(rep), err)
	}
}

// A stored root explore that claims the current sequence but says other
// counts than the table (written by a bug, or edited) is found by check
// and rewritten by repair.
func TestCheckFindsAWrongRootExplore(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	e := openStore(t, dir, bolt.Options{SyncRebuildBelow: -1})
	storeCorpus(t, e, 300)
	if err := e.WaitIndex(ctx); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	damage(t, dir, func(tx *bbolt.Tx) error {
		b := tx.Bucket([]byte("explore_root"))
		v := b.Get([]byte(contract.FacetKind))
		// The same header, a page with a wrong total.
		wrong := strings.Replace(string(v[9:]), `"total":`, `"total":1`, 1)
		return b.Put([]byte(contract.FacetKind), append(append([]byte(nil), v[:9]...), wrong...))
	})
	e = openStore(t, dir, bolt.Options{SyncRebuildBelow: -1})
	rep, err := e.Check(ctx, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := disagreements(rep); rep.Consistent || got["table"] != 1 {
		t.Fatalf("check found %v", got)
	}
	if rep, err := e.Check(ctx, true, nil); err != nil || !rep.Consistent {
		t.Fatalf("after repair: %v %v", disagreements(rep), err)
	}
}
