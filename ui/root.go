package ui

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"mnemo/contract"
	"mnemo/ui/common"
	"mnemo/ui/components"
	"mnemo/views/detail"
	"mnemo/views/explore"
	"mnemo/views/forget"
	"mnemo/views/help"
)

// Minimum terminal size; below it the UI says so instead of drawing garbage.
const (
	MinWidth  = 80
	MinHeight = 24
)

// maxUndo is the most records a forget keeps in memory to undo it.
const maxUndo = 10000

// activator is implemented by views that load lazily when shown.
type activator interface{ Activate() tea.Cmd }

// totaler is implemented by views that know how many records their scope holds.
type totaler interface{ Total() int }

type viewEntry struct {
	name  string
	title string
	pane  common.Pane
}

// model is the root model of one session.
type model struct {
	c    *common.Common
	opts Options

	views  []viewEntry
	active int

	explore *explore.Model
	detail  *detail.Model
	// detailOpen shows the detail instead of the active view's panes.
	detailOpen bool

	dialog    *forget.Model
	overlay   overlay
	showError bool

	toast    string
	toastGen int
	errText  string
	errFull  string

	spin    int
	ticking bool
	tasks   map[string]string
	mouse   bool
	undo    []undoEntry

	// headerLine is the drawn header, redrawn only when what it shows changes.
	headerLine string
	headerKey  headerKey
}

type headerKey struct {
	width, active, total int
	dark                 bool
}

// overlay is a full-screen helper pane drawn over the views (help, palette).
type overlay interface {
	Update(msg tea.Msg) tea.Cmd
	View(width, height int) string
}

type undoEntry struct {
	records []contract.Record
}

type totalMsg struct {
	total int
	err   error
}

type spinTickMsg struct{}

type toastExpiredMsg struct{ gen int }

type forgottenMsg struct {
	count    int
	snapshot []contract.Record
	err      error
}

type restoredMsg struct {
	count int
	err   error
}

type scopeCountMsg struct {
	scope common.Scope
	count int
	err   error
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
	}
	if opts.Engine != nil {
		c.Descriptor = opts.Engine.Descriptor()
	}
	if opts.Reach != nil {
		r := *opts.Reach
		c.Scope.Base.Reach = &r
	}
	m := &model{c: c, opts: opts, tasks: map[string]string{}, mouse: opts.Mouse}
	m.explore = explore.New(c)
	m.detail = detail.New(c)
	m.detail.ExportDir = opts.ExportDir
	m.detail.ExportToClipboard = opts.RemoteUser
	m.views = []viewEntry{{name: common.ViewExplore, title: "Explore", pane: m.explore}}
	m.views = append(m.views, extraViews(c)...)
	m.layout()
	return m
}

// Init asks the terminal for its background and loads the first view; the
// first frame is drawn before any of it answers.
func (m *model) Init() tea.Cmd {
	return tea.Batch(tea.RequestBackgroundColor, m.totalCmd(), m.activate())
}

func (m *model) activePane() common.Pane { return m.views[m.active].pane }

func (m *model) activate() tea.Cmd {
	if a, ok := m.activePane().(activator); ok {
		return a.Activate()
	}
	return m.activePane().Init()
}

func (m *model) totalCmd() tea.Cmd {
	engine, ctx := m.c.Engine, m.c.Context()
	base := m.c.Scope.Base.Clone()
	return func() tea.Msg {
		page, err := engine.Browse(ctx, contract.BrowseQuery{Filter: base, Limit: 1})
		return totalMsg{total: page.Total, err: err}
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

// Update routes messages: keys to the dialog, overlay or focused pane; replies
// to every pane (each drops what is not its own generation).
func (m *model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	cmd := m.update(msg)
	if !m.ticking && m.busy() != "" {
		m.ticking = true
		cmd = tea.Batch(cmd, m.spinTick())
	}
	return m, cmd
}

func (m *model) spinTick() tea.Cmd {
	return m.c.Tick(100*time.Millisecond, func(time.Time) tea.Msg { return spinTickMsg{} })
}

func (m *model) update(msg tea.Msg) tea.Cmd {
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
	case spinTickMsg:
		if m.busy() == "" {
			m.ticking = false
			m.spin = 0
			return nil
		}
		m.spin++
		return m.spinTick()
	case toastExpiredMsg:
		if msg.gen == m.toastGen {
			m.toast = ""
		}
		return nil
	case totalMsg:
		if msg.err != nil {
			return m.fail("count records", msg.err)
		}
		m.c.Total = msg.total
		return nil
	case AccessMsg:
		// The principal changed under the session: drop what the old one
		// could see or do, and start again from the new reach.
		m.c.ReadOnly = msg.ReadOnly
		m.dialog, m.overlay = nil, nil
		base := m.c.Scope.Base.Clone()
		base.Reach = nil
		if msg.Reach != nil {
			r := *msg.Reach
			base.Reach = &r
		}
		m.c.DataGen++
		return tea.Batch(m.setScope(common.Scope{Base: base}), m.totalCmd(), m.say(msg.Note))
	case common.ToastMsg:
		return m.say(msg.Text)
	case common.ErrorMsg:
		return m.fail(msg.Op, msg.Err)
	case common.CopyMsg:
		return tea.Batch(tea.SetClipboard(msg.Text), m.say("copied "+msg.What))
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
		m.detailOpen = true
		m.overlay = nil
		return m.detail.Open(msg.ID, msg.Record)
	case common.SwitchViewMsg:
		for i, v := range m.views {
			if v.name == msg.View {
				return m.switchTo(i)
			}
		}
		return nil
	case common.ForgetRequestMsg:
		if m.c.ReadOnly {
			return nil
		}
		m.dialog = forget.New(m.c, msg.Target, msg.Target.Count <= maxUndo)
		return nil
	case common.ForgetScopeMsg:
		return m.forgetScope()
	case scopeCountMsg:
		delete(m.tasks, "count")
		if msg.err != nil {
			return m.fail("count scope", msg.err)
		}
		if msg.count == 0 {
			return m.say("nothing to forget in this scope")
		}
		s := msg.scope
		m.dialog = forget.New(m.c, common.ForgetTarget{Scope: &s, Count: msg.count}, msg.count <= maxUndo)
		return nil
	case forget.ConfirmedMsg:
		m.dialog = nil
		m.tasks["forget"] = "forgetting"
		return m.forgetCmd(msg.Target)
	case forget.CancelledMsg:
		m.dialog = nil
		return m.say("forget cancelled")
	case forgottenMsg:
		delete(m.tasks, "forget")
		if msg.err != nil {
			return m.fail("forget", msg.err)
		}
		if len(msg.snapshot) > 0 {
			m.undo = append(m.undo, undoEntry{records: msg.snapshot})
		}
		if m.detailOpen {
			m.detailOpen = false
		}
		text := "forgot " + common.Plural(msg.count, "record", "records")
		if len(msg.snapshot) > 0 {
			text += " (" + common.KeyLabel(m.c.Keys.Undo.Keys()) + " undoes)"
		}
		return tea.Batch(m.say(text), m.dataChanged())
	case common.UndoMsg:
		return m.undoLast()
	case restoredMsg:
		delete(m.tasks, "undo")
		if msg.err != nil {
			return m.fail("undo", msg.err)
		}
		return tea.Batch(m.say("restored "+common.Plural(msg.count, "record", "records")), m.dataChanged())
	case common.DataChangedMsg:
		return m.dataChanged()
	case common.LoadDemoMsg:
		if m.opts.LoadDemo == nil || m.c.ReadOnly {
			return m.say("no demo corpus in this session")
		}
		m.tasks["demo"] = "loading demo"
		load, ctx := m.opts.LoadDemo, m.c.Context()
		return func() tea.Msg { return demoLoadedMsg{err: load(ctx)} }
	case demoLoadedMsg:
		delete(m.tasks, "demo")
		if msg.err != nil {
			return m.fail("load demo", msg.err)
		}
		return tea.Batch(m.say("demo corpus loaded"), m.dataChanged())
	case tea.MouseWheelMsg:
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

func (m *model) broadcast(msg tea.Msg) tea.Cmd {
	var cmds []tea.Cmd
	for _, v := range m.views {
		cmds = append(cmds, v.pane.Update(msg))
	}
	cmds = append(cmds, m.detail.Update(msg))
	if m.overlay != nil {
		cmds = append(cmds, m.overlay.Update(msg))
	}
	return tea.Batch(cmds...)
}

func (m *model) say(text string) tea.Cmd {
	m.toast = text
	m.toastGen++
	gen := m.toastGen
	return m.c.Tick(3*time.Second, func(time.Time) tea.Msg { return toastExpiredMsg{gen: gen} })
}

// fail shows an error on one footer line; `!` shows all of it. A lost server
// says how to retry.
func (m *model) fail(op string, err error) tea.Cmd {
	ce := contract.AsError(err)
	if errors.Is(err, contract.ErrUnavailable) {
		m.errText = "connection lost: " + ce.Message + " (r retries)"
	} else {
		m.errText = op + ": " + ce.Error()
	}
	m.errFull = op + " failed\n\n" + ce.Error()
	m.c.Log().Warn("operation failed", "op", op, "kind", string(ce.Kind), "error", ce.Message)
	return nil
}

func (m *model) setScope(s common.Scope) tea.Cmd {
	m.c.Scope = s
	m.c.ScopeGen++
	m.detailOpen = false
	return m.activate()
}

func (m *model) dataChanged() tea.Cmd {
	m.c.DataGen++
	return tea.Batch(m.totalCmd(), m.activate())
}

func (m *model) switchTo(i int) tea.Cmd {
	m.active = i
	m.detailOpen = false
	m.overlay = nil
	return m.activate()
}

func (m *model) busy() string {
	for _, t := range m.tasks {
		return t
	}
	if m.detailOpen {
		if b := m.detail.Busy(); b != "" {
			return b
		}
	}
	return m.activePane().Busy()
}

func (m *model) focused() common.Pane {
	if m.detailOpen {
		return m.detail
	}
	return m.activePane()
}

func (m *model) key(msg tea.KeyPressMsg) tea.Cmd {
	k := &m.c.Keys
	if msg.String() == "ctrl+c" {
		return tea.Quit
	}
	if m.tooSmall() {
		if key.Matches(msg, k.Quit) {
			return tea.Quit
		}
		return nil
	}
	if m.dialog != nil {
		return m.dialog.Update(msg)
	}
	if m.showError {
		m.showError = false
		return nil
	}
	if m.overlay != nil {
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
		if m.errFull != "" {
			m.showError = true
		}
		return nil
	case key.Matches(msg, k.ToggleMouse):
		m.mouse = !m.mouse
		if m.mouse {
			return m.say("mouse on (shift+drag selects text)")
		}
		return m.say("mouse off")
	case key.Matches(msg, k.Refresh):
		m.errText, m.errFull = "", ""
		return m.dataChanged()
	case key.Matches(msg, k.Undo) && m.undoable():
		return m.undoLast()
	}
	for i, v := range m.views {
		if key.Matches(msg, viewKey(k, v.name)) {
			return m.switchTo(i)
		}
	}
	if m.detailOpen && key.Matches(msg, k.Back) && !m.detail.Capturing() {
		m.detailOpen = false
		return nil
	}
	return pane.Update(msg)
}

func (m *model) undoable() bool {
	if m.c.ReadOnly {
		return false
	}
	name := m.views[m.active].name
	if m.detailOpen {
		name = common.ViewDetail
	}
	for _, a := range common.Actions() {
		if a.Name == "undo" {
			return a.In(name)
		}
	}
	return false
}

func viewKey(k *common.KeyMap, name string) key.Binding {
	switch name {
	case common.ViewExplore:
		return k.ExploreView
	case common.ViewBrowse:
		return k.BrowseView
	case common.ViewFetch:
		return k.FetchView
	case common.ViewRecall:
		return k.RecallView
	}
	return key.Binding{}
}

// forgetScope counts the scope exactly before asking; the whole store (an
// empty scope) can never be forgotten, as the contract refuses an empty filter.
func (m *model) forgetScope() tea.Cmd {
	if m.c.ReadOnly {
		return nil
	}
	if m.c.Scope.IsRoot() {
		return m.say("narrow the scope first: the whole store cannot be forgotten at once")
	}
	scope := m.c.Scope
	engine, ctx := m.c.Engine, m.c.Context()
	m.tasks["count"] = "counting"
	return func() tea.Msg {
		page, err := engine.Browse(ctx, contract.BrowseQuery{Filter: scope.MustFilter(), Limit: 1})
		return scopeCountMsg{scope: scope, count: page.Total, err: err}
	}
}

// forgetCmd keeps what it removes for undo (when not too many), then forgets.
func (m *model) forgetCmd(t common.ForgetTarget) tea.Cmd {
	engine, ctx := m.c.Engine, m.c.Context()
	keep := t.Count <= maxUndo
	return func() tea.Msg {
		var snapshot []contract.Record
		var err error
		var target contract.ForgetTarget
		if t.Scope != nil {
			filter := t.Scope.MustFilter()
			if keep {
				snapshot, err = snapshotScope(ctx, engine, filter)
			}
			target = contract.ForgetFilter(filter)
		} else {
			if keep {
				snapshot, err = snapshotIDs(ctx, engine, t.IDs)
			}
			target = contract.ForgetIDs(t.IDs...)
		}
		if err != nil {
			return forgottenMsg{err: err}
		}
		rep, err := engine.Forget(ctx, target)
		if err != nil {
			return forgottenMsg{err: err}
		}
		return forgottenMsg{count: rep.Forgotten, snapshot: snapshot}
	}
}

func (m *model) undoLast() tea.Cmd {
	if m.c.ReadOnly {
		return nil
	}
	if len(m.undo) == 0 {
		return m.say("nothing to undo")
	}
	last := m.undo[len(m.undo)-1]
	m.undo = m.undo[:len(m.undo)-1]
	m.tasks["undo"] = "restoring"
	engine, ctx := m.c.Engine, m.c.Context()
	return func() tea.Msg {
		n, err := restore(ctx, engine, last.records)
		return restoredMsg{count: n, err: err}
	}
}

// View assembles the screen from cached strings: header, scope line, the
// active view (or the detail), footer, and any dialog on top.
func (m *model) View() tea.View {
	content := m.render()
	if m.c.Styles.ASCII != nil {
		content = m.c.Styles.ASCII.Replace(content)
	}
	v := tea.NewView(content)
	v.AltScreen = true
	v.WindowTitle = "mnemo"
	if m.mouse {
		v.MouseMode = tea.MouseModeCellMotion
	}
	return v
}

func (m *model) render() string {
	w, h := m.c.Width, m.c.Height
	if m.tooSmall() {
		msg := fmt.Sprintf("mnemo needs %dx%d; this terminal is %dx%d", MinWidth, MinHeight, w, h)
		return lipPlace(w, h, msg)
	}
	var b strings.Builder
	b.Grow(w * h * 4)
	b.WriteString(m.header())
	b.WriteByte('\n')
	b.WriteString(m.scopeLine())
	b.WriteByte('\n')
	body := m.focused().View()
	switch {
	case m.dialog != nil:
		body = overlayCenter(body, m.dialog.View(min(72, w-4)), w)
	case m.showError:
		body = overlayCenter(body, m.errorBox(min(72, w-4)), w)
	case m.overlay != nil:
		body = m.overlay.View(w, m.bodyHeight())
	}
	b.WriteString(body)
	b.WriteByte('\n')
	b.WriteString(m.footer())
	return b.String()
}

func (m *model) header() string {
	k := headerKey{width: m.c.Width, active: m.active, total: m.c.Total, dark: m.c.Styles.Dark}
	if k != m.headerKey || m.headerLine == "" {
		m.headerLine, m.headerKey = m.drawHeader(), k
	}
	return m.headerLine
}

func (m *model) drawHeader() string {
	st := &m.c.Styles
	w := m.c.Width
	count := "… records"
	if m.c.Total >= 0 {
		count = common.Plural(m.c.Total, "record", "records")
	}
	var tabs strings.Builder
	for i, v := range m.views {
		label := fmt.Sprintf("%s %s", common.KeyLabel(viewKey(&m.c.Keys, v.name).Keys()), v.title)
		if i == m.active {
			tabs.WriteString(st.TabActive.Render("[" + label + "]"))
		} else {
			tabs.WriteString(st.Tab.Render(label))
		}
		tabs.WriteString("  ")
	}
	help := st.HelpHint.Render(common.KeyLabel(m.c.Keys.Help.Keys()) + " help")
	right := tabs.String() + " " + help + " "
	left := " " + st.AppName.Render("mnemo") + "  "
	room := w - common.Width(left) - common.Width(right)
	info := common.Width(count) + 2
	label := common.Cut(m.c.StoreLabel, max(0, room-info-3))
	mid := st.Store.Render(label) + "  " + st.Count.Render(count)
	line := left + mid
	pad := w - common.Width(line) - common.Width(right)
	if pad < 1 {
		line = common.Cut(line, max(0, w-common.Width(right)-1))
		pad = w - common.Width(line) - common.Width(right)
	}
	return line + strings.Repeat(" ", max(0, pad)) + right
}

func (m *model) scopeLine() string {
	st := &m.c.Styles
	w := m.c.Width
	n := -1
	if t, ok := m.activePane().(totaler); ok && !m.detailOpen {
		n = t.Total()
	}
	right := ""
	switch {
	case n >= 0 && m.c.Total >= 0:
		right = st.ScopeCount.Render(common.Thousands(n)) + " of " + common.Thousands(m.c.Total) + " "
	case m.c.Total >= 0:
		right = common.Thousands(m.c.Total) + " "
	}
	if m.c.ReadOnly {
		right = st.Warning.Render("read-only") + "  " + right
	}
	crumbs := components.Breadcrumbs(st, m.c.Scope, w-common.Width(right)-2)
	pad := w - 1 - common.Width(crumbs) - common.Width(right)
	return " " + crumbs + strings.Repeat(" ", max(0, pad)) + right
}

func (m *model) footer() string {
	st := &m.c.Styles
	w := m.c.Width
	right := ""
	// the spinner shows only once a task has run for about 150 ms (two ticks),
	// so quick answers never flash it
	if b := m.busy(); b != "" && m.ticking && m.spin >= 2 {
		g := st.Glyphs.Spinner
		right = st.Spinner.Render(g[m.spin%len(g)]) + " " + b + " "
	}
	if m.toast != "" {
		right = st.Toast.Render(common.Cut(m.toast, w/2)) + "  " + right
	}
	room := w - 1 - common.Width(right)
	var left string
	if m.errText != "" {
		left = st.Error.Render(common.Cut("✗ "+m.errText+"  (! details)", room))
		if m.c.Plain {
			left = st.Error.Render(common.Cut("error: "+m.errText+"  (! details)", room))
		}
	} else {
		var binds []key.Binding
		switch {
		case m.dialog != nil:
			binds = []key.Binding{
				key.NewBinding(key.WithKeys("y"), key.WithHelp("y", "forget")),
				key.NewBinding(key.WithKeys("esc"), key.WithHelp("any other key", "cancel")),
			}
		case m.overlay != nil:
			binds = []key.Binding{m.c.Keys.Back}
		default:
			binds = m.focused().ShortHelp()
		}
		left = components.ShortHelp(st, binds, room)
	}
	pad := w - 1 - common.Width(left) - common.Width(right)
	return " " + left + strings.Repeat(" ", max(0, pad)) + right
}

func (m *model) errorBox(width int) string {
	st := &m.c.Styles
	var lines []string
	for _, l := range strings.Split(common.Wrap(m.errFull, width-4), "\n") {
		lines = append(lines, " "+common.Fit(l, width-4)+" ")
	}
	lines = append(lines, " "+common.Fit("", width-4)+" ", " "+st.Dim.Render(common.Fit("any key closes", width-4))+" ")
	return components.Box(st, "Error", lines, width, len(lines)+2, true)
}

// overlayCenter draws box over the middle of body, keeping the body around it.
func overlayCenter(body, box string, width int) string {
	lines := strings.Split(body, "\n")
	boxLines := strings.Split(box, "\n")
	bw := 0
	for _, l := range boxLines {
		bw = max(bw, ansi.StringWidth(l))
	}
	x := max(0, (width-bw)/2)
	y := max(0, (len(lines)-len(boxLines))/2)
	for i, bl := range boxLines {
		if y+i >= len(lines) {
			break
		}
		l := lines[y+i]
		left := ansi.Truncate(l, x, "")
		if pad := x - ansi.StringWidth(left); pad > 0 {
			left += strings.Repeat(" ", pad)
		}
		right := ansi.TruncateLeft(l, x+bw, "")
		lines[y+i] = left + "\x1b[m" + bl + "\x1b[m" + right
	}
	return strings.Join(lines, "\n")
}

func lipPlace(w, h int, msg string) string {
	msg = common.Cut(msg, w)
	top := max(0, (h-1)/2)
	left := max(0, (w-common.Width(msg))/2)
	var b strings.Builder
	for i := 0; i < top; i++ {
		b.WriteByte('\n')
	}
	b.WriteString(strings.Repeat(" ", left) + msg)
	return b.String()
}

// KeyPress builds the key press a key name such as "j", "enter" or "ctrl+d"
// stands for (the palette runs actions this way, tests type with it).
func KeyPress(name string) tea.KeyPressMsg {
	var mod tea.KeyMod
	rest := name
	for {
		switch {
		case strings.HasPrefix(rest, "ctrl+") && len(rest) > 5:
			mod |= tea.ModCtrl
			rest = rest[5:]
			continue
		case strings.HasPrefix(rest, "alt+") && len(rest) > 4:
			mod |= tea.ModAlt
			rest = rest[4:]
			continue
		case strings.HasPrefix(rest, "shift+") && len(rest) > 6:
			mod |= tea.ModShift
			rest = rest[6:]
			continue
		}
		break
	}
	named := map[string]rune{
		"enter": tea.KeyEnter, "tab": tea.KeyTab, "backspace": tea.KeyBackspace, "esc": tea.KeyEscape,
		"space": tea.KeySpace, "up": tea.KeyUp, "down": tea.KeyDown, "left": tea.KeyLeft, "right": tea.KeyRight,
		"pgup": tea.KeyPgUp, "pgdown": tea.KeyPgDown, "home": tea.KeyHome, "end": tea.KeyEnd, "delete": tea.KeyDelete,
	}
	if code, ok := named[rest]; ok {
		k := tea.KeyPressMsg{Code: code, Mod: mod}
		if code == tea.KeySpace && mod == 0 {
			k.Text = " "
		}
		return k
	}
	r := []rune(rest)
	if len(r) == 1 && mod == 0 {
		return tea.KeyPressMsg{Code: r[0], Text: rest}
	}
	if len(r) == 1 {
		return tea.KeyPressMsg{Code: r[0], Mod: mod}
	}
	return tea.KeyPressMsg{Code: r[0], Text: rest}
}
