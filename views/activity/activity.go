// Package activity is the live feed of the mnemo TUI: the store's changes as
// they arrive (newest first), under the session's reach and the current
// scope, like `mnemo watch` on a screen. It keeps the last 1,000 changes.
package activity

import (
	"fmt"
	"slices"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"mnemo/contract"
	"mnemo/ui/common"
	"mnemo/ui/components"
)

// Keep is how many changes the view holds; older ones are dropped.
const Keep = 1000

const wide = 120

// Model is the activity view.
type Model struct {
	c      *common.Common
	width  int
	height int

	// changes are the last Keep changes seen, oldest first.
	changes []contract.Change
	// gone are the ids removed since (by the feed or by this session).
	gone map[string]bool
	// matched are the ids whose record matched the scope's content filter,
	// so their removals (which carry no content) can be judged.
	matched map[string]bool
	// shown are the indexes into changes that pass the scope, newest first.
	shown    []int
	seen     int
	list     components.List
	scopeGen int
	// rendered are the rows drawn for the columns in renderedFor, by seq,
	// so a flush draws only the changes that are new to the list (a live
	// session under a stream flushes many times a second, each time with
	// up to Keep rows listed).
	rendered    map[uint64]renderedRow
	renderedFor cols
	// draws counts the rows drawn (what a flush costs is mostly these).
	draws int
}

// renderedRow is a change's row, with its id (a store reloaded after an
// expired feed may reuse seqs) and whether it was drawn as gone.
type renderedRow struct {
	row  components.Row
	id   string
	gone bool
}

// New returns the activity view.
func New(c *common.Common) *Model {
	return &Model{c: c, gone: map[string]bool{}, matched: map[string]bool{}, scopeGen: -1}
}

// Init does nothing: changes arrive from the shell.
func (m *Model) Init() tea.Cmd { return nil }

// Activate applies a new scope to what is listed.
func (m *Model) Activate() tea.Cmd {
	if m.scopeGen != m.c.ScopeGen {
		m.scopeGen = m.c.ScopeGen
		m.matched = map[string]bool{}
		m.refilter()
	}
	return nil
}

// Total counts no records.
func (m *Model) Total() int { return -1 }

// Shown are the changes listed, newest first.
func (m *Model) Shown() []contract.Change {
	out := make([]contract.Change, len(m.shown))
	for i, j := range m.shown {
		out[i] = m.changes[j]
	}
	return out
}

// Update takes the feed's changes, data changes and keys.
func (m *Model) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case common.ChangesMsg:
		m.add(msg.Changes)
	case common.DataChangedMsg:
		if msg.Cause == common.ChangeAccess {
			m.changes, m.gone, m.matched, m.seen = nil, map[string]bool{}, map[string]bool{}, 0
			m.refilter()
			return nil
		}
		ids := append(append([]string(nil), msg.Gone...), msg.Removed...)
		for _, id := range ids {
			m.gone[id] = true
		}
		if len(ids) > 0 {
			m.rebuild()
		}
	case tea.KeyPressMsg:
		return m.key(msg)
	}
	return nil
}

// add appends changes (oldest first), keeping the cursor on the change it
// was on unless it was on the newest. Only the new changes are matched
// against the scope and only the rows that come into view are drawn, so a
// flush costs what it brings, not the thousand changes kept.
func (m *Model) add(changes []contract.Change) {
	if len(changes) == 0 {
		return
	}
	var at uint64
	if len(m.shown) > 0 && m.list.Cursor > 0 {
		at = m.changes[m.shown[m.list.Cursor]].Seq
	}
	row := m.list.Cursor - m.list.Offset
	m.seen += len(changes)
	removed := map[string]bool{}
	for _, c := range changes {
		if c.Op.Removes() {
			m.gone[c.ID] = true
			removed[c.ID] = true
		} else if c.Record != nil {
			delete(m.gone, c.ID) // stored again (an undo elsewhere)
			removed[c.ID] = true // its row, if shown, says so no more
		}
	}
	m.changes = append(m.changes, changes...)
	over := max(0, len(m.changes)-Keep)
	if over > 0 {
		// Dropped from the front without a copy: the array is copied only
		// when append next grows it (once per Keep changes or so).
		clear(m.changes[:over])
		m.changes = m.changes[over:]
	}
	if len(changes) >= Keep || m.width == 0 {
		m.refilter()
	} else {
		m.prepend(len(m.changes)-len(changes), over, removed)
	}
	if at == 0 {
		return
	}
	for i, j := range m.shown {
		if m.changes[j].Seq == at {
			m.list.Cursor, m.list.Offset = i, i-row
			m.list.SetRows(m.list.Rows)
			m.drawVisible()
			return
		}
	}
}

// prepend lists the changes from index first on (the new ones) above the
// rows shown, whose indexes moved down by over (the changes dropped from
// the front); rows of changes whose record a new change removed or brought
// back are drawn again. The rows held are moved in place, not copied or
// drawn again: a flush allocates for what it brings, not for what is held.
func (m *Model) prepend(first, over int, removed map[string]bool) {
	f := m.c.Filter()
	rest := f.Clone()
	rest.Reach, rest.Statuses = nil, nil
	content := !rest.IsEmpty()
	var add []int
	for i := len(m.changes) - 1; i >= first; i-- {
		if m.matches(f, content, &m.changes[i]) {
			add = append(add, i)
		}
	}
	rows := m.list.Rows
	if len(rows) != len(m.shown) {
		rows = make([]components.Row, len(m.shown))
	}
	// shown is newest first: the changes dropped are its tail.
	n := len(m.shown)
	for n > 0 && m.shown[n-1] < over {
		n--
	}
	clear(rows[n:])
	m.shown, rows = m.shown[:n], rows[:n]
	for k := range m.shown {
		m.shown[k] -= over
		if removed[m.changes[m.shown[k]].ID] {
			rows[k] = components.Row{}
		}
	}
	m.shown = slices.Insert(m.shown, 0, add...)
	rows = slices.Insert(rows, 0, make([]components.Row, len(add))...)
	if len(m.rendered) > 2*Keep {
		// rows of changes dropped since: forget them now and then
		for seq := range m.rendered {
			if len(m.changes) == 0 || seq < m.changes[0].Seq {
				delete(m.rendered, seq)
			}
		}
	}
	m.list.SetRows(rows)
	m.drawVisible()
}

// matches is `mnemo watch --filter` under the current scope: a change with
// its record must match the whole filter; a removal is judged by its
// namespace and status, and when the scope names more, passes only if a
// change of that record passed before.
func (m *Model) matches(f contract.MetaFilter, content bool, c *contract.Change) bool {
	if !f.AdmitsStatus(c.Status, false) {
		return false
	}
	if c.Record != nil {
		if !f.Matches(c.Record.Kind, &c.Record.Meta) {
			return false
		}
		m.matched[c.ID] = true
		return true
	}
	if !contract.AdmittedBy(f.Reach, c.Namespace) {
		return false
	}
	return !content || m.matched[c.ID]
}

func (m *Model) refilter() {
	f := m.c.Filter()
	rest := f.Clone()
	rest.Reach, rest.Statuses = nil, nil
	content := !rest.IsEmpty()
	m.shown = m.shown[:0]
	for i := range m.changes {
		if m.matches(f, content, &m.changes[i]) {
			m.shown = append(m.shown, i)
		}
	}
	for i, j := 0, len(m.shown)-1; i < j; i, j = i+1, j-1 {
		m.shown[i], m.shown[j] = m.shown[j], m.shown[i]
	}
	m.rebuild()
}

func (m *Model) current() *contract.Change {
	if len(m.shown) == 0 {
		return nil
	}
	return &m.changes[m.shown[m.list.Cursor]]
}

func (m *Model) key(msg tea.KeyPressMsg) tea.Cmd {
	k := &m.c.Keys
	if m.list.MoveByKey(k, msg) {
		m.drawVisible()
		return nil
	}
	if key.Matches(msg, k.PauseFeed) {
		return func() tea.Msg { return common.PauseLiveMsg{} }
	}
	c := m.current()
	if c == nil {
		return nil
	}
	switch {
	case key.Matches(msg, k.Open):
		if c.Op.Removes() || m.gone[c.ID] || c.Record == nil {
			return common.Toast("forgotten: nothing to open")
		}
		id, rec := c.ID, *c.Record
		return func() tea.Msg { return common.OpenRecordMsg{ID: id, Record: &rec} }
	case key.Matches(msg, k.CopyID):
		id := c.ID
		return func() tea.Msg { return common.CopyMsg{Text: id, What: "id " + common.ShortID(id)} }
	}
	return nil
}

// SetSize lays the list out.
func (m *Model) SetSize(width, height int) {
	m.width, m.height = width, height
	m.list.SetHeight(height - 3)
	m.rebuild()
}

type cols struct{ ns, agent, text int }

func (m *Model) columns() cols {
	inner := m.width - 2
	c := cols{ns: 18}
	if m.width >= wide {
		c.ns, c.agent = 26, 12
	}
	// time op status kind namespace [agent] text, one space apart
	used := 1 + 8 + 1 + 9 + 1 + 6 + 1 + 4 + 1 + c.ns + 1
	if c.agent > 0 {
		used += c.agent + 1
	}
	c.text = max(8, inner-used)
	return c
}

// rebuild lists the shown changes. A row is drawn when it first comes into
// view, and kept while its columns and state stay: a burst of changes under
// a live feed draws only the rows on screen (a writer with a TUI attached
// pays for what is seen, not for the thousand kept).
func (m *Model) rebuild() {
	if m.width == 0 {
		return
	}
	cl := m.columns()
	old := m.rendered
	if cl != m.renderedFor {
		old = nil
	}
	m.rendered, m.renderedFor = make(map[uint64]renderedRow, len(m.shown)), cl
	rows := make([]components.Row, len(m.shown))
	for i, j := range m.shown {
		c := &m.changes[j]
		if r, ok := old[c.Seq]; ok && r.gone == m.gone[c.ID] && r.id == c.ID {
			m.rendered[c.Seq] = r
			rows[i] = r.row
		}
	}
	m.list.SetRows(rows)
	m.drawVisible()
}

// drawVisible draws the rows of the list's window not drawn yet (a row's
// Plain is never empty once drawn).
func (m *Model) drawVisible() {
	st := &m.c.Styles
	cl := m.renderedFor
	end := min(len(m.list.Rows), m.list.Offset+m.list.Height)
	for i := max(0, m.list.Offset); i < end; i++ {
		if m.list.Rows[i].Plain != "" {
			continue
		}
		c := &m.changes[m.shown[i]]
		r := renderedRow{row: m.row(st, c, cl), id: c.ID, gone: m.gone[c.ID]}
		m.draws++
		m.rendered[c.Seq] = r
		m.list.Rows[i] = r.row
	}
}

func (m *Model) row(st *common.Styles, c *contract.Change, cl cols) components.Row {
	g := st.Glyphs
	at := c.At.In(m.c.Now().Location()).Format("15:04:05")
	status := g.Active + " act"
	switch c.Status {
	case contract.StatusCandidate:
		status = g.Candidate + " cand"
	case contract.StatusSuperseded:
		status = g.Superseded + " sup"
	}
	kind, text, agent := "", "", ""
	textStyle := st.Row
	switch {
	case c.Record != nil:
		kind = common.ShortKind(c.Record.Kind)
		text = common.OneLine(c.Record.Text)
		if c.Record.Meta.AgentID != nil {
			agent = *c.Record.Meta.AgentID
		}
		if m.gone[c.ID] {
			text = "(forgotten) " + text
			textStyle = st.Dim
		}
	case c.Op.Removes():
		text = "id " + common.ShortID(c.ID)
		textStyle = st.Dim
	default:
		text = "id " + common.ShortID(c.ID) + " (forgotten since)"
		textStyle = st.Dim
	}
	opStyle := st.Kind
	if c.Op.Removes() {
		opStyle = st.Warning
	}
	cells := []struct {
		v     string
		w     int
		style func(...string) string
	}{
		{at, 8, st.Dim.Render},
		{string(c.Op), 9, opStyle.Render},
		{status, 6, st.Row.Render},
		{kind, 4, st.Kind.Render},
		{c.Namespace.String(), cl.ns, st.Dim.Render},
	}
	if cl.agent > 0 {
		cells = append(cells, struct {
			v     string
			w     int
			style func(...string) string
		}{agent, cl.agent, st.Dim.Render})
	}
	cells = append(cells, struct {
		v     string
		w     int
		style func(...string) string
	}{text, cl.text, textStyle.Render})
	var plain, styled strings.Builder
	plain.WriteByte(' ')
	styled.WriteByte(' ')
	for i, cell := range cells {
		v := common.Fit(cell.v, cell.w)
		if i > 0 {
			plain.WriteByte(' ')
			styled.WriteByte(' ')
		}
		plain.WriteString(v)
		styled.WriteString(cell.style(v))
	}
	return components.Row{Plain: plain.String(), Styled: styled.String()}
}

func (m *Model) headerLine(cl cols) string {
	st := &m.c.Styles
	h := " " + common.Fit("time", 8) + " " + common.Fit("op", 9) + " " + common.Fit("status", 6) + " " +
		common.Fit("kind", 4) + " " + common.Fit("namespace", cl.ns) + " "
	if cl.agent > 0 {
		h += common.Fit("agent", cl.agent) + " "
	}
	h += "text"
	return st.Heading.Render(common.Fit(h, m.width-2))
}

// View draws the feed, newest first.
func (m *Model) View() string {
	st := &m.c.Styles
	inner := m.width - 2
	cl := m.columns()
	lines := []string{m.headerLine(cl)}
	if len(m.shown) == 0 {
		say := "  waiting for changes: stores, reviews and forgets appear here as they happen"
		if len(m.changes) > 0 {
			say = "  no change under the current scope yet"
		}
		lines = append(lines, st.Dim.Render(common.Fit(say, inner)))
	}
	lines = append(lines, m.list.Lines(st, true, inner)...)
	title := "Activity"
	if m.seen > 0 {
		title = fmt.Sprintf("Activity  %s, newest first", common.Plural(len(m.shown), "change", "changes"))
		if dropped := m.seen - len(m.changes); dropped > 0 {
			title += fmt.Sprintf("  (last %s kept)", common.Thousands(Keep))
		}
	}
	return components.Box(st, title, lines, m.width, m.height, true)
}

// Capturing is always false: the view has no text field.
func (m *Model) Capturing() bool { return false }

// Busy is always idle: the shell owns the feed.
func (m *Model) Busy() string { return "" }

// ShortHelp lists the activity keys.
func (m *Model) ShortHelp() []key.Binding {
	k := &m.c.Keys
	return []key.Binding{k.Open, k.PauseFeed, k.CopyID, k.Top, k.Help, k.Quit}
}
