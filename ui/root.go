package ui

import (
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"mnemo/contract"
	"mnemo/engine/curate"
	"mnemo/ui/common"
	"mnemo/ui/components"
	"mnemo/views/detail"
	"mnemo/views/forget"
	"mnemo/views/help"
)

// Minimum terminal size; below it the UI says so instead of drawing garbage.
const (
	MinWidth  = 80
	MinHeight = 24
)

// model is the root model of one session: the registry's views (one on
// screen), the detail, at most one dialog or overlay on top, and the chrome
// around them.
type model struct {
	c    *common.Common
	opts Options

	views  []view
	active int

	detail *detail.Model
	// detailOpen shows the detail instead of the active view.
	detailOpen bool

	dialog    *forget.Model
	overlay   overlay
	showError bool

	status status
	header components.Header
	tabs   []components.Tab // the header's tabs, from the registry and the key map
	mouse  bool
	undo   []undoEntry
	live   liveFeed
	// counts is what the session's base scope holds (the header), nil
	// until known.
	counts   *contract.RecordCounts
	curation curation
	// frame is the screen last drawn (View), kept while only held changes
	// of the feed arrive.
	frame frame
}

// view is one registered view of the session.
type view struct {
	spec ViewSpec
	pane common.View
}

// overlay is a full-screen helper pane drawn over the views (help, palette).
type overlay interface {
	Update(msg tea.Msg) tea.Cmd
	View(width, height int) string
}

// totalMsg is the header's counts of the session's base scope.
type totalMsg struct {
	counts contract.RecordCounts
	err    error
}

type demoLoadedMsg struct{ err error }

func newModel(opts Options) *model {
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	c := &common.Common{
		Engine:     opts.Engine,
		StoreLabel: opts.StoreLabel,
		Styles:     common.NewStyles(true, opts.Plain),
		Keys:       opts.Keys,
		Logger:     opts.Logger,
		Now:        now,
		ReadOnly:   opts.ReadOnly,
		Plain:      opts.Plain,
		Total:      -1,
		Timer:      opts.Timer,
		Width:      MinWidth,
		Height:     MinHeight,
		Ctx:        opts.Context,
	}
	if opts.Engine != nil {
		c.Descriptor = opts.Engine.Descriptor()
	}
	if opts.Reach != nil {
		r := *opts.Reach
		c.Scope.Base.Reach = &r
	}
	if opts.Curate == (curate.Config{}) {
		opts.Curate = curate.DefaultConfig()
	}
	c.Dismissed = opts.Dismissed
	if c.Dismissed == nil {
		c.Dismissed = curate.SessionDismissed()
	}
	m := &model{c: c, opts: opts, mouse: opts.Mouse}
	m.live.enabled = opts.Live && opts.Engine != nil
	m.status.tasks = map[string]string{}
	for _, s := range Registry() {
		m.views = append(m.views, view{spec: s, pane: s.New(c)})
		m.tabs = append(m.tabs, components.Tab{Keys: common.KeyLabel(c.Keys.View(s.Name).Keys()), Title: s.Title})
	}
	m.detail = newDetail(c)
	m.detail.ExportToClipboard = opts.RemoteUser
	m.layout()
	return m
}

// Init asks the terminal for its background and loads the first view; the
// first frame is drawn before any of it answers. A live session reads the
// change feed's head first and loads when it answers (livePage), so no change
// made between the load and the head is missed.
func (m *model) Init() tea.Cmd {
	if m.live.enabled {
		return tea.Batch(tea.RequestBackgroundColor, m.liveStart())
	}
	return tea.Batch(tea.RequestBackgroundColor, m.totalCmd(), m.clusterCmd(), m.activate())
}

func (m *model) activeView() common.View { return m.views[m.active].pane }

// viewNamed is the session's view of that name (nil when none is registered).
func (m *model) viewNamed(name string) common.View {
	for _, v := range m.views {
		if v.spec.Name == name {
			return v.pane
		}
	}
	return nil
}

func (m *model) activate() tea.Cmd { return m.activeView().Activate() }

func (m *model) focused() common.Pane {
	if m.detailOpen {
		return m.detail
	}
	return m.activeView()
}

// focusedName is the key scope of what has focus.
func (m *model) focusedName() string {
	if m.detailOpen {
		return common.ViewDetail
	}
	return m.views[m.active].spec.Name
}

func (m *model) totalCmd() tea.Cmd {
	engine, ctx := m.c.Engine, m.c.Context()
	base := m.c.Scope.Base.Clone()
	now := m.c.Now
	return func() tea.Msg {
		counts, err := contract.CountRecords(ctx, engine, base, now())
		return totalMsg{counts: counts, err: err}
	}
}

func (m *model) tooSmall() bool { return m.c.Width < MinWidth || m.c.Height < MinHeight }

func (m *model) bodyHeight() int { return m.c.Height - 3 }

func (m *model) layout() {
	w, h := m.c.Width, m.bodyHeight()
	for _, v := range m.views {
		v.pane.SetSize(w, h)
	}
	m.detail.SetSize(w, h)
}

// Update routes messages: keys to the dialog, overlay or focused pane;
// requests of the views to the shell; everything else to every pane (each
// drops what is not its own generation).
func (m *model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	face := m.live.face()
	cmd := m.update(msg)
	if !m.live.held(msg, face) {
		m.frame.ok = false
	}
	if !m.status.ticking && m.busy() != "" {
		m.status.ticking = true
		cmd = tea.Batch(cmd, m.spinTick())
	}
	return m, cmd
}

func (m *model) update(msg tea.Msg) tea.Cmd {
	if cmd, ok := m.forgetMsg(msg); ok {
		return cmd
	}
	if cmd, ok := m.liveMsg(msg); ok {
		return cmd
	}
	if cmd, ok := m.curationMsg(msg); ok {
		return cmd
	}
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.c.Width, m.c.Height = msg.Width, msg.Height
		m.layout()
		if m.detailOpen {
			return m.detail.ResizeCmd()
		}
		return nil
	case tea.BackgroundColorMsg:
		m.c.Styles = common.NewStyles(msg.IsDark(), m.c.Plain)
		m.layout()
		return nil
	case spinTickMsg, toastExpiredMsg:
		return m.statusMsg(msg)
	case totalMsg:
		if msg.err != nil {
			return m.fail("count records", msg.err)
		}
		m.c.Total, m.counts = msg.counts.Total(), &msg.counts
		return nil
	case AccessMsg:
		return m.access(msg)
	case common.ToastMsg:
		return m.say(msg.Text)
	case common.ErrorMsg:
		return m.fail(msg.Op, msg.Err)
	case common.CopyMsg:
		return tea.Batch(tea.SetClipboard(msg.Text), m.say("copied "+msg.What))
	case common.EditMsg:
		return m.startEdit(msg.Record)
	case editDoneMsg:
		return m.finishEdit(msg)
	case common.NarrowMsg:
		s, err := m.c.Scope.Narrow(msg.Crumb)
		if err != nil {
			return m.fail("narrow", err)
		}
		return m.setScope(s)
	case common.WidenMsg:
		if m.c.Scope.IsRoot() {
			return nil
		}
		return m.setScope(m.c.Scope.Widen())
	case common.OpenRecordMsg:
		m.detailOpen, m.overlay = true, nil
		return m.detail.Open(msg.ID, msg.Record)
	case common.PauseLiveMsg:
		return m.togglePause()
	case common.SwitchViewMsg:
		for i, v := range m.views {
			if v.spec.Name == msg.View {
				return m.switchTo(i)
			}
		}
		return nil
	case common.DataChangedMsg:
		return m.changed(msg)
	case common.LoadDemoMsg:
		return m.loadDemo()
	case demoLoadedMsg:
		m.done("demo")
		if msg.err != nil {
			return m.fail("load demo", msg.err)
		}
		return tea.Batch(m.say("demo corpus loaded"), m.changed(common.DataChangedMsg{Cause: common.ChangeDemo}))
	case tea.MouseWheelMsg:
		if m.overlay == nil && m.focusedName() == common.ViewRecall {
			// the wheel scrolls Recall's answer
			return m.activeView().Update(msg)
		}
		k := m.c.Keys.Down
		if msg.Mouse().Button == tea.MouseWheelUp {
			k = m.c.Keys.Up
		}
		if keys := k.Keys(); len(keys) > 0 {
			return m.update(KeyPress(keys[0]))
		}
		return nil
	case help.CloseMsg:
		m.overlay = nil
		return nil
	case help.RunMsg:
		m.overlay = nil
		return m.key(KeyPress(msg.Key))
	case tea.KeyPressMsg:
		return m.key(msg)
	}
	return m.broadcast(msg)
}

// broadcast hands a message to every view, the detail and the overlay.
func (m *model) broadcast(msg tea.Msg) tea.Cmd {
	cmds := make([]tea.Cmd, 0, len(m.views)+2)
	for _, v := range m.views {
		cmds = append(cmds, v.pane.Update(msg))
	}
	cmds = append(cmds, m.detail.Update(msg))
	if m.overlay != nil {
		cmds = append(cmds, m.overlay.Update(msg))
	}
	return tea.Batch(cmds...)
}

// changed tells every view that the data changed (each drops or marks stale
// what it shows), recounts the store and reloads the view on screen. A
// detail showing a record that went closes.
func (m *model) changed(msg common.DataChangedMsg) tea.Cmd {
	if m.detailOpen && msg.Goes(m.detail.ID()) {
		m.detailOpen = false
	}
	return tea.Batch(m.broadcast(msg), m.totalCmd(), m.clusterCmd(), m.activate())
}

// access starts again from a new principal's reach (serve mode reloaded its
// keys file): it drops what the old one could see or do.
func (m *model) access(msg AccessMsg) tea.Cmd {
	m.c.ReadOnly = msg.ReadOnly
	m.dialog, m.overlay = nil, nil
	base := m.c.Scope.Base.Clone()
	base.Reach = nil
	if msg.Reach != nil {
		r := *msg.Reach
		base.Reach = &r
	}
	// Clusters of the old reach may hold records the new one cannot read.
	m.curation.reset()
	m.c.Clusters = nil
	m.done("cluster")
	stale := m.broadcast(common.DataChangedMsg{Cause: common.ChangeAccess})
	cmd := tea.Batch(stale, m.broadcast(common.ClustersMsg{}), m.setScope(common.Scope{Base: base}), m.totalCmd(),
		m.clusterCmd(), m.say(msg.Note))
	if m.live.enabled {
		// follow the feed under the new reach, from its head
		l := &m.live
		l.pending, l.unseen, l.removed, l.stored, l.overflow, l.reset = nil, 0, nil, false, false, true
		cmd = tea.Batch(cmd, m.liveStart())
	}
	return cmd
}

func (m *model) loadDemo() tea.Cmd {
	if m.opts.LoadDemo == nil || m.c.ReadOnly {
		return m.say("no demo corpus in this session")
	}
	m.start("demo", "loading demo")
	load, ctx := m.opts.LoadDemo, m.c.Context()
	return func() tea.Msg { return demoLoadedMsg{err: load(ctx)} }
}

func (m *model) setScope(s common.Scope) tea.Cmd {
	m.c.Scope = s
	m.c.ScopeGen++
	m.detailOpen = false
	if m.curation.scoped {
		// the clusters were of the old drill-down scope: cluster the new one
		m.curation.reset()
		m.c.Clusters = nil
		m.done("cluster")
		return tea.Batch(m.broadcast(common.ClustersMsg{}), m.clusterCmd(), m.activate())
	}
	return m.activate()
}

func (m *model) switchTo(i int) tea.Cmd {
	m.active = i
	m.detailOpen = false
	m.overlay = nil
	return m.activate()
}

// key routes a key press: ctrl+c always quits; then the dialog, the error
// popup, the overlay or a text field that has focus take it; then the
// shell's own keys and the view keys; the rest goes to the focused pane.
func (m *model) key(msg tea.KeyPressMsg) tea.Cmd {
	k := &m.c.Keys
	if msg.String() == "ctrl+c" {
		return tea.Quit
	}
	switch {
	case m.tooSmall():
		if key.Matches(msg, k.Quit) {
			return tea.Quit
		}
		return nil
	case m.dialog != nil:
		return m.dialog.Update(msg)
	case m.showError:
		m.showError = false
		return nil
	case m.overlay != nil:
		return m.overlay.Update(msg)
	}
	pane := m.focused()
	if pane.Capturing() {
		return pane.Update(msg)
	}
	switch {
	case key.Matches(msg, k.Quit):
		return tea.Quit
	case key.Matches(msg, k.Help):
		m.overlay = newHelp(m.c)
		return nil
	case key.Matches(msg, k.Palette):
		m.overlay = newPalette(m.c)
		return nil
	case key.Matches(msg, k.ShowError):
		m.showError = m.status.errFull != ""
		return nil
	case key.Matches(msg, k.ToggleMouse):
		m.mouse = !m.mouse
		if m.mouse {
			return m.say("mouse on (shift+drag selects text)")
		}
		return m.say("mouse off")
	case key.Matches(msg, k.PauseLive):
		return m.togglePause()
	case key.Matches(msg, k.Refresh):
		m.status.errText, m.status.errFull = "", ""
		return m.changed(common.DataChangedMsg{Cause: common.ChangeRefresh})
	case key.Matches(msg, k.Undo) && m.undoable():
		return m.undoLast()
	}
	for i, v := range m.views {
		if key.Matches(msg, k.View(v.spec.Name)) {
			return m.switchTo(i)
		}
	}
	if m.detailOpen && key.Matches(msg, k.Back) {
		m.detailOpen = false
		return nil
	}
	return pane.Update(msg)
}
