// Package remote is the Go client of mnemo's HTTP API (server/httpapi): a
// contract.Engine whose every call is one request to a running `mnemo serve`.
// Errors come back as the contract errors the server raised (kind, browse
// code and message), so the TUI and the CLI behave the same on a remote store
// as on a local one, and the conformance suite passes through it.
package remote

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"mnemo/contract"
	"mnemo/server/wire"
)

// Defaults of the client.
const (
	DefaultTimeout = 60 * time.Second
	healthTimeout  = 5 * time.Second
	// maxAnswer bounds an answer the client will read (a browse page of 1000
	// records with long texts stays well below).
	maxAnswer = 256 << 20
)

// Option configures a client.
type Option func(*Client)

// WithTimeout bounds every call (default 60 s); ctx deadlines still apply.
func WithTimeout(d time.Duration) Option { return func(c *Client) { c.timeout = d } }

// WithHTTPClient replaces the HTTP client (its transport is kept for unix sockets).
func WithHTTPClient(h *http.Client) Option { return func(c *Client) { c.http = h } }

// WithoutKeepAlive makes every call a connection of its own, so a call that
// fails to connect was never sent: server/local tells a request the holder
// never saw (safe to send again) from one it may have applied.
func WithoutKeepAlive() Option { return func(c *Client) { c.noKeepAlive = true } }

// WithRetries sets how many times a rate-limited call (429) waits the server's
// Retry-After and tries again (default 3).
func WithRetries(n int) Option { return func(c *Client) { c.retries = n } }

// Client talks to one server. It is safe for concurrent use.
type Client struct {
	base    string // scheme://host, no trailing slash
	label   string // what people see: the URL as given
	token   string
	http    *http.Client
	timeout time.Duration
	retries int
	// noKeepAlive: one connection per call (WithoutKeepAlive).
	noKeepAlive bool

	mu   sync.Mutex
	desc *contract.Descriptor
	// streams are the open streams of the change feed (stream.go).
	streams streams
}

var _ contract.Engine = (*Client)(nil)

// New returns a client of the server at baseURL (http://host:port,
// https://host, or unix:///path/to/socket), sending token as a bearer token
// when it is not empty. It does not contact the server; Connect does.
func New(baseURL, token string, opts ...Option) (*Client, error) {
	c := &Client{label: baseURL, token: token, timeout: DefaultTimeout, retries: 3}
	for _, o := range opts {
		o(c)
	}
	if c.http == nil {
		c.http = &http.Client{}
	}
	u, err := url.Parse(strings.TrimSpace(baseURL))
	if err != nil {
		return nil, contract.ConfigErr("the server address `%s` is not a URL", baseURL)
	}
	switch u.Scheme {
	case "http", "https":
		if u.Host == "" {
			return nil, contract.ConfigErr("the server address `%s` names no host", baseURL)
		}
		c.base = u.Scheme + "://" + u.Host + strings.TrimSuffix(u.Path, "/")
	case "unix":
		path := u.Path
		if path == "" {
			path = u.Opaque
		}
		if path == "" {
			return nil, contract.ConfigErr("the server address `%s` names no socket", baseURL)
		}
		c.base = "http://mnemo"
		dialer := &net.Dialer{}
		transport := &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return dialer.DialContext(ctx, "unix", path)
		}, DisableKeepAlives: c.noKeepAlive}
		hc := *c.http
		hc.Transport = transport
		c.http = &hc
	default:
		return nil, contract.ConfigErr("the server address `%s` must start with http://, https:// or unix://", baseURL)
	}
	return c, nil
}

// URL is the server's address as given.
func (c *Client) URL() string { return c.label }

// Connect fetches the descriptor, proving the server is there and knows the
// token; the CLI calls it first so a wrong token fails at once.
func (c *Client) Connect(ctx context.Context) error {
	var d contract.Descriptor
	if err := c.do(ctx, http.MethodGet, wire.EndpointDescriptor, nil, &d); err != nil {
		return err
	}
	c.mu.Lock()
	c.desc = &d
	c.mu.Unlock()
	return nil
}

// Descriptor is the server engine's descriptor, fetched once. When the server
// cannot be reached it describes an engine with no fetch modes, so nothing is
// offered that would fail; a later call tries again.
func (c *Client) Descriptor() contract.Descriptor {
	c.mu.Lock()
	d := c.desc
	c.mu.Unlock()
	if d != nil {
		return *d
	}
	ctx, cancel := context.WithTimeout(context.Background(), healthTimeout)
	defer cancel()
	if err := c.Connect(ctx); err != nil {
		return contract.Descriptor{ID: "mnemo-remote", Label: "mnemo server at " + c.label + " (unreachable)",
			Hosted: true, NeedsEndpoint: true, FetchModes: []contract.FetchMode{}, Consolidation: contract.ConsolidationNone}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return *c.desc
}

// Health asks the server; an unreachable server is down.
func (c *Client) Health(ctx context.Context) contract.Health {
	ctx, cancel := context.WithTimeout(ctx, healthTimeout)
	defer cancel()
	var h contract.Health
	if err := c.do(ctx, http.MethodGet, wire.EndpointHealth, nil, &h); err != nil {
		return contract.Health{State: contract.HealthDown, Reason: contract.AsError(err).Message}
	}
	return h
}

// call POSTs req to /v1/op and decodes the answer into out.
// call posts req to op and decodes the answer as a T.
func call[T any](ctx context.Context, c *Client, op string, req any) (T, error) {
	var out T
	err := c.call(ctx, op, req, &out)
	return out, err
}

func (c *Client) call(ctx context.Context, op string, req, out any) error {
	return c.do(ctx, http.MethodPost, op, req, out)
}

func (c *Client) do(ctx context.Context, method, op string, req, out any) error {
	var body []byte
	if req != nil {
		b, err := contract.MarshalWire(req)
		if err != nil {
			var ce *contract.Error
			if errors.As(err, &ce) {
				return ce
			}
			return contract.Invalid("the request cannot be encoded: %w", err)
		}
		body = append(b, '\n')
	}
	_, err := retrying(ctx, c.retries, func() (struct{}, time.Duration, error) {
		wait, err := c.once(ctx, method, op, body, out)
		return struct{}{}, wait, err
	})
	return err
}

// retrying calls once until it asks for no wait (the Retry-After of a
// rate-limited answer) or the retries are spent, waiting in between; when
// ctx ends a wait, the last answer stands.
func retrying[T any](ctx context.Context, retries int, once func() (T, time.Duration, error)) (T, error) {
	for attempt := 0; ; attempt++ {
		v, wait, err := once()
		if wait <= 0 || attempt >= retries {
			return v, err
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return v, err
		case <-t.C:
		}
	}
}

// once makes one request; a rate-limited answer returns the wait before a retry.
func (c *Client) once(ctx context.Context, method, op string, body []byte, out any) (time.Duration, error) {
	if c.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.timeout)
		defer cancel()
	}
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	hr, err := http.NewRequestWithContext(ctx, method, c.base+wire.PathPrefix+op, rd)
	if err != nil {
		return 0, contract.ConfigErr("cannot build a request to %s", c.label)
	}
	if body != nil {
		hr.Header.Set("Content-Type", "application/json")
	}
	hr.Header.Set("Accept", "application/json")
	if c.token != "" {
		hr.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.http.Do(hr)
	if err != nil {
		return 0, c.transportError(ctx, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	if err != nil {
		return 0, c.transportError(ctx, err)
	}
	if resp.StatusCode == http.StatusOK {
		if out == nil {
			return 0, nil
		}
		var err error
		if d, ok := out.(answerDecoder); ok {
			err = d.decodeAnswer(data)
		} else {
			err = json.Unmarshal(data, out)
		}
		if err != nil {
			return 0, contract.EngineErr("the server at %s answered %s with JSON this client cannot read: %w", c.label, op, err)
		}
		return 0, nil
	}
	apiErr := wire.ErrorOf(resp.StatusCode, data)
	if resp.StatusCode == http.StatusTooManyRequests {
		secs, _ := strconv.Atoi(resp.Header.Get("Retry-After"))
		return time.Duration(max(secs, 1)) * time.Second, apiErr
	}
	return 0, apiErr
}

// answerDecoder is an answer read by one of the contract's one-pass readers,
// which check the JSON as they read it: through json.Unmarshal, the whole
// answer was checked once more before they were called (0.65 s of a load
// test's profile in which the readers' browses took 0.61 s and their gets
// 1.51, docs/performance.md).
type answerDecoder interface{ decodeAnswer(data []byte) error }

// browseAnswer is a browse page read by BrowsePage.UnmarshalJSON.
type browseAnswer contract.BrowsePage

func (a *browseAnswer) decodeAnswer(data []byte) error {
	return (*contract.BrowsePage)(a).UnmarshalJSON(data)
}

// recordsAnswer is a get's answer read by contract.DecodeRecords.
type recordsAnswer []contract.Record

func (a *recordsAnswer) decodeAnswer(data []byte) error {
	out, err := contract.DecodeRecords(data)
	*a = out
	return err
}

func (c *Client) transportError(ctx context.Context, err error) error {
	var out *contract.Error
	var ne *net.OpError
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		out = contract.Unavailable("the server at %s did not answer in time", c.label)
		err = ctx.Err()
	case errors.Is(ctx.Err(), context.Canceled):
		out = contract.Unavailable("the request to %s was cancelled", c.label)
		err = ctx.Err()
	case errors.As(err, &ne):
		out = contract.Unavailable("cannot reach the mnemo server at %s: %v", c.label, ne.Err)
	default:
		out = contract.Unavailable("cannot reach the mnemo server at %s", c.label)
	}
	// The cause is kept (the context's end, or the transport's failure) but
	// never printed beyond what the message says: it may carry the URL.
	out.Err = err
	return out
}
