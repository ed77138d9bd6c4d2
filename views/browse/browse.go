// Package browse is the sortable, filterable table of records with candidate
// review: keyset paging through browse continuations with one pinned `now` per
// walk, up to three sort keys, a filter editor for every browse filter, and
// bulk approve, reject and forget over a selection with a per-row report.
package browse

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
	pageSize   = 200
	loadMargin = 40
	wide       = 120
)

// column is one table column; field is its browse sort field ("" when the
// column cannot be sorted).
type column struct {
	title string
	field string
	width int
	flex  bool
}

// Model is the browse view.
type Model struct {
	c      *common.Common
	width  int
	height int
	// clustered counts the records of the view's query in clusters to
	// curate (the title's "≈ N in clusters").
	clustered int

	cols    []column
	col     int
	order   []contract.SortKey
	filters []contract.BrowseFilter
	status  []contract.Status
	kinds   []contract.ItemKind

	records []contract.Record
	total   int
	cont    *string
	walkNow time.Time
	loading bool
	loaded  bool
	list    components.List

	selected map[string]bool

	gen      int
	scopeGen int
	// stale says the data or the query changed since the last load.
	stale bool
	// live says the data changed under the session (the change feed): the
	// next reload keeps the cursor on its record and the screen row it was
	// on. keep is what that reload keeps; newAbove counts the records that
	// arrived above the cursor since the user was last at the head.
	live     bool
	keep     *keep
	newAbove int

	editor     *editor
	confirming *confirm
	reviewing  bool
}

// keep is where the cursor was before a live reload.
type keep struct {
	id     string
	row    int // the cursor's row on screen
	cursor int
	offset int
	had    map[string]bool
}

type confirm struct {
	ids   []string
	title string
}

// New returns the browse view; it loads when first shown.
func New(c *common.Common) *Model {
	return &Model{c: c, scopeGen: -1, selected: map[string]bool{}}
}

type pageMsg struct {
	gen    int
	page   contract.BrowsePage
	append bool
	err    error
}

type reviewedMsg struct {
	action   contract.ReviewAction
	done     int
	failures []string
	// kind is the failures' kind when they share one (a conflict: the
	// record was no candidate), else an engine error's.
	kind contract.ErrorKind
}

// Init loads the first page.
func (m *Model) Init() tea.Cmd { return m.Activate() }

// Activate reloads from the head when the scope or data changed.
func (m *Model) Activate() tea.Cmd {
	if m.scopeGen == m.c.ScopeGen && !m.stale {
		return nil
	}
	return m.reload()
}

// Total is how many records match (-1 before the first answer).
func (m *Model) Total() int {
	if !m.loaded {
		return -1
	}
	return m.total
}

// Records are the loaded records.
func (m *Model) Records() []contract.Record { return m.records }

// Order is the current sort.
func (m *Model) Order() []contract.SortKey { return m.order }

// Query is the browse query of the current walk (without cursor).
func (m *Model) Query() contract.BrowseQuery {
	now := m.walkNow
	q := contract.BrowseQuery{Filter: m.c.Filter(), Limit: pageSize, Now: &now,
		OrderBy: append([]contract.SortKey(nil), m.order...), Filters: m.filters}
	if m.status != nil {
		q.Status = m.status
	}
	if m.kinds != nil {
		q.Kind = m.kinds
	}
	return q
}

func (m *Model) reload() tea.Cmd {
	live := m.live && m.scopeGen == m.c.ScopeGen
	m.scopeGen, m.stale, m.live, m.keep = m.c.ScopeGen, false, false, nil
	m.gen++
	m.walkNow = m.c.Now().UTC().Truncate(time.Millisecond)
	m.loading = true
	limit := pageSize
	if r := m.current(); live && r != nil {
		// read as many rows as were loaded, so the cursor's record is found
		k := &keep{id: r.ID, row: m.list.Cursor - m.list.Offset, cursor: m.list.Cursor, offset: m.list.Offset, had: make(map[string]bool, len(m.records))}
		for _, r := range m.records {
			k.had[r.ID] = true
		}
		m.keep = k
		limit = min(contract.BrowseMaxLimit, max(pageSize, len(m.records)))
	} else {
		m.newAbove = 0
	}
	return m.pageCmdLimit(m.gen, nil, limit)
}

func (m *Model) pageCmd(gen int, cursor *string) tea.Cmd {
	return m.pageCmdLimit(gen, cursor, pageSize)
}

func (m *Model) pageCmdLimit(gen int, cursor *string, limit int) tea.Cmd {
	appendPage := cursor != nil
	q := m.Query()
	q.Limit = limit
	return common.BrowseCmd(m.c, q, cursor, func(page contract.BrowsePage, err error) tea.Msg {
		return pageMsg{gen: gen, page: page, append: appendPage, err: err}
	})
}

// Update handles pages, review results and keys.
func (m *Model) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case pageMsg:
		if msg.gen != m.gen {
			return nil
		}
		m.loading = false
		if msg.err != nil {
			return common.Fail("browse", msg.err)
		}
		m.loaded = true
		if msg.append {
			m.records = append(m.records, msg.page.Records...)
		} else {
			m.records = msg.page.Records
			m.list.Top()
		}
		m.total, m.cont = msg.page.Total, msg.page.Continuation
		m.rebuild()
		if k := m.keep; k != nil && !msg.append {
			m.keep = nil
			m.restore(k)
		}
	case reviewedMsg:
		m.reviewing = false
		m.selected = map[string]bool{}
		verb := "approved"
		if msg.action == contract.ReviewReject {
			verb = "rejected"
		}
		cmds := []tea.Cmd{func() tea.Msg { return common.DataChangedMsg{Cause: common.ChangeReview} }}
		if len(msg.failures) > 0 {
			// The kind the failures share leads ("conflict: approved 2, 1
			// failed: 8a8f01f6: record ... is 'active', not a candidate").
			report := &contract.Error{Kind: msg.kind, Message: fmt.Sprintf("%s %d, %d failed: %s", verb, msg.done, len(msg.failures), strings.Join(msg.failures, "; "))}
			cmds = append(cmds, common.Fail("review", report))
		} else {
			text := verb + " " + common.Plural(msg.done, "record", "records")
			cmds = append(cmds, common.Toast(text))
		}
		return tea.Batch(cmds...)
	case common.DataChangedMsg:
		m.stale = true
		m.live = msg.Live()
	case common.ClustersMsg:
		m.rebuild()
	case editorCancelMsg:
		m.editor = nil
	case editorDoneMsg:
		m.editor = nil
		m.status, m.kinds, m.filters = msg.status, msg.kinds, msg.filters
		m.stale = true
		return m.Activate()
	case tea.KeyPressMsg:
		return m.key(msg)
	}
	return nil
}

// restore puts the cursor back on the record it was on before a live
// reload, on the same screen row, and counts the records that arrived above
// it; a record that went leaves the cursor where it was.
func (m *Model) restore(k *keep) {
	idx := -1
	for i := range m.records {
		if m.records[i].ID == k.id {
			idx = i
			break
		}
	}
	if idx < 0 {
		m.list.Cursor = k.cursor
		m.list.Offset = k.offset
		m.list.SetRows(m.list.Rows)
		return
	}
	for _, r := range m.records[:idx] {
		if !k.had[r.ID] {
			m.newAbove++
		}
	}
	m.list.Cursor, m.list.Offset = idx, idx-k.row
	if k.offset == 0 {
		m.list.Offset = 0 // a table scrolled to its head stays there
	}
	m.list.SetRows(m.list.Rows)
	if idx == 0 {
		m.newAbove = 0
	}
}

// NewAbove is how many records arrived above the cursor since the user was
// last at the head (the "▲ N new" badge).
func (m *Model) NewAbove() int { return m.newAbove }

// Cursor is the record under the cursor (nil when there is none).
func (m *Model) Cursor() *contract.Record { return m.current() }

func (m *Model) current() *contract.Record {
	if len(m.records) == 0 {
		return nil
	}
	return &m.records[m.list.Cursor]
}

// targets are the selected ids, or the record under the cursor.
func (m *Model) targets() []string {
	if len(m.selected) > 0 {
		ids := make([]string, 0, len(m.selected))
		for _, r := range m.records {
			if m.selected[r.ID] {
				ids = append(ids, r.ID)
			}
		}
		return ids
	}
	if r := m.current(); r != nil {
		return []string{r.ID}
	}
	return nil
}

func (m *Model) key(msg tea.KeyPressMsg) tea.Cmd {
	if m.editor != nil {
		return m.editor.update(msg)
	}
	if m.confirming != nil {
		c := m.confirming
		m.confirming = nil
		if msg.String() == "y" || msg.String() == "Y" {
			return m.review(contract.ReviewReject, c.ids)
		}
		return common.Toast("reject cancelled")
	}
	k := &m.c.Keys
	if m.list.MoveByKey(k, msg) {
		if m.list.Cursor == 0 {
			m.newAbove = 0
		}
		if !m.loading && m.cont != nil && m.list.NearEnd(loadMargin) {
			m.loading = true
			return m.pageCmd(m.gen, m.cont)
		}
		return nil
	}
	switch {
	case key.Matches(msg, k.PrevColumn):
		m.col = max(0, m.col-1)
		m.rebuild()
	case key.Matches(msg, k.NextColumn):
		m.col = min(len(m.cols)-1, m.col+1)
		m.rebuild()
	case key.Matches(msg, k.Sort):
		return m.sort(false)
	case key.Matches(msg, k.AddSort):
		return m.sort(true)
	case key.Matches(msg, k.FilterEditor), key.Matches(msg, k.Filter):
		m.editor = newEditor(m.c, m.status, m.kinds, m.filters)
	case key.Matches(msg, k.Select):
		if r := m.current(); r != nil {
			if m.selected[r.ID] {
				delete(m.selected, r.ID)
			} else {
				m.selected[r.ID] = true
			}
			m.rebuild()
			m.list.Move(1)
		}
	case key.Matches(msg, k.Back):
		if len(m.selected) > 0 {
			m.selected = map[string]bool{}
			m.rebuild()
			return nil
		}
		return func() tea.Msg { return common.WidenMsg{} }
	case key.Matches(msg, k.Open):
		if r := m.current(); r != nil {
			rec := *r
			return func() tea.Msg { return common.OpenRecordMsg{ID: rec.ID, Record: &rec} }
		}
	case key.Matches(msg, k.CopyID):
		if r := m.current(); r != nil {
			id := r.ID
			return func() tea.Msg { return common.CopyMsg{Text: id, What: "id " + common.ShortID(id)} }
		}
	case key.Matches(msg, k.CopyText):
		if r := m.current(); r != nil {
			text := r.Text
			return func() tea.Msg { return common.CopyMsg{Text: text, What: "text"} }
		}
	case key.Matches(msg, k.Approve):
		if ids := m.targets(); len(ids) > 0 && !m.c.ReadOnly {
			return m.review(contract.ReviewApprove, ids)
		}
	case key.Matches(msg, k.Reject):
		if ids := m.targets(); len(ids) > 0 && !m.c.ReadOnly {
			title := ""
			if r := m.current(); len(ids) == 1 && r != nil {
				title = common.OneLine(r.Text)
			}
			m.confirming = &confirm{ids: ids, title: title}
		}
	case key.Matches(msg, k.Forget):
		ids := m.targets()
		if len(ids) == 0 || m.c.ReadOnly {
			return nil
		}
		t := common.ForgetTarget{IDs: ids, Count: len(ids)}
		if len(ids) == 1 {
			for _, r := range m.records {
				if r.ID == ids[0] {
					t.Title = common.OneLine(r.Text)
				}
			}
		}
		return func() tea.Msg { return common.ForgetRequestMsg{Target: t} }
	case key.Matches(msg, k.ForgetScope):
		if !m.c.ReadOnly {
			return func() tea.Msg { return common.ForgetScopeMsg{} }
		}
	}
	return nil
}

// sort cycles the column under the cursor: desc, asc, off. Alone (`s`) it
// replaces the order; added (`S`) it becomes a further key, at most three.
func (m *Model) sort(add bool) tea.Cmd {
	if len(m.cols) == 0 {
		return nil
	}
	col := m.cols[m.col]
	if col.field == "" {
		return common.Toast(col.title + " cannot be sorted")
	}
	idx := -1
	for i, k := range m.order {
		if k.Field == col.field {
			idx = i
		}
	}
	next := func(dir string) string {
		switch dir {
		case "desc":
			return "asc"
		case "asc":
			return ""
		}
		return "desc"
	}
	switch {
	case !add && idx == 0 && len(m.order) == 1, add && idx >= 0:
		if d := next(m.order[idx].Dir); d == "" {
			m.order = append(m.order[:idx:idx], m.order[idx+1:]...)
		} else {
			m.order[idx].Dir = d
		}
	case !add:
		dir := "desc"
		if idx >= 0 {
			if dir = next(m.order[idx].Dir); dir == "" {
				m.order = nil
				break
			}
		}
		m.order = []contract.SortKey{{Field: col.field, Dir: dir}}
	default:
		if len(m.order) >= contract.BrowseMaxOrderBy {
			return common.Toast(fmt.Sprintf("at most %d sort keys; press s to sort by %s alone", contract.BrowseMaxOrderBy, col.title))
		}
		m.order = append(m.order, contract.SortKey{Field: col.field, Dir: "desc"})
	}
	m.stale = true
	return m.Activate()
}

// review approves or rejects each id, collecting a per-row failure report.
func (m *Model) review(action contract.ReviewAction, ids []string) tea.Cmd {
	m.reviewing = true
	engine, ctx := m.c.Engine, m.c.Context()
	return func() tea.Msg {
		res := reviewedMsg{action: action}
		for _, id := range ids {
			if _, err := engine.Review(ctx, contract.ReviewRequest{ID: id, Action: action}); err != nil {
				ce := contract.AsError(err)
				if len(res.failures) == 0 {
					res.kind = ce.Kind
				} else if res.kind != ce.Kind {
					res.kind = contract.KindEngine
				}
				res.failures = append(res.failures, common.ShortID(id)+": "+ce.Message)
				continue
			}
			res.done++
		}
		return res
	}
}

// SetSize lays out the columns.
func (m *Model) SetSize(width, height int) {
	m.width, m.height = width, height
	m.list.SetHeight(height - 3)
	m.layoutColumns()
	m.rebuild()
}

func (m *Model) layoutColumns() {
	inner := m.width - 2
	cols := []column{
		{title: "status", field: "status", width: 6},
		{title: "kind", field: "kind", width: 4},
		{title: "namespace", field: "namespace", width: 16},
		{title: "text", flex: true},
		{title: "conf", field: "confidence", width: 4},
		{title: "updated", field: "updated_at", width: 9},
	}
	if m.width >= wide {
		cols[1].width = 12
		// Namespaces are the usual way to tell agents apart; on very wide
		// screens give them room before the text takes the rest.
		cols[2].width = min(40, max(22, m.width/6))
		cols = append(cols, column{title: "created", field: "created_at", width: 8},
			column{title: "observed", field: "observed_at", width: 8})
	}
	used := 2 // selection mark
	for _, c := range cols {
		used += c.width + 1
	}
	for i := range cols {
		if cols[i].flex {
			cols[i].width = max(8, inner-used)
		}
	}
	m.cols = cols
	m.col = min(m.col, len(cols)-1)
}

func (m *Model) sortMark(field string) string {
	for i, k := range m.order {
		if k.Field == field {
			arrow := "↓"
			if k.Dir == "asc" {
				arrow = "↑"
			}
			if m.c.Plain {
				arrow = "v"
				if k.Dir == "asc" {
					arrow = "^"
				}
			}
			return fmt.Sprintf("%s%d", arrow, i+1)
		}
	}
	if len(m.order) == 0 && field == "updated_at" {
		if m.c.Plain {
			return "v"
		}
		return "↓"
	}
	return ""
}

// rebuild renders every row once (on data, selection, width or sort change).
func (m *Model) rebuild() {
	if len(m.cols) == 0 {
		return
	}
	st := &m.c.Styles
	now := m.c.Now()
	rows := make([]components.Row, len(m.records))
	for i := range m.records {
		rows[i] = m.row(st, &m.records[i], now)
	}
	m.list.SetRows(rows)
	m.clustered = m.c.Clusters.Count(m.Query())
}

func (m *Model) row(st *common.Styles, r *contract.Record, now time.Time) components.Row {
	g := st.Glyphs
	var plain, styled strings.Builder
	sel := "  "
	switch {
	case m.selected[r.ID]:
		sel = g.Selected + " "
	case m.c.Clusters.In(r.ID):
		sel = g.Clustered + " "
	}
	plain.WriteString(sel)
	styled.WriteString(st.Selected.Render(sel))
	rowStyle := st.Row
	switch r.Status {
	case contract.StatusCandidate:
		rowStyle = st.Candidate
	case contract.StatusSuperseded:
		rowStyle = st.Superseded
	}
	for _, c := range m.cols {
		var v string
		style := st.Row
		switch c.title {
		case "status":
			v = statusCell(g, r.Status)
			style = rowStyle
		case "kind":
			v = string(r.Kind)
			if c.width < 8 {
				v = common.ShortKind(r.Kind)
			}
			style = st.Kind
		case "namespace":
			v = r.Meta.Namespace.String()
			style = st.Dim
		case "text":
			v = common.OneLine(r.Text)
			style = rowStyle
			if r.Status == contract.StatusActive {
				style = st.Row
			}
		case "conf":
			if r.Confidence != nil {
				v = fmt.Sprintf("%.2f", float32(*r.Confidence))
			}
		case "updated":
			v = common.Ago(now, r.UpdatedAt)
			style = st.Dim
		case "created":
			v = common.Ago(now, r.CreatedAt)
			style = st.Dim
		case "observed":
			if r.Meta.ObservedAt != nil {
				v = common.Ago(now, *r.Meta.ObservedAt)
			}
			style = st.Dim
		}
		cell := common.Fit(v, c.width)
		if c.title == "conf" || c.title == "updated" || c.title == "created" || c.title == "observed" {
			cell = common.PadLeft(v, c.width)
		}
		plain.WriteString(cell + " ")
		styled.WriteString(style.Render(cell) + " ")
	}
	return components.Row{Plain: plain.String(), Styled: styled.String()}
}

// statusCell shows the status as a glyph and a word, so it never rests on colour.
func statusCell(g common.Glyphs, s contract.Status) string {
	switch s {
	case contract.StatusCandidate:
		return g.Candidate + " cand"
	case contract.StatusSuperseded:
		return g.Superseded + " sup"
	}
	return g.Active + " act"
}

func (m *Model) headerLine() string {
	st := &m.c.Styles
	var b strings.Builder
	b.WriteString("  ")
	for i, c := range m.cols {
		cell := common.Fit(c.title, c.width)
		if mark := m.sortMark(c.field); mark != "" {
			// The sort mark always shows: the title gives way to it.
			cell = common.Fit(common.Cut(c.title, max(0, c.width-common.Width(mark)-1))+" "+mark, c.width)
		}
		if i == m.col {
			b.WriteString(st.Cursor.Render(cell))
		} else {
			b.WriteString(st.Heading.Render(cell))
		}
		b.WriteByte(' ')
	}
	return common.Fit(b.String(), m.width-2)
}

// View draws the table, the editor or the reject confirmation.
func (m *Model) View() string {
	st := &m.c.Styles
	if m.editor != nil {
		return m.editor.view(m.width, m.height)
	}
	inner := m.width - 2
	lines := []string{m.headerLine()}
	if m.loaded && len(m.records) == 0 {
		lines = append(lines, st.Dim.Render(common.Fit("  no records match", inner)))
	}
	lines = append(lines, m.list.Lines(st, true, inner)...)
	if m.confirming != nil {
		q := fmt.Sprintf("Reject %s? y rejects (forgets the candidate); any other key cancels.",
			common.Plural(len(m.confirming.ids), "candidate", "candidates"))
		if m.confirming.title != "" {
			q = fmt.Sprintf("Reject candidate %q? y rejects; any other key cancels.", common.Cut(m.confirming.title, 40))
		}
		for len(lines) < m.height-3 {
			lines = append(lines, common.Fit("", inner))
		}
		lines = append(lines[:m.height-3], st.Warning.Render(common.Fit(q, inner)))
	}
	title := "Browse"
	if m.loaded {
		title = fmt.Sprintf("Browse  %s loaded of %s matching", common.Thousands(len(m.records)), common.Thousands(m.total))
		if len(m.selected) > 0 {
			title += fmt.Sprintf("  %d selected", len(m.selected))
		}
		if m.clustered > 0 {
			title += fmt.Sprintf("  %s %s in clusters", st.Glyphs.Clustered, common.Thousands(m.clustered))
		}
		if m.newAbove > 0 {
			up := "▲"
			if m.c.Plain {
				up = "^"
			}
			title += fmt.Sprintf("  %s %d new", up, m.newAbove)
			if keys := m.c.Keys.Top.Keys(); len(keys) > 0 {
				title += " (" + common.KeyLabel(keys[:1]) + ")"
			}
		}
		if d := describeFilters(m.status, m.kinds, m.filters); d != "" {
			title += "  [" + d + "]"
		}
	}
	return components.Box(st, title, lines, m.width, m.height, true)
}

// Capturing is true while the filter editor is open.
func (m *Model) Capturing() bool { return m.editor != nil || m.confirming != nil }

// Busy names what the view waits for.
func (m *Model) Busy() string {
	switch {
	case m.reviewing:
		return "reviewing"
	case m.loading:
		return "loading"
	}
	return ""
}

// ShortHelp lists the browse keys.
func (m *Model) ShortHelp() []key.Binding {
	k := &m.c.Keys
	if m.editor != nil {
		b := func(keys, help string) key.Binding {
			return key.NewBinding(key.WithKeys(keys), key.WithHelp(keys, help))
		}
		return []key.Binding{b("↑/↓", "field"), b("space", "toggle"), b("tab", "operator"), b("enter", "apply"), b("esc", "cancel")}
	}
	out := []key.Binding{k.Open, k.Sort, k.AddSort, k.FilterEditor}
	if !m.c.ReadOnly {
		out = append(out, k.Approve, k.Reject, k.Select, k.Forget)
	}
	return append(out, k.Refresh, k.Help, k.Quit)
}
