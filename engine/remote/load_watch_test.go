package remote_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"mnemo/contract"
	"mnemo/engine/memory"
	"mnemo/engine/remote"
	"mnemo/server/wire"
	"mnemo/ui"
)

// The change feed under the serve-mode load (issue 16): followers read
// GET /v1/changes through engine/remote while the agents write, and each
// change's latency is measured from the writer's acknowledgement to the
// moment a follower has it. Three kinds of follower:
//
//   - watchers: goroutines reading Changes in a loop, as `mnemo watch` does
//     (Wait 30 s, limit 1000), each its own client and principal (a reader of
//     team:load); engine/remote serves those calls from one stream of the
//     feed per watcher (or, in the poll runs, long-polls: one request each);
//   - a live TUI session: ui.New under a real tea.Program (no input, output
//     to a writer that stamps each write) showing its Activity view, timed
//     from the acknowledgement to the first write of the frame drawn after
//     the session applied the change (Options.Applied);
//   - with MNEMO_WATCH_BIN=path/to/mnemo, a real `mnemo watch --from-now`
//     process, timed to the line read from its stdout.

// TestLoadWithWatchers measures the load test's write throughput without and
// with 20 watchers (and a TUI) attached, in the same run, alternating
// without / with / with / without so drift on the shared machine falls on
// both sides, and the ack-to-seen latency of every change. MNEMO_LOADTEST=1
// runs it; MNEMO_LOADTEST_SECONDS sets each run's writing time (default 20).
func TestLoadWithWatchers(t *testing.T) {
	if testing.Short() || os.Getenv("MNEMO_LOADTEST") != "1" {
		t.Skip("the load test with watchers runs with MNEMO_LOADTEST=1 and without -short")
	}
	seconds := 20
	if s := os.Getenv("MNEMO_LOADTEST_SECONDS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n <= 0 {
			t.Fatalf("MNEMO_LOADTEST_SECONDS=%q is not a positive number of seconds", s)
		}
		seconds = n
	}
	base := loadConfig{agents: 8, browsers: 4, rounds: 100_000, batch: 25, duration: time.Duration(seconds) * time.Second}
	// light: one TUI and one mnemo watch process (when MNEMO_WATCH_BIN names
	// a binary); watched: 20 watchers besides; raw: 20 raw watchers alone.
	light := base
	light.tui, light.watchBin = true, os.Getenv("MNEMO_WATCH_BIN")
	watched := light
	watched.watchers = 20
	raw := base
	raw.watchers, raw.rawWatchers = 20, true
	// bare: raw watchers that pick each change's seq, time and id out of
	// the page with a byte scan (scanPage), the least a client can do.
	bare := raw
	bare.bareWatchers = true
	// poll: watched with the watchers long-polling (before the stream).
	poll := watched
	poll.pollWatchers = true
	// unclustered: watched with the TUI's background clustering off.
	unclustered := watched
	unclustered.tuiUnclustered = true
	// apart: watched with the 20 watchers in a process of their own
	// (load_apart_test.go), as agents and `mnemo watch` follow a server.
	apart := watched
	apart.apartWatchers = true
	runs := []loadConfig{base, watched, light, raw, raw, watched, base}
	if s := os.Getenv("MNEMO_LOADTEST_RUNS"); s != "" {
		// a chosen sequence of runs, e.g. "base,watched" (profiling one kind)
		named := map[string]loadConfig{"base": base, "watched": watched, "light": light, "raw": raw, "poll": poll, "bare": bare, "unclustered": unclustered, "apart": apart}
		runs = nil
		for _, name := range strings.Split(s, ",") {
			cfg, ok := named[name]
			if !ok {
				t.Fatalf("MNEMO_LOADTEST_RUNS names %q; the runs are base, watched, apart, light, raw, bare, poll and unclustered", name)
			}
			runs = append(runs, cfg)
		}
	}
	var without, with, withApart, withRaw, withBare, withPoll, withUnclustered []loadFigures
	for i, cfg := range runs {
		if i > 0 {
			// the last run's leftovers (a TUI's clustering pass) end first
			waited, used := settle(2 * time.Minute)
			t.Logf("before the next run, this process settled in %v, using %v of CPU", waited.Round(time.Second), used.Round(10*time.Millisecond))
		}
		f := runLoad(t, cfg)
		t.Log(f)
		switch {
		case cfg.bareWatchers:
			withBare = append(withBare, f)
		case cfg.rawWatchers:
			withRaw = append(withRaw, f)
		case cfg.pollWatchers:
			withPoll = append(withPoll, f)
		case cfg.tuiUnclustered:
			withUnclustered = append(withUnclustered, f)
		case cfg.apartWatchers:
			withApart = append(withApart, f)
		case cfg.watchers > 0:
			with = append(with, f)
		case !cfg.tui:
			without = append(without, f)
		}
	}
	rate := func(fs []loadFigures) (records, requests float64) {
		var n, calls int64
		var secs float64
		for _, f := range fs {
			n += int64(f.records)
			calls += f.storeCalls + f.manyCalls
			secs += f.writing.Seconds()
		}
		return float64(n) / secs, float64(calls) / secs
	}
	if len(without) == 0 {
		return
	}
	r0, q0 := rate(without)
	msg := fmt.Sprintf("\nwrite throughput without watchers: %.0f records/s (%.1f requests/s)", r0, q0)
	for _, k := range []struct {
		name string
		runs []loadFigures
	}{
		{"with 20 watchers (engine/remote), a TUI and mnemo watch", with},
		{"with 20 watchers in a process of their own, a TUI and mnemo watch", withApart},
		{"with 20 raw watchers (the stream, records not decoded)", withRaw},
		{"with 20 bare watchers (the stream, each change's seq, time and id picked out by a byte scan)", withBare},
		{"with 20 long-polling watchers (engine/remote without the stream), a TUI and mnemo watch", withPoll},
		{"with 20 watchers, a TUI that does not cluster and mnemo watch", withUnclustered},
	} {
		if len(k.runs) > 0 {
			r, q := rate(k.runs)
			msg += fmt.Sprintf("\n%s: %.0f records/s (%.1f requests/s): %+.1f%%", k.name, r, q, 100*(r-r0)/r0)
		}
	}
	t.Log(msg)
}

// followers are the change feed's followers of one load run.
type followers struct {
	cfg      loadConfig
	cancel   context.CancelFunc
	wg       sync.WaitGroup
	watchers []*watchFollower
	tui      *tuiFollower
	proc     *procFollower
	apart    *apartWatchers
}

// seenChange is one change as a follower had it.
type seenChange struct {
	id  string
	seq uint64
	// at is the change's own time stamp (taken inside the write, before the
	// commit); seen is when the follower had it.
	at, seen time.Time
}

// watchFollower is one watcher's notes: the changes it had and how far it
// has read.
type watchFollower struct {
	mu sync.Mutex
	// blocks hold the notes, each block filled before the next is made:
	// a growing slice of them copied everything noted so far again and
	// again, a quarter of the watchers' CPU in a profile of their process.
	blocks [][]seenNote
	// odd are ids that are not fingerprints (each a failure).
	odd   []string
	since atomic.Uint64
}

// seenNote is a seenChange as a watcher notes it while the agents write:
// the id as its fingerprint's bytes and the times as Unix nanoseconds, so
// that the notes hold no pointer. A note that held the id's string kept
// the watcher's whole page alive (the decoder reads strings out of the
// page's bytes) and gave the collector every note to scan; a real watcher
// keeps no page.
type seenNote struct {
	id       [contract.FingerprintBytes]byte
	seq      uint64
	at, seen int64
}

// seenBlock is how many notes a block holds.
const seenBlock = 4096

func (w *watchFollower) add(page contract.ChangesPage, now time.Time) {
	w.mu.Lock()
	for _, c := range page.Changes {
		w.keep(c.ID, c.Seq, c.At.UnixNano(), now.UnixNano())
	}
	w.mu.Unlock()
	w.since.Store(page.Next)
}

// keep notes one change; the caller holds w.mu.
func (w *watchFollower) keep(id string, seq uint64, at, seen int64) {
	n := seenNote{seq: seq, at: at, seen: seen}
	if !contract.IsFingerprint(id) {
		w.odd = append(w.odd, id)
		return
	}
	if _, err := hex.Decode(n.id[:], []byte(id)); err != nil {
		w.odd = append(w.odd, id)
		return
	}
	if len(w.blocks) == 0 || len(w.blocks[len(w.blocks)-1]) == seenBlock {
		w.blocks = append(w.blocks, make([]seenNote, 0, seenBlock))
	}
	last := &w.blocks[len(w.blocks)-1]
	*last = append(*last, n)
}

// seen is every change w noted, in the order it had them, and the ids it
// could not note.
func (w *watchFollower) seen() ([]seenChange, []string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []seenChange
	for _, b := range w.blocks {
		for _, n := range b {
			out = append(out, seenChange{id: hex.EncodeToString(n.id[:]), seq: n.seq, at: time.Unix(0, n.at), seen: time.Unix(0, n.seen)})
		}
	}
	return out, slices.Clone(w.odd)
}

// changesReader reads the feed: an engine/remote client, or rawChanges.
type changesReader interface {
	Changes(ctx context.Context, req contract.ChangesRequest) (contract.ChangesPage, error)
}

// rawChanges reads GET /v1/changes itself, the stream once it follows
// (a call that waits), and decodes only each change's seq, id and time
// (encoding/json skips the records), so a run with raw watchers shows what
// the server pays for them apart from what their clients pay decoding the
// records on this same machine. It serves one follower.
type rawChanges struct {
	url, token string
	// bare: pages are read by scanPage rather than encoding/json.
	bare   bool
	events *wire.EventReader
	body   io.Closer
	pos    uint64
}

func (r *rawChanges) Changes(ctx context.Context, req contract.ChangesRequest) (contract.ChangesPage, error) {
	if req.Wait > 0 && (r.events == nil || r.pos != req.Since) {
		if r.body != nil {
			r.body.Close()
		}
		resp, err := r.get(ctx, req, true)
		if err != nil {
			return contract.ChangesPage{}, err
		}
		r.body, r.events, r.pos = resp.Body, wire.NewEventReader(resp.Body, 256<<20), req.Since
	}
	if req.Wait > 0 {
		ev, err := r.events.Next()
		if err != nil {
			return contract.ChangesPage{}, err
		}
		if ev.Event != wire.EventChanges {
			return contract.ChangesPage{}, fmt.Errorf("the stream: %s %s", ev.Event, ev.Data)
		}
		read := rawPage
		if r.bare {
			read = scanPage
		}
		page, err := read(ev.Data)
		r.pos = page.Next
		return page, err
	}
	resp, err := r.get(ctx, req, false)
	if err != nil {
		return contract.ChangesPage{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return contract.ChangesPage{}, err
	}
	return rawPage(b)
}

func (r *rawChanges) get(ctx context.Context, req contract.ChangesRequest, stream bool) (*http.Response, error) {
	hr, err := http.NewRequestWithContext(ctx, http.MethodGet, r.url+"/v1/changes?"+remote.ChangesValues(req).Encode(), nil)
	if err != nil {
		return nil, err
	}
	hr.Header.Set("Authorization", "Bearer "+r.token)
	if stream {
		hr.Header.Set("Accept", wire.EventStreamType)
	}
	resp, err := http.DefaultClient.Do(hr)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return nil, fmt.Errorf("GET /v1/changes: %s: %s", resp.Status, b)
	}
	return resp, nil
}

func rawPage(b []byte) (contract.ChangesPage, error) {
	var page struct {
		Changes []struct {
			Seq uint64 `json:"seq"`
			At  string `json:"at"`
			ID  string `json:"id"`
		} `json:"changes"`
		Next uint64 `json:"next"`
		Head uint64 `json:"head"`
	}
	if err := json.Unmarshal(b, &page); err != nil {
		return contract.ChangesPage{}, err
	}
	out := contract.ChangesPage{Next: page.Next, Head: page.Head, Changes: make([]contract.Change, len(page.Changes))}
	for i, c := range page.Changes {
		at, err := contract.ParseTime(c.At)
		if err != nil {
			return contract.ChangesPage{}, err
		}
		out.Changes[i] = contract.Change{Seq: c.Seq, ID: c.ID, At: at}
	}
	return out, nil
}

// scanPage reads a page of the stream with as little work as a client can
// do and still check what it was sent: each change's seq, time and id from
// the head of its object, which the server writes as {"seq":N,"at":"T",
// "op":"O","id":"X",... (contract.Change), and the page's next and head from
// its tail; the records are skipped unread. Only a change's object starts
// with {"seq": (no record field is named seq, and a quote inside a string is
// escaped), so the scan cannot be misled by a record's text.
func scanPage(b []byte) (contract.ChangesPage, error) {
	var out contract.ChangesPage
	str := func(rest []byte, key string) (string, []byte, bool) {
		rest, ok := bytes.CutPrefix(rest, []byte(`,"`+key+`":"`))
		if !ok {
			return "", nil, false
		}
		i := bytes.IndexByte(rest, '"')
		if i < 0 {
			return "", nil, false
		}
		return string(rest[:i]), rest[i+1:], true
	}
	num := func(rest []byte) (uint64, []byte) {
		i := 0
		for i < len(rest) && rest[i] >= '0' && rest[i] <= '9' {
			i++
		}
		n, _ := strconv.ParseUint(string(rest[:i]), 10, 64)
		return n, rest[i:]
	}
	rest := b
	for {
		i := bytes.Index(rest, []byte(`{"seq":`))
		if i < 0 {
			break
		}
		var c contract.Change
		c.Seq, rest = num(rest[i+len(`{"seq":`):])
		at, rest1, ok := str(rest, "at")
		if !ok {
			return out, fmt.Errorf("a change without its time: %.80s", rest)
		}
		op, rest2, ok := str(rest1, "op")
		if !ok {
			return out, fmt.Errorf("a change without its op: %.80s", rest1)
		}
		id, rest3, ok := str(rest2, "id")
		if !ok {
			return out, fmt.Errorf("a change without its id: %.80s", rest2)
		}
		t, err := contract.ParseTime(at)
		if err != nil {
			return out, err
		}
		c.At, c.Op, c.ID, rest = t, contract.ChangeOp(op), id, rest3
		out.Changes = append(out.Changes, c)
	}
	tail := b[max(0, len(b)-120):]
	i := bytes.LastIndex(tail, []byte(`],"next":`))
	j := bytes.LastIndex(tail, []byte(`,"head":`))
	if i < 0 || j < 0 {
		return out, fmt.Errorf("a page without its next and head: %.120s", tail)
	}
	out.Next, _ = num(tail[i+len(`],"next":`):])
	out.Head, _ = num(tail[j+len(`,"head":`):])
	return out, nil
}

// startFollowers attaches the run's followers to the feed's head and returns
// once each of them is following, before any agent writes.
func startFollowers(t *testing.T, ctx context.Context, url string, cfg loadConfig, owner *remote.Client, failures *failureLog) *followers {
	t.Helper()
	ctx, cancel := context.WithCancel(ctx)
	fol := &followers{cfg: cfg, cancel: cancel}
	if cfg.apartWatchers {
		fol.apart = startApartWatchers(t, ctx, fol, url, cfg.watchers, failures)
	} else {
		fol.startWatchers(t, ctx, url, failures)
	}
	if cfg.tui {
		var opts []remote.Option
		if cfg.pollWatchers {
			opts = append(opts, remote.WithoutChangeStream())
		}
		fol.tui = startTUI(t, ctx, &fol.wg, loadClient(t, url, watcherToken(cfg.watchers), opts...), cfg.tuiUnclustered, failures)
	}
	if cfg.watchBin != "" {
		fol.proc = startWatchProcess(t, ctx, &fol.wg, cfg.watchBin, url, owner, failures)
	}
	return fol
}

// startWatchers starts fol's watchers as goroutines of this process and
// waits until each has read the feed's head.
func (fol *followers) startWatchers(t *testing.T, ctx context.Context, url string, failures *failureLog) {
	t.Helper()
	var ready sync.WaitGroup
	for i := range fol.cfg.watchers {
		w := &watchFollower{}
		fol.watchers = append(fol.watchers, w)
		var c changesReader
		switch {
		case fol.cfg.rawWatchers:
			c = &rawChanges{url: url, token: watcherToken(i), bare: fol.cfg.bareWatchers}
		case fol.cfg.pollWatchers:
			c = loadClient(t, url, watcherToken(i), remote.WithoutChangeStream())
		default:
			c = loadClient(t, url, watcherToken(i))
		}
		ready.Add(1)
		fol.wg.Go(func() { w.follow(ctx, c, i, ready.Done, failures) })
	}
	ready.Wait()
}

// follow reads the feed from its head until ctx ends, as `mnemo watch`
// does, noting every change; headRead is called once the head is read (or
// could not be).
func (w *watchFollower) follow(ctx context.Context, c changesReader, i int, headRead func(), failures *failureLog) {
	head, err := c.Changes(ctx, contract.ChangesRequest{FromNow: true, Limit: 1})
	headRead()
	if err != nil {
		failures.add("watcher %d: reading the head: %v", i, err)
		return
	}
	w.since.Store(head.Next)
	for ctx.Err() == nil {
		page, err := c.Changes(ctx, contract.ChangesRequest{Since: w.since.Load(), Limit: contract.MaxChangesLimit, Wait: 30 * time.Second})
		now := time.Now()
		if err != nil {
			if ctx.Err() == nil {
				failures.add("watcher %d: %v", i, err)
			}
			return
		}
		w.add(page, now)
	}
}

// finish waits until every follower has what the agents were acknowledged
// (at most 30 s), stops them, checks what each saw and returns the figures.
func (fol *followers) finish(t *testing.T, ctx context.Context, owner *remote.Client, acks []ack, failures *failureLog) *followFigures {
	t.Helper()
	head, err := owner.Changes(ctx, contract.ChangesRequest{FromNow: true, Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	caughtUp := func() bool {
		for _, w := range fol.watchers {
			if w.since.Load() < head.Next {
				return false
			}
		}
		if fol.tui != nil && fol.tui.count() < len(acks) && !fol.tui.idleSince(time.Second) {
			return false
		}
		if fol.proc != nil && fol.proc.count(acks) < len(acks) {
			return false
		}
		return true
	}
	for !caughtUp() && time.Now().Before(deadline) && failures.count() == 0 {
		time.Sleep(20 * time.Millisecond)
	}
	fol.cancel()
	fol.wg.Wait()

	ackOf := make(map[string]ack, len(acks))
	for _, a := range acks {
		ackOf[a.id] = a
	}
	ff := &followFigures{watchers: len(fol.watchers), watch: &latencies{}, commit: &latencies{}}
	early := 0
	for i, w := range fol.watchers {
		seen, odd := w.seen()
		for _, id := range odd {
			failures.add("watcher %d saw %q, which is not a record's id", i, id)
		}
		// Every acknowledged store exactly once, in the feed's order,
		// nothing outside the watcher's reach.
		got := map[string]bool{}
		for j, s := range seen {
			if j > 0 && s.seq <= seen[j-1].seq {
				failures.add("watcher %d saw seq %d after %d", i, s.seq, seen[j-1].seq)
				break
			}
			a, ok := ackOf[s.id]
			if !ok {
				failures.add("watcher %d saw %s, which no agent was acknowledged", i, s.id)
				break
			}
			if got[s.id] {
				failures.add("watcher %d saw %s twice", i, s.id)
				break
			}
			got[s.id] = true
			d := s.seen.Sub(a.at)
			if d < 0 {
				early++
			}
			ff.watch.add(max(d, 0))
			ff.commit.add(s.seen.Sub(s.at))
		}
		if len(got) != len(acks) {
			failures.add("watcher %d saw %d of the %d acknowledged stores", i, len(got), len(acks))
		}
	}
	ff.early = early
	if fol.tui != nil {
		ff.tui, ff.tuiApplied, ff.tuiFrames, ff.tuiEarly = fol.tui.figures(ackOf, len(acks), failures)
		ff.tuiShown, ff.tuiWant = fol.tui.shown, fol.tui.want
	}
	if fol.proc != nil {
		ff.proc, ff.procEarly = fol.proc.figures(ackOf, len(acks), failures)
	}
	return ff
}

// followFigures is what the followers measured.
type followFigures struct {
	watchers int
	// watch is ack-to-seen over every watcher and change (a change seen
	// before its ack counts 0; early says how many); commit is from the
	// change's own time stamp to seen.
	watch, commit *latencies
	early         int
	// tui is ack-to-frame-written, tuiApplied ack-to-applied (before the
	// frame), tuiFrames how many frames showed live changes.
	tui, tuiApplied *latencies
	tuiFrames       int
	tuiEarly        int
	// tuiShown of tuiWant stores were listed (the rest cut: over 1,000 in a window)
	tuiShown, tuiWant int
	// proc is ack-to-line of a real `mnemo watch` process.
	proc      *latencies
	procEarly int
}

func (f *followFigures) String() string {
	var b strings.Builder
	if f.watchers > 0 {
		fmt.Fprintf(&b, "\nfeed, %d watchers (Changes, wait 30s), ack -> seen: %s (%d seen before their ack)", f.watchers, f.watch.summary(), f.early)
		fmt.Fprintf(&b, "\nfeed, %d watchers, change time stamp -> seen: %s", f.watchers, f.commit.summary())
	}
	if f.proc != nil {
		fmt.Fprintf(&b, "\nmnemo watch (a process, owner token), ack -> line read: %s (%d before their ack)", f.proc.summary(), f.procEarly)
	}
	if f.tui != nil {
		fmt.Fprintf(&b, "\nlive TUI (Activity view, 80x24), ack -> applied: %s (%d of %d stores listed)", f.tuiApplied.summary(), f.tuiShown, f.tuiWant)
		fmt.Fprintf(&b, "\nlive TUI, ack -> frame written: %s (%d frames with live changes, %d applied before their ack)", f.tui.summary(), f.tuiFrames, f.tuiEarly)
	}
	return b.String()
}

// tuiFollower is a live TUI session under a real Bubble Tea program:
// Options.Applied notes the changes it shows, the model's View notes that the
// frame holding them was drawn, and the output's next write stamps them.
type tuiFollower struct {
	mu sync.Mutex
	// applied: id -> when the session applied it; viewed are applied and in a
	// frame not written yet; written: id -> when that frame was written.
	applied  map[string]time.Time
	waiting  []string
	viewed   []string
	written  map[string]time.Time
	frames   int
	appliedN atomic.Int64
	// shown of want acknowledged stores were in the Activity list.
	shown, want int
	last        time.Time
}

func (f *tuiFollower) count() int { return int(f.appliedN.Load()) }

// idleSince tells whether the session applied nothing for d.
func (f *tuiFollower) idleSince(d time.Duration) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return !f.last.IsZero() && time.Since(f.last) > d
}

func (f *tuiFollower) onApplied(changes []contract.Change) {
	now := time.Now()
	f.mu.Lock()
	defer f.mu.Unlock()
	f.last = now
	for _, c := range changes {
		if _, ok := f.applied[c.ID]; !ok {
			// A copy: the id is a substring of the page it came in,
			// which a note must not keep alive.
			id := strings.Clone(c.ID)
			f.applied[id] = now
			f.waiting = append(f.waiting, id)
			f.appliedN.Add(1)
		}
	}
}

func (f *tuiFollower) onView() {
	f.mu.Lock()
	f.viewed = append(f.viewed, f.waiting...)
	f.waiting = f.waiting[:0]
	f.mu.Unlock()
}

// Write is the program's output: the first write after a frame holding live
// changes stamps them.
func (f *tuiFollower) Write(p []byte) (int, error) {
	now := time.Now()
	f.mu.Lock()
	if len(f.viewed) > 0 {
		f.frames++
		for _, id := range f.viewed {
			f.written[id] = now
		}
		f.viewed = f.viewed[:0]
	}
	f.mu.Unlock()
	return len(p), nil
}

func (f *tuiFollower) figures(ackOf map[string]ack, want int, failures *failureLog) (written, applied *latencies, frames, early int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	written, applied = &latencies{}, &latencies{}
	n := 0
	for id, at := range f.applied {
		a, ok := ackOf[id]
		if !ok {
			failures.add("the TUI applied %s, which no agent was acknowledged", id)
			continue
		}
		n++
		if at.Before(a.at) {
			early++
		}
		applied.add(max(at.Sub(a.at), 0))
		if w, ok := f.written[id]; ok {
			written.add(max(w.Sub(a.at), 0))
		}
	}
	// Fewer than want when more than 1,000 changes came in one coalescing
	// window: the session shows (and reports) the newest 1,000 in its
	// Activity list and reloads its views for all of them.
	f.shown, f.want = n, want
	return written, applied, f.frames, early
}

// tuiModel is the session's model with its View noted.
type tuiModel struct {
	inner tea.Model
	f     *tuiFollower
}

func (m tuiModel) Init() tea.Cmd { return m.inner.Init() }

func (m tuiModel) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	inner, cmd := m.inner.Update(msg)
	m.inner = inner
	return m, cmd
}

func (m tuiModel) View() tea.View {
	v := m.inner.View()
	m.f.onView()
	return v
}

// startTUI runs a live session on c (a reader of team:load) showing its
// Activity view, until ctx ends.
func startTUI(t *testing.T, ctx context.Context, wg *sync.WaitGroup, c *remote.Client, unclustered bool, failures *failureLog) *tuiFollower {
	t.Helper()
	f := &tuiFollower{applied: map[string]time.Time{}, written: map[string]time.Time{}}
	// The first waiting poll is made once the head read answered: from then
	// on no change is missed.
	following := make(chan struct{})
	var once sync.Once
	opts := ui.Options{Engine: c, StoreLabel: "load", Keys: ui.DefaultKeyMap(), Live: true, Context: ctx, Applied: f.onApplied,
		Follow: func(poll tea.Cmd) tea.Cmd {
			once.Do(func() { close(following) })
			return poll
		}}
	if unclustered {
		opts.MaxClustered = 1
	}
	p := tea.NewProgram(tuiModel{inner: ui.New(opts), f: f}, tea.WithContext(ctx), tea.WithInput(nil), tea.WithOutput(f),
		tea.WithWindowSize(80, 24), tea.WithoutSignalHandler())
	wg.Go(func() {
		if _, err := p.Run(); err != nil && ctx.Err() == nil {
			failures.add("the TUI: %v", err)
		}
	})
	p.Send(ui.KeyPress("5"))
	select {
	case <-following:
	case <-time.After(20 * time.Second):
		t.Fatal("the TUI did not start following the feed in 20 s")
	}
	return f
}

// procFollower is a `mnemo watch --from-now` process.
type procFollower struct {
	pid  int
	mu   sync.Mutex
	seen map[string]time.Time
}

func (p *procFollower) count(acks []ack) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, a := range acks {
		if _, ok := p.seen[a.id]; ok {
			n++
		}
	}
	return n
}

func (p *procFollower) figures(ackOf map[string]ack, want int, failures *failureLog) (*latencies, int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	l, n, early := &latencies{}, 0, 0
	for id, at := range p.seen {
		a, ok := ackOf[id]
		if !ok {
			continue // the warm-up records, outside team:load
		}
		n++
		if at.Before(a.at) {
			early++
		}
		l.add(max(at.Sub(a.at), 0))
	}
	if n != want {
		failures.add("mnemo watch printed %d of the %d acknowledged stores", n, want)
	}
	return l, early
}

// startWatchProcess starts `bin --remote URL watch --from-now` with the owner
// token and returns once it prints: warm-up records outside team:load (no
// reader of the run sees them) are stored until one is printed.
func startWatchProcess(t *testing.T, ctx context.Context, wg *sync.WaitGroup, bin, url string, owner *remote.Client, failures *failureLog) *procFollower {
	t.Helper()
	cmd := exec.CommandContext(ctx, bin, "--remote", url, "watch", "--from-now")
	cmd.Env = append(os.Environ(), "MNEMO_TOKEN="+loadOwnerToken)
	// Ended as Ctrl-C ends it, so it ends as a user's does (and writes the
	// profile MNEMO_CPUPROFILE asks of it, when the test's environment has it).
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 10 * time.Second
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &procFollower{pid: cmd.Process.Pid, seen: map[string]time.Time{}}
	printed := make(chan struct{}, 1)
	wg.Go(func() {
		defer func() { _ = cmd.Wait() }()
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			now := time.Now()
			id, ok := lineID(sc.Bytes())
			if !ok {
				failures.add("mnemo watch printed %q, a line without a change's id", sc.Text())
				return
			}
			p.mu.Lock()
			p.seen[id] = now
			p.mu.Unlock()
			select {
			case printed <- struct{}{}:
			default:
			}
		}
		_, _ = io.Copy(io.Discard, out)
	})
	meta := contract.MetaFromSource(contract.SourceAgent, nil)
	meta.Namespace = contract.MustNamespace("team:other")
	for i := 0; ; i++ {
		if _, err := contract.Store(ctx, owner, contract.Document(fmt.Sprintf("warm-up %d for mnemo watch", i), meta)); err != nil {
			t.Fatal(err)
		}
		select {
		case <-printed:
			return p
		case <-time.After(200 * time.Millisecond):
		}
		if i == 100 {
			t.Fatal("mnemo watch printed nothing in 20 s")
		}
	}
}

// lineID is the id of the change a line of `mnemo watch` prints: the
// first "id" of the line, the change's own (its record's comes after it),
// read with a byte scan. Decoding each line with encoding/json took this
// process, the writers', about 5 µs a record.
func lineID(line []byte) (string, bool) {
	const key = `"id":"`
	i := bytes.Index(line, []byte(key))
	if i < 0 || !bytes.HasPrefix(line, []byte(`{"seq":`)) {
		return "", false
	}
	rest := line[i+len(key):]
	j := bytes.IndexByte(rest, '"')
	if j <= 0 {
		return "", false
	}
	return string(rest[:j]), true
}

// loadAverage is /proc/loadavg's three averages ("" where there is none).
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	fields := strings.Fields(string(b))
	return strings.Join(fields[:min(3, len(fields))], " ")
}

// TestScanPageAgreesWithTheDecoder: the bare watchers' byte scan reads the
// same seqs, times, ids, next and head as the page decoder, records whose
// text looks like a change's JSON included.
func TestScanPageAgreesWithTheDecoder(t *testing.T) {
	e := memory.New()
	ctx := context.Background()
	for _, text := range []string{`plain`, `{"seq":7,"at":"x","op":"store","id":"fake"}`, "quotes \" and\nlines"} {
		if _, err := contract.Store(ctx, e, contract.Document(text, contract.MemoryMeta{})); err != nil {
			t.Fatal(err)
		}
	}
	page, err := e.Changes(ctx, contract.ChangesRequest{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	b, err := page.AppendJSON(nil)
	if err != nil {
		t.Fatal(err)
	}
	var want contract.ChangesPage
	if err := want.UnmarshalJSON(b); err != nil {
		t.Fatal(err)
	}
	got, err := scanPage(b)
	if err != nil {
		t.Fatal(err)
	}
	if got.Next != want.Next || got.Head != want.Head || len(got.Changes) != len(want.Changes) || len(want.Changes) != 3 {
		t.Fatalf("scanned %+v, decoded %+v", got, want)
	}
	for i, c := range want.Changes {
		g := got.Changes[i]
		if g.Seq != c.Seq || g.ID != c.ID || g.Op != c.Op || !g.At.Equal(c.At) {
			t.Fatalf("change %d: scanned %+v, decoded %+v", i, g, c)
		}
	}
}
