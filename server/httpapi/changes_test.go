package httpapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"mnemo/contract"
	"mnemo/engine/memory"
	"mnemo/server/httpapi"
)

// getChanges sends GET /v1/changes?query and returns the status and body.
func getChanges(t *testing.T, url, token, query string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url+"/v1/changes?"+query, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func feedOf(t *testing.T, url, token, query string) contract.ChangesPage {
	t.Helper()
	status, body := getChanges(t, url, token, query)
	if status != http.StatusOK {
		t.Fatalf("GET /v1/changes?%s: %d %s", query, status, body)
	}
	var p contract.ChangesPage
	if err := json.Unmarshal([]byte(body), &p); err != nil {
		t.Fatal(err)
	}
	return p
}

func opsOf(p contract.ChangesPage) string {
	var parts []string
	for _, c := range p.Changes {
		parts = append(parts, string(c.Op)+" "+c.Namespace.String())
	}
	return strings.Join(parts, ", ")
}

// TestChangesAreConfinedToEachPrincipal: two principals of different reaches
// each see only their own changes, and a forget of the other's record
// produces nothing on their feed.
func TestChangesAreConfinedToEachPrincipal(t *testing.T) {
	f := newFixture(t, httpapi.Options{})
	ctx := context.Background()
	head := feedOf(t, f.srv.URL, ownerToken, "since=now").Head
	priya := f.seed(t, ctx, "user:priya", "priya's own note")
	acme := f.seed(t, ctx, "team:acme/agent:bot", "a bot's note")
	if _, err := f.owner.Forget(ctx, contract.ForgetIDs(priya)); err != nil {
		t.Fatal(err)
	}
	if _, err := f.owner.Forget(ctx, contract.ForgetIDs(f.other)); err != nil {
		t.Fatal(err)
	}
	q := "since=" + jsonNumber(head)
	if got := opsOf(feedOf(t, f.srv.URL, aliceToken, q)); got != "store team:acme/agent:bot" {
		t.Fatalf("alice's feed: %s", got)
	}
	if got := opsOf(feedOf(t, f.srv.URL, readerToken, q)); got != "store team:acme/agent:bot" {
		t.Fatalf("rita's feed (a reader may watch): %s", got)
	}
	if got := opsOf(feedOf(t, f.srv.URL, priyaToken, q)); got != "store user:priya, forget user:priya" {
		t.Fatalf("priya's feed: %s", got)
	}
	all := feedOf(t, f.srv.URL, ownerToken, q)
	if got := opsOf(all); got != "store user:priya, store team:acme/agent:bot, forget user:priya, forget team:other" {
		t.Fatalf("the owner's feed: %s", got)
	}
	for _, c := range all.Changes {
		if c.Op == contract.OpForget && c.Record != nil {
			t.Fatalf("a forget carries its record over HTTP: %+v", c)
		}
		if c.Op == contract.OpStore && c.ID == acme && (c.Record == nil || c.Record.Text != "a bot's note") {
			t.Fatalf("the store carries %+v", c.Record)
		}
	}
	// A reach outside the principal's is refused, like every read.
	status, body := getChanges(t, f.srv.URL, aliceToken, q+`&reach={"at":"user:priya","descendants":true}`)
	if status != http.StatusForbidden || !strings.Contains(body, "share no namespace") {
		t.Fatalf("alice asking for priya's reach: %d %s", status, body)
	}
	// Through the Go client, alice's narrower reach narrows further.
	alice := client(t, f.srv.URL, aliceToken)
	bot := contract.ReachExact(contract.MustNamespace("team:acme/agent:bot"))
	p, err := alice.Changes(ctx, contract.ChangesRequest{Since: head, Limit: 10, Reach: &bot})
	if err != nil || len(p.Changes) != 1 || p.Changes[0].ID != acme {
		t.Fatalf("alice through the client: %+v %v", p, err)
	}
}

func jsonNumber(n uint64) string { b, _ := json.Marshal(n); return string(b) }

func TestChangesQueryErrors(t *testing.T) {
	f := newFixture(t, httpapi.Options{})
	for _, c := range []struct{ query, want string }{
		{"since=abc", "since `abc` is not a change seq (a whole number, or `now`)"},
		{"since=-1", "since `-1` is not a change seq"},
		{"limit=lots", "limit `lots` is not a count"},
		{"limit=0", "changes limit must be between 1 and 1000, not 0"},
		{"limit=1001", "changes limit must be between 1 and 1000, not 1001"},
		{"wait=soon", "wait `soon` is not a duration such as 30s or 500ms"},
		{"wait=61s", "changes wait must be between 0s and 1m0s, not 1m1s"},
		{"reach=nope", "reach is not a reach's JSON"},
	} {
		status, body := getChanges(t, f.srv.URL, ownerToken, c.query)
		if status != http.StatusBadRequest || !strings.Contains(body, c.want) || !strings.Contains(body, `"kind":"invalid_request"`) {
			t.Errorf("%s: %d %s; want 400 with %q", c.query, status, body, c.want)
		}
	}
	status, body := getChanges(t, f.srv.URL, ownerToken, "since=99999999")
	if status != http.StatusGone || !strings.Contains(body, `"kind":"expired"`) || !strings.Contains(body, "reload") {
		t.Fatalf("a since past the head: %d %s", status, body)
	}
	req, _ := http.NewRequest(http.MethodPost, f.srv.URL+"/v1/changes", strings.NewReader("{}"))
	req.Header.Set("Authorization", "Bearer "+ownerToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Fatalf("POST /v1/changes: %d", resp.StatusCode)
	}
	if status, _ := getChanges(t, f.srv.URL, "nobody", "since=0"); status != http.StatusUnauthorized {
		t.Fatalf("an unknown token: %d", status)
	}
}

func TestChangesExpiredOverHTTP(t *testing.T) {
	e := memory.New(memory.WithChangeRetention(contract.ChangeRetention{MaxAge: time.Nanosecond, MaxChanges: 2}))
	srv := httptest.NewServer(httpapi.New(e, httpapi.Options{OwnerToken: ownerToken}))
	t.Cleanup(srv.Close)
	c := client(t, srv.URL, ownerToken)
	for _, text := range []string{"one", "two", "three", "four"} {
		time.Sleep(time.Millisecond)
		if _, err := contract.Store(context.Background(), c, contract.Document(text, contract.MemoryMeta{})); err != nil {
			t.Fatal(err)
		}
	}
	_, err := c.Changes(context.Background(), contract.ChangesRequest{Since: 0, Limit: 10})
	var ce *contract.Error
	if !errors.As(err, &ce) || ce.Kind != contract.KindExpired || !strings.Contains(ce.Message, "no longer kept") {
		t.Fatalf("since 0 after pruning, through the client: %v", err)
	}
}

func TestChangesAreRateLimitedLikeListings(t *testing.T) {
	f := newFixture(t, httpapi.Options{ListingRate: httpapi.Rate{PerSecond: 0.01, Burst: 1}})
	if status, _ := getChanges(t, f.srv.URL, aliceToken, "since=0"); status != http.StatusOK {
		t.Fatalf("first: %d", status)
	}
	if status, body := getChanges(t, f.srv.URL, aliceToken, "since=0"); status != http.StatusTooManyRequests || !strings.Contains(body, "`changes`") {
		t.Fatalf("second: %d %s", status, body)
	}
}

// TestLongPollWakesOnItsOwnChangesAndNeverBlocksWriters: twenty clients
// long-polling a quiet reach hold up no writer; a change outside a client's
// reach does not wake it; one inside does, at once.
func TestLongPollWakesOnItsOwnChangesAndNeverBlocksWriters(t *testing.T) {
	f := newFixture(t, httpapi.Options{ListingRate: httpapi.Rate{PerSecond: -1}})
	ctx := context.Background()
	head := feedOf(t, f.srv.URL, ownerToken, "since=now").Head
	var wg sync.WaitGroup
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			getChanges(t, f.srv.URL, ownerToken, `since=now&wait=3s&reach={"at":"team:quiet"}`)
		}()
	}
	woke := make(chan contract.ChangesPage, 1)
	go func() { woke <- feedOf(t, f.srv.URL, aliceToken, "since="+jsonNumber(head)+"&wait=20s") }()
	time.Sleep(200 * time.Millisecond)
	start := time.Now()
	for i := range 30 {
		f.seed(t, ctx, "team:other", "outside alice's reach "+jsonNumber(uint64(i)))
	}
	if el := time.Since(start); el > 5*time.Second {
		t.Fatalf("30 stores took %s with 21 long polls open", el)
	}
	select {
	case p := <-woke:
		t.Fatalf("alice woke on changes outside her reach: %+v", p)
	case <-time.After(300 * time.Millisecond):
	}
	stored := time.Now()
	id := f.seed(t, ctx, "team:acme", "inside alice's reach")
	p := <-woke
	if len(p.Changes) != 1 || p.Changes[0].ID != id || time.Since(stored) > 2*time.Second {
		t.Fatalf("alice woke after %s with %+v", time.Since(stored), p)
	}
	wg.Wait()
}

func TestEndLongPollsAnswersWaitingClients(t *testing.T) {
	f := newFixture(t, httpapi.Options{})
	h := httpapi.New(f.store, httpapi.Options{OwnerToken: ownerToken})
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	done := make(chan string, 1)
	go func() {
		status, body := getChanges(t, srv.URL, ownerToken, "since=now&wait=30s")
		done <- fmt.Sprint(status, " ", body)
	}()
	time.Sleep(200 * time.Millisecond)
	start := time.Now()
	h.EndLongPolls()
	got := <-done
	if !strings.HasPrefix(got, "503 ") || !strings.Contains(got, "the server is stopping") || time.Since(start) > 2*time.Second {
		t.Fatalf("a long poll when the server stops: %s after %s", got, time.Since(start))
	}
}
