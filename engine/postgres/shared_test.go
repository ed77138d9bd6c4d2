package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"mnemo/contract"
	"mnemo/engine/postgres"
	"mnemo/engine/postgres/pgtest"
	"mnemo/server/audit"
)

// TestTwoPoolsStoreTheSameItems stores one set of items through two engines
// (two pools, as two processes would) at once, single and batched: every
// item is one record, exactly one receipt per item says new, every other
// says replayed, and both engines read every record.
func TestTwoPoolsStoreTheSameItems(t *testing.T) {
	ctx := context.Background()
	url := pgtest.URL(t)
	a := openStore(t, url, postgres.Options{})
	b := openStore(t, url, postgres.Options{})
	const n = 300
	items := make([]contract.StoreItem, n)
	for i := range items {
		items[i] = contract.Document(fmt.Sprintf("shared fact number %d", i), contract.MemoryMeta{Tags: []string{"shared"}})
	}
	type receipt struct {
		id       string
		replayed bool
	}
	var mu sync.Mutex
	var got []receipt
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for w, e := range []*postgres.Engine{a, b, a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var mine []receipt
			for start := 0; start < n; {
				if w%2 == 0 {
					// Single stores: one worker front to back, one back to front.
					i := start
					if w == 2 {
						i = n - 1 - start
					}
					r, err := contract.Store(ctx, e, items[i])
					if err != nil {
						errs <- err
						return
					}
					mine = append(mine, receipt{r.ID, r.Replayed})
					start++
					continue
				}
				end := min(start+1+w*7, n)
				rs, err := contract.StoreMany(ctx, e, items[start:end])
				if err != nil {
					errs <- err
					return
				}
				for _, r := range rs {
					mine = append(mine, receipt{r.ID, r.Replayed})
				}
				start = end
			}
			mu.Lock()
			got = append(got, mine...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	fresh := map[string]int{}
	seen := map[string]int{}
	for _, r := range got {
		seen[r.id]++
		if !r.replayed {
			fresh[r.id]++
		}
	}
	for i := range items {
		id := items[i].Fingerprint()
		if seen[id] != 4 || fresh[id] != 1 {
			t.Fatalf("item %d: %d receipts, %d of them new (want 4 and 1)", i, seen[id], fresh[id])
		}
	}
	for _, e := range []*postgres.Engine{a, b} {
		n2, err := e.Len(ctx)
		if err != nil || n2 != n {
			t.Fatalf("records: %d %v, want %d", n2, err, n)
		}
		page, err := e.Explore(ctx, contract.ExploreRequest{Facet: contract.FacetTag, Limit: 10})
		if err != nil || page.Total != n {
			t.Fatalf("explore: %+v %v", page, err)
		}
	}
}

// TestWriteThroughOneReadThroughTheOther: no state is process-local, so a
// write, a review, a supersede and a forget through one engine are seen by
// the other at once, in every read.
func TestWriteThroughOneReadThroughTheOther(t *testing.T) {
	ctx := context.Background()
	url := pgtest.URL(t)
	a := openStore(t, url, postgres.Options{})
	b := openStore(t, url, postgres.Options{})
	it := contract.Document("zebra crossing guidance", contract.MemoryMeta{})
	by := contract.Document("newer zebra crossing guidance", contract.MemoryMeta{})
	if _, err := a.StoreWith(ctx, it, contract.WriteOptions{Status: contract.StatusCandidate}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Review(ctx, contract.ReviewRequest{ID: it.Fingerprint(), Action: contract.ReviewApprove}); err != nil {
		t.Fatal(err)
	}
	page, err := a.Fetch(ctx, contract.FetchRequest{Query: "zebra", Mode: contract.ModeKeyword, Limit: 5})
	if err != nil || len(page.Hits) != 1 {
		t.Fatalf("fetch through a after b's approve: %+v %v", page, err)
	}
	if _, err := contract.Store(ctx, b, by); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Supersede(ctx, contract.SupersedeRequest{ID: it.Fingerprint(), By: by.Fingerprint()}); err != nil {
		t.Fatal(err)
	}
	recs, err := b.GetRecords(ctx, contract.GetRequest{IDs: []string{it.Fingerprint()}})
	if err != nil || len(recs) != 1 || recs[0].Status != contract.StatusSuperseded || *recs[0].SupersededBy != by.Fingerprint() {
		t.Fatalf("superseded through a, read through b: %+v %v", recs, err)
	}
	if _, err := b.Forget(ctx, contract.ForgetIDs(by.Fingerprint(), it.Fingerprint())); err != nil {
		t.Fatal(err)
	}
	page, err = a.Fetch(ctx, contract.FetchRequest{Query: "zebra", Mode: contract.ModeKeyword, Limit: 5})
	if err != nil || len(page.Hits) != 0 {
		t.Fatalf("fetch after the forget: %+v %v", page, err)
	}
	ex, err := a.Explore(ctx, contract.ExploreRequest{Facet: contract.FacetStatus, Limit: 5})
	if err != nil || ex.Total != 0 {
		t.Fatalf("explore after the forget: %+v %v", ex, err)
	}
	bp, err := a.Browse(ctx, contract.BrowseQuery{})
	if err != nil || bp.Total != 0 || len(bp.Records) != 0 {
		t.Fatalf("browse after the forget: %+v %v", bp, err)
	}
}

// TestOpenTogetherMigratesOnce opens one fresh store from many engines at once:
// the advisory lock lets one of them create the schema, the rest find it.
func TestOpenTogetherMigratesOnce(t *testing.T) {
	url := pgtest.URL(t)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			e, err := postgres.Open(context.Background(), url, postgres.Options{})
			if err != nil {
				errs <- err
				return
			}
			_ = e.Close()
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// TestNewerSchemaIsRefused: a store migrated by a newer mnemo is refused with
// a message saying so, as engine/bolt refuses one.
func TestNewerSchemaIsRefused(t *testing.T) {
	ctx := context.Background()
	base := pgtest.BaseURL(t)
	schema := pgtest.Schema(t)
	url := pgtest.WithSchema(t, base, schema)
	e := openStore(t, url, postgres.Options{})
	_ = e.Close()
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close(ctx) }()
	if _, err := conn.Exec(ctx, "UPDATE "+pgx.Identifier{schema, "mnemo_meta"}.Sanitize()+" SET value = '999' WHERE key = 'schema_version'"); err != nil {
		t.Fatal(err)
	}
	_, err = postgres.Open(ctx, url, postgres.Options{})
	want := fmt.Sprintf("store schema version 999 is newer than this mnemo knows (%d); upgrade mnemo", postgres.SchemaVersion())
	var ce *contract.Error
	if !errors.As(err, &ce) || ce.Kind != contract.KindConfig || ce.Message != want {
		t.Fatalf("open a newer schema: %v", err)
	}
}

// TestPasswordIsMasked: the URL printed for people masks the password in
// every form it can take, and no error of a failed open carries it.
func TestPasswordIsMasked(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"postgres://alice:s3cr3t@db.example:5432/mem", "postgres://alice:xxxxx@db.example:5432/mem"},
		{"postgresql://alice:s3cr3t@db.example/mem?schema=team", "postgresql://alice:xxxxx@db.example/mem?schema=team"},
		{"postgres://db.example/mem?user=alice&password=s3cr3t", "postgres://db.example/mem?password=xxxxx&user=alice"},
		{"postgres:///mem?host=/var/run/postgresql", "postgres:///mem?host=/var/run/postgresql"},
		{"postgres://alice@db.example/mem", "postgres://alice@db.example/mem"},
	} {
		if got := postgres.Redact(c.in); got != c.want {
			t.Errorf("Redact(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	if got := postgres.Redact("postgres://alice:s3cr3t@[::1"); strings.Contains(got, "s3cr3t") {
		t.Errorf("a malformed URL leaks its password: %q", got)
	}

	ctx := context.Background()
	// Nothing listens on port 1: unavailable, naming the host, never the password.
	_, err := postgres.Open(ctx, "postgres://alice:s3cr3t@127.0.0.1:1/mem", postgres.Options{})
	var ce *contract.Error
	if !errors.As(err, &ce) || ce.Kind != contract.KindUnavailable || !strings.Contains(ce.Message, "127.0.0.1:1") || strings.Contains(err.Error(), "s3cr3t") {
		t.Fatalf("open with the server down: %v", err)
	}
	_, err = postgres.Open(ctx, "postgres://alice:s3cr3t@127.0.0.1:1/mem?password=an0ther", postgres.Options{})
	if err == nil || strings.Contains(err.Error(), "an0ther") || strings.Contains(err.Error(), "s3cr3t") {
		t.Fatalf("open with a password parameter: %v", err)
	}
	_, err = postgres.Open(ctx, "postgres://alice:s3cr3t@127.0.0.1:1/mem?sslmode=bogus", postgres.Options{})
	if err == nil || strings.Contains(err.Error(), "s3cr3t") {
		t.Fatalf("open a URL pgx refuses: %v", err)
	}

	// A wrong password against the real server: refused, without the password.
	base := pgtest.BaseURL(t)
	wrong := withPassword(t, base, "not-the-Passw0rd")
	_, err = postgres.Open(ctx, wrong, postgres.Options{})
	if err == nil || strings.Contains(err.Error(), "not-the-Passw0rd") {
		t.Fatalf("open with a wrong password: %v", err)
	}
	e := openStore(t, pgtest.URL(t), postgres.Options{})
	if pw := passwordOf(t, base); pw != "" && (strings.Contains(e.Label(), pw) || strings.Contains(e.Host(), pw)) {
		t.Fatalf("label %q or host %q shows the password", e.Label(), e.Host())
	}
}

// TestAuditLogIsShared: events appended through two engines read back from
// either in time order, with since and limit.
func TestAuditLogIsShared(t *testing.T) {
	ctx := context.Background()
	url := pgtest.URL(t)
	a := openStore(t, url, postgres.Options{})
	b := openStore(t, url, postgres.Options{})
	t0 := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	for i, e := range []*postgres.Engine{a, b, a} {
		if err := e.AppendAudit(ctx, audit.Event{At: t0.Add(time.Duration(i) * time.Second), Principal: fmt.Sprint("p", i), Op: "store", Count: 1}); err != nil {
			t.Fatal(err)
		}
	}
	all, err := b.ReadAudit(ctx, audit.Query{})
	if err != nil || len(all) != 3 || all[0].Principal != "p0" || all[2].Principal != "p2" {
		t.Fatalf("audit: %+v %v", all, err)
	}
	some, err := a.ReadAudit(ctx, audit.Query{Since: t0.Add(time.Second), Limit: 1})
	if err != nil || len(some) != 1 || some[0].Principal != "p1" {
		t.Fatalf("audit since, limit 1: %+v %v", some, err)
	}
	ta, err := a.OwnerToken(ctx)
	if err != nil {
		t.Fatal(err)
	}
	tb, err := b.OwnerToken(ctx)
	if err != nil || ta != tb || len(ta) != 64 {
		t.Fatalf("owner tokens %q %q %v", ta, tb, err)
	}
}
