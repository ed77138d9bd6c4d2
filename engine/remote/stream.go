package remote

import (
	"context"
	"io"
	"mime"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"mnemo/contract"
	"mnemo/server/wire"
)

// A Changes call that waits reads from a stream of the feed (GET /v1/changes
// with Accept: text/event-stream) rather than long-polling: the first such
// call opens one, and its pages are handed to the calls that follow it, each
// of which asks for the since the page before it ended at. A busy feed then
// costs one event on one open response per page, not one HTTP round trip;
// the calls still see exactly what a long poll answers (the same pages, in
// order, confined on the server). A stream nobody reads from for streamIdle
// is closed; one that breaks (the server dropped a client too slow to take
// its events, a proxy cut it) is opened again from the last page taken, so
// nothing is missed or seen twice. A server without the stream form answers
// the stream request as a long poll, and the client long-polls from then on.

const (
	// streamBuffer bounds the pages a stream holds for its reader; when
	// they are not taken the stream stops reading, and the server, whose
	// writes then wait, drops it after its write timeout.
	streamBuffer = 8
	// streamIdle is how long an open stream waits for its next call (a
	// follower calls again at once; one that does not opens a new stream).
	streamIdle = 3 * time.Second
	// maxIdleStreams bounds the open streams nobody is reading from.
	maxIdleStreams = 4
)

// WithoutChangeStream makes Changes always long-poll (one request per page),
// as clients of servers before the stream form did.
func WithoutChangeStream() Option { return func(c *Client) { c.streams.off = true } }

// streams are a client's open change streams.
type streams struct {
	mu sync.Mutex
	// off: long-poll (WithoutChangeStream, or the server has no stream form).
	off  bool
	idle []*stream
}

// stream is one open GET /v1/changes stream, positioned at pos: the since of
// the next page it holds. A call owns it while it reads from it; otherwise
// it is idle in streams.idle.
type stream struct {
	key    string
	pos    uint64
	head   uint64
	floor  uint64
	items  chan streamItem
	ctx    context.Context
	cancel context.CancelFunc
	timer  *time.Timer
}

// streamItem is a page the stream read, or the error that ended it.
type streamItem struct {
	page contract.ChangesPage
	err  error
	// broken: the stream ended without the server saying why (resume).
	broken bool
}

func (s *streams) isOff() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.off
}

func (s *streams) turnOff() {
	s.mu.Lock()
	s.off = true
	s.mu.Unlock()
}

// take returns the idle stream of key at since, now owned by the caller.
func (s *streams) take(key string, since uint64) *stream {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, st := range s.idle {
		if st.key == key && st.pos == since {
			s.idle = append(s.idle[:i], s.idle[i+1:]...)
			st.timer.Stop()
			return st
		}
	}
	return nil
}

// put makes st idle again; the oldest idle stream beyond maxIdleStreams is
// closed, and st itself after streamIdle unless it is taken.
func (s *streams) put(st *stream) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if st.ctx.Err() != nil {
		return
	}
	s.idle = append(s.idle, st)
	if len(s.idle) > maxIdleStreams {
		s.idle[0].close()
		s.idle = s.idle[1:]
	}
	if st.timer == nil {
		st.timer = time.AfterFunc(streamIdle, func() { s.expire(st) })
	} else {
		st.timer.Reset(streamIdle)
	}
}

// CloseIdleStreams closes the change streams no call is reading from (the
// client stays usable: a later call opens a new one), as
// http.Client.CloseIdleConnections does for connections. A server that is
// closing waits for its open streams, which end on their own streamIdle
// after their last call.
func (c *Client) CloseIdleStreams() {
	s := &c.streams
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, st := range s.idle {
		st.timer.Stop()
		st.close()
	}
	s.idle = nil
}

// expire closes st if it is still idle.
func (s *streams) expire(st *stream) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, x := range s.idle {
		if x == st {
			s.idle = append(s.idle[:i], s.idle[i+1:]...)
			st.close()
			return
		}
	}
}

func (st *stream) close() { st.cancel() }

// streamKey tells the streams a request can be served from apart: those of
// the same limit and reach.
func streamKey(req contract.ChangesRequest) string {
	return ChangesValues(contract.ChangesRequest{Limit: req.Limit, Reach: req.Reach}).Encode()
}

// changesStreamed serves a waiting Changes call from a stream. ok is false
// when the server has no stream form (and the call is to long-poll).
func (c *Client) changesStreamed(ctx context.Context, req contract.ChangesRequest) (page contract.ChangesPage, ok bool, err error) {
	key := streamKey(req)
	st := c.streams.take(key, req.Since)
	if st == nil {
		var polled *contract.ChangesPage
		st, polled, err = c.openStream(ctx, key, req, req.Since)
		switch {
		case err != nil:
			return contract.ChangesPage{}, true, err
		case polled != nil:
			return *polled, true, nil
		}
	}
	deadline := time.NewTimer(req.Wait)
	defer deadline.Stop()
	last := contract.ChangesPage{Changes: []contract.Change{}, Next: req.Since, Head: st.head, Floor: st.floor}
	reopened := false
	for {
		select {
		case it := <-st.items:
			if it.err == nil {
				st.pos, st.head, st.floor = it.page.Next, it.page.Head, it.page.Floor
				if len(it.page.Changes) > 0 {
					c.streams.put(st)
					return it.page, true, nil
				}
				last = it.page
				continue
			}
			st.close()
			if !it.broken || reopened || ctx.Err() != nil {
				return contract.ChangesPage{}, true, it.err
			}
			// Dropped or cut: resume where the last page ended.
			reopened = true
			next, polled, err := c.openStream(ctx, key, req, st.pos)
			switch {
			case err != nil:
				return contract.ChangesPage{}, true, err
			case polled != nil:
				return *polled, true, nil
			}
			st = next
		case <-deadline.C:
			c.streams.put(st)
			return last, true, nil
		case <-ctx.Done():
			// The caller gave up: it most likely follows no more.
			st.close()
			return contract.ChangesPage{}, true, contract.Unavailable("the changes read was cancelled: %w", ctx.Err())
		}
	}
}

// openStream opens a stream of the feed after since. A server without the
// stream form answers with a long poll's page (polled), and the client
// long-polls from then on.
func (c *Client) openStream(ctx context.Context, key string, req contract.ChangesRequest, since uint64) (*stream, *contract.ChangesPage, error) {
	q := ChangesValues(contract.ChangesRequest{Since: since, Limit: req.Limit, Reach: req.Reach, Wait: req.Wait})
	path := "/v1/changes?" + q.Encode()
	type opened struct {
		st     *stream
		polled *contract.ChangesPage
	}
	o, err := retrying(ctx, c.retries, func() (opened, time.Duration, error) {
		st, polled, wait, err := c.openStreamOnce(ctx, key, path, since, req.Wait)
		return opened{st, polled}, wait, err
	})
	return o.st, o.polled, err
}

func (c *Client) openStreamOnce(ctx context.Context, key, path string, since uint64, wait time.Duration) (*stream, *contract.ChangesPage, time.Duration, error) {
	// The stream outlives this call; the call (and the client's timeout)
	// bound only the wait for its first answer.
	sctx, cancel := context.WithCancel(context.Background())
	stop := context.AfterFunc(ctx, cancel)
	var timer *time.Timer
	var timedOut atomic.Bool
	if c.timeout > 0 {
		timer = time.AfterFunc(c.timeout+wait, func() {
			timedOut.Store(true)
			cancel()
		})
	}
	opened := func() bool {
		ok := stop()
		if timer != nil {
			ok = timer.Stop() && ok
		}
		return ok
	}
	transport := func(err error) error {
		if ctx.Err() == nil && timedOut.Load() {
			e := contract.Unavailable("the server at %s did not answer in time", c.label)
			e.Err = context.DeadlineExceeded
			return e
		}
		return c.transportError(ctx, err)
	}
	fail := func(err error) (*stream, *contract.ChangesPage, time.Duration, error) {
		opened()
		cancel()
		return nil, nil, 0, err
	}
	hr, err := http.NewRequestWithContext(sctx, http.MethodGet, c.base+path, nil)
	if err != nil {
		return fail(contract.ConfigErr("cannot build a request to %s", c.label))
	}
	hr.Header.Set("Accept", wire.EventStreamType)
	if c.token != "" {
		hr.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.http.Do(hr)
	if err != nil {
		return fail(transport(err))
	}
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if resp.StatusCode != http.StatusOK || mt != wire.EventStreamType {
		defer resp.Body.Close()
		data, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
		opened()
		defer cancel()
		if err != nil {
			return nil, nil, 0, transport(err)
		}
		switch resp.StatusCode {
		case http.StatusOK:
			// A server before the stream form: this was a long poll.
			c.streams.turnOff()
			page, err := c.decodePage(nil, data)
			if err != nil {
				return nil, nil, 0, err
			}
			return nil, &page, 0, nil
		case http.StatusTooManyRequests:
			secs, _ := strconv.Atoi(resp.Header.Get("Retry-After"))
			return nil, nil, time.Duration(max(secs, 1)) * time.Second, wire.ErrorOf(resp.StatusCode, data)
		}
		return nil, nil, 0, wire.ErrorOf(resp.StatusCode, data)
	}
	if !opened() {
		// The call ended (or timed out) just as the answer came.
		resp.Body.Close()
		cancel()
		return nil, nil, 0, transport(context.Canceled)
	}
	st := &stream{key: key, pos: since, items: make(chan streamItem, streamBuffer), ctx: sctx, cancel: cancel}
	go c.readStream(st, resp.Body)
	return st, nil, 0, nil
}

// readStream reads st's events into its items until it ends.
func (c *Client) readStream(st *stream, body io.ReadCloser) {
	defer body.Close()
	push := func(it streamItem) bool {
		select {
		case st.items <- it:
			return true
		case <-st.ctx.Done():
			return false
		}
	}
	er := wire.NewEventReader(body, maxAnswer)
	// One decoder for the stream's pages: its scratch is kept from page to
	// page, and each event's data (its own) becomes its page's memory.
	var dec contract.ChangesDecoder
	for {
		ev, err := er.Next()
		if err != nil {
			if st.ctx.Err() == nil {
				e := contract.Unavailable("the change stream from %s ended: %v", c.label, err)
				if err == io.EOF {
					e = contract.Unavailable("the server at %s ended the change stream", c.label)
				}
				push(streamItem{err: e, broken: true})
			}
			return
		}
		switch ev.Event {
		case wire.EventChanges, "":
			page, err := c.decodePage(&dec, ev.Data)
			if err != nil {
				push(streamItem{err: err})
				return
			}
			if !push(streamItem{page: page}) {
				return
			}
		case wire.EventError:
			push(streamItem{err: wire.StreamError(ev.Data)})
			return
		}
	}
}
