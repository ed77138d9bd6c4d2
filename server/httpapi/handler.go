// Package httpapi serves any contract.Engine over HTTP (docs/spec/cli.md section 4):
// POST /v1/<operation> with the request JSON, GET /v1/descriptor and
// GET /v1/health, errors as {"error": {"kind", "code"?, "message"}}.
//
// Every request is authenticated to a principal (the owner token, or a token
// of the keys file) and served by auth.Confine(engine, principal), so a
// request can never widen its reach, readers cannot change anything, and every
// mutation and refusal lands in the audit log. Bodies are size-limited, the
// expensive listings (browse, export, explore, list) are rate-limited per
// principal, and no answer ever carries a stack trace, a path or a credential.
package httpapi

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"mnemo/contract"
	"mnemo/server/audit"
	"mnemo/server/auth"
	"mnemo/server/wire"
)

// Defaults of Options.
const (
	DefaultMaxBody      = 1 << 20
	DefaultMaxStoreBody = 32 << 20
)

// DefaultRate limits each principal's expensive listings.
var defaultRate = Rate{PerSecond: 50, Burst: 200}

// DefaultRate is the listing rate limit when Options.ListingRate is zero.
func DefaultRate() Rate { return defaultRate }

// Options configure the handler.
type Options struct {
	// OwnerToken is the bearer token of the owner (an admin without reach limit).
	OwnerToken string
	// Keys are the other principals; nil means only the owner.
	Keys *auth.Keys
	// Open serves every request as the owner without a token: only for a unix
	// socket only its owner can open (mode 0600), and for tests.
	Open bool
	// Audit receives every mutation and refusal; nil keeps no log.
	Audit audit.Log
	// AuditReader serves GET /v1/audit to admins; nil answers 404.
	AuditReader audit.Reader
	// MaxBody bounds request bodies (default 1 MiB); MaxStoreBody bounds store
	// and store_many bodies (default 32 MiB).
	MaxBody      int64
	MaxStoreBody int64
	// MaxItemBytes bounds the JSON of each stored item (default
	// auth.DefaultMaxItemBytes, 1 MiB; negative: no bound).
	MaxItemBytes int
	// ListingRate limits browse, export, explore and list per principal
	// (default 50/s, burst 200); a negative PerSecond disables the limit.
	ListingRate Rate
	// Logger receives engine failures in full (clients get a reference only).
	Logger *slog.Logger
	// Now is the clock of the rate limiter and the audit log (tests).
	Now func() time.Time
	// StreamWriteTimeout is how long the change stream waits for a client to
	// take one event before it drops it (default DefaultStreamWriteTimeout).
	StreamWriteTimeout time.Duration
	// StreamGather is how long the change stream lets commits gather after a
	// page of changes before it reads the feed again (default
	// DefaultStreamGather; negative: none).
	StreamGather time.Duration
	// StreamQueue is how many pages a change stream may fall behind the
	// reader it shares with the other streams of its reach before it is let
	// go to read on its own (default DefaultStreamQueue).
	StreamQueue int
	// MaxStreamsPerPrincipal bounds the change streams one principal holds
	// open at once (default DefaultMaxStreamsPerPrincipal; negative: no
	// bound); one more is refused with 429.
	MaxStreamsPerPrincipal int
}

// Handler is the HTTP API over one engine.
type Handler struct {
	e       contract.Engine
	opts    Options
	log     *slog.Logger
	listing *limiter
	// anonymous limits unauthenticated requests as one principal, so a flood of
	// bad tokens cannot flood the audit log.
	anonymous *limiter
	ops       map[wire.Op]operation
	// drain ends the change feed's long polls when the server stops.
	drain drainer
	// fan shares the feed's reading among the streams of one reach.
	fan fanout
	// streams counts each principal's open change streams.
	streams streamCount
}

// operation serves one POST /v1/<name>.
type operation struct {
	maxBody int64
	listing bool
	serve   func(ctx context.Context, e *auth.Confined, body []byte) (any, error)
}

// New returns the handler serving e.
func New(e contract.Engine, opts Options) *Handler {
	if opts.MaxBody <= 0 {
		opts.MaxBody = DefaultMaxBody
	}
	if opts.MaxStoreBody <= 0 {
		opts.MaxStoreBody = DefaultMaxStoreBody
	}
	if opts.ListingRate == (Rate{}) {
		opts.ListingRate = defaultRate
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.StreamWriteTimeout <= 0 {
		opts.StreamWriteTimeout = DefaultStreamWriteTimeout
	}
	if opts.StreamQueue <= 0 {
		opts.StreamQueue = DefaultStreamQueue
	}
	if opts.MaxStreamsPerPrincipal == 0 {
		opts.MaxStreamsPerPrincipal = DefaultMaxStreamsPerPrincipal
	}
	switch {
	case opts.StreamGather == 0:
		opts.StreamGather = DefaultStreamGather
	case opts.StreamGather < 0:
		opts.StreamGather = 0
	}
	h := &Handler{e: e, opts: opts, log: opts.Logger,
		listing:   newLimiter(opts.ListingRate, opts.Now),
		anonymous: newLimiter(Rate{PerSecond: 5, Burst: 20}, opts.Now)}
	h.ops = h.operations()
	return h
}

// ServeHTTP routes one request.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	defer func() {
		if p := recover(); p != nil {
			if p == http.ErrAbortHandler {
				panic(p)
			}
			h.log.Error("panic serving a request", "path", r.URL.Path, "panic", p, "stack", string(debug.Stack()))
			writeError(w, contract.EngineErr("the server failed on this request; the failure is in its log"))
		}
	}()
	name, ok := strings.CutPrefix(r.URL.Path, wire.PathPrefix)
	if !ok || name == "" || strings.Contains(name, "/") {
		writeStatus(w, http.StatusNotFound, contract.NotFound("no such endpoint %s; the API lives under /v1/", safePath(r.URL.Path)))
		return
	}
	if name == wire.EndpointHealth {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			methodNotAllowed(w, "GET")
			return
		}
		writeJSON(w, http.StatusOK, h.e.Health(r.Context()))
		return
	}
	e, err := h.authenticate(r)
	if err != nil {
		var limited *rateLimited
		if errors.As(err, &limited) {
			writeLimited(w, limited)
			return
		}
		writeError(w, err)
		return
	}
	switch name {
	case wire.EndpointDescriptor:
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			methodNotAllowed(w, "GET")
			return
		}
		writeJSON(w, http.StatusOK, e.Descriptor())
		return
	case wire.EndpointPrincipal:
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			methodNotAllowed(w, "GET")
			return
		}
		p := e.Principal()
		writeJSON(w, http.StatusOK, wire.PrincipalAnswer{Name: p.Name, Role: string(p.Role), Writes: p.Role.CanWrite(), Reach: p.Reach, Unlimited: p.Unlimited})
		return
	case wire.EndpointAudit:
		h.serveAudit(w, r, e)
		return
	case wire.EndpointChanges:
		h.serveChanges(w, r, e)
		return
	}
	op, ok := h.ops[name]
	if !ok {
		writeStatus(w, http.StatusNotFound, contract.NotFound("no such operation `%s`", safePath(name)))
		return
	}
	if r.Method != http.MethodPost {
		methodNotAllowed(w, "POST")
		return
	}
	if op.listing {
		if ok, wait := h.listing.take(e.Principal().Name); !ok {
			writeLimited(w, &rateLimited{op: name, wait: wait})
			return
		}
	}
	body, err := readBody(w, r, op.maxBody)
	if err != nil {
		writeError(w, err)
		return
	}
	out, err := op.serve(r.Context(), e, body)
	if err != nil {
		h.logEngineError(name, err)
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, out)
}

// authenticate finds the request's principal and confines the engine to it.
func (h *Handler) authenticate(r *http.Request) (*auth.Confined, error) {
	opts := []auth.Option{auth.WithVia("http"), auth.WithLogger(h.log), auth.WithClock(h.opts.Now), auth.WithMaxItemBytes(h.opts.MaxItemBytes)}
	if h.opts.Audit != nil {
		opts = append(opts, auth.WithAudit(h.opts.Audit))
	}
	if p, ok := h.principalOf(r); ok {
		return auth.Confine(h.e, p, opts...), nil
	}
	_, hasToken := bearer(r)
	if ok, wait := h.anonymous.take(""); !ok {
		return nil, &rateLimited{op: wire.OpAuthenticate, wait: wait}
	}
	msg := "this server needs `Authorization: Bearer <token>`"
	if hasToken {
		msg = "the bearer token is not known to this server"
	}
	if h.opts.Audit != nil {
		ev := audit.Event{At: h.opts.Now().UTC(), Principal: "anonymous", Via: "http", Op: wire.OpAuthenticate, Refused: msg}
		if err := h.opts.Audit.AppendAudit(context.WithoutCancel(r.Context()), ev); err != nil {
			h.log.Error("audit append failed", "err", err)
		}
	}
	return nil, contract.Unauthorized("%s", msg)
}

// principalOf is the principal the request's credentials name now (a
// reloaded keys file may have dropped or changed it).
func (h *Handler) principalOf(r *http.Request) (*auth.Principal, bool) {
	if h.opts.Open {
		return auth.Owner(), true
	}
	token, _ := bearer(r)
	if h.opts.OwnerToken != "" && subtle.ConstantTimeCompare([]byte(token), []byte(h.opts.OwnerToken)) == 1 {
		return auth.Owner(), true
	}
	return h.opts.Keys.ByToken(token)
}

func bearer(r *http.Request) (string, bool) {
	v := r.Header.Get("Authorization")
	scheme, token, ok := strings.Cut(v, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", v != ""
	}
	token = strings.TrimSpace(token)
	return token, true
}

// serveAudit answers GET /v1/audit?since=T&limit=N as a JSON array, for
// admins, each reading the entries inside its reach.
func (h *Handler) serveAudit(w http.ResponseWriter, r *http.Request, e *auth.Confined) {
	if r.Method != http.MethodGet {
		methodNotAllowed(w, "GET")
		return
	}
	if h.opts.AuditReader == nil {
		writeStatus(w, http.StatusNotFound, contract.NotFound("this server keeps no audit log"))
		return
	}
	if e.Principal().Role != auth.RoleAdmin {
		writeError(w, e.Deny(r.Context(), wire.EndpointAudit, "principal `%s` is a %s; the audit log is for admins", e.Principal().Name, e.Principal().Role))
		return
	}
	var q audit.Query
	if s := r.URL.Query().Get(wire.AuditSince); s != "" {
		t, err := contract.ParseTime(s)
		if err != nil {
			writeError(w, contract.Invalid("since `%s` is not an RFC 3339 instant", s))
			return
		}
		q.Since = t
	}
	if s := r.URL.Query().Get(wire.AuditLimit); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 {
			writeError(w, contract.Invalid("limit `%s` is not a count", s))
			return
		}
		q.Limit = n
	}
	// The log is confined like the records: an admin with a reach reads the
	// entries that lie inside it (auth.Principal.Sees); the owner reads all.
	if p := e.Principal(); !p.Unlimited {
		q.Visible = p.Sees
	}
	events, err := h.opts.AuditReader.ReadAudit(r.Context(), q)
	if err != nil {
		h.logEngineError(wire.EndpointAudit, err)
		writeError(w, err)
		return
	}
	events = contract.EmptyIfNil(events)
	writeJSON(w, http.StatusOK, events)
}

func (h *Handler) logEngineError(op string, err error) {
	switch contract.KindOf(err) {
	case contract.KindEngine, contract.KindConfig:
		h.log.Error("engine failure", "op", op, "err", err)
	}
}

// readBody reads at most max bytes; a longer body is a 413.
func readBody(w http.ResponseWriter, r *http.Request, max int64) ([]byte, error) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, max))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return nil, &bodyTooLarge{limit: max}
		}
		return nil, contract.Invalid("the request body could not be read")
	}
	return body, nil
}

type bodyTooLarge struct{ limit int64 }

func (e *bodyTooLarge) Error() string {
	return fmt.Sprintf("the request body is larger than %d bytes", e.limit)
}

type rateLimited struct {
	op   string
	wait time.Duration
}

func (e *rateLimited) Error() string { return "rate limited" }

func (e *rateLimited) seconds() int { return max(1, int(math.Ceil(e.wait.Seconds()))) }

// statusOf is wire.StatusOf, and 413 for a body over its limit.
func statusOf(err error) int {
	var tooBig *bodyTooLarge
	if errors.As(err, &tooBig) {
		return http.StatusRequestEntityTooLarge
	}
	return wire.StatusOf(err)
}

func writeError(w http.ResponseWriter, err error) { writeStatus(w, statusOf(err), err) }

func writeStatus(w http.ResponseWriter, status int, err error) {
	if w.Header().Get("WWW-Authenticate") == "" && status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer realm="mnemo"`)
	}
	writeJSON(w, status, errorEnvelope(err))
}

// errorEnvelope is the answer's JSON for err. Engine and configuration
// failures can name files and internals; their full text goes to the
// server log only.
func errorEnvelope(err error) contract.ErrorBody {
	var tooBig *bodyTooLarge
	if errors.As(err, &tooBig) {
		return wire.ErrorEnvelope(contract.Invalid("%s", tooBig.Error()))
	}
	env := wire.ErrorEnvelope(err)
	switch contract.KindOf(err) {
	case contract.KindEngine, contract.KindConfig:
		env.Error.Message = "the server's engine failed on this request; the failure is in its log"
	}
	return env
}

// errorJSON is errorEnvelope's JSON, on one line.
func errorJSON(err error) []byte { return wire.EncodeError(errorEnvelope(err)) }

func writeLimited(w http.ResponseWriter, e *rateLimited) {
	secs := e.seconds()
	w.Header().Set("Retry-After", strconv.Itoa(secs))
	writeJSON(w, http.StatusTooManyRequests, wire.ErrorEnvelope(contract.Unavailable("too many requests for `%s`; retry after %d s", e.op, secs)))
}

func methodNotAllowed(w http.ResponseWriter, allow string) {
	w.Header().Set("Allow", allow)
	writeJSON(w, http.StatusMethodNotAllowed, wire.ErrorEnvelope(contract.Invalid("this endpoint takes %s", allow)))
}

// safePath keeps an echoed path short and printable.
func safePath(p string) string {
	if len(p) > 64 {
		p = p[:64] + "..."
	}
	return strconv.QuoteToASCII(p)[1 : len(strconv.QuoteToASCII(p))-1]
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := contract.MarshalWire(v)
	if err != nil {
		status, b = http.StatusInternalServerError, []byte(wire.EncodeFailure)
	}
	writeBody(w, status, append(b, '\n'))
}

// writeBody writes an answer's JSON, already encoded.
func writeBody(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write(body)
}
