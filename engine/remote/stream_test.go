package remote_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"mnemo/contract"
	"mnemo/engine/memory"
	"mnemo/engine/remote"
	"mnemo/server/httpapi"
	"mnemo/server/wire"
)

// requestLog counts the feed's requests by form.
type requestLog struct {
	h              http.Handler
	streams, polls atomic.Int32
	stripAccept    bool
	activeStreams  atomic.Int32
	// cuts: a stream opened before the latest cut breaks at its next write.
	cuts atomic.Int32
}

// cuttable aborts a stream's connection mid-answer once cut.
type cuttable struct {
	http.ResponseWriter
	l    *requestLog
	born int32
}

func (c *cuttable) Write(b []byte) (int, error) {
	if c.l.cuts.Load() > c.born {
		if len(b) > 1 {
			// Half an event, then the connection goes.
			_, _ = c.ResponseWriter.Write(b[:len(b)/2])
			_ = http.NewResponseController(c.ResponseWriter).Flush()
		}
		panic(http.ErrAbortHandler)
	}
	return c.ResponseWriter.Write(b)
}

func (c *cuttable) Unwrap() http.ResponseWriter { return c.ResponseWriter }

func (l *requestLog) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/v1/changes" {
		if l.stripAccept {
			// A server before the stream form: it ignores Accept.
			r.Header.Del("Accept")
		}
		if strings.Contains(r.Header.Get("Accept"), wire.EventStreamType) {
			l.streams.Add(1)
			l.activeStreams.Add(1)
			defer l.activeStreams.Add(-1)
			w = &cuttable{ResponseWriter: w, l: l, born: l.cuts.Load()}
		} else if r.URL.Query().Get("wait") != "" {
			l.polls.Add(1)
		}
	}
	l.h.ServeHTTP(w, r)
}

func streamServer(t *testing.T, strip bool) (*httptest.Server, *requestLog) {
	t.Helper()
	l := &requestLog{h: httpapi.New(memory.New(), httpapi.Options{Open: true}), stripAccept: strip}
	srv := httptest.NewServer(l)
	t.Cleanup(srv.Close)
	return srv, l
}

// follow reads the feed from since through c until want stores were seen
// (at most 20 s), as mnemo watch does, calling cut after each page.
func follow(t *testing.T, c *remote.Client, since uint64, want int, cut func(page int)) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var got []string
	for page := 0; len(got) < want; page++ {
		p, err := c.Changes(ctx, contract.ChangesRequest{Since: since, Limit: 7, Wait: 5 * time.Second})
		if err != nil {
			t.Fatalf("after %d of %d changes: %v", len(got), want, err)
		}
		for _, ch := range p.Changes {
			got = append(got, ch.ID)
		}
		since = p.Next
		if cut != nil {
			cut(page)
		}
	}
	return got
}

// TestChangesFollowOneStreamAndResumeWhenItBreaks: a follower's waiting
// Changes calls are served from one stream (not a request each), and when
// its connection is cut in the middle of an event the client opens it again
// from the last page it handed out: every store once, in order.
func TestChangesFollowOneStreamAndResumeWhenItBreaks(t *testing.T) {
	srv, log := streamServer(t, false)
	c, err := remote.New(srv.URL, "", remote.WithRetries(0))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.CloseIdleStreams)
	writer, err := remote.New(srv.URL, "")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	head, err := c.Changes(ctx, contract.ChangesRequest{FromNow: true, Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	const n = 200
	ids := make(chan []string, 1)
	go func() {
		var out []string
		for i := range n {
			r, err := contract.Store(ctx, writer, contract.Document(fmt.Sprintf("note %d", i), contract.MemoryMeta{}))
			if err != nil {
				t.Error(err)
				break
			}
			out = append(out, r.ID)
			if i%20 == 0 {
				time.Sleep(5 * time.Millisecond)
			}
		}
		ids <- out
	}()
	got := follow(t, c, head.Next, n, func(page int) {
		if page == 3 || page == 9 {
			log.cuts.Add(1)
		}
	})
	want := <-ids
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("the follower saw %d changes, want the %d stored in order", len(got), len(want))
	}
	if s, p := log.streams.Load(), log.polls.Load(); p != 0 || s < 2 || s > 6 {
		t.Fatalf("%d streams and %d long polls for %d changes over two cuts", s, p, n)
	}
	// Once the follower stops calling, its stream is closed.
	c.CloseIdleStreams()
	waitUntil(t, func() bool { return log.activeStreams.Load() == 0 })
}

// TestChangesLongPollAServerWithoutTheStream: a server that answers the
// stream request as a long poll (one before the stream form) is followed by
// long polls, with nothing missed.
func TestChangesLongPollAServerWithoutTheStream(t *testing.T) {
	srv, log := streamServer(t, true)
	c, err := remote.New(srv.URL, "")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var want []string
	var wg sync.WaitGroup
	wg.Go(func() {
		time.Sleep(100 * time.Millisecond)
		for i := range 20 {
			r, err := contract.Store(ctx, c, contract.Document(fmt.Sprintf("note %d", i), contract.MemoryMeta{}))
			if err != nil {
				t.Error(err)
				return
			}
			want = append(want, r.ID)
		}
	})
	got := follow(t, c, 0, 20, nil)
	wg.Wait()
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("long-polling: %v, want %v", got, want)
	}
	if log.polls.Load() == 0 {
		t.Fatal("no long poll")
	}
}

// TestChangesWithoutChangeStreamLongPoll: the option keeps the long poll.
func TestChangesWithoutChangeStreamLongPoll(t *testing.T) {
	srv, log := streamServer(t, false)
	c, err := remote.New(srv.URL, "", remote.WithoutChangeStream())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := contract.Store(context.Background(), c, contract.Document("one", contract.MemoryMeta{})); err != nil {
		t.Fatal(err)
	}
	if got := follow(t, c, 0, 1, nil); len(got) != 1 {
		t.Fatalf("%v", got)
	}
	if log.streams.Load() != 0 || log.polls.Load() != 1 {
		t.Fatalf("%d streams, %d polls", log.streams.Load(), log.polls.Load())
	}
}

// TestChangesStreamWaitsAndCancels: a waiting call on a quiet stream answers
// an empty page at the end of its wait, with a Next to resume from, and one
// whose ctx ends says it was cancelled, closing the stream.
func TestChangesStreamWaitsAndCancels(t *testing.T) {
	srv, log := streamServer(t, false)
	c, err := remote.New(srv.URL, "")
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	p, err := c.Changes(context.Background(), contract.ChangesRequest{Since: 0, Limit: 10, Wait: 300 * time.Millisecond})
	if err != nil || len(p.Changes) != 0 || p.Next != 0 || time.Since(start) < 300*time.Millisecond {
		t.Fatalf("a quiet wait: %+v %v after %s", p, err, time.Since(start))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, err = c.Changes(ctx, contract.ChangesRequest{Since: 0, Limit: 10, Wait: 10 * time.Second})
	if contract.KindOf(err) != contract.KindUnavailable || !strings.Contains(err.Error(), "cancelled") {
		t.Fatalf("a cancelled wait: %v", err)
	}
	waitUntil(t, func() bool { return log.activeStreams.Load() == 0 })
	if log.streams.Load() != 1 {
		t.Fatalf("%d streams for two calls from the same since", log.streams.Load())
	}
}

func waitUntil(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("not after 10 s")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestChangeStreamOpenWaitsOutARateLimit: a stream refused with 429 is
// asked for again after Retry-After, like every call.
func TestChangeStreamOpenWaitsOutARateLimit(t *testing.T) {
	api := httpapi.New(memory.New(), httpapi.Options{Open: true})
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/changes" && calls.Add(1) == 1 {
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusTooManyRequests)
			_, _ = w.Write([]byte(`{"error":{"kind":"unavailable","message":"too many requests for ` + "`changes`" + `"}}`))
			return
		}
		api.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	c, err := remote.New(srv.URL, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.CloseIdleStreams)
	if _, err := contract.Store(context.Background(), c, contract.Document("one", contract.MemoryMeta{})); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if got := follow(t, c, 0, 1, nil); len(got) != 1 || time.Since(start) < time.Second || calls.Load() != 2 {
		t.Fatalf("%v after %s and %d requests", got, time.Since(start), calls.Load())
	}
	c2, _ := remote.New(srv.URL, "", remote.WithRetries(0))
	calls.Store(0)
	_, err = c2.Changes(context.Background(), contract.ChangesRequest{Since: 0, Limit: 1, Wait: time.Second})
	if contract.KindOf(err) != contract.KindUnavailable || !strings.Contains(err.Error(), "too many requests") {
		t.Fatalf("429 without retries: %v", err)
	}
}
