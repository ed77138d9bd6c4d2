package httpapi_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"mnemo/contract"
	"mnemo/server/auth"
	"mnemo/server/httpapi"
	"mnemo/server/wire"
)

// countingChanges is a real engine whose change feed reads are counted, so a
// test can tell streams that share their reads from streams that read each
// on its own.
type countingChanges struct {
	contract.Engine
	reads atomic.Int64
}

func (c *countingChanges) Changes(ctx context.Context, req contract.ChangesRequest) (contract.ChangesPage, error) {
	c.reads.Add(1)
	return c.Engine.Changes(ctx, req)
}

// fanFixture is a server over a bolt store in t.TempDir() whose feed reads
// are counted, with the fixture's keys (alice, rita and ada share team:acme;
// priya has user:priya).
type fanFixture struct {
	url     string
	engine  *countingChanges
	keys    *auth.Keys
	handler *countingHandler
}

func newFanFixture(t *testing.T, opts httpapi.Options) *fanFixture {
	t.Helper()
	store, keys := storeAndKeys(t)
	e := &countingChanges{Engine: store}
	opts.OwnerToken, opts.Keys = ownerToken, keys
	if opts.ListingRate == (httpapi.Rate{}) {
		opts.ListingRate = httpapi.Rate{PerSecond: -1}
	}
	counted := &countingHandler{h: httpapi.New(e, opts)}
	srv := httptest.NewServer(counted)
	t.Cleanup(srv.Close)
	return &fanFixture{url: srv.URL, engine: e, keys: keys, handler: counted}
}

// store stores texts in ns through the HTTP API as the owner, one batch.
func (f *fanFixture) store(t *testing.T, ns string, texts ...string) []string {
	t.Helper()
	meta := contract.MetaFromSource(contract.SourceAgent, nil)
	meta.Namespace = contract.MustNamespace(ns)
	items := make([]contract.StoreItem, len(texts))
	for i, text := range texts {
		items[i] = contract.Document(text, meta)
	}
	recs, err := contract.StoreMany(context.Background(), client(t, f.url, ownerToken), items)
	if err != nil {
		t.Error(err)
		return nil
	}
	ids := make([]string, len(recs))
	for i, r := range recs {
		ids[i] = r.ID
	}
	return ids
}

// follower reads a stream's events as they come, on a goroutine of its own.
type follower struct {
	name   string
	mu     sync.Mutex
	events []wire.Event
	next   uint64
	err    error
}

// follow starts reading s; read are the events the caller read from it
// already, which are the follower's too.
func follow(name string, s *sseStream, read ...wire.Event) *follower {
	f := &follower{name: name, events: read}
	go func() {
		for {
			ev, err := s.events.Next()
			f.mu.Lock()
			if err != nil {
				f.err = err
				f.mu.Unlock()
				return
			}
			f.events = append(f.events, ev)
			if ev.Event == wire.EventChanges {
				if n, err := strconv.ParseUint(ev.ID, 10, 64); err == nil {
					f.next = n
				}
			}
			f.mu.Unlock()
		}
	}()
	return f
}

func (f *follower) reached(seq uint64) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.next >= seq
}

// pages returns the follower's events so far, each a page of changes (an
// error event fails the test), and their changes in order.
func (f *follower) pages(t *testing.T) ([]wire.Event, []contract.Change) {
	t.Helper()
	f.mu.Lock()
	events := slices.Clone(f.events)
	f.mu.Unlock()
	var all []contract.Change
	for _, ev := range events {
		if ev.Event != wire.EventChanges {
			t.Fatalf("%s: event %q: %s", f.name, ev.Event, ev.Data)
		}
		var p contract.ChangesPage
		if err := p.UnmarshalJSON(ev.Data); err != nil {
			t.Fatalf("%s: %s: %v", f.name, ev.Data, err)
		}
		if ev.ID != strconv.FormatUint(p.Next, 10) {
			t.Fatalf("%s: event id %q for a page whose next is %d", f.name, ev.ID, p.Next)
		}
		all = append(all, p.Changes...)
	}
	return events, all
}

// checkInOrder fails unless changes are exactly the stores of want, in the
// order they were acknowledged, each once, in ascending seq.
func checkInOrder(t *testing.T, who string, changes []contract.Change, want []string) {
	t.Helper()
	got := make([]string, len(changes))
	for i, c := range changes {
		if i > 0 && c.Seq <= changes[i-1].Seq {
			t.Fatalf("%s: seq %d after %d", who, c.Seq, changes[i-1].Seq)
		}
		if c.Op != contract.OpStore || c.Record == nil {
			t.Fatalf("%s: %+v is not a store with its record", who, c)
		}
		got[i] = c.ID
	}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("%s: %d changes, want the %d stores of its reach in order (a gap, a duplicate, or one of another reach):\n got %v\nwant %v", who, len(got), len(want), got, want)
	}
}

func acmeReachQuery() string {
	return "&reach=" + url.QueryEscape(`{"at":"team:acme","inherit":false,"descendants":true}`)
}

// TestStreamsOfOneReachShareEachPage: six streams of one reach (three
// principals of team:acme, one of them twice, and the owner asking for
// exactly that reach) while three writers store into it and elsewhere: every
// stream gets the same pages, byte for byte, ordered, with every store of the
// reach once and nothing else, and the feed is read about once per page, not
// once per page and stream.
func TestStreamsOfOneReachShareEachPage(t *testing.T) {
	// A queue longer than the pages of the test, so that a follower the
	// machine is slow to schedule is never let go to read on its own (its
	// pages would then be its own).
	f := newFanFixture(t, httpapi.Options{StreamQueue: 1000})
	head := feedOf(t, f.url, ownerToken, "since=now").Head
	q := "since=" + jsonNumber(head) + "&limit=50"
	var fols []*follower
	for i, open := range []struct{ token, query string }{
		{aliceToken, q}, {aliceToken, q}, {readerToken, q}, {readerToken, q}, {adminToken, q}, {ownerToken, q + acmeReachQuery()},
	} {
		s, status, body := openStream(t, f.url, open.token, open.query)
		if status != http.StatusOK {
			t.Fatalf("stream %d: %d %s", i, status, body)
		}
		if p := s.page(t); len(p.Changes) != 0 || p.Next != head {
			t.Fatalf("stream %d's first page of a quiet feed: %+v", i, p)
		}
		fols = append(fols, follow(fmt.Sprintf("stream %d", i), s))
	}
	reads := f.engine.reads.Load()

	var mu sync.Mutex
	var want []string
	var wg sync.WaitGroup
	for w := range 3 {
		wg.Go(func() {
			for b := range 15 {
				texts := make([]string, 4)
				for i := range texts {
					texts[i] = fmt.Sprintf("writer %d batch %d note %d", w, b, i)
				}
				// One commit at a time into the reach, so the order of the
				// acknowledgements is the feed's.
				mu.Lock()
				want = append(want, f.store(t, fmt.Sprintf("team:acme/agent:w%d", w), texts...)...)
				mu.Unlock()
				f.store(t, "team:other", fmt.Sprintf("elsewhere %d.%d", w, b))
			}
		})
	}
	wg.Wait()
	want = append(want, f.store(t, "team:acme", "the last one")...)
	end := feedOf(t, f.url, ownerToken, "since=now").Head
	waitFor(t, "every stream reaching the last store", func() bool {
		for _, fo := range fols {
			if !fo.reached(end) {
				return false
			}
		}
		return true
	})
	reads = f.engine.reads.Load() - reads

	first, changes := fols[0].pages(t)
	checkInOrder(t, fols[0].name, changes, want)
	for _, fo := range fols[1:] {
		events, changes := fo.pages(t)
		checkInOrder(t, fo.name, changes, want)
		if len(events) != len(first) {
			t.Fatalf("%s had %d pages, %s %d", fo.name, len(events), fols[0].name, len(first))
		}
		for i := range events {
			if !bytes.Equal(events[i].Data, first[i].Data) {
				t.Fatalf("%s's page %d differs from %s's:\n%s\n%s", fo.name, i, fols[0].name, events[i].Data, first[i].Data)
			}
		}
	}
	// One read per page the streams got, and the read for the head above;
	// six streams reading on their own would make six per page.
	if pages := int64(len(first)); reads > pages+3 {
		t.Fatalf("%d reads of the feed for %d pages on %d streams: the streams do not share their reads", reads, pages, len(fols))
	}
	t.Logf("%d stores in %d pages, %d reads of the feed for %d streams", len(want), len(first), reads, len(fols))
}

// TestStreamsOfDifferentReachesAreConfinedToTheirOwn: streams of three
// reaches open at once (two principals of team:acme, priya's user:priya, the
// owner asking for team:other) while writers store and forget in all of
// them: each stream sees the stores of its own reach only, in order, each
// once, and a forget elsewhere produces nothing on it; a stream joining
// late, from an older since, gets the same.
func TestStreamsOfDifferentReachesAreConfinedToTheirOwn(t *testing.T) {
	f := newFanFixture(t, httpapi.Options{})
	head := feedOf(t, f.url, ownerToken, "since=now").Head
	q := "since=" + jsonNumber(head) + "&wait=1s"
	other := "&reach=" + url.QueryEscape(`{"at":"team:other"}`)
	type group struct {
		ns   string
		fols []*follower
		want []string
	}
	groups := []*group{{ns: "team:acme"}, {ns: "user:priya"}, {ns: "team:other"}}
	open := func(g *group, name, token, query string) {
		t.Helper()
		s, status, body := openStream(t, f.url, token, query)
		if status != http.StatusOK {
			t.Fatalf("%s: %d %s", name, status, body)
		}
		// The first page (all of it, for a stream joining late) is the
		// follower's too.
		g.fols = append(g.fols, follow(name, s, s.next(t)))
	}
	open(groups[0], "alice", aliceToken, q)
	open(groups[0], "rita", readerToken, q)
	open(groups[1], "priya", priyaToken, q)
	open(groups[1], "priya again", priyaToken, q)
	open(groups[2], "owner on team:other", ownerToken, q+other)
	for round := range 12 {
		for _, g := range groups {
			ids := f.store(t, g.ns, fmt.Sprintf("%s round %d a", g.ns, round), fmt.Sprintf("%s round %d b", g.ns, round))
			g.want = append(g.want, ids[0])
			// Forget the second at once: its store shows, carrying its
			// record only if it still exists when the page is read, then
			// its forget, which only its own reach sees.
			if _, err := client(t, f.url, ownerToken).Forget(context.Background(), contract.ForgetIDs(ids[1])); err != nil {
				t.Fatal(err)
			}
		}
		if round == 5 {
			// A stream joining while the hub of its reach is ahead of it.
			open(groups[0], "ada, from the start", adminToken, q)
		}
	}
	end := feedOf(t, f.url, ownerToken, "since=now").Head
	for _, g := range groups {
		for _, fo := range g.fols {
			waitFor(t, fo.name+" reaching the head", func() bool { return fo.reached(end) })
			_, changes := fo.pages(t)
			var stores []contract.Change
			for _, c := range changes {
				if c.Namespace.String() != g.ns {
					t.Fatalf("%s (reach %s) saw a change in %s: %+v", fo.name, g.ns, c.Namespace, c)
				}
				if c.Op == contract.OpForget {
					if c.Record != nil {
						t.Fatalf("%s: a forget carries its record: %+v", fo.name, c)
					}
					continue
				}
				if slices.Contains(g.want, c.ID) {
					stores = append(stores, c)
				}
			}
			got := make([]string, len(stores))
			for i, c := range stores {
				got[i] = c.ID
			}
			if strings.Join(got, ",") != strings.Join(g.want, ",") {
				t.Fatalf("%s: stores %v, want %v", fo.name, got, g.want)
			}
			for i, c := range changes {
				if i > 0 && c.Seq <= changes[i-1].Seq {
					t.Fatalf("%s: seq %d after %d", fo.name, c.Seq, changes[i-1].Seq)
				}
			}
			// Each store of the reach once, and each of its forgets: 12
			// rounds of two stores and a forget.
			if len(changes) != 36 {
				t.Fatalf("%s: %d changes, want 36: %s", fo.name, len(changes), opsOfChanges(changes))
			}
		}
	}
}

// TestAStalledStreamIsDroppedWithoutSlowingItsReach: three streams and one
// stalled client on the same reach while 18 MB of changes are stored: the
// writers are not held up, the three get every change in order, and the
// server drops the stalled client after its write timeout while the others
// go on.
func TestAStalledStreamIsDroppedWithoutSlowingItsReach(t *testing.T) {
	f := newFanFixture(t, httpapi.Options{StreamWriteTimeout: 300 * time.Millisecond})
	head := feedOf(t, f.url, ownerToken, "since=now").Head
	q := "since=" + jsonNumber(head) + "&limit=100"
	var fols []*follower
	for i := range 3 {
		s, _, _ := openStream(t, f.url, ownerToken, q)
		s.page(t)
		fols = append(fols, follow(fmt.Sprintf("stream %d", i), s))
	}
	conn, err := net.Dial("tcp", strings.TrimPrefix(f.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "GET /v1/changes?%s HTTP/1.1\r\nHost: mnemo\r\nAuthorization: Bearer %s\r\nAccept: text/event-stream\r\n\r\n", q, ownerToken)
	waitFor(t, "the stalled stream opening", func() bool { return f.handler.active.Load() == 4 })
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("the stalled stream: %v %v", resp, err)
	}
	// It takes nothing from here on.

	text := strings.Repeat("a stalled client never holds up a writer or its reach. ", 350)
	var want []string
	var slowest time.Duration
	start := time.Now()
	for b := range 30 {
		texts := make([]string, 30)
		for i := range texts {
			texts[i] = fmt.Sprintf("%d.%d %s", b, i, text)
		}
		t0 := time.Now()
		want = append(want, f.store(t, "team:acme", texts...)...)
		slowest = max(slowest, time.Since(t0))
	}
	// Loose enough for -race on a shared machine (the three followers decode
	// 18 MB each meanwhile); the batches are what a held-up writer shows.
	if el := time.Since(start); el > 60*time.Second || slowest > 5*time.Second {
		t.Fatalf("900 stores took %s (the slowest batch %s) with a stalled stream", el, slowest)
	}
	end := feedOf(t, f.url, ownerToken, "since=now").Head
	for _, fo := range fols {
		waitFor(t, fo.name+" reaching the head", func() bool { return fo.reached(end) })
		_, changes := fo.pages(t)
		checkInOrder(t, fo.name, changes, want)
	}
	waitFor(t, "the server dropping the stalled stream, and only it", func() bool { return f.handler.active.Load() == 3 })
	// The others still follow.
	last := f.store(t, "team:acme", "after the drop")
	end = feedOf(t, f.url, ownerToken, "since=now").Head
	for _, fo := range fols {
		waitFor(t, fo.name+" having the store after the drop", func() bool { return fo.reached(end) })
		_, changes := fo.pages(t)
		checkInOrder(t, fo.name, changes, append(slices.Clone(want), last...))
	}
}

// TestARevokedTokenEndsOnlyItsStream: alice and rita follow team:acme, and
// so does the owner; once the keys file drops alice, her stream ends with an
// unauthorized event at the next change, while the others sharing the reach
// get it.
func TestARevokedTokenEndsOnlyItsStream(t *testing.T) {
	f := newFanFixture(t, httpapi.Options{})
	q := "since=now"
	alice, _, _ := openStream(t, f.url, aliceToken, q)
	rita, _, _ := openStream(t, f.url, readerToken, q)
	owner, _, _ := openStream(t, f.url, ownerToken, q+acmeReachQuery())
	for _, s := range []*sseStream{alice, rita, owner} {
		s.page(t)
	}
	first := f.store(t, "team:acme", "before the reload")
	for _, s := range []*sseStream{alice, rita, owner} {
		if p := s.page(t); len(p.Changes) != 1 || p.Changes[0].ID != first[0] {
			t.Fatalf("before the reload: %+v", p)
		}
	}
	fewer, err := auth.ParseKeys(fmt.Appendf(nil, "[[principal]]\nname = \"rita\"\nrole = \"reader\"\nreach = { at = \"team:acme\", descendants = true, inherit = false }\ntoken_sha256 = [%q]\n", auth.HashToken(readerToken)))
	if err != nil {
		t.Fatal(err)
	}
	f.keys.Replace(fewer)
	second := f.store(t, "team:acme", "after the reload")
	ev := alice.next(t)
	if ev.Event != wire.EventError || contract.KindOf(wire.StreamError(ev.Data)) != contract.KindUnauthorized || !strings.Contains(string(ev.Data), "no longer known") {
		t.Fatalf("the revoked token's stream: %q %s", ev.Event, ev.Data)
	}
	for name, s := range map[string]*sseStream{"rita": rita, "owner": owner} {
		if p := s.page(t); len(p.Changes) != 1 || p.Changes[0].ID != second[0] {
			t.Fatalf("%s after the reload: %+v", name, p)
		}
	}
}

// TestChangeStreamsPerPrincipalAreCapped: a principal at its cap of open
// streams is refused another with 429, a Retry-After and a message saying
// why; other principals and the long poll are not affected; once one of its
// streams closes it may open one again.
func TestChangeStreamsPerPrincipalAreCapped(t *testing.T) {
	f := newFanFixture(t, httpapi.Options{MaxStreamsPerPrincipal: 2})
	a1, status, body := openStream(t, f.url, aliceToken, "since=now")
	if status != http.StatusOK {
		t.Fatalf("alice's first stream: %d %s", status, body)
	}
	if _, status, body := openStream(t, f.url, aliceToken, "since=now"); status != http.StatusOK {
		t.Fatalf("alice's second stream: %d %s", status, body)
	}
	req, err := http.NewRequest(http.MethodGet, f.url+"/v1/changes?since=now", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+aliceToken)
	req.Header.Set("Accept", wire.EventStreamType)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	_, _ = buf.ReadFrom(resp.Body)
	resp.Body.Close()
	want := "principal `alice` has 2 change streams open, the most this server allows one principal"
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" ||
		!strings.Contains(buf.String(), want) || !strings.Contains(buf.String(), `"kind":"unavailable"`) {
		t.Fatalf("alice's third stream: %d (Retry-After %q) %s", resp.StatusCode, resp.Header.Get("Retry-After"), buf.String())
	}
	// Through the Go client, the same error.
	c := client(t, f.url, aliceToken)
	if _, err := c.Changes(context.Background(), contract.ChangesRequest{Since: 0, Limit: 10, Wait: time.Second}); err == nil || !strings.Contains(err.Error(), "change streams open") {
		t.Fatalf("alice's third stream through the client: %v", err)
	}
	if _, status, body := openStream(t, f.url, readerToken, "since=now"); status != http.StatusOK {
		t.Fatalf("rita's stream beside alice's two: %d %s", status, body)
	}
	if status, body := getChanges(t, f.url, aliceToken, "since=now"); status != http.StatusOK {
		t.Fatalf("alice's long poll at her cap: %d %s", status, body)
	}
	a1.close()
	waitFor(t, "alice opening a stream again after closing one", func() bool {
		s, status, _ := openStream(t, f.url, aliceToken, "since=now")
		if s != nil {
			s.close()
		}
		return status == http.StatusOK
	})
}

// TestAStreamJoiningAheadOfItsHubGetsTheRestOfThePage: a stream that opens
// while its reach's hub lets commits gather stands past the hub's position;
// the hub's next page, which starts before the stream's position, reaches it
// as only the changes after that position: nothing twice, nothing missed,
// while the stream that was there first gets the whole page.
func TestAStreamJoiningAheadOfItsHubGetsTheRestOfThePage(t *testing.T) {
	f := newFanFixture(t, httpapi.Options{StreamGather: 2 * time.Second})
	first, _, _ := openStream(t, f.url, aliceToken, "since=now")
	first.page(t)
	c1 := f.store(t, "team:acme", "one")
	if p := first.page(t); len(p.Changes) != 1 || p.Changes[0].ID != c1[0] {
		t.Fatalf("the first stream's first change: %+v", p)
	}
	// The hub now gathers for 2 s: c2 commits, the second stream opens at
	// the head (past c2), c3 commits.
	start := time.Now()
	c2 := f.store(t, "team:acme", "two")
	second, _, _ := openStream(t, f.url, readerToken, "since=now")
	if p := second.page(t); len(p.Changes) != 0 {
		t.Fatalf("the second stream's first page: %+v", p)
	}
	c3 := f.store(t, "team:acme", "three")
	if time.Since(start) > time.Second {
		t.Skipf("the machine is too slow for this test's gather (%s)", time.Since(start))
	}
	if got := idsOfPage(first.page(t)); got != c2[0]+","+c3[0] {
		t.Fatalf("the first stream after the gather: %s, want %s,%s", got, c2[0], c3[0])
	}
	if got := idsOfPage(second.page(t)); got != c3[0] {
		t.Fatalf("the second stream after the gather: %s, want only %s", got, c3[0])
	}
}

func idsOfPage(p contract.ChangesPage) string {
	ids := make([]string, len(p.Changes))
	for i, c := range p.Changes {
		ids[i] = c.ID
	}
	return strings.Join(ids, ",")
}
