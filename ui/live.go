package ui

import (
	"errors"
	"fmt"
	"slices"
	"time"

	tea "charm.land/bubbletea/v2"

	"mnemo/contract"
	"mnemo/ui/common"
)

// The live session (issue 16): one subscription to the change feed per
// session. It is a chain of tea.Cmds, never a goroutine of its own: each
// long-polls Changes (Wait) from the last seq seen and answers with a
// livePageMsg tagged with the subscription's generation; the reply starts the
// next poll at once, so while changes keep coming the session always has
// them in hand. Changes are coalesced on the leading edge: the first change
// after a quiet spell is shown at once and opens a window of liveWindow;
// what arrives during it is held and shown when it ends, which opens the
// next window, and a window that ends with nothing held closes. So under a
// continuous stream the session refreshes at most once per window (a burst
// of 1,000 stores a second costs about twenty refreshes, not 1,000), a change
// waits at most a window to be shown, and an idle session waits on the feed
// with no timer running.

const (
	// liveWindow is the coalescing window: at most one refresh per window
	// while changes keep arriving. A refresh recounts the header and reloads
	// the view on screen (a few ms over loopback), so twenty a second under
	// a continuous stream stay cheap, and a change is shown within about
	// 50 ms of its arrival.
	liveWindow = 50 * time.Millisecond
	// liveWait is how long one poll waits for a change.
	liveWait = 25 * time.Second
	// liveKeep bounds the changes held for the activity view while paused
	// (the view keeps as many).
	liveKeep = 1000
	// liveMaxRemoved bounds the removed ids one refresh names; past it the
	// refresh reloads everything.
	liveMaxRemoved = 10_000
	liveBackoffMin = 500 * time.Millisecond
	liveBackoffMax = 5 * time.Second
)

type liveMode int

const (
	liveConnecting liveMode = iota
	liveOn
	liveReconnecting
)

// liveFeed is the session's subscription state.
type liveFeed struct {
	enabled bool
	mode    liveMode
	// gen tags every poll, window and retry; a restart bumps it so replies of
	// the old subscription are dropped.
	gen int
	// since is the seq the next poll reads after; started says it is known
	// (the head read answered), so the first load may begin.
	since   uint64
	started bool
	// loaded says the session's first load was started (after the head read).
	loaded  bool
	polling bool
	window  bool
	paused  bool
	// pending are the changes not shown yet (the newest liveKeep of them);
	// unseen counts them all, removed names the ids they removed, stored
	// says one of them did more than remove, overflow that removed was cut.
	pending  []contract.Change
	unseen   int
	removed  []string
	stored   bool
	overflow bool
	// cut says pending lost its oldest changes (more than liveKeep came in
	// one window): what they touched can no longer be judged.
	cut     bool
	reset   bool
	backoff time.Duration
	// flushes counts the flushes, each a change of the screen (liveFace).
	flushes uint64
}

// liveFace is what the screen shows of the feed: the live label (its mode,
// a pause and the changes held during it) and the changes shown (a flush).
type liveFace struct {
	mode    liveMode
	paused  bool
	unseen  int
	flushes uint64
}

func (l *liveFeed) face() liveFace {
	f := liveFace{mode: l.mode, paused: l.paused, flushes: l.flushes}
	if l.paused {
		f.unseen = l.unseen
	}
	return f
}

// held tells whether msg was a page of the feed that only joined the
// changes held for the live window's end: the screen is as it was.
func (l *liveFeed) held(msg tea.Msg, before liveFace) bool {
	p, ok := msg.(livePageMsg)
	return ok && p.err == nil && !p.head && l.face() == before
}

type livePageMsg struct {
	gen  int
	head bool // the head read that starts a subscription
	page contract.ChangesPage
	err  error
}

type liveWindowMsg struct{ gen int }

type liveRetryMsg struct{ gen int }

// liveStart starts (or restarts) the subscription from the feed's head: a
// read that does not wait, whose Next is where the polls begin.
func (m *model) liveStart() tea.Cmd {
	l := &m.live
	if !l.enabled {
		return nil
	}
	l.gen++
	l.polling, l.window = true, false
	return m.livePoll(contract.ChangesRequest{FromNow: true, Limit: 1}, true)
}

// livePoll reads the feed in a tea.Cmd. A waiting poll goes through
// Options.Follow when set (tests run it on demand).
func (m *model) livePoll(req contract.ChangesRequest, head bool) tea.Cmd {
	engine, ctx, gen := m.c.Engine, m.c.Context(), m.live.gen
	req.Reach = m.c.Scope.Base.Clone().Reach
	cmd := func() tea.Msg {
		page, err := engine.Changes(ctx, req)
		return livePageMsg{gen: gen, head: head, page: page, err: err}
	}
	if !head && m.opts.Follow != nil {
		return m.opts.Follow(cmd)
	}
	return cmd
}

func (m *model) liveNext() tea.Cmd {
	m.live.polling = true
	return m.livePoll(contract.ChangesRequest{Since: m.live.since, Limit: contract.MaxChangesLimit, Wait: liveWait}, false)
}

func (m *model) liveTick(fn func(time.Time) tea.Msg, d time.Duration) tea.Cmd { return m.c.Tick(d, fn) }

// liveMsg handles the subscription's messages; ok is false for others.
func (m *model) liveMsg(msg tea.Msg) (tea.Cmd, bool) {
	l := &m.live
	switch msg := msg.(type) {
	case livePageMsg:
		if msg.gen != l.gen {
			return nil, true
		}
		return m.livePage(msg), true
	case liveWindowMsg:
		if msg.gen != l.gen {
			return nil, true
		}
		l.window = false
		var cmds []tea.Cmd
		if !l.paused && len(l.pending) > 0 {
			// what came during the window, and the next window
			cmds = append(cmds, m.liveFlush(), m.liveOpenWindow())
		}
		if !l.polling && l.started {
			cmds = append(cmds, m.liveNext())
		}
		return tea.Batch(cmds...), true
	case liveRetryMsg:
		if msg.gen != l.gen || l.polling {
			return nil, true
		}
		if !l.started {
			return m.liveStart(), true
		}
		return m.liveNext(), true
	}
	return nil, false
}

func (m *model) liveOpenWindow() tea.Cmd {
	m.live.window = true
	gen := m.live.gen
	return m.liveTick(func(time.Time) tea.Msg { return liveWindowMsg{gen: gen} }, liveWindow)
}

func (m *model) livePage(msg livePageMsg) tea.Cmd {
	l := &m.live
	l.polling = false
	var cmds []tea.Cmd
	if !l.started && (msg.head || msg.err != nil) {
		// the first load waits for the head read, so no change between the
		// load and the head can be missed; a feed that fails loads anyway
		l.started = msg.err == nil
		if !l.loaded {
			l.loaded = true
			cmds = append(cmds, m.totalCmd(), m.clusterCmd(), m.activate())
		}
	}
	if msg.err != nil {
		if errors.Is(msg.err, contract.ErrExpired) {
			// away too long: the feed no longer holds what came since; reload
			// everything and follow from the new head
			l.pending, l.unseen, l.removed, l.stored, l.overflow = nil, 0, nil, false, false
			l.reset, l.started = true, false
			cmds = append(cmds, m.changed(common.DataChangedMsg{Cause: common.ChangeLive}),
				m.say("the feed moved on; reloaded"), m.liveStart())
			return tea.Batch(cmds...)
		}
		if m.c.Context().Err() != nil {
			return tea.Batch(cmds...) // the session is ending
		}
		l.mode = liveReconnecting
		l.backoff = min(liveBackoffMax, max(liveBackoffMin, 2*l.backoff))
		m.c.Log().Warn("change feed", "error", msg.err, "retry", l.backoff)
		gen := l.gen
		cmds = append(cmds, m.liveTick(func(time.Time) tea.Msg { return liveRetryMsg{gen: gen} }, l.backoff))
		return tea.Batch(cmds...)
	}
	l.mode, l.backoff = liveOn, 0
	if msg.head {
		l.since, l.started = msg.page.Next, true
		return tea.Batch(append(cmds, m.liveNext())...)
	}
	l.since = max(l.since, msg.page.Next)
	// The next poll starts at once, window or not: what it brings during a
	// window is held for the window's end, so the session is never behind.
	cmds = append(cmds, m.liveNext())
	if len(msg.page.Changes) == 0 {
		return tea.Batch(cmds...)
	}
	m.liveHold(msg.page.Changes)
	if !l.window && !l.paused {
		// the leading edge: the first change after a quiet spell shows now
		cmds = append(cmds, m.liveFlush(), m.liveOpenWindow())
	}
	return tea.Batch(cmds...)
}

// liveHold adds changes to those not shown yet.
func (m *model) liveHold(changes []contract.Change) {
	l := &m.live
	l.unseen += len(changes)
	for _, c := range changes {
		if !c.Op.Removes() {
			l.stored = true
			continue
		}
		if len(l.removed) >= liveMaxRemoved {
			l.overflow = true
			continue
		}
		l.removed = append(l.removed, c.ID)
	}
	l.pending = append(l.pending, changes...)
	if over := len(l.pending) - liveKeep; over > 0 {
		l.pending = slices.Delete(l.pending, 0, over)
		l.cut = true
	}
}

// liveFlush shows what is pending: the changes to the activity view, and
// to every view the data change they amount to, unless none of them can
// touch the current scope (then only the header's count is read again).
func (m *model) liveFlush() tea.Cmd {
	l := &m.live
	l.flushes++
	changes, removed, stored, overflow, reset, cut := l.pending, l.removed, l.stored, l.overflow, l.reset, l.cut
	l.pending, l.unseen, l.removed, l.stored, l.overflow, l.reset, l.cut = nil, 0, nil, false, false, false, false
	cmds := []tea.Cmd{m.broadcast(common.ChangesMsg{Changes: changes, Reset: reset})}
	m.curation.follow(changes, overflow || cut || reset)
	if m.opts.Applied != nil {
		m.opts.Applied(changes)
	}
	if !overflow && !cut && !m.touchesScope(changes) {
		return tea.Batch(append(cmds, m.totalCmd(), m.clusterCmd())...)
	}
	dc := common.DataChangedMsg{Cause: common.ChangeLive}
	switch {
	case overflow:
	case stored:
		dc.Removed = append([]string{}, removed...)
	default:
		dc.Gone = removed
	}
	if m.detailOpen {
		id := m.detail.ID()
		switch {
		case dc.Goes(id):
			cmds = append(cmds, m.say("the record shown was forgotten elsewhere"))
		case overflow:
			cmds = append(cmds, m.detail.Refresh())
		default:
			for _, c := range slices.Backward(changes) {
				if c.ID == id {
					if c.Op == contract.OpSupersede {
						cmds = append(cmds, m.say("the record shown was superseded elsewhere"))
					}
					cmds = append(cmds, m.detail.Refresh())
					break
				}
			}
		}
	}
	return tea.Batch(append(cmds, m.changed(dc))...)
}

// touchesScope tells whether a change may alter what the views show under
// the current scope: a store (or a restore) of a record outside it cannot (nor one of a
// record forgotten since: its forget comes too); every other change may
// (a review or a supersede may move a record in or out of the scope, and a
// removal carries no content to judge it by).
func (m *model) touchesScope(changes []contract.Change) bool {
	f := m.c.Filter()
	for _, c := range changes {
		if c.Op != contract.OpStore && c.Op != contract.OpRestore {
			return true
		}
		if c.Record != nil && f.AdmitsStatus(c.Record.Status, false) && f.Matches(c.Record.Kind, &c.Record.Meta) {
			return true
		}
	}
	return false
}

// togglePause pauses or resumes live updates; resuming shows at once what
// arrived meanwhile.
func (m *model) togglePause() tea.Cmd {
	l := &m.live
	if !l.enabled {
		return m.say("live updates are off in this session")
	}
	l.paused = !l.paused
	if l.paused {
		return m.say(fmt.Sprintf("live updates paused (%s resumes)", common.KeyLabel(m.c.Keys.PauseLive.Keys())))
	}
	n := l.unseen
	cmds := []tea.Cmd{m.say("live updates resumed: " + common.Plural(n, "change", "changes"))}
	if l.unseen > 0 {
		// the user asked: show it now, window or not
		cmds = append(cmds, m.liveFlush())
		if !l.window {
			cmds = append(cmds, m.liveOpenWindow())
		}
	}
	return tea.Batch(cmds...)
}

// liveLabel is the live indicator: "● live", "‖ paused · 3 new",
// "○ reconnecting"; empty when the session does not follow the feed.
func (m *model) liveLabel() string {
	l := &m.live
	if !l.enabled {
		return ""
	}
	st := &m.c.Styles
	on, off, pause := "●", "○", "‖"
	if m.c.Plain {
		on, off, pause = "*", "o", "||"
	}
	switch {
	case l.paused:
		s := pause + " paused"
		if l.unseen > 0 {
			s += " · " + common.Thousands(l.unseen) + " new"
			if m.c.Plain {
				s = pause + " paused, " + common.Thousands(l.unseen) + " new"
			}
		}
		return st.Warning.Render(s)
	case l.mode == liveOn:
		return st.Count.Render(on + " live")
	case l.mode == liveReconnecting:
		return st.Warning.Render(off + " reconnecting")
	}
	return st.Dim.Render(off + " connecting")
}
