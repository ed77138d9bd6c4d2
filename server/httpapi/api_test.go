package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"mnemo/contract"
	"mnemo/engine/bolt"
	"mnemo/engine/remote"
	"mnemo/server/audit"
	"mnemo/server/auth"
	"mnemo/server/httpapi"
	"mnemo/server/wire"
)

const (
	ownerToken  = "owner-secret-token"
	aliceToken  = "alice-secret-token"
	readerToken = "reader-secret-token"
	adminToken  = "admin-secret-token"
	priyaToken  = "priya-secret-token"
)

// keysTOML names alice (curator confined to team:acme), rita (reader in
// team:acme), ada (admin confined to team:acme) and priya (admin confined to
// user:priya, inherit left out).
func keysTOML() string {
	return fmt.Sprintf(`
[[principal]]
name = "alice"
role = "curator"
reach = { at = "team:acme", descendants = true, inherit = false }
token_sha256 = [%q]

[[principal]]
name = "rita"
role = "reader"
reach = { at = "team:acme", descendants = true, inherit = false }
token_sha256 = [%q]

[[principal]]
name = "ada"
role = "admin"
reach = { at = "team:acme", descendants = true, inherit = false }
token_sha256 = [%q]

[[principal]]
name = "priya"
role = "admin"
reach = { at = "user:priya", descendants = true }
token_sha256 = [%q]
`, auth.HashToken(aliceToken), auth.HashToken(readerToken), auth.HashToken(adminToken), auth.HashToken(priyaToken))
}

type fixture struct {
	store *bolt.Engine
	srv   *httptest.Server
	owner *remote.Client
	// ids of the seeded records: two inside team:acme, one in team:other.
	acme1, acme2, other string
}

// storeAndKeys opens a bolt store in t.TempDir() and parses keysTOML.
func storeAndKeys(t *testing.T) (*bolt.Engine, *auth.Keys) {
	t.Helper()
	store, err := bolt.Open(t.TempDir(), bolt.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = store.Close() })
	keys, err := auth.ParseKeys([]byte(keysTOML()))
	if err != nil {
		t.Fatal(err)
	}
	return store, keys
}

func newFixture(t *testing.T, opts httpapi.Options) *fixture {
	t.Helper()
	store, keys := storeAndKeys(t)
	opts.OwnerToken, opts.Keys, opts.Audit, opts.AuditReader = ownerToken, keys, store, store
	srv := httptest.NewServer(httpapi.New(store, opts))
	t.Cleanup(srv.Close)
	f := &fixture{store: store, srv: srv, owner: client(t, srv.URL, ownerToken)}
	ctx := context.Background()
	f.acme1 = f.seed(t, ctx, "team:acme/agent:writer", "acme prefers tabs")
	f.acme2 = f.seed(t, ctx, "team:acme", "acme ships on fridays")
	f.other = f.seed(t, ctx, "team:other", "other team secret roadmap")
	return f
}

func client(t *testing.T, url, token string) *remote.Client {
	t.Helper()
	c, err := remote.New(url, token, remote.WithRetries(0))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.CloseIdleStreams)
	return c
}

func (f *fixture) seed(t *testing.T, ctx context.Context, ns, text string) string {
	t.Helper()
	meta := contract.MetaFromSource(contract.SourceAgent, nil)
	meta.Namespace = contract.MustNamespace(ns)
	rec, err := contract.Store(ctx, f.owner, contract.Document(text, meta))
	if err != nil {
		t.Fatal(err)
	}
	return rec.ID
}

// post sends raw JSON and returns the status and decoded body.
func post(t *testing.T, url, token, op, body string) (int, map[string]any, http.Header) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url+"/v1/"+op, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	var out map[string]any
	if len(bytes.TrimSpace(data)) > 0 && data[0] == '{' {
		if err := json.Unmarshal(data, &out); err != nil {
			t.Fatalf("%s answered invalid JSON: %s", op, data)
		}
	}
	return resp.StatusCode, out, resp.Header
}

func errorOf(t *testing.T, body map[string]any) (kind, code, message string) {
	t.Helper()
	e, ok := body["error"].(map[string]any)
	if !ok {
		t.Fatalf("no error object in %v", body)
	}
	kind, _ = e["kind"].(string)
	code, _ = e["code"].(string)
	message, _ = e["message"].(string)
	return
}

func TestUnauthenticatedCallersGetNoRecords(t *testing.T) {
	t.Parallel()
	f := newFixture(t, httpapi.Options{})
	for _, tc := range []struct{ name, token string }{{"no token", ""}, {"unknown token", "guess"}} {
		for _, op := range []string{"list", "browse", "export", "get", "fetch"} {
			body := map[string]string{
				"list": `{"limit":10}`, "browse": `{}`, "export": `{"limit":10}`,
				"get": fmt.Sprintf(`{"ids":[%q]}`, f.other), "fetch": `{"query":"secret","mode":"keyword","limit":5}`,
			}[op]
			status, out, hdr := post(t, f.srv.URL, tc.token, op, body)
			if status != http.StatusUnauthorized {
				t.Fatalf("%s %s: status %d, want 401", tc.name, op, status)
			}
			if kind, _, _ := errorOf(t, out); kind != "unauthorized" {
				t.Fatalf("%s %s: kind %q", tc.name, op, kind)
			}
			if hdr.Get("WWW-Authenticate") == "" {
				t.Fatalf("%s %s: a 401 without WWW-Authenticate", tc.name, op)
			}
			if _, leaked := out["items"]; leaked {
				t.Fatalf("%s %s: records in a refusal", tc.name, op)
			}
		}
	}
	// A client with a wrong token learns it at Connect.
	err := client(t, f.srv.URL, "guess").Connect(context.Background())
	if !errorsIs(err, contract.ErrUnauthorized) {
		t.Fatalf("connect with a wrong token: %v", err)
	}
	// Health needs no token and says nothing about records.
	resp, err := http.Get(f.srv.URL + "/v1/health")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("health: %d", resp.StatusCode)
	}
	events, err := f.store.ReadAudit(context.Background(), audit.Query{})
	if err != nil {
		t.Fatal(err)
	}
	refused := 0
	for _, ev := range events {
		if ev.Op == "authenticate" && ev.Refused != "" {
			refused++
		}
	}
	// Ten raw requests and the client's Connect.
	if refused != 11 {
		t.Fatalf("audit holds %d refused authentications, want 11", refused)
	}
}

func errorsIs(err error, target error) bool {
	ce := contract.AsError(err)
	return err != nil && ce.Is(target)
}

func TestRequestJSONCannotWidenTheReach(t *testing.T) {
	t.Parallel()
	f := newFixture(t, httpapi.Options{})
	ctx := context.Background()
	alice := client(t, f.srv.URL, aliceToken)
	wide := contract.ReachSubtree(contract.Root())
	other := contract.ReachExact(contract.MustNamespace("team:other"))

	for _, reach := range []*contract.Reach{nil, &wide} {
		page, err := alice.List(ctx, contract.ListRequest{Filter: contract.MetaFilter{Reach: reach}, Limit: 50})
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range page.Items {
			if h.ID == f.other {
				t.Fatalf("list with reach %+v showed team:other", reach)
			}
		}
		bp, err := alice.Browse(ctx, contract.BrowseQuery{Filter: contract.MetaFilter{Reach: reach}})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range bp.Records {
			if r.ID == f.other {
				t.Fatalf("browse with reach %+v showed team:other", reach)
			}
		}
		ex, err := alice.Explore(ctx, contract.ExploreRequest{Facet: "namespace", Filter: contract.MetaFilter{Reach: reach}, Limit: 50})
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range ex.Buckets {
			if b.Value == "team:other" {
				t.Fatalf("explore with reach %+v counted team:other", reach)
			}
		}
		hits, err := alice.Get(ctx, contract.GetRequest{IDs: []string{f.other, f.acme1}, Reach: reach})
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range hits {
			if h.ID == f.other {
				t.Fatalf("get with reach %+v returned team:other's record", reach)
			}
		}
		fp, err := alice.Fetch(ctx, contract.FetchRequest{Query: "secret roadmap", Mode: contract.ModeKeyword, Filter: contract.MetaFilter{Reach: reach}, Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		if len(fp.Hits) != 0 {
			t.Fatalf("fetch with reach %+v found %d hits outside the reach", reach, len(fp.Hits))
		}
	}
	// A reach wholly outside alice's is refused, naming it, rather than
	// answered with alice's own records.
	refusals := map[string]error{}
	_, refusals["list"] = alice.List(ctx, contract.ListRequest{Filter: contract.MetaFilter{Reach: &other}, Limit: 50})
	_, refusals["browse"] = alice.Browse(ctx, contract.BrowseQuery{Filter: contract.MetaFilter{Reach: &other}})
	_, refusals["explore"] = alice.Explore(ctx, contract.ExploreRequest{Facet: "namespace", Filter: contract.MetaFilter{Reach: &other}, Limit: 50})
	_, refusals["get"] = alice.Get(ctx, contract.GetRequest{IDs: []string{f.other, f.acme1}, Reach: &other})
	_, refusals["fetch"] = alice.Fetch(ctx, contract.FetchRequest{Query: "secret roadmap", Mode: contract.ModeKeyword, Filter: contract.MetaFilter{Reach: &other}, Limit: 10})
	_, refusals["export"] = alice.Export(ctx, contract.ListRequest{Filter: contract.MetaFilter{Reach: &other}, Limit: 50})
	for op, err := range refusals {
		if !wire.IsForbidden(err) || !strings.Contains(err.Error(), "`team:other` only") {
			t.Fatalf("%s with a reach outside alice's: %v", op, err)
		}
	}
	// The same reach sent as raw JSON, with an unknown key beside it.
	status, out, _ := post(t, f.srv.URL, aliceToken, "browse", `{"filter":{"reach":{"at":"team:other","descendants":true},"namespace":"team:other"},"limit":10}`)
	if status != http.StatusForbidden || !strings.Contains(fmt.Sprint(out), "`team:other` with its ancestors and everything below it") {
		t.Fatalf("browse: %d %v", status, out)
	}
	// A narrower reach is honoured.
	narrow := contract.ReachExact(contract.MustNamespace("team:acme/agent:writer"))
	page, err := alice.List(ctx, contract.ListRequest{Filter: contract.MetaFilter{Reach: &narrow}, Limit: 50})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Items) != 1 || page.Items[0].ID != f.acme1 {
		t.Fatalf("a narrower reach listed %d items", len(page.Items))
	}
	// Nor does a query widen the audit log, a read like the others: ada
	// (admin in team:acme) never reads the entry of team:other's store.
	for _, query := range []string{"", "?reach=root", "?principal=owner&limit=0"} {
		status, events := getAudit(t, f.srv.URL, adminToken, query)
		if status != http.StatusOK || len(events) == 0 {
			t.Fatalf("ada's audit %s: %d", query, status)
		}
		for _, ev := range events {
			if slices.Contains(ev.IDs, f.other) {
				t.Fatalf("ada's audit %s named team:other's record: %+v", query, ev)
			}
		}
	}
	// The owner is not confined.
	all, err := f.owner.List(ctx, contract.ListRequest{Limit: 50})
	if err != nil {
		t.Fatal(err)
	}
	if len(all.Items) != 3 {
		t.Fatalf("the owner lists %d items, want 3", len(all.Items))
	}
}

func TestInvalidSortAndForeignCursorAre400WithCodes(t *testing.T) {
	t.Parallel()
	f := newFixture(t, httpapi.Options{})
	status, out, _ := post(t, f.srv.URL, aliceToken, "browse", `{"order_by":[{"field":"password","dir":"asc"}]}`)
	kind, code, msg := errorOf(t, out)
	if status != 400 || kind != "invalid_request" || code != contract.CodeInvalidQuery || msg == "" {
		t.Fatalf("invalid sort: %d %s %s %q", status, kind, code, msg)
	}
	// A cursor of another query (another order) is refused.
	page, err := f.owner.Browse(context.Background(), contract.BrowseQuery{Limit: 1})
	if err != nil || page.Continuation == nil {
		t.Fatalf("first page: %v", err)
	}
	body := fmt.Sprintf(`{"limit":1,"order_by":[{"field":"created_at","dir":"asc"}],"cursor":%q}`, *page.Continuation)
	status, out, _ = post(t, f.srv.URL, aliceToken, "browse", body)
	kind, code, _ = errorOf(t, out)
	if status != 400 || kind != "invalid_request" || code != contract.CodeContinuationInvalid {
		t.Fatalf("foreign cursor: %d %s %s", status, kind, code)
	}
	// The remote client gives the same contract error back.
	_, err = client(t, f.srv.URL, aliceToken).Browse(context.Background(), contract.BrowseQuery{Limit: 1, Cursor: "!!!"})
	ce := contract.AsError(err)
	if ce.Kind != contract.KindInvalidRequest || ce.Code != contract.CodeContinuationInvalid || ce.Message != "cursor is not decodable" {
		t.Fatalf("remote decoded %#v", ce)
	}
}

func TestFixedNowWalkEndsWithTheExactMultipleEmptyPage(t *testing.T) {
	t.Parallel()
	f := newFixture(t, httpapi.Options{})
	ctx := context.Background()
	// Four more in team:acme: alice sees 6, a multiple of the limit 3.
	for i := range 4 {
		f.seed(t, ctx, "team:acme/agent:reviewer", fmt.Sprintf("acme note %d", i))
	}
	alice := client(t, f.srv.URL, aliceToken)
	now := time.Now().UTC().Truncate(time.Millisecond)
	q := contract.BrowseQuery{Limit: 3, Now: &now, Filter: contract.MetaFilter{Reach: contract.Ptr(contract.ReachSubtree(contract.Root()))}}
	seen := map[string]bool{}
	var sizes []int
	for {
		page, err := alice.Browse(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		if page.Total != 6 {
			t.Fatalf("total %d on page %d, want 6 on every page", page.Total, len(sizes)+1)
		}
		sizes = append(sizes, len(page.Records))
		for _, r := range page.Records {
			if seen[r.ID] {
				t.Fatalf("record %s seen twice", r.ID)
			}
			seen[r.ID] = true
		}
		if page.Continuation == nil {
			break
		}
		q.Cursor = *page.Continuation
	}
	if fmt.Sprint(sizes) != "[3 3 0]" || len(seen) != 6 || seen[f.other] {
		t.Fatalf("walk pages %v, %d records", sizes, len(seen))
	}
}

func TestConcurrentWritesDoNotSkewRecordsAgainstTotal(t *testing.T) {
	// no listing rate limit: the reads must keep pace with the writer
	f := newFixture(t, httpapi.Options{ListingRate: httpapi.Rate{PerSecond: -1}})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	alice := client(t, f.srv.URL, aliceToken)
	var writes atomic.Int64
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ctx.Err() == nil; i++ {
			meta := contract.MetaFromSource(contract.SourceAgent, nil)
			meta.Namespace = contract.MustNamespace("team:acme/agent:busy")
			if _, err := contract.Store(ctx, alice, contract.Document(fmt.Sprintf("busy write %d", i), meta)); err != nil {
				if ctx.Err() == nil {
					t.Error(err)
				}
				return
			}
			writes.Add(1)
		}
	}()
	// Read while the writer runs: start once it has written, and keep reading
	// until it has written a few more (bounded, so a stuck writer fails below).
	deadline := time.Now().Add(20 * time.Second)
	for writes.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	start := writes.Load()
	for i := 0; (i < 60 || writes.Load() < start+5) && time.Now().Before(deadline); i++ {
		page, err := alice.Browse(ctx, contract.BrowseQuery{Limit: 1000})
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Records) != page.Total {
			t.Fatalf("one response holds %d records but says total %d", len(page.Records), page.Total)
		}
	}
	cancel()
	wg.Wait()
	if writes.Load() < start+5 {
		t.Fatalf("only %d writes ran beside the reads", writes.Load()-start)
	}
}

func TestForgetLeavesOtherScopesAndReportsThemSkipped(t *testing.T) {
	t.Parallel()
	f := newFixture(t, httpapi.Options{})
	body := fmt.Sprintf(`{"ids":[%q,%q]}`, f.acme1, f.other)
	status, out, _ := post(t, f.srv.URL, aliceToken, "forget", body)
	if status != 200 || out["forgotten"].(float64) != 1 || out["skipped"].(float64) != 1 {
		t.Fatalf("forget: %d %v", status, out)
	}
	ctx := context.Background()
	hits, err := f.owner.Get(ctx, contract.GetRequest{IDs: []string{f.other, f.acme1}})
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != 1 || hits[0].ID != f.other {
		t.Fatalf("after alice's forget the store holds %v", hits)
	}
	// forget_within with a reach wider than alice's is kept inside hers.
	body = fmt.Sprintf(`{"ids":[%q,%q],"reach":{"at":"","descendants":true}}`, f.acme2, f.other)
	status, out, _ = post(t, f.srv.URL, aliceToken, "forget_within", body)
	if status != 200 || out["forgotten"].(float64) != 1 || out["skipped"].(float64) != 1 {
		t.Fatalf("forget_within: %d %v", status, out)
	}
	// A filter with only a reach would mean everything in it.
	status, out, _ = post(t, f.srv.URL, aliceToken, "forget", `{"filter":{"reach":{"at":"team:acme","descendants":true}}}`)
	if kind, _, _ := errorOf(t, out); status != 400 || kind != "invalid_request" {
		t.Fatalf("reach-only forget: %d %v", status, out)
	}
	// Review and supersede cannot reach across either: it is "does not exist".
	status, out, _ = post(t, f.srv.URL, aliceToken, "review", fmt.Sprintf(`{"id":%q,"action":"approve"}`, f.other))
	if _, _, msg := errorOf(t, out); status != 404 || msg != "record "+f.other+" does not exist" {
		t.Fatalf("review across scopes: %d %v", status, out)
	}
	events, err := f.store.ReadAudit(ctx, audit.Query{})
	if err != nil {
		t.Fatal(err)
	}
	var forgets []audit.Event
	for _, ev := range events {
		if ev.Principal == "alice" && strings.HasPrefix(ev.Op, "forget") && ev.Refused == "" {
			forgets = append(forgets, ev)
		}
	}
	if len(forgets) != 2 || forgets[0].Count != 1 || forgets[0].Skipped != 1 || len(forgets[0].IDs) != 2 {
		t.Fatalf("audit of alice's forgets: %+v", forgets)
	}
}

func TestReadersCannotChangeAnything(t *testing.T) {
	t.Parallel()
	f := newFixture(t, httpapi.Options{})
	cases := map[string]string{
		"forget":        fmt.Sprintf(`{"ids":[%q]}`, f.acme1),
		"forget_within": fmt.Sprintf(`{"ids":[%q],"reach":{"at":"team:acme"}}`, f.acme1),
		"store":         `{"type":"document","body":{"text":"x"},"meta":{"namespace":"team:acme","source":{"kind":"agent"}}}`,
		"store_many":    `[{"type":"document","body":{"text":"x"},"meta":{"namespace":"team:acme","source":{"kind":"agent"}}}]`,
		"review":        fmt.Sprintf(`{"id":%q,"action":"reject"}`, f.acme1),
		"supersede":     fmt.Sprintf(`{"id":%q,"by":%q}`, f.acme1, f.acme2),
	}
	for op, body := range cases {
		status, out, _ := post(t, f.srv.URL, readerToken, op, body)
		kind, _, msg := errorOf(t, out)
		if status != http.StatusForbidden || kind != "unauthorized" || !strings.Contains(msg, "reader") {
			t.Fatalf("reader %s: %d %v", op, status, out)
		}
	}
	ctx := context.Background()
	_, err := client(t, f.srv.URL, readerToken).Forget(ctx, contract.ForgetIDs(f.acme1))
	if !wire.IsForbidden(err) {
		t.Fatalf("remote reader forget: %v, want a forbidden refusal", err)
	}
	hits, _ := f.owner.Get(ctx, contract.GetRequest{IDs: []string{f.acme1}})
	if len(hits) != 1 {
		t.Fatal("a reader's forget removed a record")
	}
	events, _ := f.store.ReadAudit(ctx, audit.Query{})
	refused := 0
	for _, ev := range events {
		if ev.Principal == "rita" && ev.Refused != "" {
			refused++
		}
	}
	if refused != len(cases)+1 {
		t.Fatalf("audit holds %d of rita's refusals, want %d", refused, len(cases)+1)
	}
	// Readers read.
	page, err := client(t, f.srv.URL, readerToken).List(ctx, contract.ListRequest{Limit: 10})
	if err != nil || len(page.Items) != 2 {
		t.Fatalf("reader list: %v %d", err, len(page.Items))
	}
}

func TestStoresLandInsideTheReachUnlessAdmin(t *testing.T) {
	t.Parallel()
	f := newFixture(t, httpapi.Options{})
	outside := `{"type":"document","body":{"text":"sneaky"},"meta":{"namespace":"team:other","source":{"kind":"agent"}}}`
	status, out, _ := post(t, f.srv.URL, aliceToken, "store", outside)
	if status != http.StatusForbidden {
		t.Fatalf("curator store outside the reach: %d %v", status, out)
	}
	// One item outside refuses the whole batch.
	batch := `[{"type":"document","body":{"text":"fine"},"meta":{"namespace":"team:acme","source":{"kind":"agent"}}},` + outside + `]`
	status, _, _ = post(t, f.srv.URL, aliceToken, "store_many", batch)
	if status != http.StatusForbidden {
		t.Fatalf("curator batch with one item outside: %d", status)
	}
	page, _ := f.owner.List(context.Background(), contract.ListRequest{Limit: 50})
	if len(page.Items) != 3 {
		t.Fatalf("a refused batch stored something: %d items", len(page.Items))
	}
	inside := `{"item":{"type":"document","body":{"text":"fine"},"meta":{"namespace":"team:acme/agent:x","source":{"kind":"agent"}}},"options":{"status":"candidate"}}`
	if status, out, _ := post(t, f.srv.URL, aliceToken, "store", inside); status != 200 || out["id"] == nil {
		t.Fatalf("curator store inside: %d %v", status, out)
	}
	if status, out, _ := post(t, f.srv.URL, adminToken, "store", outside); status != 200 {
		t.Fatalf("admin store anywhere: %d %v", status, out)
	}
}

func TestBodyLimitAndRateLimit(t *testing.T) {
	t.Parallel()
	f := newFixture(t, httpapi.Options{MaxBody: 256, ListingRate: httpapi.Rate{PerSecond: 0.001, Burst: 2}})
	status, out, _ := post(t, f.srv.URL, aliceToken, "fetch", `{"query":"`+strings.Repeat("q", 400)+`","mode":"keyword","limit":1}`)
	if status != http.StatusRequestEntityTooLarge {
		t.Fatalf("big body: %d %v", status, out)
	}
	for i := range 2 {
		if status, out, _ := post(t, f.srv.URL, aliceToken, "list", `{"limit":1}`); status != 200 {
			t.Fatalf("list %d: %d %v", i, status, out)
		}
	}
	status, out, hdr := post(t, f.srv.URL, aliceToken, "browse", `{}`)
	if status != http.StatusTooManyRequests || hdr.Get("Retry-After") == "" {
		t.Fatalf("third listing: %d %v (Retry-After %q)", status, out, hdr.Get("Retry-After"))
	}
	// Buckets are per principal: rita still has hers, and fetch is not a listing.
	if status, _, _ := post(t, f.srv.URL, readerToken, "list", `{"limit":1}`); status != 200 {
		t.Fatalf("another principal was limited: %d", status)
	}
	if status, _, _ := post(t, f.srv.URL, aliceToken, "get", fmt.Sprintf(`{"ids":[%q]}`, f.acme1)); status != 200 {
		t.Fatalf("get was rate-limited: %d", status)
	}
}

// failing answers every list with an engine error naming a file, as a broken
// store might.
type failing struct{ contract.Engine }

func (failing) List(context.Context, contract.ListRequest) (contract.ListPage, error) {
	return contract.ListPage{}, contract.EngineErr("read /home/op/.local/share/mnemo/mnemo.db: input/output error")
}

func (failing) Browse(context.Context, contract.BrowseQuery) (contract.BrowsePage, error) {
	panic("browse blew up at /home/op/src/mnemo/engine.go:42")
}

func TestErrorsNeverCarryPathsOrStacks(t *testing.T) {
	t.Parallel()
	store, err := bolt.Open(t.TempDir(), bolt.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	srv := httptest.NewServer(httpapi.New(failing{store}, httpapi.Options{Open: true}))
	defer srv.Close()
	for _, op := range []string{"list", "browse"} {
		body := `{"limit":1}`
		status, out, _ := post(t, srv.URL, "", op, body)
		kind, _, msg := errorOf(t, out)
		if status != 500 || kind != "engine" || strings.Contains(msg, "/") || strings.Contains(msg, "goroutine") {
			t.Fatalf("%s: %d %s %q", op, status, kind, msg)
		}
	}
	status, out, _ := post(t, srv.URL, "", "nope", `{}`)
	if status != 404 || out["error"] == nil {
		t.Fatalf("unknown operation: %d %v", status, out)
	}
	status, out, _ = post(t, srv.URL, "", "list", `{"limit":`)
	if kind, _, _ := errorOf(t, out); status != 400 || kind != "invalid_request" {
		t.Fatalf("broken JSON: %d %v", status, out)
	}
}

func TestAuditLogIsForAdmins(t *testing.T) {
	t.Parallel()
	f := newFixture(t, httpapi.Options{})
	ctx := context.Background()
	_, err := client(t, f.srv.URL, aliceToken).ReadAudit(ctx, audit.Query{})
	if !wire.IsForbidden(err) {
		t.Fatalf("a curator read the audit log: %v", err)
	}
	events, err := client(t, f.srv.URL, adminToken).ReadAudit(ctx, audit.Query{Limit: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(events) != 2 || events[0].Principal != "owner" || events[0].Op != "store" || events[0].Via != "http" {
		t.Fatalf("the admin's read: %+v", events)
	}
	// The curator's refused read is itself in the log.
	all, err := f.owner.ReadAudit(ctx, audit.Query{Since: events[0].At})
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 4 || all[3].Principal != "alice" || all[3].Op != "audit" || all[3].Refused == "" {
		t.Fatalf("the log holds %+v, want 3 stores and alice's refusal", all)
	}
}
