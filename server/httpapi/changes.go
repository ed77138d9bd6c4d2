package httpapi

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"mnemo/contract"
	"mnemo/server/auth"
	"mnemo/server/wire"
)

// serveChanges answers GET /v1/changes?since=N&limit=M&wait=30s (a long poll):
// the change feed after seq N (or, with since=now, from its head), at most M
// changes (default 100, at most 1000), waiting up to the wait (at most 60s;
// default 0, answer at once) for a change when none is there. reach=JSON
// narrows it further; the principal's reach always applies. It is rate-limited
// like the other listings, per request; a waiting request holds no lock, so a
// slow or idle client never holds up a writer. A since the feed no longer holds
// answers 410 with the expired kind: reload and resume from the new head.
//
// With Accept: text/event-stream the same request opens a stream instead
// (serveChangeStream): one response carrying page after page as changes
// commit.
func (h *Handler) serveChanges(w http.ResponseWriter, r *http.Request, e *auth.Confined) {
	if r.Method != http.MethodGet {
		methodNotAllowed(w, "GET")
		return
	}
	stream := wantsStream(r)
	q := r.URL.Query()
	if id := r.Header.Get(wire.LastEventID); stream && id != "" && q.Get("since") == "" {
		// A reconnecting EventSource resumes after the last event it had.
		q.Set("since", id)
	}
	req, err := ChangesQuery(q)
	if err != nil {
		writeError(w, err)
		return
	}
	if ok, wait := h.listing.take(e.Principal().Name); !ok {
		writeLimited(w, &rateLimited{op: "changes", wait: wait})
		return
	}
	ctx, cancel := h.drainable(r.Context())
	defer cancel()
	if stream {
		who := e.Principal().Name
		if !h.streams.open(who, h.opts.MaxStreamsPerPrincipal) {
			writeTooManyStreams(w, who, h.opts.MaxStreamsPerPrincipal)
			return
		}
		defer h.streams.close(who)
		h.serveChangeStream(ctx, w, r, e, req)
		return
	}
	page, err := e.Changes(ctx, req)
	if err != nil {
		h.changesFailed(w, err)
		return
	}
	// The page is assembled by hand from each change's JSON (shared by the
	// readers of the same change on engines that share them), not through
	// encoding/json, which would validate and compact every change again.
	body, err := page.AppendJSON(make([]byte, 0, 512))
	if err != nil {
		h.logEngineError("changes", err)
		writeError(w, contract.EngineErr("the changes could not be encoded: %v", err))
		return
	}
	writeBody(w, http.StatusOK, append(body, '\n'))
}

// drainable is ctx ended also when the server stops (EndLongPolls).
func (h *Handler) drainable(parent context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(parent)
	drain := h.drain.ch()
	go func() {
		select {
		case <-drain:
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, cancel
}

// changesFailed answers a failed read of the feed before any of it was sent.
func (h *Handler) changesFailed(w http.ResponseWriter, err error) {
	if h.drain.done() {
		err = contract.Unavailable("the server is stopping; ask again from the same since when it is back")
	}
	h.logEngineError("changes", err)
	writeError(w, err)
}

// wantsStream tells whether the request accepts the stream form.
func wantsStream(r *http.Request) bool {
	for _, v := range r.Header.Values("Accept") {
		for part := range strings.SplitSeq(v, ",") {
			mt, _, _ := strings.Cut(part, ";")
			if strings.EqualFold(strings.TrimSpace(mt), wire.EventStreamType) {
				return true
			}
		}
	}
	return false
}

// Defaults of the stream form.
const (
	// DefaultStreamBeat is how long a stream waits with nothing to send
	// before it sends an empty page, when the request names no wait.
	DefaultStreamBeat = 30 * time.Second
	// MinStreamBeat is the shortest heartbeat a request may ask for.
	MinStreamBeat = time.Second
	// DefaultStreamWriteTimeout is how long a stream waits for a client to
	// take one event before it drops the client.
	DefaultStreamWriteTimeout = 15 * time.Second
	// DefaultStreamGather is how long a stream lets commits gather after it
	// sent a page of changes before it reads the feed again.
	DefaultStreamGather = 10 * time.Millisecond
	// DefaultMaxStreamsPerPrincipal bounds the streams one principal holds
	// open. A follower needs one (engine/remote serves all of a client's
	// waits on one reach from one stream; `mnemo watch` and a TUI session
	// are one each), so 32 leaves room for a token shared by a team's
	// dashboards and agents, while a leaked or looping client cannot pile up
	// streams: the rate limit bounds how fast streams open, not how many stay
	// open, and each holds a connection, a goroutine and up to
	// Options.StreamQueue frames.
	DefaultMaxStreamsPerPrincipal = 32
	// streamsRetryAfter is the Retry-After of a stream refused over the cap.
	streamsRetryAfter = 5
)

// streamCount counts each principal's open streams.
type streamCount struct {
	mu     sync.Mutex
	byName map[string]int
}

// open counts one more stream of who, unless who has max open already
// (max < 0: no bound).
func (c *streamCount) open(who string, max int) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.byName == nil {
		c.byName = map[string]int{}
	}
	if max >= 0 && c.byName[who] >= max {
		return false
	}
	c.byName[who]++
	return true
}

// close counts one stream of who fewer.
func (c *streamCount) close(who string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.byName[who]--; c.byName[who] <= 0 {
		// The map holds only principals with streams open.
		delete(c.byName, who)
	}
}

// writeTooManyStreams refuses a stream over the principal's cap: 429, like
// the rate limit, saying what to do.
func writeTooManyStreams(w http.ResponseWriter, who string, max int) {
	w.Header().Set("Retry-After", strconv.Itoa(streamsRetryAfter))
	writeJSON(w, http.StatusTooManyRequests, wire.ErrorEnvelope(contract.Unavailable("principal `%s` has %d change streams open, the most this server allows one principal; close one (a follower needs one stream) or retry after %d s", who, max, streamsRetryAfter)))
}

// serveChangeStream answers GET /v1/changes with Accept: text/event-stream:
// Server-Sent Events (server/wire), one event "changes" per page, its id the
// page's next, its data the page's JSON as the long poll answers it. The
// request's since, limit and reach are the long poll's (since may come from
// Last-Event-ID instead); its wait is the heartbeat (at least MinStreamBeat):
// after that long with nothing to send the stream sends a page (empty, on a
// quiet reach) saying where to resume.
//
// The first page is read without waiting, so every error a long poll would
// answer (a since past retention: 410, expired; a reach outside the
// principal's: 403) is answered the same way, with its status, before the
// stream begins. Once it has caught up with the feed, the stream follows the
// hub of its reach (fanout.go), which reads and encodes each page once for
// every stream of that reach and lets commits gather (Options.StreamGather)
// after each page of changes, so a busy feed costs one event per gather
// rather than one per commit, while the first change after a quiet spell
// goes at once. It ends on an "error" event (the feed no longer holds where
// it is, the server is stopping, the token was revoked), when the principal
// changed (a reloaded keys file: reconnect to read under the new reach), when
// the client goes, and when the client does not take an event within
// Options.StreamWriteTimeout: a slow client is dropped rather than buffered
// for, and resumes from its last id. Writers never wait for a stream, nor
// does a stream for another: the hub hands frames to per-stream queues
// without blocking, and reads the feed holding no lock.
func (h *Handler) serveChangeStream(ctx context.Context, w http.ResponseWriter, r *http.Request, e *auth.Confined, req contract.ChangesRequest) {
	beat := req.Wait
	switch {
	case beat <= 0:
		beat = DefaultStreamBeat
	case beat < MinStreamBeat:
		// One token must not buy a stream of empty pages.
		beat = MinStreamBeat
	}
	first := req
	first.Wait = 0
	page, err := e.Changes(ctx, first)
	if err != nil {
		h.changesFailed(w, err)
		return
	}
	// The reach the engine reads under for this principal: the key of the
	// stream's hub. The read above passed the same check, so this refuses
	// nothing.
	reach, err := e.Scope(ctx, "changes", req.Reach)
	if err != nil {
		h.changesFailed(w, err)
		return
	}
	rc := http.NewResponseController(w)
	// The request is read; the server's read timeout must not end the stream.
	_ = rc.SetReadDeadline(time.Time{})
	hd := w.Header()
	hd.Set("Content-Type", wire.EventStreamType)
	hd.Set("Cache-Control", "no-store")
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("X-Accel-Buffering", "no")
	if r.ProtoMajor == 1 {
		// The stream's body is not chunked: it ends when the connection
		// closes (the setup the event-stream recommendation gives). Chunked,
		// each event took three writes of the socket (the chunk's size with
		// the first 4 KB, the rest, its CRLF at the flush), and the client
		// woke for each; now one. HTTP/2 frames its own.
		hd.Set("Transfer-Encoding", "identity")
	}
	w.WriteHeader(http.StatusOK)
	st := &changeStream{h: h, w: w, rc: rc, r: r, e: e, p: e.Principal(), limit: req.Limit, reach: reach, beat: beat}
	if !st.sendPage(page) {
		return
	}
	st.pos, st.head, st.full = page.Next, page.Head, len(page.Changes) == req.Limit
	st.follow(ctx)
}

// changeStream is one open stream: pos is the since of the next page it
// sends (every change up to pos that its reach admits has been sent).
type changeStream struct {
	h     *Handler
	w     http.ResponseWriter
	rc    *http.ResponseController
	r     *http.Request
	e     *auth.Confined
	p     *auth.Principal
	limit int
	reach *contract.Reach
	beat  time.Duration
	buf   []byte

	pos, head uint64
	// full: the last page read on its own was full (more may follow at once).
	full bool
	// beatTimer fires when the stream sent nothing for beat.
	beatTimer *time.Timer
}

// follow sends the stream's pages until it ends: on its own until it has
// caught up with the feed's head, then from its hub; a stream its hub lets
// go catches up on its own again and joins again.
func (st *changeStream) follow(ctx context.Context) {
	st.beatTimer = time.NewTimer(st.beat)
	defer st.beatTimer.Stop()
	key := keyOf(st.reach, st.limit)
	for {
		if !st.catchUp(ctx) {
			return
		}
		sub, at := st.h.join(key, st.reach, st.limit, st.pos)
		ok := st.fromHub(ctx, sub, at)
		st.h.leave(sub)
		if !ok {
			return
		}
	}
}

// catchUp reads and sends on its own while the feed holds more than the
// stream has sent: a stream joins its hub near the head, so the hub's
// frames and the stream meet after at most a page or two.
func (st *changeStream) catchUp(ctx context.Context) bool {
	for st.full || st.pos < st.head {
		page, ok := st.read(ctx, st.pos)
		if !ok {
			return false
		}
		if len(page.Changes) > 0 && !st.sendPage(page) {
			return false
		}
		// An empty page whose next is short of the head examined only
		// changes outside the reach: the loop reads on.
		st.pos, st.head, st.full = page.Next, page.Head, len(page.Changes) == st.limit
	}
	return true
}

// fromHub sends the frames of sub's hub, starting where the stream is, until
// the hub lets it go (true: catch up and join again) or the stream ends.
func (st *changeStream) fromHub(ctx context.Context, sub *subscriber, at uint64) bool {
	if at > st.pos && !st.splice(ctx, at) {
		return false
	}
	for {
		select {
		case fr := <-sub.ch:
			if !st.take(ctx, fr) {
				return false
			}
		case <-sub.gone:
			// The frames queued before it are still the stream's.
			for {
				select {
				case fr := <-sub.ch:
					if !st.take(ctx, fr) {
						return false
					}
				default:
					st.full = true // read on its own at once
					return true
				}
			}
		case <-st.beatTimer.C:
			// Nothing sent for beat: a page of its own says where to resume
			// (empty, or changes the hub has not handed out yet).
			page, ok := st.read(ctx, st.pos)
			if !ok || !st.sendPage(page) {
				return false
			}
			st.pos, st.head = page.Next, page.Head
		case <-ctx.Done():
			st.ended()
			return false
		}
	}
}

// take sends one frame of the hub. A frame that starts before the stream's
// position (the stream read past the hub on its own: when it joined, or for
// a heartbeat) is replaced by a page of the stream's own read of the rest of
// it; one the stream already has is skipped.
func (st *changeStream) take(ctx context.Context, fr *frame) bool {
	switch {
	case fr.next <= st.pos:
		return true
	case fr.since < st.pos:
		return st.splice(ctx, fr.next)
	case fr.since > st.pos:
		// Never, as the hub's frames follow one another from where the
		// stream joined; read the gap rather than lose it.
		if !st.splice(ctx, fr.since) {
			return false
		}
	}
	if fr.changes == 0 {
		// The hub's wait ended with nothing: the stream's heartbeat tells
		// the client when it is due.
		st.pos = fr.next
		return true
	}
	if !st.allowed() {
		return false
	}
	st.pos = fr.next
	return st.write(fr.event)
}

// splice reads and sends on its own the changes after the stream's position
// up to until (a frame boundary of the hub), so the hub's next frame follows
// on from what the stream sent.
func (st *changeStream) splice(ctx context.Context, until uint64) bool {
	for st.pos < until {
		page, ok := st.read(ctx, st.pos)
		if !ok {
			return false
		}
		if page.Next <= st.pos {
			// The feed did not move past a position the hub read past.
			st.fail(contract.EngineErr("the change feed stopped at seq %d before seq %d", page.Next, until))
			return false
		}
		if page.Next > until {
			n := 0
			for n < len(page.Changes) && page.Changes[n].Seq <= until {
				n++
			}
			page.Changes, page.Next = page.Changes[:n], until
		}
		if len(page.Changes) > 0 && !st.sendPage(page) {
			return false
		}
		st.pos, st.head = page.Next, page.Head
	}
	return true
}

// read reads a page after since on the stream's own, without waiting; a
// failure ends the stream (an error event when the client should know why).
func (st *changeStream) read(ctx context.Context, since uint64) (contract.ChangesPage, bool) {
	page, err := st.e.Changes(ctx, contract.ChangesRequest{Since: since, Limit: st.limit, Reach: st.reach})
	if err != nil {
		if ctx.Err() != nil {
			st.ended()
		} else {
			st.h.logEngineError("changes", err)
			st.fail(err)
		}
		return page, false
	}
	return page, true
}

// ended ends a stream whose context ended: silently when the client went,
// with an error event when the server is stopping.
func (st *changeStream) ended() {
	if st.r.Context().Err() != nil {
		return
	}
	if st.h.drain.done() {
		st.fail(contract.Unavailable("the server is stopping; resume from the last id (since) when it is back"))
	}
}

// allowed re-checks the stream's credentials before an event: a token the
// keys file no longer holds ends the stream with an error event; a
// principal whose role or reach changed ends it quietly (the client
// reconnects and reads under the new reach).
func (st *changeStream) allowed() bool {
	switch q, ok := st.h.principalOf(st.r); {
	case !ok:
		st.fail(contract.Unauthorized("the bearer token is no longer known to this server (the keys file changed)"))
		return false
	case !q.Same(st.p):
		return false
	}
	return true
}

// sendPage encodes and sends a page the stream read on its own.
func (st *changeStream) sendPage(p contract.ChangesPage) bool {
	if !st.allowed() {
		return false
	}
	var err error
	st.buf, err = wire.AppendJSONEvent(st.buf[:0], wire.EventChanges, strconv.FormatUint(p.Next, 10), p.AppendJSON)
	if err != nil {
		st.h.logEngineError("changes", err)
		st.fail(contract.EngineErr("the changes could not be encoded: %v", err))
		return false
	}
	return st.write(st.buf)
}

// write sends one event's bytes, dropping a client that does not take them
// within the write timeout, and restarts the heartbeat.
func (st *changeStream) write(b []byte) bool {
	_ = st.rc.SetWriteDeadline(time.Now().Add(st.h.opts.StreamWriteTimeout))
	if _, err := st.w.Write(b); err != nil {
		return false
	}
	if st.rc.Flush() != nil {
		return false
	}
	if st.beatTimer != nil {
		st.beatTimer.Reset(st.beat)
	}
	return true
}

// fail ends the stream with an "error" event.
func (st *changeStream) fail(err error) {
	st.h.streamFailed(func(ev wire.Event) bool {
		st.buf = wire.AppendEvent(st.buf[:0], ev)
		return st.write(st.buf)
	}, err)
}

// sleepCtx waits d, or less when ctx ends (false).
func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// streamFailed ends a stream with an "error" event carrying err as an error
// answer would (engine failures named by reference only).
func (h *Handler) streamFailed(send func(wire.Event) bool, err error) {
	send(wire.Event{Event: wire.EventError, Data: errorJSON(err)})
}

// drainer ends the long polls when the server stops.
type drainer struct {
	once sync.Once
	c    chan struct{}
	mu   sync.Mutex
}

func (d *drainer) ch() chan struct{} {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.c == nil {
		d.c = make(chan struct{})
	}
	return d.c
}

func (d *drainer) done() bool {
	select {
	case <-d.ch():
		return true
	default:
		return false
	}
}

// EndLongPolls answers every waiting GET /v1/changes at once, and every later
// one without waiting, with an unavailable error saying the server is
// stopping (clients resume from their since): call it before
// http.Server.Shutdown, which would otherwise wait for them.
func (h *Handler) EndLongPolls() {
	ch := h.drain.ch()
	h.drain.once.Do(func() { close(ch) })
}

// ChangesQuery reads a changes request from its URL query (the client writes
// the same with ChangesValues); the request is validated by the engine.
func ChangesQuery(q map[string][]string) (contract.ChangesRequest, error) {
	get := func(k string) string {
		if v := q[k]; len(v) > 0 {
			return v[0]
		}
		return ""
	}
	req := contract.ChangesRequest{Limit: contract.DefaultChangesLimit}
	switch s := get("since"); s {
	case "":
	case "now":
		req.FromNow = true
	default:
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return req, contract.Invalid("since `%s` is not a change seq (a whole number, or `now`)", safePath(s))
		}
		req.Since = n
	}
	if s := get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			return req, contract.Invalid("limit `%s` is not a count", safePath(s))
		}
		req.Limit = n
	}
	if s := get("wait"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil {
			n, nerr := strconv.ParseFloat(s, 64)
			if nerr != nil || strings.ContainsAny(s, "eE") {
				return req, contract.Invalid("wait `%s` is not a duration such as 30s or 500ms", safePath(s))
			}
			d = time.Duration(n * float64(time.Second))
		}
		req.Wait = d
	}
	if s := get("reach"); s != "" {
		var reach contract.Reach
		if err := json.Unmarshal([]byte(s), &reach); err != nil {
			return req, contract.Invalid("reach is not a reach's JSON ({\"at\", \"inherit\", \"descendants\"}): %w", err)
		}
		req.Reach = &reach
	}
	return req, nil
}
