package storecopy

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"mnemo/contract"
	"mnemo/engine/bolt"
	"mnemo/engine/memory"
	"mnemo/engine/postgres"
	"mnemo/engine/postgres/pgtest"
	"mnemo/server/local"
)

func doc(text string) contract.StoreItem {
	return contract.StoreItem{Type: contract.KindDocument, Body: contract.DocumentBody{Text: text},
		Meta: contract.MemoryMeta{Source: contract.SourceRef{Kind: contract.SourceAgent}}}
}

// source fills an engine with one record of every history a copy carries:
// active, a candidate, an approved candidate, an expiring record and one
// superseded by a record stored after it. It returns the ids by name.
func source(t *testing.T, e contract.Engine) map[string]string {
	t.Helper()
	ctx := context.Background()
	ids := map[string]string{}
	store := func(name string, opts contract.WriteOptions) {
		r, err := e.StoreWith(ctx, doc(name), opts)
		if err != nil {
			t.Fatal(err)
		}
		ids[name] = r.ID
	}
	expires := time.Now().Add(48 * time.Hour).UTC().Truncate(time.Millisecond)
	store("active", contract.WriteOptions{})
	store("candidate", contract.WriteOptions{Status: contract.StatusCandidate})
	store("approved", contract.WriteOptions{Status: contract.StatusCandidate})
	store("expiring", contract.WriteOptions{ExpiresAt: &expires})
	store("old", contract.WriteOptions{})
	store("new", contract.WriteOptions{})
	if _, err := e.Review(ctx, contract.ReviewRequest{ID: ids["approved"], Action: contract.ReviewApprove}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Supersede(ctx, contract.SupersedeRequest{ID: ids["old"], By: ids["new"]}); err != nil {
		t.Fatal(err)
	}
	return ids
}

// TestCopyCarriesEveryHistoryAndResumes copies into an engine that restores
// whole records (engine/memory, as engine/postgres): times are kept.
func TestCopyCarriesEveryHistoryAndResumes(t *testing.T) {
	ctx := context.Background()
	clock := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	src := memory.New(memory.WithClock(func() time.Time { clock = clock.Add(time.Second); return clock }))
	ids := source(t, src)
	dst := memory.New()
	from, to := Store{Engine: src, Label: "src", Records: func(context.Context) (int, error) { return src.Len(), nil }}, Store{Engine: dst, Label: "dst"}
	rep, err := Copy(ctx, from, to, Options{Sample: 3})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Read != 6 || rep.Copied != 6 || rep.Replayed != 0 || !rep.Verified || rep.Problem != "" || rep.Sampled != 3 ||
		rep.SourceRecords != 6 || !rep.TimesKept || len(rep.Unlinked) != 0 {
		t.Errorf("report %+v", rep)
	}
	want := map[contract.Status]uint64{contract.StatusActive: 4, contract.StatusCandidate: 1, contract.StatusSuperseded: 1}
	for _, s := range contract.Statuses() {
		if rep.SourceCounts[s] != want[s] || rep.DestinationCounts[s] != want[s] {
			t.Errorf("%s: source %d, destination %d, want %d", s, rep.SourceCounts[s], rep.DestinationCounts[s], want[s])
		}
	}
	got, err := dst.GetRecords(ctx, contract.GetRequest{IDs: []string{ids["old"], ids["expiring"]}})
	if err != nil || len(got) != 2 {
		t.Fatalf("get = %v, %v", got, err)
	}
	for _, r := range got {
		if r.ID == ids["old"] && (r.Status != contract.StatusSuperseded || r.SupersededBy == nil || *r.SupersededBy != ids["new"]) {
			t.Errorf("old record %+v is not superseded by the new one", r)
		}
		if r.ID == ids["expiring"] && r.ExpiresAt == nil {
			t.Errorf("expiring record lost its expiry")
		}
	}
	again, err := Copy(ctx, from, to, Options{Sample: 10})
	if err != nil {
		t.Fatal(err)
	}
	if again.Copied != 0 || again.Replayed != 6 || !again.Verified || again.Sampled != 6 {
		t.Errorf("resumed copy %+v, want everything replayed and verified", again)
	}
}

// TestCopyKeepsTimesIntoAHeldDirectory copies through the contract into a
// directory store this process holds: its clock reads each record's times.
func TestCopyKeepsTimesIntoAHeldDirectory(t *testing.T) {
	ctx := context.Background()
	clock := time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC)
	src := memory.New(memory.WithClock(func() time.Time { clock = clock.Add(time.Minute); return clock }))
	ids := source(t, src)
	copyClock := &Clock{}
	dst, err := local.Open(ctx, filepath.Join(t.TempDir(), "dst"), local.Options{Bolt: bolt.Options{Clock: copyClock.Now}})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = dst.Close() }()
	var progress []int
	rep, err := Copy(ctx, Store{Engine: src, Label: "src"}, Store{Engine: dst, Label: "dst"},
		Options{Sample: 6, Clock: copyClock, Progress: func(done, total int) { progress = append(progress, done, total) },
			Walked: func() { progress = append(progress, -1) }})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.TimesKept || !rep.Verified || rep.Sampled != 6 {
		t.Fatalf("report %+v, want times kept and verified", rep)
	}
	if len(progress) != 3 || progress[0] != 6 || progress[1] != 6 || progress[2] != -1 {
		t.Errorf("progress %v, want one page of 6 of 6, then the walk's end", progress)
	}
	a, _ := src.GetRecords(ctx, contract.GetRequest{IDs: []string{ids["approved"]}})
	b, _ := dst.GetRecords(ctx, contract.GetRequest{IDs: []string{ids["approved"]}})
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	if string(x) != string(y) {
		t.Errorf("approved record differs:\nsource      %s\ndestination %s", x, y)
	}
}

func TestCopyRefusesOneStoreTwice(t *testing.T) {
	e := memory.New()
	_, err := Copy(context.Background(), Store{Engine: e, Label: "x"}, Store{Engine: e, Label: "x"}, Options{})
	if contract.KindOf(err) != contract.KindInvalidRequest || err.Error() != "invalid request: copy needs two different stores, not x twice" {
		t.Errorf("err = %v", err)
	}
}

// TestCopyIntoPostgresAndBack copies into PostgreSQL (whole records, a bulk
// load whose indexes are built once at the end) and from there into a fresh
// in-memory engine: every record arrives, verified, times kept.
func TestCopyIntoPostgresAndBack(t *testing.T) {
	ctx := context.Background()
	clock := time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC)
	src := memory.New(memory.WithClock(func() time.Time { clock = clock.Add(time.Minute); return clock }))
	ids := source(t, src)
	pg, err := postgres.Open(ctx, pgtest.URL(t), postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = pg.Close() }()
	rep, err := Copy(ctx, Store{Engine: src, Label: "memory"}, Store{Engine: pg, Label: pg.Label()}, Options{Sample: 6})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Copied != 6 || !rep.Verified || !rep.TimesKept {
		t.Fatalf("into PostgreSQL: %+v", rep)
	}
	back := memory.New()
	rep, err = Copy(ctx, Store{Engine: pg, Label: pg.Label(), Records: pg.Len}, Store{Engine: back, Label: "back"}, Options{Sample: 6})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Copied != 6 || !rep.Verified || rep.SourceRecords != 6 {
		t.Fatalf("back out: %+v", rep)
	}
	a, _ := src.GetRecords(ctx, contract.GetRequest{IDs: []string{ids["old"], ids["approved"]}})
	b, _ := back.GetRecords(ctx, contract.GetRequest{IDs: []string{ids["old"], ids["approved"]}})
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	if string(x) != string(y) {
		t.Errorf("the round trip changed records:\nbefore %s\nafter  %s", x, y)
	}
}
