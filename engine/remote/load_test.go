package remote_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"mnemo/contract"
	"mnemo/engine/bolt"
	"mnemo/engine/remote"
	"mnemo/server/auth"
	"mnemo/server/httpapi"
)

// loadConfig bounds a load run in count and in time: agents stop after
// rounds rounds or after duration, whichever comes first.
type loadConfig struct {
	agents   int
	browsers int
	// rounds is how many times each agent stores one item and then a batch.
	rounds   int
	batch    int
	duration time.Duration
	// watchers long-poll the change feed through engine/remote while the
	// agents write; tui runs a live TUI session (headless, on its Activity
	// view) beside them; watchBin, when set, is a mnemo binary whose `watch
	// --from-now` follows the feed as a separate process (load_watch_test.go).
	watchers int
	// rawWatchers read the feed's stream over plain HTTP and skip the
	// records; pollWatchers long-poll through engine/remote instead
	// (remote.WithoutChangeStream), as clients before the stream did.
	rawWatchers  bool
	bareWatchers bool
	pollWatchers bool
	tui          bool
	watchBin     string
	// apartWatchers runs the watchers in a process of their own
	// (load_apart_test.go) instead of as goroutines of this one.
	apartWatchers bool
	// tuiUnclustered runs the TUI without its background clustering of the
	// reach (Options.MaxClustered 1: every reach is too large to cluster),
	// to tell what the clustering costs the writers from the rest.
	tuiUnclustered bool
}

// TestLoadShort always runs: a few seconds of concurrent stores and reads
// over HTTP on a bolt store, then every acknowledged id is checked.
func TestLoadShort(t *testing.T) {
	figures := runLoad(t, loadConfig{agents: 8, browsers: 4, rounds: 6, batch: 10, duration: 3 * time.Second})
	t.Log(figures)
}

// TestLoadLong is the measured run: MNEMO_LOADTEST=1 go test -run TestLoadLong
// -v ./engine/remote (MNEMO_LOADTEST_SECONDS sets how long agents write,
// default 20). It prints the throughput and latency figures.
func TestLoadLong(t *testing.T) {
	if testing.Short() || os.Getenv("MNEMO_LOADTEST") != "1" {
		t.Skip("the long load test runs with MNEMO_LOADTEST=1 and without -short")
	}
	seconds := 20
	if s := os.Getenv("MNEMO_LOADTEST_SECONDS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n <= 0 {
			t.Fatalf("MNEMO_LOADTEST_SECONDS=%q is not a positive number of seconds", s)
		}
		seconds = n
	}
	figures := runLoad(t, loadConfig{agents: 8, browsers: 4, rounds: 100_000, batch: 25, duration: time.Duration(seconds) * time.Second})
	t.Log(figures)
}

// ack is one acknowledged store: the id the server returned and the word only
// that item's text holds, so a keyword fetch for it must find the id.
type ack struct {
	id, word string
	agent    int
	// at is when the agent had the server's answer.
	at time.Time
}

// ackLog collects acknowledged stores from every agent.
type ackLog struct {
	mu   sync.Mutex
	acks []ack
}

func (l *ackLog) add(a ...ack) {
	l.mu.Lock()
	l.acks = append(l.acks, a...)
	l.mu.Unlock()
}

// snapshot returns the acks so far; every one of them was acknowledged
// before the caller's next request starts.
func (l *ackLog) snapshot() []ack {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.acks[:len(l.acks):len(l.acks)]
}

// latencies collects one operation's durations from several goroutines.
type latencies struct {
	mu sync.Mutex
	d  []time.Duration
}

func (l *latencies) add(d time.Duration) {
	l.mu.Lock()
	l.d = append(l.d, d)
	l.mu.Unlock()
}

func (l *latencies) summary() string {
	l.mu.Lock()
	d := slices.Clone(l.d)
	l.mu.Unlock()
	if len(d) == 0 {
		return "none"
	}
	slices.Sort(d)
	at := func(q float64) time.Duration { return d[min(len(d)-1, int(q*float64(len(d))))] }
	return fmt.Sprintf("n=%d p50=%v p95=%v p99=%v max=%v", len(d), round(at(0.50)), round(at(0.95)), round(at(0.99)), round(d[len(d)-1]))
}

func round(d time.Duration) time.Duration {
	if d > time.Millisecond {
		return d.Round(10 * time.Microsecond)
	}
	return d.Round(time.Microsecond)
}

// followersNote says which followers besides the watchers a run had.
func (c loadConfig) followersNote() string {
	var s string
	switch {
	case c.bareWatchers:
		s += " (bare)"
	case c.rawWatchers:
		s += " (raw)"
	}
	if c.pollWatchers {
		s += " (long poll)"
	}
	if c.tui {
		s += " + a live TUI"
	}
	if c.watchBin != "" {
		s += " + mnemo watch"
	}
	return s
}

// loadFigures is what a run measured.
type loadFigures struct {
	cfg loadConfig
	// over names the engine behind the servers (default engine/bolt).
	over                      string
	writing                   time.Duration
	storeCalls, manyCalls     int64
	records                   int
	store, storeMany          *latencies
	browse, fetch, getRecords *latencies
	// follow is what the change feed's followers measured (nil without them).
	follow *followFigures
	// load is the machine's load average when the writers stopped.
	load string
	// cpu is the CPU used while the agents wrote (load_cpu_test.go).
	cpu cpuSample
}

func (f loadFigures) String() string {
	secs := f.writing.Seconds()
	var b strings.Builder
	over := f.over
	if over == "" {
		over = "engine/bolt"
	}
	fmt.Fprintf(&b, "\n%d agents (store + store_many of %d), %d browsers, %d watchers%s, on loopback over %s\n", f.cfg.agents, f.cfg.batch, f.cfg.browsers, f.cfg.watchers, f.cfg.followersNote(), over)
	fmt.Fprintf(&b, "writing: %v, %d store calls + %d store_many calls = %d records\n", f.writing.Round(time.Millisecond), f.storeCalls, f.manyCalls, f.records)
	fmt.Fprintf(&b, "throughput: %.0f store requests/s (%.0f store/s, %.0f store_many/s), %.0f records/s\n",
		float64(f.storeCalls+f.manyCalls)/secs, float64(f.storeCalls)/secs, float64(f.manyCalls)/secs, float64(f.records)/secs)
	fmt.Fprintf(&b, "store       %s\n", f.store.summary())
	fmt.Fprintf(&b, "store_many  %s\n", f.storeMany.summary())
	fmt.Fprintf(&b, "browse      %s  (limit 50, under write load)\n", f.browse.summary())
	fmt.Fprintf(&b, "fetch       %s  (keyword, limit 10, under write load)\n", f.fetch.summary())
	fmt.Fprintf(&b, "get_records %s  (up to 20 ids, under write load)", f.getRecords.summary())
	if f.follow != nil {
		b.WriteString(f.follow.String())
	}
	if f.load != "" {
		fmt.Fprintf(&b, "\nload average at the end of writing: %s", f.load)
	}
	if c := f.cpu.summary(f.writing, f.records); c != "" {
		b.WriteString("\n" + c)
	}
	return b.String()
}

const loadOwnerToken = "load-owner-token"

func agentToken(i int) string  { return fmt.Sprintf("load-agent-%d-token", i) }
func viewerToken(i int) string { return fmt.Sprintf("load-viewer-%d-token", i) }

// watcherToken(i) is watcher i's; the last one (cfg.watchers) is the TUI's.
func watcherToken(i int) string { return fmt.Sprintf("load-watcher-%d-token", i) }

func agentNamespace(i int) string { return fmt.Sprintf("team:load/agent:a%d", i) }

// loadKeys confines each agent (curator) to its own namespace and each
// browser (reader) to team:load, where all agents write.
func loadKeys(t *testing.T, cfg loadConfig) *auth.Keys {
	t.Helper()
	var b strings.Builder
	for i := range cfg.agents {
		fmt.Fprintf(&b, "[[principal]]\nname = \"agent%d\"\nrole = \"curator\"\nreach = { at = %q, descendants = true, inherit = false }\ntoken_sha256 = [%q]\n\n",
			i, agentNamespace(i), auth.HashToken(agentToken(i)))
	}
	for i := range cfg.browsers {
		fmt.Fprintf(&b, "[[principal]]\nname = \"viewer%d\"\nrole = \"reader\"\nreach = { at = \"team:load\", descendants = true, inherit = false }\ntoken_sha256 = [%q]\n\n",
			i, auth.HashToken(viewerToken(i)))
	}
	for i := range cfg.watchers + 1 {
		fmt.Fprintf(&b, "[[principal]]\nname = \"watcher%d\"\nrole = \"reader\"\nreach = { at = \"team:load\", descendants = true, inherit = false }\ntoken_sha256 = [%q]\n\n",
			i, auth.HashToken(watcherToken(i)))
	}
	keys, err := auth.ParseKeys([]byte(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	return keys
}

// serveLoad runs the HTTP API over a bolt store in t.TempDir() the way mnemo
// serve does (owner token, keys file, audit log in the store) on a loopback
// listener; the listing rate limit is off so latencies are the server's, not
// the limiter's.
func serveLoad(t *testing.T, cfg loadConfig) string {
	t.Helper()
	store, err := bolt.Open(t.TempDir(), bolt.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := store.Close(); err != nil {
			t.Errorf("closing the store: %v", err)
		}
	})
	// MNEMO_LOADTEST_GATHER sets the change stream's gather (a duration;
	// default the server's).
	var gather time.Duration
	if s := os.Getenv("MNEMO_LOADTEST_GATHER"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil {
			t.Fatalf("MNEMO_LOADTEST_GATHER=%q is not a duration", s)
		}
		gather = d
		if d == 0 {
			gather = -1
		}
	}
	api := httpapi.New(store, httpapi.Options{OwnerToken: loadOwnerToken, Keys: loadKeys(t, cfg),
		Audit: store, AuditReader: store, ListingRate: httpapi.Rate{PerSecond: -1}, StreamGather: gather})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: api, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		api.EndLongPolls()
		_ = srv.Shutdown(ctx)
	})
	return "http://" + l.Addr().String()
}

func loadClient(t *testing.T, url, token string, opts ...remote.Option) *remote.Client {
	t.Helper()
	c, err := remote.New(url, token, append([]remote.Option{remote.WithTimeout(30 * time.Second), remote.WithRetries(0)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

var loadVocabulary = []string{"deploy", "rollback", "cache", "schema", "latency", "incident", "review", "release", "index", "budget"}

// loadItem is agent's seq-th item: a few common words (so keyword fetches
// match many items) and one word no other item holds.
func loadItem(agent, seq int) (contract.StoreItem, string) {
	word := fmt.Sprintf("w%dq%d", agent, seq)
	text := fmt.Sprintf("agent %d note %d about %s and %s %s", agent, seq,
		loadVocabulary[seq%len(loadVocabulary)], loadVocabulary[(seq*7+agent)%len(loadVocabulary)], word)
	meta := contract.MetaFromSource(contract.SourceAgent, nil)
	meta.Namespace = contract.MustNamespace(agentNamespace(agent))
	meta.Tags = []string{fmt.Sprintf("t%d", seq%5)}
	return contract.Document(text, meta), word
}

// runLoad runs cfg's agents and browsers against one server, checks what the
// browsers saw while the agents wrote, then checks that every acknowledged id
// is readable and counted.
func runLoad(t *testing.T, cfg loadConfig) loadFigures {
	url := serveLoad(t, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), cfg.duration+2*time.Minute)
	defer cancel()
	owner := loadClient(t, url, loadOwnerToken)
	// A record outside team:load: browsers must never see or count it.
	strayMeta := contract.MetaFromSource(contract.SourceAgent, nil)
	strayMeta.Namespace = contract.MustNamespace("team:other")
	stray, err := contract.Store(ctx, owner, contract.Document("stray note outside the load namespace", strayMeta))
	if err != nil {
		t.Fatal(err)
	}

	f := loadFigures{cfg: cfg, store: &latencies{}, storeMany: &latencies{},
		browse: &latencies{}, fetch: &latencies{}, getRecords: &latencies{}}
	log := &ackLog{}
	var storeCalls, manyCalls atomic.Int64
	// failures holds the first few problems seen on other goroutines.
	var failures failureLog
	var fol *followers
	if cfg.watchers > 0 || cfg.tui || cfg.watchBin != "" {
		fol = startFollowers(t, ctx, url, cfg, owner, &failures)
	}

	writersDone := make(chan struct{})
	var writers, readers sync.WaitGroup
	deadline := time.Now().Add(cfg.duration)
	start := time.Now()
	var childPID, apartPID int
	if fol != nil && fol.proc != nil {
		childPID = fol.proc.pid
	}
	if fol != nil && fol.apart != nil {
		apartPID = fol.apart.pid
	}
	cpu0 := sampleCPU(childPID, apartPID)
	for a := range cfg.agents {
		c := loadClient(t, url, agentToken(a))
		writers.Go(func() {
			seq := 0
			for r := 0; r < cfg.rounds && time.Now().Before(deadline) && ctx.Err() == nil && failures.count() == 0; r++ {
				item, word := loadItem(a, seq)
				seq++
				t0 := time.Now()
				rec, err := contract.Store(ctx, c, item)
				if err != nil {
					failures.add("agent %d store: %v", a, err)
					return
				}
				acked := time.Now()
				f.store.add(acked.Sub(t0))
				storeCalls.Add(1)
				log.add(ack{id: rec.ID, word: word, agent: a, at: acked})

				items := make([]contract.StoreItem, cfg.batch)
				words := make([]string, cfg.batch)
				for i := range items {
					items[i], words[i] = loadItem(a, seq)
					seq++
				}
				t0 = time.Now()
				recs, err := contract.StoreMany(ctx, c, items)
				if err != nil {
					failures.add("agent %d store_many: %v", a, err)
					return
				}
				acked = time.Now()
				f.storeMany.add(acked.Sub(t0))
				manyCalls.Add(1)
				if len(recs) != len(items) {
					failures.add("agent %d store_many acknowledged %d of %d items", a, len(recs), len(items))
					return
				}
				batch := make([]ack, len(recs))
				for i, rec := range recs {
					if rec.Replayed {
						failures.add("agent %d: a new item %q was taken for a replay", a, words[i])
					}
					batch[i] = ack{id: rec.ID, word: words[i], agent: a, at: acked}
				}
				log.add(batch...)
			}
		})
	}
	for b := range cfg.browsers {
		c := loadClient(t, url, viewerToken(b))
		readers.Go(func() { browseWhileWriting(ctx, c, b, log, writersDone, stray.ID, &f, &failures) })
	}
	writers.Wait()
	f.writing = time.Since(start)
	f.cpu = sampleCPU(childPID, apartPID).sub(cpu0)
	close(writersDone)
	readers.Wait()
	acks := log.snapshot()
	if fol != nil {
		f.follow = fol.finish(t, ctx, owner, acks, &failures)
	}
	failures.report(t)

	f.storeCalls, f.manyCalls, f.records = storeCalls.Load(), manyCalls.Load(), len(acks)
	f.load = loadAverage()
	if f.records == 0 {
		t.Fatal("no store was acknowledged")
	}
	checkEveryAck(t, ctx, url, cfg, acks, stray.ID)
	return f
}

// browseWhileWriting browses, fetches and reads records until the writers
// are done, checking each answer against what had been acknowledged before
// the request was sent.
func browseWhileWriting(ctx context.Context, c *remote.Client, who int, log *ackLog, done <-chan struct{}, stray string, f *loadFigures, failures *failureLog) {
	rng := rand.New(rand.NewPCG(uint64(who), 42))
	lastTotal := 0
	for i := 0; ; i++ {
		select {
		case <-done:
			return
		default:
		}
		if ctx.Err() != nil || failures.count() > 0 {
			return
		}
		before := log.snapshot()
		switch i % 3 {
		case 0:
			t0 := time.Now()
			page, err := c.Browse(ctx, contract.BrowseQuery{Limit: 50})
			if err != nil {
				failures.add("viewer %d browse: %v", who, err)
				return
			}
			f.browse.add(time.Since(t0))
			// Every store acknowledged before the request is counted, the
			// count never goes back, and the page is as full as the count allows.
			if page.Total < len(before) || page.Total < lastTotal {
				failures.add("viewer %d browse total %d, but %d stores were acknowledged before it and the previous total was %d", who, page.Total, len(before), lastTotal)
			}
			if want := min(50, page.Total); len(page.Records) != want {
				failures.add("viewer %d browse returned %d records for a total of %d", who, len(page.Records), page.Total)
			}
			for _, r := range page.Records {
				if r.ID == stray || !r.Meta.Namespace.IsWithin(contract.MustNamespace("team:load")) {
					failures.add("viewer %d browsed %s at %s, outside its reach", who, r.ID, r.Meta.Namespace)
				}
			}
			lastTotal = page.Total
		case 1:
			if len(before) == 0 {
				continue
			}
			target := before[rng.IntN(len(before))]
			t0 := time.Now()
			page, err := c.Fetch(ctx, contract.FetchRequest{Query: target.word, Mode: contract.ModeKeyword, Limit: 10})
			if err != nil {
				failures.add("viewer %d fetch: %v", who, err)
				return
			}
			f.fetch.add(time.Since(t0))
			if !slices.ContainsFunc(page.Hits, func(h contract.Hit) bool { return h.ID == target.id }) {
				failures.add("viewer %d: a keyword fetch for %q did not find acknowledged %s (%d hits)", who, target.word, target.id, len(page.Hits))
			}
		case 2:
			if len(before) == 0 {
				continue
			}
			ids := make([]string, 0, 20)
			for range min(20, len(before)) {
				ids = append(ids, before[rng.IntN(len(before))].id)
			}
			t0 := time.Now()
			recs, err := c.GetRecords(ctx, contract.GetRequest{IDs: ids})
			if err != nil {
				failures.add("viewer %d get_records: %v", who, err)
				return
			}
			f.getRecords.add(time.Since(t0))
			got := map[string]bool{}
			for _, r := range recs {
				got[r.ID] = true
			}
			for _, id := range ids {
				if !got[id] {
					failures.add("viewer %d: get_records left out acknowledged %s", who, id)
				}
			}
		}
	}
}

// checkEveryAck reads every acknowledged id back after the writers stopped:
// get and get_records return each, a browse walk lists exactly them, and
// each agent's own count equals what it was acknowledged.
func checkEveryAck(t *testing.T, ctx context.Context, url string, cfg loadConfig, acks []ack, stray string) {
	t.Helper()
	want := map[string]bool{}
	perAgent := make([]map[string]bool, cfg.agents)
	for i := range perAgent {
		perAgent[i] = map[string]bool{}
	}
	for _, a := range acks {
		want[a.id] = true
		perAgent[a.agent][a.id] = true
	}
	if len(want) != len(acks) {
		t.Fatalf("%d acknowledged stores share ids: %d distinct", len(acks), len(want))
	}
	viewer := loadClient(t, url, viewerToken(0))
	ids := make([]string, 0, len(want))
	for _, a := range acks {
		ids = append(ids, a.id)
	}
	for start := 0; start < len(ids); start += contract.MaxGetIDs {
		chunk := ids[start:min(start+contract.MaxGetIDs, len(ids))]
		recs, err := viewer.GetRecords(ctx, contract.GetRequest{IDs: chunk})
		if err != nil {
			t.Fatal(err)
		}
		hits, err := viewer.Get(ctx, contract.GetRequest{IDs: chunk})
		if err != nil {
			t.Fatal(err)
		}
		if len(recs) != len(chunk) || len(hits) != len(chunk) {
			t.Fatalf("of %d acknowledged ids, get_records returned %d and get %d", len(chunk), len(recs), len(hits))
		}
		for i := range chunk {
			if recs[i].ID != chunk[i] || hits[i].ID != chunk[i] {
				t.Fatalf("get_records/get answered %s/%s for %s", recs[i].ID, hits[i].ID, chunk[i])
			}
		}
	}

	// The whole browse walk, in pages of 1000, lists exactly the acknowledged ids.
	seen := map[string]bool{}
	q := contract.BrowseQuery{Limit: contract.BrowseMaxLimit}
	for {
		page, err := viewer.Browse(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		if page.Total != len(want) {
			t.Fatalf("browse counts %d records, %d were acknowledged", page.Total, len(want))
		}
		for _, r := range page.Records {
			if !want[r.ID] || seen[r.ID] {
				t.Fatalf("the browse walk listed %s, unacknowledged or twice (stray is %s)", r.ID, stray)
			}
			seen[r.ID] = true
		}
		if page.Continuation == nil {
			break
		}
		q.Cursor = *page.Continuation
	}
	if len(seen) != len(want) {
		t.Fatalf("the browse walk listed %d of %d acknowledged records", len(seen), len(want))
	}

	// Each agent counts exactly its own acknowledged records.
	for a := range cfg.agents {
		c := loadClient(t, url, agentToken(a))
		page, err := c.Browse(ctx, contract.BrowseQuery{Limit: 1})
		if err != nil {
			t.Fatal(err)
		}
		if page.Total != len(perAgent[a]) {
			t.Fatalf("agent %d browses %d records, it was acknowledged %d", a, page.Total, len(perAgent[a]))
		}
	}
}

// failureLog keeps the first problems seen on worker goroutines; the test
// goroutine reports them.
type failureLog struct {
	mu   sync.Mutex
	msgs []string
	n    atomic.Int64
}

func (l *failureLog) add(format string, args ...any) {
	l.n.Add(1)
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.msgs) < 10 {
		l.msgs = append(l.msgs, fmt.Sprintf(format, args...))
	}
}

func (l *failureLog) count() int64 { return l.n.Load() }

// all is a copy of the problems kept.
func (l *failureLog) all() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.msgs...)
}

func (l *failureLog) report(t *testing.T) {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.msgs) > 0 {
		t.Fatal(errors.New(strings.Join(l.msgs, "\n")))
	}
}
