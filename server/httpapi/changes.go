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
)

// serveChangeStream answers GET /v1/changes with Accept: text/event-stream:
// Server-Sent Events (server/wire), one event "changes" per page, its id the
// page's next, its data the page's JSON as the long poll answers it. The
// request's since, limit and reach are the long poll's (since may come from
// Last-Event-ID instead); its wait is the heartbeat (at least MinStreamBeat):
// after that long with nothing to send the stream sends an empty page saying
// where to resume.
//
// The first page is read without waiting, so every error a long poll would
// answer (a since past retention: 410, expired; a reach outside the
// principal's: 403) is answered the same way, with its status, before the
// stream begins. Once streaming, after each page of changes the stream lets
// commits gather (Options.StreamGather) before it reads again, so a busy feed
// costs one event per gather rather than one per commit, while the first
// change after a quiet spell goes at once. It ends on an "error" event (the
// feed no longer holds where it is, the server is stopping, the token was
// revoked), when the principal changed (a reloaded keys file: reconnect to
// read under the new reach), when the client goes, and when the client does
// not take an event within Options.StreamWriteTimeout: a slow client is
// dropped rather than buffered for, and resumes from its last id. Writers
// never wait for a stream: each reads the feed on its own, holding no lock.
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
	rc := http.NewResponseController(w)
	// The request is read; the server's read timeout must not end the stream.
	_ = rc.SetReadDeadline(time.Time{})
	hd := w.Header()
	hd.Set("Content-Type", wire.EventStreamType)
	hd.Set("Cache-Control", "no-store")
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	var buf []byte
	write := func() bool {
		_ = rc.SetWriteDeadline(time.Now().Add(h.opts.StreamWriteTimeout))
		if _, err := w.Write(buf); err != nil {
			return false
		}
		return rc.Flush() == nil
	}
	send := func(ev wire.Event) bool {
		buf = wire.AppendEvent(buf[:0], ev)
		return write()
	}
	sendPage := func(p contract.ChangesPage) bool {
		buf, err = wire.AppendJSONEvent(buf[:0], wire.EventChanges, strconv.FormatUint(p.Next, 10), p.AppendJSON)
		if err != nil {
			h.logEngineError("changes", err)
			h.streamFailed(send, contract.EngineErr("the changes could not be encoded: %v", err))
			return false
		}
		return write()
	}
	if !sendPage(page) {
		return
	}
	p := e.Principal()
	next := page.Next
	for {
		if len(page.Changes) > 0 && h.opts.StreamGather > 0 {
			t := time.NewTimer(h.opts.StreamGather)
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
			}
		}
		page, err = e.Changes(ctx, contract.ChangesRequest{Since: next, Limit: req.Limit, Reach: req.Reach, Wait: beat})
		if err != nil {
			if r.Context().Err() != nil {
				return // the client went away
			}
			if h.drain.done() {
				err = contract.Unavailable("the server is stopping; resume from the last id (since) when it is back")
			}
			h.logEngineError("changes", err)
			h.streamFailed(send, err)
			return
		}
		switch q, ok := h.principalOf(r); {
		case !ok:
			h.streamFailed(send, contract.Unauthorized("the bearer token is no longer known to this server (the keys file changed)"))
			return
		case !q.Same(p):
			// Read on under the principal's new reach: reconnect.
			return
		}
		if !sendPage(page) {
			return
		}
		next = page.Next
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
