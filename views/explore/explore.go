// Package explore is the default view of the mnemo TUI: the facet tree on the
// left (exact counts under the current scope, narrowing with enter) and the
// records in scope on the right, paged through browse cursors as the cursor moves.
package explore

import (
	"fmt"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"mnemo/contract"
	"mnemo/ui/common"
	"mnemo/ui/components"
)

const (
	pageSize     = 100
	bucketLimit  = 50
	loadMargin   = 20
	facetsWidth  = 30
	wideLayout   = 120
	previewWidth = 44
)

type focus int

const (
	focusFacets focus = iota
	focusRecords
)

// Model is the explore view.
type Model struct {
	c      *common.Common
	width  int
	height int
	// clustered counts the records of the view's query in clusters to
	// curate (the title's "≈ N in clusters").
	clustered int
	focus     focus

	roots     []*node
	rows      []*node
	facetList components.List

	records    []contract.Record
	total      int
	cont       *string
	loadingRec bool
	recList    components.List
	rowWidth   int

	gen      int
	scopeGen int
	// stale says the store changed since the last load (a DataChangedMsg).
	stale bool
	// live says the store changed under the session (the change feed): the
	// next reload keeps the facet counts on screen until the new ones come
	// and the record cursor on its record, on the same screen row.
	live    bool
	keep    *keep
	loaded  bool
	pending int

	// preview shows the record under the cursor beside the list on wide screens;
	// previewNarrow shows it below the list on narrow ones (toggled with p).
	// facetBox caches the drawn facet pane; moving in the record list leaves it as is.
	facetBox    string
	facetBoxKey [6]int
	treeVersion int

	preview       bool
	previewNarrow bool
	filtering     bool
	filter        components.Input
	content       string
}

// New returns the explore view; it loads when it is first shown.
func New(c *common.Common) *Model {
	m := &Model{c: c, preview: true, scopeGen: -1}
	for _, f := range contract.Facets() {
		m.roots = append(m.roots, &node{kind: nodeRoot, facet: f, label: string(f), distinct: -1, limit: bucketLimit})
	}
	m.filter = components.NewInput(c, "contains: ")
	m.rebuildTree()
	return m
}

// keep is where the record cursor was before a live reload.
type keep struct {
	id                  string
	row, cursor, offset int
}

type facetCountMsg struct {
	gen      int
	facet    contract.Facet
	distinct int
	err      error
}

type bucketsMsg struct {
	gen   int
	facet contract.Facet
	page  contract.ExplorePage
	err   error
}

type recordsMsg struct {
	gen    int
	page   contract.BrowsePage
	append bool
	err    error
}

type contentMsg struct {
	text string
}

// Init starts the first load.
func (m *Model) Init() tea.Cmd { return m.ensureLoaded() }

// Activate reloads when the scope or the data changed since the last load.
func (m *Model) Activate() tea.Cmd { return m.ensureLoaded() }

// Total is the number of records in scope (-1 before the first answer).
func (m *Model) Total() int {
	if !m.loaded {
		return -1
	}
	return m.total
}

// ListFilter is the text the records list is filtered by ("" when it is
// not): the scope line says so while it is.
func (m *Model) ListFilter() string { return m.content }

// Records are the records loaded so far, for tests.
func (m *Model) Records() []contract.Record { return m.records }

// ensureLoaded reloads everything when the scope or the data changed.
func (m *Model) ensureLoaded() tea.Cmd {
	if m.scopeGen == m.c.ScopeGen && !m.stale {
		return nil
	}
	return m.reload()
}

func (m *Model) reload() tea.Cmd {
	if m.scopeGen != m.c.ScopeGen && !m.c.Scope.IsRoot() {
		// the narrowed facet now holds one value: fold it and put the cursor on
		// it, so backspace widens right away
		last := m.c.Scope.Crumbs[len(m.c.Scope.Crumbs)-1].Facet
		for _, r := range m.roots {
			if r.facet == last {
				r.expanded = false
				m.rebuildTree()
				m.cursorTo(r)
			}
		}
	}
	live := m.live && m.scopeGen == m.c.ScopeGen
	m.scopeGen, m.stale, m.live, m.keep = m.c.ScopeGen, false, false, nil
	limit := pageSize
	if live && len(m.records) > 0 {
		c := m.recList.Cursor
		m.keep = &keep{id: m.records[c].ID, row: c - m.recList.Offset, cursor: c, offset: m.recList.Offset}
		limit = min(contract.BrowseMaxLimit, max(pageSize, len(m.records)))
	}
	m.gen++
	gen := m.gen
	filter := m.c.Filter()
	cmds := make([]tea.Cmd, 0, len(m.roots)+2)
	m.pending = 0
	for _, r := range m.roots {
		if !live {
			r.distinct = -1
		}
		cmds = append(cmds, m.countCmd(gen, r.facet, filter))
		m.pending++
		if r.expanded {
			cmds = append(cmds, m.bucketsCmd(gen, r, filter))
			m.pending++
		}
	}
	m.loadingRec = true
	m.pending++
	cmds = append(cmds, m.recordsCmdLimit(gen, nil, limit))
	m.rebuildTree()
	return tea.Batch(cmds...)
}

func (m *Model) countCmd(gen int, f contract.Facet, filter contract.MetaFilter) tea.Cmd {
	engine, ctx := m.c.Engine, m.c.Context()
	return func() tea.Msg {
		page, err := engine.Explore(ctx, contract.ExploreRequest{Facet: f, Filter: filter, Limit: 1})
		if err != nil {
			return facetCountMsg{gen: gen, facet: f, err: err}
		}
		return facetCountMsg{gen: gen, facet: f, distinct: len(page.Buckets) + int(page.MoreBuckets)}
	}
}

func (m *Model) bucketsCmd(gen int, r *node, filter contract.MetaFilter) tea.Cmd {
	engine, ctx := m.c.Engine, m.c.Context()
	f, limit := r.facet, r.limit
	if isTreeFacet(f) {
		limit = contract.MaxBuckets
	}
	return func() tea.Msg {
		page, err := engine.Explore(ctx, contract.ExploreRequest{Facet: f, Filter: filter, Limit: limit})
		return bucketsMsg{gen: gen, facet: f, page: page, err: err}
	}
}

func (m *Model) browseQuery() contract.BrowseQuery {
	// No `now`: explore's counts have no notion of expiry, so the list must not
	// either, or "N of M" would disagree with the bucket the user narrowed by.
	q := contract.BrowseQuery{Filter: m.c.Filter(), Limit: pageSize}
	if m.content != "" {
		q.Filters = []contract.BrowseFilter{{Field: "content", Op: "contains", Text: m.content}}
	}
	return q
}

func (m *Model) recordsCmd(gen int, cursor *string) tea.Cmd {
	return m.recordsCmdLimit(gen, cursor, pageSize)
}

func (m *Model) recordsCmdLimit(gen int, cursor *string, limit int) tea.Cmd {
	appendPage := cursor != nil
	q := m.browseQuery()
	q.Limit = limit
	return common.BrowseCmd(m.c, q, cursor, func(page contract.BrowsePage, err error) tea.Msg {
		return recordsMsg{gen: gen, page: page, append: appendPage, err: err}
	})
}

// Update handles keys and replies.
func (m *Model) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case facetCountMsg:
		if msg.gen != m.gen {
			return nil
		}
		m.pending--
		if msg.err != nil {
			return common.Fail("explore "+string(msg.facet), msg.err)
		}
		for _, r := range m.roots {
			if r.facet == msg.facet {
				r.distinct = msg.distinct
			}
		}
		m.rebuildTree()
	case bucketsMsg:
		if msg.gen != m.gen {
			return nil
		}
		m.pending--
		if msg.err != nil {
			return common.Fail("explore "+string(msg.facet), msg.err)
		}
		for _, r := range m.roots {
			if r.facet == msg.facet {
				buildChildren(r, msg.page)
			}
		}
		m.rebuildTree()
	case recordsMsg:
		if msg.gen != m.gen {
			return nil
		}
		m.loadingRec = false
		if !msg.append {
			m.pending--
		}
		if msg.err != nil {
			return common.Fail("browse", msg.err)
		}
		m.loaded = true
		if msg.append {
			m.records = append(m.records, msg.page.Records...)
		} else {
			m.records = msg.page.Records
			m.recList.Top()
		}
		m.total = msg.page.Total
		m.cont = msg.page.Continuation
		m.rebuildRows()
		if k := m.keep; k != nil && !msg.append {
			m.keep = nil
			m.restore(k)
		}
	case common.DataChangedMsg:
		m.stale = true
		m.live = msg.Live()
	case common.ClustersMsg:
		m.rebuildRows()
	case contentMsg:
		if msg.text == m.filter.Value() && msg.text != m.content {
			m.content = msg.text
			return m.reloadRecords()
		}
	case tea.KeyPressMsg:
		return m.key(msg)
	}
	return nil
}

// restore puts the record cursor back on its record, on the same screen
// row (where it was, when the record went); a list scrolled to its head
// stays at the head, so what arrived shows above the cursor.
func (m *Model) restore(k *keep) {
	cursor := k.cursor
	for i := range m.records {
		if m.records[i].ID == k.id {
			cursor = i
			break
		}
	}
	m.recList.Cursor, m.recList.Offset = cursor, cursor-k.row
	if k.offset == 0 {
		// a list scrolled to its head stays there: what arrived shows above
		m.recList.Offset = 0
	}
	m.recList.SetRows(m.recList.Rows)
}

// Cursor is the record under the record cursor (nil when there is none).
func (m *Model) Cursor() *contract.Record {
	if len(m.records) == 0 {
		return nil
	}
	return &m.records[m.recList.Cursor]
}

func (m *Model) reloadRecords() tea.Cmd {
	m.gen++
	m.loadingRec = true
	// counts of the facet tree belong to the old generation too; reload them all
	m.scopeGen = -1
	return m.reload()
}

func (m *Model) key(msg tea.KeyPressMsg) tea.Cmd {
	k := &m.c.Keys
	if m.filtering {
		switch {
		case msg.String() == "esc":
			m.filtering = false
			m.filter.SetValue("")
			return m.debounceContent()
		case msg.String() == "enter":
			m.filtering = false
			return nil
		case msg.String() == "backspace" && m.filter.Value() == "":
			// backspace on an empty filter closes it, as esc does
			m.filtering = false
			return m.debounceContent()
		}
		if m.filter.Update(msg) {
			return m.debounceContent()
		}
		return nil
	}
	switch {
	case key.Matches(msg, k.NextPane), key.Matches(msg, k.PrevPane):
		if m.focus == focusFacets {
			m.focus = focusRecords
		} else {
			m.focus = focusFacets
		}
		return nil
	case key.Matches(msg, k.Back) && m.filter.Value() != "":
		// esc clears the list's filter first, then widens the scope.
		m.filter.SetValue("")
		return m.debounceContent()
	case key.Matches(msg, k.Back):
		if !m.c.Scope.IsRoot() {
			return func() tea.Msg { return common.WidenMsg{} }
		}
		return nil
	case key.Matches(msg, k.TogglePreview):
		if m.width >= wideLayout {
			m.preview = !m.preview
		} else {
			m.previewNarrow = !m.previewNarrow
		}
		m.SetSize(m.width, m.height)
		return nil
	case key.Matches(msg, k.Filter):
		m.filtering = true
		m.focus = focusRecords
		return nil
	case key.Matches(msg, k.ForgetScope):
		if m.c.ReadOnly {
			return nil
		}
		return func() tea.Msg { return common.ForgetScopeMsg{} }
	case key.Matches(msg, k.LoadDemo):
		if m.showWelcome() && !m.c.ReadOnly {
			return func() tea.Msg { return common.LoadDemoMsg{} }
		}
		return nil
	}
	if m.focus == focusFacets {
		return m.facetKey(msg)
	}
	return m.recordKey(msg)
}

func (m *Model) facetKey(msg tea.KeyPressMsg) tea.Cmd {
	k := &m.c.Keys
	if m.facetList.MoveByKey(k, msg) {
		return nil
	}
	if len(m.rows) == 0 {
		return nil
	}
	n := m.rows[m.facetList.Cursor]
	switch {
	case key.Matches(msg, k.Expand):
		return m.expand(n)
	case key.Matches(msg, k.Collapse):
		return m.collapse(n)
	}
	return nil
}

func (m *Model) expand(n *node) tea.Cmd {
	switch n.kind {
	case nodeRoot:
		if n.expanded {
			n.expanded = false
			m.rebuildTree()
			return nil
		}
		if n.distinct == 0 {
			return nil
		}
		n.expanded = true
		n.children = []*node{{kind: nodeLoading, facet: n.facet, depth: 1, parent: n}}
		m.pending++
		m.rebuildTree()
		return m.bucketsCmd(m.gen, n, m.c.Filter())
	case nodeMore:
		r := rootOf(n)
		r.limit = min(contract.MaxBuckets, r.limit*4)
		m.pending++
		return m.bucketsCmd(m.gen, r, m.c.Filter())
	case nodeValue:
		if len(n.children) > 0 && !n.expanded {
			n.expanded = true
			m.rebuildTree()
			return nil
		}
		crumb := common.Crumb{Facet: n.facet, Value: n.value, Subtree: n.subtree}
		return func() tea.Msg { return common.NarrowMsg{Crumb: crumb} }
	}
	return nil
}

func (m *Model) collapse(n *node) tea.Cmd {
	switch {
	case n.kind == nodeRoot && n.expanded:
		n.expanded = false
	case n.kind == nodeRoot:
		if !m.c.Scope.IsRoot() {
			return func() tea.Msg { return common.WidenMsg{} }
		}
		return nil
	case n.expanded:
		n.expanded = false
	default:
		p := n.parent
		if p.kind == nodeRoot {
			p.expanded = false
		} else {
			p.expanded = false
		}
		m.rebuildTree()
		m.cursorTo(p)
		return nil
	}
	m.rebuildTree()
	return nil
}

func (m *Model) cursorTo(target *node) {
	for i, n := range m.rows {
		if n == target {
			m.facetList.Cursor = i
			m.facetList.Move(0)
			return
		}
	}
}

func (m *Model) current() *contract.Record {
	if len(m.records) == 0 {
		return nil
	}
	return &m.records[m.recList.Cursor]
}

func (m *Model) recordKey(msg tea.KeyPressMsg) tea.Cmd {
	k := &m.c.Keys
	if m.recList.MoveByKey(k, msg) {
		return m.maybeLoadMore()
	}
	rec := m.current()
	if key.Matches(msg, k.Collapse) {
		if !m.c.Scope.IsRoot() {
			return func() tea.Msg { return common.WidenMsg{} }
		}
		return nil
	}
	if rec == nil {
		return nil
	}
	r := *rec
	switch {
	case key.Matches(msg, k.Expand):
		return func() tea.Msg { return common.OpenRecordMsg{ID: r.ID, Record: &r} }
	}
	cmd, _ := common.RecordKey(m.c, msg, r.ID, r.Text)
	return cmd
}

func (m *Model) maybeLoadMore() tea.Cmd {
	if m.loadingRec || m.cont == nil || !m.recList.NearEnd(loadMargin) {
		return nil
	}
	m.loadingRec = true
	return m.recordsCmd(m.gen, m.cont)
}

func (m *Model) debounceContent() tea.Cmd {
	text := m.filter.Value()
	return m.c.Tick(150*time.Millisecond, func(time.Time) tea.Msg { return contentMsg{text: text} })
}

// SetSize lays out the panes.
func (m *Model) SetSize(width, height int) {
	m.width, m.height = width, height
	m.facetList.SetHeight(height - 2)
	recH := height - 2
	if m.previewBelow() {
		recH = (height - 2) / 2
	}
	if m.filtering {
		recH--
	}
	m.recList.SetHeight(recH)
	m.rebuildTree()
	m.rebuildRows()
}

func (m *Model) previewBeside() bool { return m.preview && m.width >= wideLayout }
func (m *Model) previewBelow() bool  { return m.previewNarrow && m.width < wideLayout && m.height >= 12 }

func (m *Model) recordsWidth() int {
	w := m.width - facetsWidth
	if m.previewBeside() {
		w -= previewWidth
	}
	return w
}

// Capturing is true while the content filter line has focus.
func (m *Model) Capturing() bool { return m.filtering }

// Busy names what the view waits for.
func (m *Model) Busy() string {
	if m.pending > 0 || m.loadingRec {
		return "loading"
	}
	return ""
}

// ShortHelp lists the keys of the focused pane.
func (m *Model) ShortHelp() []key.Binding {
	k := &m.c.Keys
	if m.filtering {
		return nil
	}
	if m.focus == focusFacets {
		return []key.Binding{k.Expand, k.Collapse, k.NextPane, k.ForgetScope, k.Help, k.Palette, k.Quit}
	}
	out := []key.Binding{k.Expand, k.Collapse, k.NextPane, k.Filter}
	if m.filter.Value() != "" {
		clear := k.Back
		clear.SetHelp(clear.Help().Key, "clear filter")
		out = append([]key.Binding{clear}, out...)
	}
	if !m.c.ReadOnly {
		out = append(out, k.Forget)
	}
	return append(out, k.CopyID, k.TogglePreview, k.Help, k.Quit)
}

// rebuildTree re-renders the facet rows (on data, expansion or size change only).
func (m *Model) rebuildTree() {
	m.treeVersion++
	m.rows = flatten(m.roots)
	st := &m.c.Styles
	inner := facetsWidth - 2
	rows := make([]components.Row, len(m.rows))
	for i, n := range m.rows {
		plain, styled := m.renderNode(st, n, inner)
		rows[i] = components.Row{Plain: plain, Styled: styled}
	}
	m.facetList.SetRows(rows)
}

func (m *Model) renderNode(st *common.Styles, n *node, width int) (plain, styled string) {
	g := st.Glyphs
	indent := strings.Repeat("  ", n.depth)
	switch n.kind {
	case nodeRoot:
		mark := g.Collapsed
		if n.expanded {
			mark = g.Expanded
		}
		count := "…"
		switch {
		case n.distinct == 0:
			count = g.None
		case n.distinct > 0:
			count = common.Thousands(n.distinct)
		}
		left := mark + " " + n.label
		plain = common.Fit(left, width-7) + common.PadLeft(count, 7)
		return plain, st.Row.Render(plain)
	case nodeLoading:
		plain = common.Fit(indent+"loading"+g.Ellipsis, width)
		return plain, st.Dim.Render(plain)
	case nodeMissing:
		plain = common.Fit(indent+"(missing)", width-7) + common.PadLeft(common.Thousands(int(n.count)), 7)
		return plain, st.Missing.Render(plain)
	case nodeMore:
		plain = common.Fit(indent+g.Ellipsis+" "+common.Thousands(int(n.count))+" more", width)
		return plain, st.Dim.Render(plain)
	}
	mark := " "
	if len(n.children) > 0 {
		mark = g.Collapsed
		if n.expanded {
			mark = g.Expanded
		}
	}
	barW := 5
	countW := 6
	labelW := width - len(indent) - 2 - countW - 1 - barW
	bar := ""
	if n.max > 0 {
		cells := int((n.count*uint64(barW) + n.max - 1) / n.max)
		bar = strings.Repeat(g.Bar, max(1, min(barW, cells)))
	}
	label := indent[:len(indent)-2] + "  " + mark + " " + common.Fit(n.label, labelW)
	count := common.PadLeft(common.Thousands(int(n.count)), countW)
	plain = common.Fit(label+count+" "+common.Fit(bar, barW), width)
	styled = st.Row.Render(common.Fit(label, len(indent)+2+labelW)) + st.Number.Render(count) + " " +
		st.Bar.Render(common.Fit(bar, barW))
	if w := common.Width(plain); w < width {
		styled += strings.Repeat(" ", width-w)
	}
	return plain, styled
}

// rebuildRows re-renders the record rows (on data or size change only).
func (m *Model) rebuildRows() {
	inner := m.recordsWidth() - 2
	if inner < 10 {
		return
	}
	m.rowWidth = inner
	now := m.c.Now()
	rows := make([]components.Row, len(m.records))
	for i := range m.records {
		rows[i] = RecordRow(&m.c.Styles, &m.records[i], inner, now, m.c.Clusters.In(m.records[i].ID))
	}
	m.recList.SetRows(rows)
	m.clustered = m.c.Clusters.Count(m.browseQuery())
}

// RecordRow renders one record as a list row: status mark, text, kind,
// confidence and age. Status is a glyph and a word-free mark, never colour
// alone; a record in a cluster to curate has the cluster mark before its text.
func RecordRow(st *common.Styles, r *contract.Record, width int, now time.Time, clustered bool) components.Row {
	g := st.Glyphs
	mark, markStyle, textStyle := g.Active, st.Row, st.Row
	switch r.Status {
	case contract.StatusCandidate:
		mark, markStyle = g.Candidate, st.Candidate
	case contract.StatusSuperseded:
		mark, markStyle, textStyle = g.Superseded, st.Dim, st.Superseded
	}
	conf := ""
	if r.Confidence != nil {
		conf = fmt.Sprintf("%.2f", float32(*r.Confidence))
	}
	ago := common.Ago(now, r.UpdatedAt)
	kind := string(r.Kind)
	kindW, confW, agoW := 12, 4, 7
	if width < 70 {
		kindW, kind = 4, common.ShortKind(r.Kind)
	}
	textW := width - 2 - kindW - confW - agoW - 3
	if textW < 10 {
		kindW, confW = 0, 0
		textW = width - 2 - agoW - 1
	}
	cl := ""
	if clustered {
		cl = g.Clustered + " "
		textW -= 2
	}
	text := common.Fit(common.OneLine(r.Text), textW)
	var b, p strings.Builder
	p.WriteString(mark + " " + cl + text)
	b.WriteString(markStyle.Render(mark) + " " + st.Warning.Render(cl) + textStyle.Render(text))
	if kindW > 0 {
		kind := " " + common.Fit(kind, kindW)
		c := " " + common.PadLeft(conf, confW)
		p.WriteString(kind + c)
		b.WriteString(st.Kind.Render(kind) + st.Number.Render(c))
	}
	a := " " + common.PadLeft(ago, agoW)
	p.WriteString(a)
	b.WriteString(st.Dim.Render(a))
	plain := common.Fit(p.String(), width)
	styled := b.String()
	if w := common.Width(plain); w > common.Width(p.String()) {
		styled += strings.Repeat(" ", w-common.Width(p.String()))
	}
	return components.Row{Plain: plain, Styled: styled}
}

// View draws the facet tree, the records and, when there is room, the preview.
func (m *Model) View() string {
	st := &m.c.Styles
	if m.showWelcome() {
		return m.welcome()
	}
	focused := 0
	if m.focus == focusFacets {
		focused = 1
	}
	key := [6]int{m.treeVersion, m.facetList.Cursor, m.facetList.Offset, focused, m.height, m.c.ScopeGen}
	if key != m.facetBoxKey || m.facetBox == "" {
		m.facetBox = components.Box(st, "Facets", m.facetList.Lines(st, focused == 1, facetsWidth-2),
			facetsWidth, m.height, focused == 1)
		m.facetBoxKey = key
	}
	facets := m.facetBox
	rw := m.recordsWidth()
	recH := m.height
	var below string
	if m.previewBelow() {
		recH = m.height / 2
		below = m.previewBox(rw, m.height-recH)
	}
	lines := m.recList.Lines(st, m.focus == focusRecords, rw-2)
	if m.loaded && len(m.records) == 0 {
		lines = []string{st.Dim.Render(common.Fit(" no records in this scope", rw-2))}
	} else if !m.loaded {
		lines = []string{st.Dim.Render(common.Fit(" loading"+st.Glyphs.Ellipsis, rw-2))}
	}
	if m.filtering || m.content != "" {
		lines = append(lines[:min(len(lines), recH-3)], m.filter.View(rw-2, m.filtering))
	}
	title := "Records"
	if m.loaded {
		title = fmt.Sprintf("Records %s of %s loaded", common.Thousands(len(m.records)), common.Thousands(m.total))
		if m.clustered > 0 {
			title += fmt.Sprintf("  %s %s in clusters", st.Glyphs.Clustered, common.Thousands(m.clustered))
		}
	}
	records := components.Box(st, title, lines, rw, recH, m.focus == focusRecords)
	if below != "" {
		records += "\n" + below
	}
	parts := []string{facets, records}
	if m.previewBeside() {
		parts = append(parts, m.previewBox(previewWidth, m.height))
	}
	return joinColumns(parts...)
}

// showWelcome tells whether the store is empty, so the view explains how to fill it.
func (m *Model) showWelcome() bool {
	return m.loaded && m.total == 0 && m.c.Scope.IsRoot() && m.content == "" && m.c.Total == 0
}

func (m *Model) previewBox(width, height int) string {
	st := &m.c.Styles
	var lines []string
	if r := m.current(); r != nil {
		lines = PreviewLines(st, r, width-2, m.c.Now())
	}
	return components.Box(st, "Preview", lines, width, height, false)
}

// PreviewLines is a short, wrapped summary of a record for the preview pane.
func PreviewLines(st *common.Styles, r *contract.Record, width int, now time.Time) []string {
	field := func(label, value string) string {
		// One column at least between the label and its value.
		return st.Label.Render(common.Fit(label, 11)) + st.Value.Render(common.Fit(value, width-11))
	}
	lines := []string{
		field("kind", string(r.Kind)),
		field("status", string(r.Status)),
		field("id", r.ID),
		field("namespace", r.Meta.Namespace.String()),
		field("updated", common.Ago(now, r.UpdatedAt)),
	}
	if r.Confidence != nil {
		lines = append(lines, field("confidence", fmt.Sprintf("%.2f", float32(*r.Confidence))))
	}
	if len(r.Meta.Tags) > 0 {
		lines = append(lines, field("tags", strings.Join(r.Meta.Tags, ", ")))
	}
	lines = append(lines, common.Fit("", width))
	for _, l := range strings.Split(wrap(r.Text, width), "\n") {
		lines = append(lines, common.Fit(l, width))
	}
	return lines
}

func wrap(s string, width int) string {
	return common.Wrap(s, width)
}

func (m *Model) welcome() string {
	st := &m.c.Styles
	lines := []string{
		"",
		st.Heading.Render("This memory store is empty."),
		"",
		"Import memories from a JSONL file of store items:",
		"",
		"    mnemo import FILE.jsonl",
		"",
	}
	if m.c.ReadOnly {
		lines = append(lines, "This session is read-only.")
	} else {
		lines = append(lines, "or press "+st.FooterKey.Render(common.KeyLabel(m.c.Keys.LoadDemo.Keys()))+
			" to load the built-in demo corpus.")
	}
	for i := range lines {
		lines[i] = common.Fit("  "+lines[i], m.width-2)
	}
	return components.Box(st, "Welcome", lines, m.width, m.height, true)
}

func joinColumns(parts ...string) string {
	cols := make([][]string, len(parts))
	h := 0
	for i, p := range parts {
		cols[i] = strings.Split(p, "\n")
		h = max(h, len(cols[i]))
	}
	var b strings.Builder
	for y := 0; y < h; y++ {
		if y > 0 {
			b.WriteByte('\n')
		}
		for _, c := range cols {
			if y < len(c) {
				b.WriteString(c[y])
			}
		}
	}
	return b.String()
}
