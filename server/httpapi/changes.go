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
)

// serveChanges answers GET /v1/changes?since=N&limit=M&wait=30s (a long poll):
// the change feed after seq N (or, with since=now, from its head), at most M
// changes (default 100, at most 1000), waiting up to the wait (at most 60s;
// default 0, answer at once) for a change when none is there. reach=JSON
// narrows it further; the principal's reach always applies. It is rate-limited
// like the other listings, per request; a waiting request holds no lock, so a
// slow or idle client never holds up a writer. A since the feed no longer holds
// answers 410 with the expired kind: reload and resume from the new head.
func (h *Handler) serveChanges(w http.ResponseWriter, r *http.Request, e *auth.Confined) {
	if r.Method != http.MethodGet {
		methodNotAllowed(w, "GET")
		return
	}
	req, err := ChangesQuery(r.URL.Query())
	if err != nil {
		writeError(w, err)
		return
	}
	if ok, wait := h.listing.take(e.Principal().Name); !ok {
		writeLimited(w, &rateLimited{op: "changes", wait: wait})
		return
	}
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	go func() {
		select {
		case <-h.drain.ch():
			cancel()
		case <-ctx.Done():
		}
	}()
	page, err := e.Changes(ctx, req)
	if err != nil && h.drain.done() {
		err = contract.Unavailable("the server is stopping; ask again from the same since when it is back")
	}
	if err != nil {
		h.logEngineError("changes", err)
		writeError(w, err)
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
