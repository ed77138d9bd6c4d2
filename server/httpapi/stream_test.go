package httpapi_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"mnemo/contract"
	"mnemo/engine/memory"
	"mnemo/server/auth"
	"mnemo/server/httpapi"
	"mnemo/server/wire"
)

// sseStream is a raw GET /v1/changes stream (the HTTP client of the
// standard library, the frame reader of server/wire).
type sseStream struct {
	resp   *http.Response
	events *wire.EventReader
	cancel context.CancelFunc
}

// openStream opens the stream; a refused request returns its status and body.
func openStream(t *testing.T, url, token, query string, header ...string) (*sseStream, int, string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url+"/v1/changes?"+query, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Accept", "text/event-stream")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		cancel()
		return nil, resp.StatusCode, string(b)
	}
	s := &sseStream{resp: resp, events: wire.NewEventReader(resp.Body, 1<<26), cancel: cancel}
	t.Cleanup(s.close)
	if ct := resp.Header.Get("Content-Type"); ct != wire.EventStreamType {
		t.Fatalf("the stream's Content-Type: %q", ct)
	}
	// Not chunked: the body is the rest of the connection, one write of the
	// socket an event.
	if len(resp.TransferEncoding) != 0 || resp.ContentLength != -1 || !resp.Close {
		t.Fatalf("the stream's body is framed by %q (length %d, close %v), want the rest of the connection", resp.TransferEncoding, resp.ContentLength, resp.Close)
	}
	return s, http.StatusOK, ""
}

func (s *sseStream) close() {
	s.cancel()
	s.resp.Body.Close()
}

// next reads the next event (failing the test after 10 s).
func (s *sseStream) next(t *testing.T) wire.Event {
	t.Helper()
	type result struct {
		ev  wire.Event
		err error
	}
	ch := make(chan result, 1)
	go func() {
		ev, err := s.events.Next()
		ch <- result{ev, err}
	}()
	select {
	case r := <-ch:
		if r.err != nil {
			t.Fatalf("reading the stream: %v", r.err)
		}
		return r.ev
	case <-time.After(10 * time.Second):
		t.Fatal("no event in 10 s")
	}
	return wire.Event{}
}

// page reads the next event, which must be a page of changes.
func (s *sseStream) page(t *testing.T) contract.ChangesPage {
	t.Helper()
	ev := s.next(t)
	if ev.Event != wire.EventChanges {
		t.Fatalf("event %q: %s", ev.Event, ev.Data)
	}
	var p contract.ChangesPage
	if err := p.UnmarshalJSON(ev.Data); err != nil {
		t.Fatalf("%s: %v", ev.Data, err)
	}
	if ev.ID != strconv.FormatUint(p.Next, 10) {
		t.Fatalf("event id %q for a page whose next is %d", ev.ID, p.Next)
	}
	return p
}

// until reads pages until one's next reaches seq, returning their changes.
func (s *sseStream) until(t *testing.T, seq uint64) []contract.Change {
	t.Helper()
	var out []contract.Change
	for {
		p := s.page(t)
		out = append(out, p.Changes...)
		if p.Next >= seq {
			return out
		}
	}
}

func opsOfChanges(cs []contract.Change) string {
	return opsOf(contract.ChangesPage{Changes: cs})
}

// TestChangeStreamIsConfinedToEachPrincipal: two principals of different
// reaches, each on its own stream, see only their own changes; a forget of
// the other's record produces nothing on their stream; a reach outside the
// principal's is refused before the stream begins, with its status.
func TestChangeStreamIsConfinedToEachPrincipal(t *testing.T) {
	f := newFixture(t, httpapi.Options{})
	ctx := context.Background()
	head := feedOf(t, f.srv.URL, ownerToken, "since=now").Head
	q := "since=" + jsonNumber(head) + "&wait=200ms"
	alice, _, _ := openStream(t, f.srv.URL, aliceToken, q)
	priya, _, _ := openStream(t, f.srv.URL, priyaToken, q)
	for _, s := range []*sseStream{alice, priya} {
		if p := s.page(t); len(p.Changes) != 0 || p.Next != head {
			t.Fatalf("the first event of a quiet feed: %+v", p)
		}
	}
	pid := f.seed(t, ctx, "user:priya", "priya's own note")
	acme := f.seed(t, ctx, "team:acme/agent:bot", "a bot's note")
	if _, err := f.owner.Forget(ctx, contract.ForgetIDs(pid)); err != nil {
		t.Fatal(err)
	}
	if _, err := f.owner.Forget(ctx, contract.ForgetIDs(f.other)); err != nil {
		t.Fatal(err)
	}
	end := feedOf(t, f.srv.URL, ownerToken, "since=now").Head
	got := alice.until(t, end)
	if s := opsOfChanges(got); s != "store team:acme/agent:bot" {
		t.Fatalf("alice's stream: %s", s)
	}
	if got[0].ID != acme || got[0].Record == nil || got[0].Record.Text != "a bot's note" {
		t.Fatalf("alice's store: %+v", got[0])
	}
	got = priya.until(t, end)
	if s := opsOfChanges(got); s != "store user:priya, forget user:priya" {
		t.Fatalf("priya's stream: %s", s)
	}
	if got[1].Record != nil {
		t.Fatalf("a forget carries its record on the stream: %+v", got[1])
	}
	_, status, body := openStream(t, f.srv.URL, aliceToken, q+`&reach={"at":"user:priya","descendants":true}`)
	if status != http.StatusForbidden || !strings.Contains(body, "share no namespace") {
		t.Fatalf("alice streaming priya's reach: %d %s", status, body)
	}
	if _, status, _ := openStream(t, f.srv.URL, "nobody", q); status != http.StatusUnauthorized {
		t.Fatalf("an unknown token: %d", status)
	}
}

// TestChangeStreamResumesFromItsLastID: a stream closed after some events,
// opened again with since (or Last-Event-ID) = the last id, goes on with the
// next change: nothing missed, nothing twice.
func TestChangeStreamResumesFromItsLastID(t *testing.T) {
	f := newFixture(t, httpapi.Options{StreamGather: -1})
	ctx := context.Background()
	head := feedOf(t, f.srv.URL, ownerToken, "since=now").Head
	var want []string
	for i := range 6 {
		want = append(want, f.seed(t, ctx, "team:acme", fmt.Sprintf("note %d", i)))
	}
	s, _, _ := openStream(t, f.srv.URL, aliceToken, "since="+jsonNumber(head)+"&limit=2")
	var got []string
	p := s.page(t)
	for _, c := range p.Changes {
		got = append(got, c.ID)
	}
	s.close()
	// Resume by since, then by the header a reconnecting EventSource sends.
	s, _, _ = openStream(t, f.srv.URL, aliceToken, "since="+jsonNumber(p.Next)+"&limit=2")
	p = s.page(t)
	for _, c := range p.Changes {
		got = append(got, c.ID)
	}
	s.close()
	s, _, _ = openStream(t, f.srv.URL, aliceToken, "limit=2", wire.LastEventID, strconv.FormatUint(p.Next, 10))
	p = s.page(t)
	for _, c := range p.Changes {
		got = append(got, c.ID)
	}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("resumed streams gave %v, want %v", got, want)
	}
}

// TestChangeStreamErrors: a since past retention is refused before the
// stream begins (410, expired, "reload"), like the long poll; a stream open
// when the server stops ends with an error event saying so; a stream whose
// token the keys file no longer holds ends with an unauthorized event.
func TestChangeStreamErrors(t *testing.T) {
	e := memory.New(memory.WithChangeRetention(contract.ChangeRetention{MaxAge: time.Nanosecond, MaxChanges: 2}))
	keys, err := auth.ParseKeys([]byte(keysTOML()))
	if err != nil {
		t.Fatal(err)
	}
	h := httpapi.New(e, httpapi.Options{OwnerToken: ownerToken, Keys: keys})
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	c := client(t, srv.URL, ownerToken)
	meta := contract.MetaFromSource(contract.SourceAgent, nil)
	meta.Namespace = contract.MustNamespace("team:acme")
	for _, text := range []string{"one", "two", "three", "four"} {
		time.Sleep(time.Millisecond)
		if _, err := contract.Store(context.Background(), c, contract.Document(text, meta)); err != nil {
			t.Fatal(err)
		}
	}
	_, status, body := openStream(t, srv.URL, ownerToken, "since=0")
	if status != http.StatusGone || !strings.Contains(body, `"kind":"expired"`) || !strings.Contains(body, "reload") {
		t.Fatalf("a since past retention: %d %s", status, body)
	}
	// Through the client, as its own kind.
	_, err = c.Changes(context.Background(), contract.ChangesRequest{Since: 0, Limit: 10, Wait: time.Second})
	if contract.KindOf(err) != contract.KindExpired || !strings.Contains(err.Error(), "no longer kept") {
		t.Fatalf("a since past retention through the client's stream: %v", err)
	}

	// A revoked token: the next event is the refusal.
	alice, _, _ := openStream(t, srv.URL, aliceToken, "since=now")
	alice.page(t)
	fewer, err := auth.ParseKeys([]byte(fmt.Sprintf("[[principal]]\nname = \"priya\"\nrole = \"admin\"\ntoken_sha256 = [%q]\n", auth.HashToken(priyaToken))))
	if err != nil {
		t.Fatal(err)
	}
	keys.Replace(fewer)
	if _, err := contract.Store(context.Background(), c, contract.Document("after the reload", meta)); err != nil {
		t.Fatal(err)
	}
	ev := alice.next(t)
	if ev.Event != wire.EventError || contract.KindOf(wire.StreamError(ev.Data)) != contract.KindUnauthorized || !strings.Contains(string(ev.Data), "no longer known") {
		t.Fatalf("a revoked token's stream: %q %s", ev.Event, ev.Data)
	}
	if _, err := alice.events.Next(); err != io.EOF {
		t.Fatalf("after the refusal: %v", err)
	}

	// The server stopping.
	owner, _, _ := openStream(t, srv.URL, ownerToken, "since=now&wait=30s")
	owner.page(t)
	start := time.Now()
	h.EndLongPolls()
	ev = owner.next(t)
	if ev.Event != wire.EventError || contract.KindOf(wire.StreamError(ev.Data)) != contract.KindUnavailable || !strings.Contains(string(ev.Data), "stopping") || time.Since(start) > 2*time.Second {
		t.Fatalf("a stream when the server stops: %q %s after %s", ev.Event, ev.Data, time.Since(start))
	}
}

// TestChangeStreamIsRateLimitedLikeListings: opening a stream takes a token
// of the principal's listing bucket, like a long poll.
func TestChangeStreamIsRateLimitedLikeListings(t *testing.T) {
	f := newFixture(t, httpapi.Options{ListingRate: httpapi.Rate{PerSecond: 0.01, Burst: 1}})
	if _, status, body := openStream(t, f.srv.URL, aliceToken, "since=now"); status != http.StatusOK {
		t.Fatalf("first: %d %s", status, body)
	}
	if _, status, body := openStream(t, f.srv.URL, aliceToken, "since=now"); status != http.StatusTooManyRequests || !strings.Contains(body, "`changes`") {
		t.Fatalf("second: %d %s", status, body)
	}
}

// countingHandler counts the requests being served.
type countingHandler struct {
	h      http.Handler
	active atomic.Int64
}

func (c *countingHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c.active.Add(1)
	defer c.active.Add(-1)
	c.h.ServeHTTP(w, r)
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not after 10 s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestChangeStreamOutlivesTheServerTimeoutsAndEndsWithItsClient: a stream
// lasts past the server's read and write timeouts (mnemo serve sets both),
// delivering a change made after them, and its handler returns once the
// client goes.
func TestChangeStreamOutlivesTheServerTimeoutsAndEndsWithItsClient(t *testing.T) {
	e := memory.New()
	counted := &countingHandler{h: httpapi.New(e, httpapi.Options{OwnerToken: ownerToken})}
	srv := httptest.NewUnstartedServer(counted)
	srv.Config.ReadTimeout, srv.Config.WriteTimeout = 300*time.Millisecond, 300*time.Millisecond
	srv.Start()
	t.Cleanup(srv.Close)
	s, _, _ := openStream(t, srv.URL, ownerToken, "since=now&wait=200ms")
	s.page(t)
	time.Sleep(800 * time.Millisecond)
	c := client(t, srv.URL, ownerToken)
	rec, err := contract.Store(context.Background(), c, contract.Document("after the timeouts", contract.MemoryMeta{}))
	if err != nil {
		t.Fatal(err)
	}
	for {
		p := s.page(t)
		if len(p.Changes) > 0 {
			if p.Changes[0].ID != rec.ID {
				t.Fatalf("after the timeouts: %+v", p.Changes)
			}
			break
		}
	}
	s.close()
	waitFor(t, "the stream's handler returning after its client went", func() bool { return counted.active.Load() == 0 })
}

// TestChangeStreamDropsASlowClientWithoutHoldingUpWriters: a client that
// opens a stream and stops reading never slows a writer; the server drops
// it once an event waits longer than its write timeout, and the client,
// resuming from the last whole event it had, gets every change after it
// exactly once.
func TestChangeStreamDropsASlowClientWithoutHoldingUpWriters(t *testing.T) {
	e := memory.New()
	counted := &countingHandler{h: httpapi.New(e, httpapi.Options{OwnerToken: ownerToken, StreamWriteTimeout: 200 * time.Millisecond})}
	srv := httptest.NewServer(counted)
	t.Cleanup(srv.Close)
	c := client(t, srv.URL, ownerToken)
	ctx := context.Background()

	// A raw connection, read from only later.
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "GET /v1/changes?since=0&limit=10 HTTP/1.1\r\nHost: mnemo\r\nAuthorization: Bearer %s\r\nAccept: text/event-stream\r\n\r\n", ownerToken)
	waitFor(t, "the stream opening", func() bool { return counted.active.Load() == 1 })

	// 18 MB of changes: more than the socket buffers hold (4 MB at most
	// on Linux by default).
	text := strings.Repeat("a slow client never holds up a writer. ", 500)
	var ids []string
	var slowest time.Duration
	start := time.Now()
	for b := range 30 {
		items := make([]contract.StoreItem, 30)
		for i := range items {
			items[i] = contract.Document(fmt.Sprintf("%d.%d %s", b, i, text), contract.MemoryMeta{})
		}
		t0 := time.Now()
		recs, err := contract.StoreMany(ctx, c, items)
		if err != nil {
			t.Fatal(err)
		}
		slowest = max(slowest, time.Since(t0))
		for _, r := range recs {
			ids = append(ids, r.ID)
		}
	}
	if el := time.Since(start); el > 20*time.Second || slowest > 5*time.Second {
		t.Fatalf("900 stores took %s (the slowest batch %s) with a stuck stream", el, slowest)
	}
	waitFor(t, "the server dropping the stuck stream", func() bool { return counted.active.Load() == 0 })

	// What the client had: whole events up to where the server gave up.
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	events := wire.NewEventReader(resp.Body, 1<<26)
	seen := map[string]int{}
	var order []string
	var last uint64
	for {
		ev, err := events.Next()
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				t.Fatalf("the stuck stream was not closed by the server (%d changes read)", len(order))
			}
			break
		}
		var p contract.ChangesPage
		if err := p.UnmarshalJSON(ev.Data); err != nil {
			t.Fatal(err)
		}
		for _, ch := range p.Changes {
			seen[ch.ID]++
			order = append(order, ch.ID)
		}
		last = p.Next
	}
	if len(order) >= len(ids) {
		t.Fatalf("the stuck client had all %d changes: nothing was dropped", len(order))
	}
	before := len(order)
	// Resume from the last whole event, through the Go client, in pages of
	// 20 changes (400 KB): the server still drops a client that takes an
	// event slower than 200 ms, and a page of 700 of these changes (14 MB)
	// took the client longer than that under -race on a slow machine, so
	// every resume was dropped again and the loop never ended.
	head := feedOf(t, srv.URL, ownerToken, "since=now").Head
	for since := last; since < head; {
		p, err := c.Changes(ctx, contract.ChangesRequest{Since: since, Limit: 20, Wait: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		for _, ch := range p.Changes {
			seen[ch.ID]++
			order = append(order, ch.ID)
		}
		since = p.Next
	}
	if strings.Join(order, ",") != strings.Join(ids, ",") {
		t.Fatalf("%d changes before the drop and after the resume, want the %d stored, in order", len(order), len(ids))
	}
	for id, n := range seen {
		if n != 1 {
			t.Fatalf("%s seen %d times", id, n)
		}
	}
	t.Logf("the stuck client had %d of the %d changes when it was dropped", before, len(ids))
}

// TestStreamsOfManyFollowersNeverBlockWriters: twenty streams open on a
// quiet reach and one on a busy one hold up no writer.
func TestStreamsOfManyFollowersNeverBlockWriters(t *testing.T) {
	f := newFixture(t, httpapi.Options{ListingRate: httpapi.Rate{PerSecond: -1}})
	ctx := context.Background()
	var wg sync.WaitGroup
	for range 20 {
		s, _, _ := openStream(t, f.srv.URL, ownerToken, `since=now&wait=3s&reach={"at":"team:quiet"}`)
		wg.Go(func() { s.page(t) })
	}
	wg.Wait()
	start := time.Now()
	for i := range 30 {
		f.seed(t, ctx, "team:other", "busy "+strconv.Itoa(i))
	}
	if el := time.Since(start); el > 5*time.Second {
		t.Fatalf("30 stores took %s with 20 streams open", el)
	}
}

// TestChangeStreamHeartbeatIsBounded: a wait shorter than a second does
// not turn a quiet stream into a stream of empty pages.
func TestChangeStreamHeartbeatIsBounded(t *testing.T) {
	f := newFixture(t, httpapi.Options{})
	s, _, _ := openStream(t, f.srv.URL, aliceToken, "since=now&wait=1ms")
	s.page(t)
	start := time.Now()
	if p := s.page(t); len(p.Changes) != 0 || time.Since(start) < 900*time.Millisecond {
		t.Fatalf("the heartbeat of wait=1ms came after %s: %+v", time.Since(start), p)
	}
}
