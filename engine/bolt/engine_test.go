package bolt_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	bbolt "go.etcd.io/bbolt"

	"mnemo/contract"
	"mnemo/contract/conformance"
	"mnemo/engine/bolt"
)

func openStore(t testing.TB, dir string, opts bolt.Options) *bolt.Engine {
	t.Helper()
	e, err := bolt.Open(dir, opts)
	if err != nil {
		t.Fatalf("open %s: %v", dir, err)
	}
	t.Cleanup(func() { _ = e.Close() })
	return e
}

func TestConformance(t *testing.T) {
	t.Parallel()
	conformance.Test(t, func(t *testing.T) contract.Engine { return openStore(t, t.TempDir(), bolt.Options{}) })
}

func TestConformanceWithForeignData(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := openStore(t, t.TempDir(), bolt.Options{})
	foreign := contract.Document("foreign note that the suite must leave alone", contract.MemoryMeta{Tags: []string{"foreign"}})
	if _, err := contract.Store(ctx, e, foreign); err != nil {
		t.Fatal(err)
	}
	if err := conformance.Run(ctx, e).Err(); err != nil {
		t.Fatal(err)
	}
	hits, err := e.Get(ctx, contract.GetRequest{IDs: []string{foreign.Fingerprint()}})
	if err != nil || len(hits) != 1 {
		t.Fatalf("foreign record after the suite: %v %v", hits, err)
	}
}

func TestDescriptor(t *testing.T) {
	t.Parallel()
	e := openStore(t, t.TempDir(), bolt.Options{FetchModes: []contract.FetchMode{contract.ModeKeyword}})
	d := e.Descriptor()
	if d.ID != "mnemo" || d.Label != "mnemo (bbolt + Bleve)" || d.Consolidation != contract.ConsolidationOnDemand {
		t.Fatalf("descriptor %+v", d)
	}
	if len(d.FetchModes) != 1 || d.FetchModes[0] != contract.ModeKeyword {
		t.Fatalf("fetch modes %v", d.FetchModes)
	}
	_, err := e.Fetch(context.Background(), contract.FetchRequest{Query: "x", Mode: contract.ModeVector, Limit: 1})
	if !errors.Is(err, contract.ErrUnsupported) {
		t.Fatalf("vector fetch on a keyword-only store: %v", err)
	}
}

func TestLockedStoreNamesThePID(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	openStore(t, dir, bolt.Options{})
	if err := os.WriteFile(filepath.Join(dir, bolt.AddrFile), []byte("http://127.0.0.1:7077\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := bolt.Open(dir, bolt.Options{LockTimeout: 50 * time.Millisecond})
	var le *bolt.LockedError
	if !errors.As(err, &le) {
		t.Fatalf("second open: %v", err)
	}
	abs, _ := filepath.Abs(dir)
	want := "store " + abs + " is locked by another process (pid " + strconv.Itoa(os.Getpid()) + ")"
	if err.Error() != want || le.Addr != "http://127.0.0.1:7077" {
		t.Fatalf("message\n got %s\nwant %s", err, want)
	}
}

func learning(text string, conf float32, tags ...string) contract.StoreItem {
	return contract.Learning(text, contract.LearningFact, conf, contract.MemoryMeta{Tags: tags})
}

func TestReviewAndSupersede(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 11, 29, 18, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	e := openStore(t, t.TempDir(), bolt.Options{Clock: clock})
	cand := learning("the deploy window is friday", 0.6)
	r, err := e.StoreWith(ctx, cand, contract.WriteOptions{Status: contract.StatusCandidate})
	if err != nil {
		t.Fatal(err)
	}
	// Candidates are hidden from fetch unless asked for.
	page, err := e.Fetch(ctx, contract.FetchRequest{Query: "deploy window", Mode: contract.ModeKeyword, Limit: 5})
	if err != nil || len(page.Hits) != 0 {
		t.Fatalf("fetch saw a candidate: %v %v", page.Hits, err)
	}
	page, err = e.Fetch(ctx, contract.FetchRequest{Query: "deploy window", Mode: contract.ModeKeyword, Limit: 5,
		Filter: contract.MetaFilter{Statuses: []contract.Status{contract.StatusCandidate}}})
	if err != nil || len(page.Hits) != 1 {
		t.Fatalf("fetch asking for candidates: %v %v", page.Hits, err)
	}
	now = now.Add(time.Hour)
	res, err := e.Review(ctx, contract.ReviewRequest{ID: r.ID, Action: contract.ReviewApprove})
	if err != nil || res.Record == nil || res.Record.Status != contract.StatusActive || !res.Record.UpdatedAt.Equal(now) {
		t.Fatalf("approve: %+v %v", res, err)
	}
	_, err = e.Review(ctx, contract.ReviewRequest{ID: r.ID, Action: contract.ReviewApprove})
	if !errors.Is(err, contract.ErrConflict) || !strings.Contains(err.Error(), "record "+r.ID+" is 'active', not a candidate") {
		t.Fatalf("second approve: %v", err)
	}
	_, err = e.Review(ctx, contract.ReviewRequest{ID: "nope", Action: contract.ReviewReject})
	if !errors.Is(err, contract.ErrNotFound) || err.Error() != "not found: record nope does not exist" {
		t.Fatalf("review unknown: %v", err)
	}
	page, err = e.Fetch(ctx, contract.FetchRequest{Query: "deploy window", Mode: contract.ModeKeyword, Limit: 5})
	if err != nil || len(page.Hits) != 1 {
		t.Fatalf("fetch after approve: %v %v", page.Hits, err)
	}
	newer := learning("the deploy window is thursday", 0.9)
	nr, err := contract.Store(ctx, e, newer)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := e.Supersede(ctx, contract.SupersedeRequest{ID: r.ID, By: nr.ID})
	if err != nil || rec.Status != contract.StatusSuperseded || contract.Deref(rec.SupersededBy) != nr.ID {
		t.Fatalf("supersede: %+v %v", rec, err)
	}
	page, err = e.Fetch(ctx, contract.FetchRequest{Query: "deploy window", Mode: contract.ModeHybrid, Limit: 5})
	if err != nil || len(page.Hits) != 1 || page.Hits[0].ID != nr.ID {
		t.Fatalf("fetch after supersede: %v %v", page.Hits, err)
	}
	// Reject forgets a candidate.
	c2, _ := e.StoreWith(ctx, learning("a rejected idea", 0.1), contract.WriteOptions{Status: contract.StatusCandidate})
	res, err = e.Review(ctx, contract.ReviewRequest{ID: c2.ID, Action: contract.ReviewReject})
	if err != nil || res.Forgotten != 1 {
		t.Fatalf("reject: %+v %v", res, err)
	}
	if hits, _ := e.Get(ctx, contract.GetRequest{IDs: []string{c2.ID}}); len(hits) != 0 {
		t.Fatalf("rejected candidate still readable")
	}
}

func TestNewerSchemaIsRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	e, err := bolt.Open(dir, bolt.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	db, err := bbolt.Open(filepath.Join(dir, bolt.DBFile), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bbolt.Tx) error { return tx.Bucket([]byte("meta")).Put([]byte("schema"), []byte("99")) })
	if cerr := db.Close(); err != nil || cerr != nil {
		t.Fatal(err, cerr)
	}
	_, err = bolt.Open(dir, bolt.Options{})
	if !errors.Is(err, contract.ErrConfig) || !strings.Contains(err.Error(), "schema version 99") {
		t.Fatalf("open of a newer store: %v", err)
	}
	// The failed open released the store: the bbolt file opens again at once.
	db, err = bbolt.Open(filepath.Join(dir, bolt.DBFile), 0o600, &bbolt.Options{Timeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatalf("store still locked after a failed open: %v", err)
	}
	_ = db.Close()
}

// A store a live server holds (its address published, the process in its
// pid file alive) does not come free within a lock wait: Open asks for the
// lock once, briefly, so a command attaches to the server at once instead
// of after the whole timeout.
func TestOpenOnAServedStoreDoesNotWaitTheLockTimeout(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	openStore(t, dir, bolt.Options{})
	holder := exec.Command("sleep", "30")
	if err := holder.Start(); err != nil {
		t.Skipf("no sleep(1) to stand in for the server process: %v", err)
	}
	t.Cleanup(func() { _ = holder.Process.Kill(); _ = holder.Wait() })
	for name, body := range map[string]string{bolt.AddrFile: "http://127.0.0.1:7077\n", bolt.PIDFile: strconv.Itoa(holder.Process.Pid) + "\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	start := time.Now()
	_, err := bolt.Open(dir, bolt.Options{LockTimeout: time.Minute})
	var le *bolt.LockedError
	if !errors.As(err, &le) || le.PID != holder.Process.Pid {
		t.Fatalf("open of a served store: %v", err)
	}
	if waited := time.Since(start); waited > 30*time.Second {
		t.Fatalf("the open waited %v of its minute's lock timeout", waited)
	}

	// Without a live server the wait is the caller's: beside a dead pid
	// the open waits (bbolt gives up one 50 ms retry before the timeout).
	_ = holder.Process.Kill()
	_ = holder.Wait()
	start = time.Now()
	_, err = bolt.Open(dir, bolt.Options{LockTimeout: 400 * time.Millisecond})
	if !errors.As(err, &le) || time.Since(start) < 300*time.Millisecond {
		t.Fatalf("open beside a dead server's files: %v after %v", err, time.Since(start))
	}
}
