package ui

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"

	"mnemo/contract"
	"mnemo/engine/memory"
	"mnemo/ui/common"
	"mnemo/ui/uitest"
	"mnemo/views/activity"
)

// writer is another writer of the session's store: it stores and forgets on
// the same engine outside the TUI, each write a minute after the last.
type writer struct {
	t     *testing.T
	e     *memory.Engine
	mu    sync.Mutex
	clock time.Time
}

func (w *writer) now() time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.clock
}

func (w *writer) tick() {
	w.mu.Lock()
	w.clock = w.clock.Add(time.Minute)
	w.mu.Unlock()
}

// store stores a learning in ns and returns its id.
func (w *writer) store(text, ns string, st contract.Status) string {
	w.t.Helper()
	w.tick()
	it := contract.Learning(text, contract.LearningFact, 0.7, contract.MemoryMeta{Namespace: contract.MustNamespace(ns)})
	rec, err := w.e.StoreWith(context.Background(), it, contract.WriteOptions{Status: st})
	if err != nil {
		w.t.Fatal(err)
	}
	return rec.ID
}

func (w *writer) forget(ids ...string) {
	w.t.Helper()
	w.tick()
	if _, err := w.e.Forget(context.Background(), contract.ForgetIDs(ids...)); err != nil {
		w.t.Fatal(err)
	}
}

// newWriter is a store of n learnings in two namespaces, stored a minute
// apart and ending an hour before the tests' now.
func newWriter(t *testing.T, n int) *writer {
	w := &writer{t: t, clock: uitest.Now().Add(-time.Hour - time.Duration(n)*time.Minute)}
	w.e = memory.New(memory.WithClock(w.now))
	for i := range n {
		ns := "team:acme"
		if i%3 == 0 {
			ns = "user:kim"
		}
		w.store(fmt.Sprintf("fact %02d of the old store", i+1), ns, contract.StatusActive)
	}
	return w
}

// liveHarness is a live session whose waiting polls of the change feed and
// coalescing windows run when the test says: follow answers the poll the
// session waits on (the writer has written, so it answers at once), and
// endWindow ends the window in progress.
type liveHarness struct {
	*harness
	w       *writer
	polls   []tea.Cmd
	windows []func(time.Time) tea.Msg
}

func newLiveHarness(t *testing.T, w *writer, width, height int, mutate ...func(*Options)) *liveHarness {
	t.Helper()
	lh := &liveHarness{w: w}
	opts := append([]func(*Options){func(o *Options) {
		o.Live = true
		o.Follow = func(poll tea.Cmd) tea.Cmd {
			lh.polls = append(lh.polls, poll)
			return nil
		}
		o.Timer = func(d time.Duration, fn func(time.Time) tea.Msg) tea.Cmd {
			if d == liveWindow {
				lh.windows = append(lh.windows, fn)
				return nil
			}
			return uitest.Timer(d, fn)
		}
	}}, mutate...)
	lh.harness = harnessOn(t, w.e, "/srv/mnemo", width, height, opts...)
	return lh
}

func (lh *liveHarness) follow() {
	lh.t.Helper()
	if len(lh.polls) == 0 {
		lh.t.Fatal("the session waits on no poll of the change feed")
	}
	poll := lh.polls[0]
	lh.polls = lh.polls[1:]
	done := make(chan tea.Msg, 1)
	go func() { done <- poll() }()
	select {
	case msg := <-done:
		lh.send(msg)
	case <-time.After(5 * time.Second):
		lh.t.Fatal("the poll did not answer although the store changed")
	}
}

func (lh *liveHarness) endWindow() {
	lh.t.Helper()
	if len(lh.windows) == 0 {
		lh.t.Fatal("no coalescing window is open")
	}
	fn := lh.windows[0]
	lh.windows = lh.windows[1:]
	lh.send(fn(time.Time{}))
}

// catchUp ends the open window, if any, and answers the poll that follows.
func (lh *liveHarness) catchUp() {
	lh.t.Helper()
	if len(lh.windows) > 0 {
		lh.endWindow()
	}
	lh.follow()
}

// refreshes counts the header recounts the session ran (one per refresh).
func (lh *liveHarness) refreshes() int {
	n := 0
	for _, msg := range lh.seen {
		if _, ok := msg.(totalMsg); ok {
			n++
		}
	}
	return n
}

func (m *model) activityView() *activity.Model {
	return m.viewNamed(common.ViewActivity).(*activity.Model)
}

// A store by another writer shows in the header, the facet counts, explore's
// list and browse without a key press; nothing runs while the feed is quiet.
func TestLiveStoreAppearsWithoutAKey(t *testing.T) {
	t.Parallel()
	w := newWriter(t, 12)
	h := newLiveHarness(t, w, 80, 24)
	h.contains("12 records")
	h.contains("● live")
	h.contains("▸ namespace                2")
	if len(h.polls) != 1 || len(h.windows) != 0 {
		t.Fatalf("an idle session holds %d polls and %d timers, want one poll and no timer", len(h.polls), len(h.windows))
	}
	w.store("a fact from another agent", "team:new", contract.StatusActive)
	h.follow()
	h.contains("13 records")
	h.contains("13 of 13")
	h.contains("a fact from another agent")
	h.contains("▸ namespace                3")
	h.keys("2")
	h.contains("a fact from another agent")
	h.contains("13 loaded of 13 matching")
	// the window ends with nothing new: the session waits on the feed again
	h.endWindow()
	if len(h.polls) != 1 || len(h.windows) != 0 {
		t.Fatalf("after the window the session holds %d polls and %d timers, want one poll and no timer", len(h.polls), len(h.windows))
	}
}

// The cursor stays on its record when records arrive above it, in browse
// (which counts them: "▲ 2 new") and in explore.
func TestLiveCursorStaysOnItsRecord(t *testing.T) {
	t.Parallel()
	w := newWriter(t, 30)
	h := newLiveHarness(t, w, 80, 24)
	h.keys("2", "j", "j", "j")
	b := h.m.browseView()
	id := b.Cursor().ID
	w.store("newer fact one", "team:acme", contract.StatusActive)
	w.store("newer fact two", "team:acme", contract.StatusActive)
	h.follow()
	if got := b.Cursor(); got == nil || got.ID != id {
		t.Fatalf("browse's cursor moved to %v, want record %s", got, id)
	}
	if b.NewAbove() != 2 {
		t.Fatalf("browse counts %d new above the cursor, want 2", b.NewAbove())
	}
	h.contains("▲ 2 new (g)")
	h.keys("g")
	h.lacks("new (g)")
	h.keys("1", "tab", "j", "j", "j", "j")
	e := h.m.exploreView()
	id = e.Cursor().ID
	w.store("newest fact", "team:acme", contract.StatusActive)
	h.catchUp()
	if got := e.Cursor(); got == nil || got.ID != id {
		t.Fatalf("explore's cursor moved to %v, want record %s", got, id)
	}
	if got := e.Records()[0].Text; got != "newest fact" {
		t.Fatalf("explore's first record is %q, want the newest", got)
	}
	h.contains("33 records")
}

// A forget elsewhere removes the record from every view and closes its
// detail with a toast.
func TestLiveForgetElsewhereClosesTheDetail(t *testing.T) {
	t.Parallel()
	w := newWriter(t, 12)
	h := newLiveHarness(t, w, 80, 24)
	h.keys("2", "j", "enter")
	rec := h.m.browseView().Records()[1]
	h.contains("id            " + rec.ID)
	w.forget(rec.ID)
	h.follow()
	h.lacks("id            " + rec.ID)
	h.contains("the record shown was forgotten elsewhere")
	h.contains("11 records")
	for _, v := range []string{"1", "2"} {
		h.keys(v)
		h.lacks(rec.Text)
	}
	if got := shows(h.m, rec.ID); len(got) != 0 {
		t.Fatalf("the forgotten record is still shown by %v", got)
	}
	h.keys("5")
	h.contains("forget")
	h.contains("id " + common.ShortID(rec.ID))
}

// Pausing stops updates (the indicator counts what arrived); resuming shows
// it all at once.
func TestLivePauseAndResume(t *testing.T) {
	t.Parallel()
	w := newWriter(t, 12)
	h := newLiveHarness(t, w, 80, 24)
	h.keys("P")
	h.contains("‖ paused")
	before := h.refreshes()
	w.store("stored while paused one", "team:acme", contract.StatusActive)
	w.store("stored while paused two", "team:acme", contract.StatusCandidate)
	h.follow()
	h.contains("‖ paused · 2 new")
	h.contains("12 records")
	h.lacks("stored while paused")
	if h.refreshes() != before {
		t.Fatal("a paused session refreshed")
	}
	w.store("stored while paused three", "team:acme", contract.StatusActive)
	h.catchUp()
	h.contains("‖ paused · 3 new")
	h.keys("P")
	h.contains("live updates resumed: 3 changes")
	h.contains("15 records")
	h.contains("● live")
	h.contains("stored while paused three")
	h.keys("5")
	if got := len(h.m.activityView().Shown()); got != 3 {
		t.Fatalf("the activity view lists %d changes after the resume, want 3", got)
	}
}

// In the Activity view space pauses and resumes as P does; elsewhere it
// keeps its own meaning (browse selects with it).
func TestLiveActivitySpacePauses(t *testing.T) {
	t.Parallel()
	w := newWriter(t, 12)
	h := newLiveHarness(t, w, 80, 24)
	h.keys("5")
	h.contains("space pause / resume the feed")
	h.keys("space")
	h.contains("‖ paused")
	w.store("paused by space", "team:acme", contract.StatusActive)
	h.follow()
	h.contains("‖ paused · 1 new")
	h.lacks("paused by space")
	h.keys("space")
	h.contains("live updates resumed: 1 change")
	h.contains("● live")
	h.contains("paused by space")
	h.keys("2", "space")
	h.contains("● live")
	h.contains("✓") // the row is selected
}

// A burst of stores costs a few refreshes, not one per store.
func TestLiveBurstsAreCoalesced(t *testing.T) {
	t.Parallel()
	w := newWriter(t, 12)
	h := newLiveHarness(t, w, 80, 24)
	before := h.refreshes()
	w.store("first of the burst", "team:acme", contract.StatusActive)
	h.follow() // the first change after a quiet spell shows at once
	for i := range 1500 {
		w.store(fmt.Sprintf("burst %04d", i), "team:acme", contract.StatusActive)
	}
	h.catchUp() // the window ends: 1,000 changes (a page) in one refresh
	h.catchUp() // and the other 500 in the next
	if got := h.refreshes() - before; got != 3 {
		t.Fatalf("1,501 stores cost %d refreshes, want 3", got)
	}
	h.contains("1,513 records")
	if got := len(h.m.activityView().Shown()); got != activity.Keep {
		t.Fatalf("the activity view holds %d changes, want its bound %d", got, activity.Keep)
	}
}

// Under a continuous stream the session always has a poll out, so what
// arrives during a window is in hand when it ends: the first change after a
// quiet spell refreshes at once, then one refresh per window however many
// pages came meanwhile, and a window that ends with nothing held closes
// (no timer runs until the next change).
func TestLiveStreamRefreshesOncePerWindow(t *testing.T) {
	t.Parallel()
	w := newWriter(t, 12)
	h := newLiveHarness(t, w, 80, 24)
	before := h.refreshes()
	w.store("first after a quiet spell", "team:acme", contract.StatusActive)
	h.follow()
	if got := h.refreshes() - before; got != 1 {
		t.Fatalf("the first change cost %d refreshes, want 1 at once", got)
	}
	const windows, pagesPerWindow, perPage = 20, 3, 40
	for win := range windows {
		for p := range pagesPerWindow {
			if len(h.polls) != 1 || len(h.windows) != 1 {
				t.Fatalf("window %d, page %d: the session holds %d polls and %d windows, want one of each", win, p, len(h.polls), len(h.windows))
			}
			for i := range perPage {
				w.store(fmt.Sprintf("stream %d.%d.%d", win, p, i), "team:acme", contract.StatusActive)
			}
			h.follow() // held for the window's end
		}
		if got := h.refreshes() - before; got != 1+win {
			t.Fatalf("pages read during window %d were shown before it ended (%d refreshes)", win, got)
		}
		h.endWindow()
		if n := len(h.m.live.pending); n != 0 {
			t.Fatalf("window %d's end left %d changes unshown", win, n)
		}
	}
	if got := h.refreshes() - before; got != 1+windows {
		t.Fatalf("%d stores over %d windows cost %d refreshes, want %d", 1+windows*pagesPerWindow*perPage, windows, got, 1+windows)
	}
	h.contains("2,413 records")
	// The stream stops: the window ends with nothing held and closes.
	h.endWindow()
	if len(h.windows) != 0 || len(h.polls) != 1 {
		t.Fatalf("after the stream the session holds %d windows and %d polls, want none and one", len(h.windows), len(h.polls))
	}
	if got := h.refreshes() - before; got != 1+windows {
		t.Fatalf("a window with nothing held refreshed (%d refreshes)", got)
	}
	w.store("first after the stream", "team:acme", contract.StatusActive)
	h.follow()
	if got := h.refreshes() - before; got != 2+windows {
		t.Fatalf("the first change after the stream cost %d refreshes, want one at once", got-1-windows)
	}
}

// Pages of the feed held for the live window's end change nothing on the
// screen: the frame drawn before them is kept, not drawn again, and it is
// what drawing again gives; the window's end, a pause's count and every
// other message draw anew.
func TestLiveHeldPagesKeepTheFrame(t *testing.T) {
	t.Parallel()
	w := newWriter(t, 12)
	h := newLiveHarness(t, w, 80, 24)
	h.keys("5")
	w.store("first after a quiet spell", "team:acme", contract.StatusActive)
	h.follow() // shown at once; the window opens
	before := h.screen()
	for p := range 3 {
		w.store(fmt.Sprintf("held for the window %d", p), "team:acme", contract.StatusActive)
		h.follow()
		if !h.m.frame.ok {
			t.Fatalf("page %d, held for the window's end, dropped the frame", p)
		}
		if fresh := ansi.Strip(h.m.render()); fresh != before {
			t.Fatalf("page %d: the kept frame is not what drawing again gives:\n%s\nagain:\n%s", p, before, fresh)
		}
		if got := h.screen(); got != before {
			t.Fatalf("page %d changed the screen:\n%s", p, got)
		}
	}
	h.endWindow()
	if h.m.frame.ok {
		t.Fatal("the window's end kept the frame")
	}
	h.contains("held for the window 2")
	h.keys("P") // a key draws anew
	h.contains("‖ paused")
	w.store("held while paused", "team:acme", contract.StatusActive)
	h.catchUp()
	h.contains("‖ paused · 1 new") // a paused session's page changes its label
}

// An expired since (the session was away too long) reloads everything and
// follows from the new head.
func TestLiveExpiredSinceReloads(t *testing.T) {
	t.Parallel()
	w := newWriter(t, 12)
	h := newLiveHarness(t, w, 80, 24)
	gen := h.m.live.gen
	w.store("stored while away", "team:acme", contract.StatusActive)
	h.send(livePageMsg{gen: gen, err: contract.Expired("changes after seq 1 are no longer kept")})
	h.contains("the feed moved on; reloaded")
	h.contains("13 records")
	h.contains("stored while away")
	if h.m.live.gen == gen || !h.m.live.started {
		t.Fatal("the subscription did not start again from the head")
	}
	// the old poll's answer is dropped; the new one follows from the head
	h.polls = h.polls[1:]
	w.store("stored after the reload", "team:acme", contract.StatusActive)
	h.follow()
	h.contains("14 records")
	h.contains("stored after the reload")
}

// The activity view lists the changes newest first under the scope; enter
// opens a record that still exists and refuses one that went.
func TestLiveActivityView(t *testing.T) {
	t.Parallel()
	w := newWriter(t, 6)
	h := newLiveHarness(t, w, 80, 24)
	a := w.store("kim's new habit", "user:kim", contract.StatusCandidate)
	b := w.store("acme's new rule", "team:acme", contract.StatusActive)
	h.follow()
	w.forget(a)
	h.catchUp()
	h.keys("5")
	shown := h.m.activityView().Shown()
	if len(shown) != 3 || shown[0].Op != contract.OpForget || shown[1].ID != b {
		t.Fatalf("activity lists %+v", shown)
	}
	h.keys("enter")
	h.contains("forgotten: nothing to open")
	h.keys("j", "enter")
	h.contains("id            " + b)
	h.keys("esc")
	// narrowed to user:kim, only kim's changes are listed
	h.m.c.Scope, _ = h.m.c.Scope.Narrow(common.Crumb{Facet: contract.FacetNamespace, Value: "user:kim"})
	h.m.c.ScopeGen++
	h.pump(h.m.activate())
	shown = h.m.activityView().Shown()
	if len(shown) != 2 || !slices.ContainsFunc(shown, func(c contract.Change) bool { return c.Op == contract.OpForget }) {
		t.Fatalf("under namespace=user:kim activity lists %+v", shown)
	}
}

// Golden screens of the activity view and of the live indicator.
func TestGoldenLive(t *testing.T) {
	t.Parallel()
	for _, size := range [][2]int{{80, 24}, {120, 40}} {
		t.Run(fmt.Sprintf("activity-%dx%d", size[0], size[1]), func(t *testing.T) {
			t.Parallel()
			w := newWriter(t, 6)
			h := newLiveHarness(t, w, size[0], size[1])
			a := w.store("prefers rebase over merge for feature branches", "team:acme/agent:writer", contract.StatusCandidate)
			w.store("the nightly build runs at 02:00 UTC", "team:acme", contract.StatusActive)
			h.follow()
			if _, err := w.e.Review(context.Background(), contract.ReviewRequest{ID: a, Action: contract.ReviewApprove}); err != nil {
				t.Fatal(err)
			}
			w.forget(a)
			h.catchUp()
			h.keys("5")
			golden.RequireEqual(t, goldenScreen(h.screen()))
		})
	}
	t.Run("paused-80x24", func(t *testing.T) {
		t.Parallel()
		w := newWriter(t, 6)
		h := newLiveHarness(t, w, 80, 24)
		h.keys("P")
		w.store("one", "team:acme", contract.StatusActive)
		w.store("two", "team:acme", contract.StatusActive)
		h.follow()
		h.toastGone()
		golden.RequireEqual(t, goldenScreen(h.screen()))
	})
	t.Run("to-review-80x24", func(t *testing.T) {
		t.Parallel()
		w := newWriter(t, 6)
		h := newLiveHarness(t, w, 80, 24)
		w.store("wants the changelog grouped by component", "team:acme", contract.StatusCandidate)
		w.store("prefers squash merges", "team:acme/agent:writer", contract.StatusCandidate)
		h.follow()
		golden.RequireEqual(t, goldenScreen(h.screen()))
	})
	t.Run("live-120x40", func(t *testing.T) {
		t.Parallel()
		w := newWriter(t, 6)
		h := newLiveHarness(t, w, 120, 40)
		h.keys("2", "j", "j")
		w.store("arrived above the cursor", "team:acme", contract.StatusActive)
		h.follow()
		golden.RequireEqual(t, goldenScreen(h.screen()))
	})
}

// The header's candidates-to-review count follows the feed: a candidate
// stored elsewhere adds one, an approval and a reject elsewhere take one
// away, and a store that is no candidate leaves it; none shows with none.
func TestLiveCandidatesToReview(t *testing.T) {
	t.Parallel()
	w := newWriter(t, 12)
	h := newLiveHarness(t, w, 80, 24)
	h.contains("of 12 records")
	h.lacks("to review")
	a := w.store("a candidate from an agent", "team:acme", contract.StatusCandidate)
	b := w.store("another candidate", "user:kim", contract.StatusCandidate)
	h.follow()
	h.contains("14 records · 12 active · 2 to review")
	w.store("an active fact", "team:acme", contract.StatusActive)
	h.catchUp()
	h.contains("15 records · 13 active · 2 to review")
	if _, err := w.e.Review(context.Background(), contract.ReviewRequest{ID: a, Action: contract.ReviewApprove}); err != nil {
		t.Fatal(err)
	}
	h.catchUp()
	h.contains("15 records · 14 active · 1 to review")
	if _, err := w.e.Review(context.Background(), contract.ReviewRequest{ID: b, Action: contract.ReviewReject}); err != nil {
		t.Fatal(err)
	}
	h.catchUp()
	h.contains("of 14 records")
	h.lacks("to review")
}

// A read-only session counts in the same words as every other surface
// (mnemo info's): what awaits review is said so, though this session
// offers no key to review it.
func TestCandidatesReadOnly(t *testing.T) {
	t.Parallel()
	w := newWriter(t, 3)
	w.store("a candidate", "team:acme", contract.StatusCandidate)
	h := newLiveHarness(t, w, 80, 24, func(o *Options) { o.ReadOnly = true })
	h.contains("4 records · 3 active · 1 to review")
	h.lacks("a approve")
}

// toastGone clears the footer's toast, as its timer would.
func (h *harness) toastGone() { h.send(toastExpiredMsg{gen: h.m.status.toastGen}) }

// A list scrolled to its head stays there: what arrives shows above the
// cursor, which keeps its record.
func TestLiveHeadStaysInView(t *testing.T) {
	t.Parallel()
	w := newWriter(t, 30)
	h := newLiveHarness(t, w, 80, 24)
	h.keys("tab")
	e := h.m.exploreView()
	id := e.Cursor().ID
	w.store("arrived at the head", "team:acme", contract.StatusActive)
	h.follow()
	if got := e.Cursor(); got == nil || got.ID != id {
		t.Fatalf("explore's cursor moved to %v, want record %s", got, id)
	}
	h.contains("arrived at the head")
}

// The header counts a scope in mnemo info's words (contract.CountRecords),
// each state apart: an expired record and a superseded one are said, not
// folded into "records".
func TestHeaderCountsAsInfoDoes(t *testing.T) {
	t.Parallel()
	w := newWriter(t, 5)
	ctx := context.Background()
	w.tick()
	past := w.now().Add(-time.Minute)
	it := contract.Learning("a fact that has expired", contract.LearningFact, 0.7, contract.MemoryMeta{Namespace: contract.MustNamespace("team:acme")})
	if _, err := w.e.StoreWith(ctx, it, contract.WriteOptions{ExpiresAt: &past}); err != nil {
		t.Fatal(err)
	}
	w.store("awaiting a person", "team:acme", contract.StatusCandidate)
	want, err := contract.CountRecords(ctx, w.e, contract.MetaFilter{}, w.now())
	if err != nil {
		t.Fatal(err)
	}
	if want.Expired != 1 || want.ToReview != 1 || want.Active != 5 {
		t.Fatalf("fixture counts %+v, want 5 active, 1 to review, 1 expired", want)
	}
	h := newLiveHarness(t, w, 120, 40)
	h.contains("5 active · 1 to review · 1 expired")
	h.contains("of 7 records")
}
