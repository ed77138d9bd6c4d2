// Package fetch is the search view: a query line, the fetch modes the engine
// declares (and only those), debounced generation-tagged requests whose stale
// answers are dropped, highlighted snippets, and the drill-down scope as a chip.
package fetch

import (
	"fmt"
	"strings"
	"time"
	"unicode"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"mnemo/contract"
	"mnemo/ui/common"
	"mnemo/ui/components"
)

const (
	// Debounce is how long typing must pause before a query is sent.
	Debounce   = 150 * time.Millisecond
	pageSize   = 25
	loadMargin = 5
)

// Model is the fetch view.
type Model struct {
	c      *common.Common
	width  int
	height int

	input   components.Input
	editing bool
	mode    int
	// unscoped is set when the user cleared the scope chip.
	unscoped bool

	hits    []contract.Hit
	cont    *string
	query   string
	gen     int
	loading bool
	list    components.List
	// stale says the store changed in a way not known record by record, so
	// the query runs again when the view is shown.
	stale bool
}

// New returns the fetch view with the query line focused.
func New(c *common.Common) *Model {
	return &Model{c: c, input: components.NewInput(c, "query: "), editing: true}
}

type debounceMsg struct{ gen int }

// ResultMsg is a fetch answer; Gen tells which request it answers.
type ResultMsg struct {
	Gen    int
	Query  string
	Page   contract.FetchPage
	Append bool
	Err    error
}

// Init does nothing: fetch waits for a query.
func (m *Model) Init() tea.Cmd { return nil }

// Activate runs the query again from the head when the store changed in a
// way not known record by record since its answer came.
func (m *Model) Activate() tea.Cmd {
	if !m.stale {
		return nil
	}
	m.stale = false
	if strings.TrimSpace(m.input.Value()) == "" || m.Mode() == "" {
		return nil
	}
	m.gen++
	return m.fetchCmd(m.gen, nil)
}

// Total is -1: the results are ranked, not counted.
func (m *Model) Total() int { return -1 }

// Gen is the generation of the newest request.
func (m *Model) Gen() int { return m.gen }

// Hits are the results shown.
func (m *Model) Hits() []contract.Hit { return m.hits }

// Modes are the fetch modes offered: exactly the engine's declared ones.
func (m *Model) Modes() []contract.FetchMode { return m.c.Descriptor.FetchModes }

// Mode is the selected mode.
func (m *Model) Mode() contract.FetchMode {
	modes := m.Modes()
	if len(modes) == 0 {
		return ""
	}
	return modes[m.mode%len(modes)]
}

func (m *Model) filter() contract.MetaFilter {
	if m.unscoped {
		return m.c.Scope.Base.Clone()
	}
	return m.c.Filter()
}

// changed starts a new generation and waits for typing to pause.
func (m *Model) changed() tea.Cmd {
	m.gen++
	gen := m.gen
	if strings.TrimSpace(m.input.Value()) == "" {
		m.hits, m.cont, m.query, m.loading = nil, nil, "", false
		m.rebuild()
		return nil
	}
	return m.c.Tick(Debounce, func(time.Time) tea.Msg { return debounceMsg{gen: gen} })
}

func (m *Model) fetchCmd(gen int, cursor *string) tea.Cmd {
	engine, ctx := m.c.Engine, m.c.Context()
	q := m.input.Value()
	req := contract.FetchRequest{Query: q, Mode: m.Mode(), Filter: m.filter(), Limit: pageSize, Cursor: cursor}
	appendPage := cursor != nil
	m.loading = true
	return func() tea.Msg {
		page, err := engine.Fetch(ctx, req)
		return ResultMsg{Gen: gen, Query: q, Page: page, Append: appendPage, Err: err}
	}
}

// Update handles typing, debouncing and answers.
func (m *Model) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case debounceMsg:
		if msg.gen != m.gen || m.Mode() == "" {
			return nil
		}
		return m.fetchCmd(msg.gen, nil)
	case ResultMsg:
		if msg.Gen != m.gen {
			return nil // a stale answer to an older query
		}
		m.loading = false
		if msg.Err != nil {
			return common.Fail("fetch", msg.Err)
		}
		m.query = msg.Query
		if msg.Append {
			m.hits = append(m.hits, msg.Page.Hits...)
		} else {
			m.hits = msg.Page.Hits
			m.list.Top()
		}
		m.cont = msg.Page.NextCursor
		m.rebuild()
	case common.DataChangedMsg:
		// results are the answer to a query: a change known record by
		// record drops what went and leaves the rest (r asks again)
		if msg.Gone == nil && msg.Removed == nil {
			m.stale = true
			return nil
		}
		// drop the forgotten hits where they stand, keeping the cursor
		kept := m.hits[:0]
		for _, h := range m.hits {
			if !msg.Goes(h.ID) {
				kept = append(kept, h)
			}
		}
		if len(kept) != len(m.hits) {
			clear(m.hits[len(kept):])
			m.hits = kept
			m.rebuild()
		}
	case tea.KeyPressMsg:
		return m.key(msg)
	}
	return nil
}

func (m *Model) key(msg tea.KeyPressMsg) tea.Cmd {
	k := &m.c.Keys
	if key.Matches(msg, k.CycleMode) {
		if n := len(m.Modes()); n > 0 {
			m.mode = (m.mode + 1) % n
			return m.changed()
		}
		return nil
	}
	if m.editing {
		switch msg.String() {
		case "esc", "down", "enter":
			m.editing = false
			return nil
		case "backspace":
			if m.input.Value() == "" && !m.unscoped && !m.c.Scope.IsRoot() {
				m.unscoped = true
				return nil
			}
		}
		if m.input.Update(msg) {
			return m.changed()
		}
		return nil
	}
	if key.Matches(msg, k.Filter) || (key.Matches(msg, k.Up) && m.list.Cursor == 0) {
		m.editing = true
		return nil
	}
	if key.Matches(msg, k.Back) {
		// esc left the query line; a second esc must not trap the user back in
		// it (the view keys work from here; `/` or ↑ at the top re-enter it)
		return nil
	}
	if m.list.MoveByKey(k, msg) {
		if !m.loading && m.cont != nil && m.list.NearEnd(loadMargin) {
			return m.fetchCmd(m.gen, m.cont)
		}
		return nil
	}
	if len(m.hits) == 0 {
		return nil
	}
	h := m.hits[m.list.Cursor]
	switch {
	case key.Matches(msg, k.Open):
		return func() tea.Msg { return common.OpenRecordMsg{ID: h.ID} }
	}
	cmd, _ := common.RecordKey(m.c, msg, h.ID, h.Text)
	return cmd
}

// SetSize lays the view out.
func (m *Model) SetSize(width, height int) {
	m.width, m.height = width, height
	m.list.SetHeight(max(1, height-6))
	m.rebuild()
}

// rebuild renders the result rows on data change: rank, score, kind, the
// snippet with the query terms highlighted, and the namespace.
func (m *Model) rebuild() {
	st := &m.c.Styles
	inner := m.width - 2
	terms := queryTerms(m.query)
	nsW := 20
	snipW := max(10, inner-3-1-6-1-5-1-nsW-1)
	rows := make([]components.Row, len(m.hits))
	for i, h := range m.hits {
		left := fmt.Sprintf("%3d %6.3f %-5s ", i+1, float32(h.Score), common.ShortKind(h.Kind))
		snip := common.Fit(snippet(h.Text, terms, snipW), snipW)
		ns := " " + common.Fit(h.Meta.Namespace.String(), nsW)
		plain := common.Fit(left+snip+ns, inner)
		styled := st.Number.Render(fmt.Sprintf("%3d %6.3f ", i+1, float32(h.Score))) +
			st.Kind.Render(fmt.Sprintf("%-5s ", common.ShortKind(h.Kind))) + highlight(st, snip, terms) + st.Dim.Render(ns)
		rows[i] = components.Row{Plain: plain, Styled: styled}
	}
	m.list.SetRows(rows)
}

func queryTerms(q string) []string {
	var out []string
	for _, f := range strings.FieldsFunc(strings.ToLower(q), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		if len(f) > 1 {
			out = append(out, f)
		}
	}
	return out
}

// snippet is the part of text around the first query term, on one line.
func snippet(text string, terms []string, width int) string {
	flat := strings.Join(strings.Fields(text), " ")
	lower := strings.ToLower(flat)
	start := 0
	for _, t := range terms {
		if i := strings.Index(lower, t); i >= 0 {
			start = max(0, i-width/3)
			break
		}
	}
	for start > 0 && start < len(flat) && !isBoundary(flat[start]) {
		start--
	}
	out := flat[start:]
	if start > 0 {
		out = "…" + out
	}
	return out
}

func isBoundary(b byte) bool { return b == ' ' || b < 0x80 && !unicode.IsLetter(rune(b)) }

// highlight marks the query terms in a plain line.
func highlight(st *common.Styles, line string, terms []string) string {
	if len(terms) == 0 {
		return line
	}
	lower := strings.ToLower(line)
	if len(lower) != len(line) {
		return line
	}
	marked := make([]bool, len(line))
	for _, t := range terms {
		for i := 0; ; {
			j := strings.Index(lower[i:], t)
			if j < 0 {
				break
			}
			for x := i + j; x < i+j+len(t); x++ {
				marked[x] = true
			}
			i += j + len(t)
		}
	}
	var b strings.Builder
	for i := 0; i < len(line); {
		j := i
		for j < len(line) && marked[j] == marked[i] {
			j++
		}
		if marked[i] {
			b.WriteString(st.Match.Render(line[i:j]))
		} else {
			b.WriteString(line[i:j])
		}
		i = j
	}
	return b.String()
}

// View draws the query line, modes, scope chip and results.
func (m *Model) View() string {
	st := &m.c.Styles
	inner := m.width - 2
	var modes strings.Builder
	for i, md := range m.Modes() {
		if i == m.mode%max(1, len(m.Modes())) {
			modes.WriteString(st.TabActive.Render("[" + string(md) + "]"))
		} else {
			modes.WriteString(st.Tab.Render(" " + string(md) + " "))
		}
	}
	if len(m.Modes()) == 0 {
		modes.WriteString(st.Error.Render("this engine declares no fetch modes"))
	}
	chip := ""
	if !m.unscoped && !m.c.Scope.IsRoot() {
		chip = st.Chip.Render("in: "+m.c.Scope.Words(st.Glyphs.Crumb)) + st.Dim.Render("  (backspace on an empty query clears)")
	}
	modeLine := common.Fit(" mode "+modes.String()+"  "+common.KeyLabel(m.c.Keys.CycleMode.Keys())+" cycles   "+chip, inner)
	lines := []string{m.input.View(inner, m.editing), modeLine, common.Fit("", inner)}
	switch {
	case strings.TrimSpace(m.input.Value()) == "":
		lines = append(lines, st.Dim.Render(common.Fit(" type to search; results follow as you type", inner)))
	case len(m.hits) == 0 && !m.loading && m.query != "":
		lines = append(lines, st.Dim.Render(common.Fit(" no results", inner)))
	}
	lines = append(lines, m.list.Lines(st, !m.editing, inner)...)
	title := "Fetch"
	if m.query != "" {
		more := ""
		if m.cont != nil {
			more = "+"
		}
		title = fmt.Sprintf("Fetch  %d%s results for %q", len(m.hits), more, common.Cut(m.query, 30))
	}
	return components.Box(st, title, lines, m.width, m.height, true)
}

// Capturing is true while the query line has focus.
func (m *Model) Capturing() bool { return m.editing }

// Busy names what the view waits for.
func (m *Model) Busy() string {
	if m.loading {
		return "searching"
	}
	return ""
}

// ShortHelp lists the fetch keys.
func (m *Model) ShortHelp() []key.Binding {
	k := &m.c.Keys
	if m.editing {
		return []key.Binding{
			key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter/↓", "results")),
			k.CycleMode,
			key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "leave query")),
		}
	}
	out := []key.Binding{k.Open, k.Filter, k.CycleMode, k.CopyID}
	if !m.c.ReadOnly {
		out = append(out, k.Forget)
	}
	return append(out, k.Help, k.Quit)
}
