// Package detail shows one whole record: every set field, times, and the body
// (markdown through mdterm, conversations as transcripts, learnings with their
// evidence), with `/` search, copying over OSC52 and JSON export.
package detail

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"mnemo/contract"
	"mnemo/ui/common"
	"mnemo/ui/components"
	"mnemo/views/mdterm"
)

// Model is the detail view of one record.
type Model struct {
	c      *common.Common
	width  int
	height int

	id     string
	rec    *contract.Record
	gen    int
	loaded bool

	// body is the rendered body for (id, bodyWidth); markdown arrives from a Cmd.
	body      []string
	bodyWidth int
	lines     []string
	offset    int

	searching bool
	search    components.Input
	query     string
	matches   []int
	match     int
	// around is the conversation around a turn of its own: the turns
	// before and after it in its thread (contextTurns each way), read once
	// the record is.
	around []aroundTurn
	// ExportDir is where `e` writes; the working directory when empty.
	ExportDir string
	// server, whose filesystem it must never touch.
	ExportToClipboard bool
}

// New returns an empty detail view.
func New(c *common.Common) *Model {
	return &Model{c: c, search: components.NewInput(c, "/")}
}

type recordMsg struct {
	gen int
	rec contract.Record
	err error
}

// contextTurns is how many turns before and after a turn the detail shows.
const contextTurns = 3

// aroundTurn is one turn of the conversation around the record shown.
type aroundTurn struct {
	turn uint32
	text string
	self bool
}

type aroundMsg struct {
	gen   int
	turns []aroundTurn
	err   error
}

type renderedMsg struct {
	id    string
	width int
	lines []string
}

// Open shows the record with id, starting from what the caller had, and loads it whole.
func (m *Model) Open(id string, known *contract.Record) tea.Cmd {
	m.gen++
	m.id, m.rec, m.loaded, m.around = id, known, false, nil
	m.offset, m.query, m.matches, m.searching = 0, "", nil, false
	m.search.SetValue("")
	m.body, m.bodyWidth = nil, 0
	m.relayout()
	engine, ctx, gen := m.c.Engine, m.c.Context(), m.gen
	return func() tea.Msg {
		recs, err := engine.GetRecords(ctx, contract.GetRequest{IDs: []string{id}})
		if err == nil && len(recs) == 0 {
			err = contract.NotFound("no record with id %s", id)
		}
		if err != nil {
			return recordMsg{gen: gen, err: err}
		}
		return recordMsg{gen: gen, rec: recs[0]}
	}
}

// Refresh reads the record shown again (it changed elsewhere), keeping
// the scroll position.
func (m *Model) Refresh() tea.Cmd {
	if m.id == "" {
		return nil
	}
	off := m.offset
	cmd := m.Open(m.id, m.rec)
	m.offset = off
	return cmd
}

// ID is the record shown.
func (m *Model) ID() string { return m.id }

// Record is the record shown (nil before it loads).
func (m *Model) Record() *contract.Record { return m.rec }

// Init does nothing: the detail loads on Open.
func (m *Model) Init() tea.Cmd { return nil }

// Update handles replies and keys.
func (m *Model) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case recordMsg:
		if msg.gen != m.gen {
			return nil
		}
		if msg.err != nil {
			return common.Fail("get "+common.ShortID(m.id), msg.err)
		}
		r := msg.rec
		m.rec, m.loaded = &r, true
		return tea.Batch(m.renderBody(), m.loadAround(r))
	case aroundMsg:
		if msg.gen != m.gen {
			return nil
		}
		if msg.err != nil {
			return common.Fail("the turns around "+common.ShortID(m.id), msg.err)
		}
		m.around = msg.turns
		m.relayout()
		return nil
	case renderedMsg:
		if msg.id != m.id || msg.width != m.bodyWidth {
			return nil
		}
		m.body = msg.lines
		m.relayout()
	case tea.KeyPressMsg:
		return m.key(msg)
	}
	return nil
}

func (m *Model) key(msg tea.KeyPressMsg) tea.Cmd {
	k := &m.c.Keys
	if m.searching {
		switch msg.String() {
		case "enter":
			m.searching = false
			return nil
		case "esc":
			m.searching = false
			m.search.SetValue("")
			m.setQuery("")
			return nil
		}
		if m.search.Update(msg) {
			m.setQuery(m.search.Value())
		}
		return nil
	}
	page := max(1, m.viewHeight())
	switch {
	case key.Matches(msg, k.Up):
		m.scroll(-1)
	case key.Matches(msg, k.Down):
		m.scroll(1)
	case key.Matches(msg, k.PageUp):
		m.scroll(-page)
	case key.Matches(msg, k.PageDown):
		m.scroll(page)
	case key.Matches(msg, k.HalfPageUp):
		m.scroll(-page / 2)
	case key.Matches(msg, k.HalfPageDown):
		m.scroll(page / 2)
	case key.Matches(msg, k.Top):
		m.offset = 0
	case key.Matches(msg, k.End):
		m.scroll(len(m.lines))
	case key.Matches(msg, k.Search):
		m.searching = true
	case key.Matches(msg, k.NextMatch):
		m.jump(1)
	case key.Matches(msg, k.PrevMatch):
		m.jump(-1)
	case key.Matches(msg, k.CopyID):
		id := m.id
		return func() tea.Msg { return common.CopyMsg{Text: id, What: "id " + common.ShortID(id)} }
	case key.Matches(msg, k.CopyText):
		if m.rec == nil {
			return nil
		}
		text := m.rec.Text
		return func() tea.Msg { return common.CopyMsg{Text: text, What: "text"} }
	case key.Matches(msg, k.Export):
		return m.export()
	case key.Matches(msg, k.Forget):
		if m.c.ReadOnly || m.rec == nil {
			return nil
		}
		t := common.ForgetTarget{IDs: []string{m.id}, Title: common.OneLine(m.rec.Text), Count: 1}
		return func() tea.Msg { return common.ForgetRequestMsg{Target: t} }
	}
	return nil
}

// export copies the record's JSON to the clipboard for a remote user (over
// SSH nothing is written on the server), and asks the shell to edit it in
// the user's editor otherwise (ui/edit.go).
func (m *Model) export() tea.Cmd {
	if m.rec == nil || !m.loaded {
		return nil
	}
	rec := *m.rec
	if !m.ExportToClipboard {
		if m.c.ReadOnly {
			return nil
		}
		return func() tea.Msg { return common.EditMsg{Record: rec} }
	}
	return func() tea.Msg {
		data, err := json.MarshalIndent(rec, "", "  ")
		if err != nil {
			return common.ErrorMsg{Op: "export", Err: err}
		}
		return common.CopyMsg{Text: string(data) + "\n", What: "record " + common.ShortID(rec.ID) + " as JSON"}
	}
}

func (m *Model) setQuery(q string) {
	m.query = q
	m.matches = nil
	m.match = 0
	if q != "" {
		lq := contract.FoldCase(q)
		for i, l := range m.lines {
			if strings.Contains(contract.FoldCase(stripANSI(l)), lq) {
				m.matches = append(m.matches, i)
			}
		}
	}
	if len(m.matches) > 0 {
		m.offset = m.matches[0]
		m.scroll(0)
	}
}

func (m *Model) jump(delta int) {
	if len(m.matches) == 0 {
		return
	}
	m.match = (m.match + delta + len(m.matches)) % len(m.matches)
	m.offset = m.matches[m.match]
	m.scroll(0)
}

func (m *Model) scroll(delta int) {
	m.offset += delta
	if maxOff := max(0, len(m.lines)-m.viewHeight()); m.offset > maxOff {
		m.offset = maxOff
	}
	if m.offset < 0 {
		m.offset = 0
	}
}

func (m *Model) viewHeight() int {
	h := m.height - 2
	if m.searching || m.query != "" {
		h--
	}
	return max(1, h)
}

// SetSize re-lays out the record; the body is re-rendered for a new width.
func (m *Model) SetSize(width, height int) {
	m.width, m.height = width, height
	m.relayout()
}

// ResizeCmd re-renders the body when the width changed.
func (m *Model) ResizeCmd() tea.Cmd {
	if m.rec == nil || m.bodyWidth == m.innerWidth() {
		return nil
	}
	return m.renderBody()
}

func (m *Model) innerWidth() int { return max(10, m.width-4) }

// renderBody renders a markdown body in a Cmd, never in View: a long
// document takes milliseconds to parse and lay out.
func (m *Model) renderBody() tea.Cmd {
	if m.rec == nil {
		return nil
	}
	width := m.innerWidth()
	m.bodyWidth = width
	rec := *m.rec
	th := mdterm.ThemeOf(&m.c.Styles)
	m.body = plainBody(&rec, width)
	m.relayout()
	if !isMarkdown(&rec) {
		return nil
	}
	return func() tea.Msg {
		return renderedMsg{id: rec.ID, width: width, lines: markdownBody(&rec, width, th)}
	}
}

func isMarkdown(r *contract.Record) bool {
	if r.Item == nil || r.Item.Type != contract.KindDocument || r.Item.Mime == nil {
		return false
	}
	mime := strings.ToLower(*r.Item.Mime)
	return strings.Contains(mime, "markdown") || strings.HasSuffix(mime, "/md")
}

func markdownBody(r *contract.Record, width int, th mdterm.Theme) []string {
	lines := mdterm.Render(r.Item.Body.String(), width, th)
	for i := range lines {
		lines[i] = common.Fit(lines[i], width)
	}
	return lines
}

func plainBody(r *contract.Record, width int) []string {
	var text string
	switch {
	case r.Item != nil && r.Item.Type == contract.KindConversation:
		var b strings.Builder
		for i, t := range r.Item.Turns {
			if i > 0 {
				b.WriteString("\n")
			}
			at := ""
			if t.At != nil {
				at = "  (" + contract.FormatTime(*t.At) + ")"
			}
			b.WriteString(strings.ToUpper(string(t.Role)) + at + "\n")
			b.WriteString(t.Text + "\n")
			for _, c := range t.ToolCalls {
				id := ""
				if c.ID != nil {
					id = " (" + *c.ID + ")"
				}
				b.WriteString("  -> tool call " + c.Name + id + "\n")
			}
		}
		text = b.String()
	case r.Item != nil && r.Item.Type == contract.KindDocument:
		text = r.Item.Body.String()
	default:
		text = r.Text
	}
	lines := strings.Split(strings.TrimRight(common.Wrap(text, width), "\n"), "\n")
	for i := range lines {
		lines[i] = common.Fit(lines[i], width)
	}
	return lines
}

// relayout rebuilds the field lines; it runs on data or size change, not per frame.
func (m *Model) relayout() {
	if m.rec == nil {
		m.lines = nil
		return
	}
	st := &m.c.Styles
	width := m.innerWidth()
	r := m.rec
	var lines []string
	field := func(label, value string) {
		if value == "" {
			return
		}
		first := true
		for _, l := range strings.Split(common.Wrap(value, width-14), "\n") {
			lab := ""
			if first {
				lab = label
			}
			first = false
			lines = append(lines, st.Label.Render(common.Fit(lab, 14))+st.Value.Render(common.Fit(l, width-14)))
		}
	}
	opt := func(p *string) string {
		if p == nil {
			return ""
		}
		return *p
	}
	now := m.c.Now()
	field("kind", string(r.Kind))
	field("id", r.ID)
	status := string(r.Status)
	if r.SupersededBy != nil {
		status += " by " + *r.SupersededBy
	}
	field("status", status)
	field("namespace", r.Meta.Namespace.String())
	if r.Item != nil && r.Item.Type == contract.KindDocument {
		field("title", opt(r.Item.Title))
		field("mime", opt(r.Item.Mime))
	}
	if r.Item != nil && r.Item.Type == contract.KindLearning {
		field("learning", string(r.Item.Kind))
		field("evidence", opt(r.Item.Evidence))
	}
	if r.Confidence != nil {
		field("confidence", fmt.Sprintf("%.2f", float32(*r.Confidence)))
	}
	mt := &r.Meta
	src := string(mt.SourceKindOf())
	if mt.Source.ID != nil {
		src += " " + *mt.Source.ID
	}
	field("source", src)
	field("workspace", opt(mt.Workspace))
	field("folder", opt(mt.Folder))
	field("file path", opt(mt.FilePath))
	field("language", opt(mt.Language))
	field("repo", opt(mt.Repo))
	field("commit", opt(mt.Commit))
	field("url", opt(mt.URL))
	field("thread", opt(mt.ThreadID))
	if mt.Turns != nil {
		field("turns", fmt.Sprintf("%d..%d", mt.Turns.First, mt.Turns.Last))
	}
	field("agent", opt(mt.AgentID))
	if mt.ToolCall != nil {
		field("tool call", mt.ToolCall.Name+" "+opt(mt.ToolCall.ID))
	}
	field("tags", strings.Join(mt.Tags, ", "))
	if mt.ObservedAt != nil {
		field("observed", contract.FormatTime(*mt.ObservedAt)+"  ("+common.Ago(now, *mt.ObservedAt)+")")
	}
	if mt.ObservedActor != nil {
		field("observed by", mt.ObservedActor.ID+" "+opt(mt.ObservedActor.Name))
	}
	field("created", contract.FormatMillis(r.CreatedAt)+"  ("+common.Ago(now, r.CreatedAt)+")")
	field("updated", contract.FormatMillis(r.UpdatedAt)+"  ("+common.Ago(now, r.UpdatedAt)+")")
	if r.ExpiresAt != nil {
		field("expires", contract.FormatMillis(*r.ExpiresAt))
	}
	lines = append(lines, common.Fit("", width), st.Heading.Render(common.Fit(bodyHeading(r), width)))
	body := m.body
	if body == nil {
		body = plainBody(r, width)
	}
	lines = append(lines, body...)
	if len(m.around) > 0 {
		lines = append(lines, common.Fit("", width), st.Heading.Render(common.Fit("Around it in the thread (turn, text)", width)))
		lines = append(lines, m.aroundLines(width)...)
	}
	m.lines = lines
	if m.query != "" {
		m.setQuery(m.query)
	}
	m.scroll(0)
}

// loadAround reads the turns around a conversation record that is one turn
// of its thread (as imports store transcripts): the records of the same
// thread and namespace at the contextTurns turns before and after it. Nil for
// any other record.
func (m *Model) loadAround(r contract.Record) tea.Cmd {
	mt := r.Meta
	if r.Kind != contract.KindConversation || mt.ThreadID == nil || mt.Turns == nil {
		return nil
	}
	engine, ctx, gen := m.c.Engine, m.c.Context(), m.gen
	thread, first, last := *mt.ThreadID, mt.Turns.First, mt.Turns.Last
	reach := contract.Reach{At: mt.Namespace, Inherit: false}
	self := r.Text
	return func() tea.Msg {
		var turns []aroundTurn
		// In int64: a turn number near the top of uint32 must not wrap.
		lo, hi := max(0, int64(first)-contextTurns), min(int64(last)+contextTurns, math.MaxUint32)
		for i := lo; i <= hi; i++ {
			k := uint32(i)
			if k >= first && k <= last {
				turns = append(turns, aroundTurn{turn: k, text: self, self: true})
				i = int64(last)
				continue
			}
			// Browse, which the table answers: List reads records in
			// order until enough pass the filter.
			page, err := engine.Browse(ctx, contract.BrowseQuery{Limit: 1, Filter: contract.MetaFilter{
				Reach: &reach, ThreadID: &thread, Turns: &contract.TurnRange{First: k, Last: k}}})
			if err != nil {
				return aroundMsg{gen: gen, err: err}
			}
			if len(page.Records) > 0 {
				turns = append(turns, aroundTurn{turn: k, text: page.Records[0].Text})
			}
		}
		if len(turns) < 2 {
			turns = nil // the thread holds this turn alone
		}
		return aroundMsg{gen: gen, turns: turns}
	}
}

// aroundLines draws the conversation around the record: each turn's number
// and its first lines, the record's own turn marked.
func (m *Model) aroundLines(width int) []string {
	st := &m.c.Styles
	var lines []string
	for _, t := range m.around {
		mark, style := "  ", st.Dim
		if t.self {
			mark, style = "▸ ", st.Value
		}
		var wrapped []string
		for _, l := range strings.Split(common.Wrap(strings.TrimSpace(t.text), width-8), "\n") {
			if strings.TrimSpace(l) != "" {
				wrapped = append(wrapped, l)
			}
		}
		if len(wrapped) > 3 {
			wrapped = append(wrapped[:3], "…")
		}
		for i, l := range wrapped {
			head := "      "
			if i == 0 {
				head = fmt.Sprintf("%s%-4d", mark, t.turn)
			}
			lines = append(lines, style.Render(common.Fit(head+l, width)))
		}
	}
	return lines
}

func bodyHeading(r *contract.Record) string {
	switch r.Kind {
	case contract.KindConversation:
		return "Transcript"
	case contract.KindLearning:
		return "Learning"
	}
	return "Body"
}

func stripANSI(s string) string { return common.Strip(s) }

// View draws the record with the search line and the match highlights.
func (m *Model) View() string {
	st := &m.c.Styles
	width := m.innerWidth()
	h := m.viewHeight()
	end := min(len(m.lines), m.offset+h)
	out := make([]string, 0, h+1)
	for i := m.offset; i < end; i++ {
		l := m.lines[i]
		if m.query != "" {
			l = highlight(st, l, m.query, width)
		}
		out = append(out, " "+l+" ")
	}
	if m.searching || m.query != "" {
		for len(out) < h {
			out = append(out, strings.Repeat(" ", width+2))
		}
		info := ""
		if m.query != "" {
			info = fmt.Sprintf("  %d matches", len(m.matches))
			if len(m.matches) > 0 {
				info = fmt.Sprintf("  match %d of %d (n/N)", m.match+1, len(m.matches))
			}
		}
		out = append(out, " "+common.Fit(m.search.View(width-common.Width(info), m.searching)+info, width)+" ")
	}
	title := "Record"
	if m.rec != nil {
		title = string(m.rec.Kind) + " " + common.ShortID(m.rec.ID)
	}
	if !m.loaded && m.rec == nil {
		out = []string{common.Fit(" loading"+st.Glyphs.Ellipsis, width+2)}
	}
	return components.Box(st, title, out, m.width, m.height, true)
}

// highlight marks every case-insensitive occurrence of q in a line (on its plain text).
func highlight(st *common.Styles, line, q string, width int) string {
	plain := common.Strip(line)
	lp, lq := strings.ToLower(plain), strings.ToLower(q)
	if !strings.Contains(lp, lq) || len(lp) != len(plain) {
		return line
	}
	var b strings.Builder
	i := 0
	for {
		j := strings.Index(lp[i:], lq)
		if j < 0 {
			break
		}
		b.WriteString(plain[i : i+j])
		b.WriteString(st.Match.Render(plain[i+j : i+j+len(q)]))
		i += j + len(q)
	}
	b.WriteString(plain[i:])
	return common.Fit(b.String(), width)
}

// Capturing is true while the search line has focus.
func (m *Model) Capturing() bool { return m.searching }

// Busy names what the view waits for.
func (m *Model) Busy() string {
	if m.rec != nil && !m.loaded {
		return "loading record"
	}
	return ""
}

// ShortHelp lists the detail keys.
func (m *Model) ShortHelp() []key.Binding {
	k := &m.c.Keys
	export := k.Export
	out := []key.Binding{k.Back, k.Search, k.NextMatch, k.CopyID, k.CopyText}
	if m.ExportToClipboard {
		export.SetHelp(export.Help().Key, "copy JSON")
		out = append(out, export)
	}
	if !m.c.ReadOnly {
		if !m.ExportToClipboard {
			out = append(out, export)
		}
		out = append(out, k.Forget)
	}
	return append(out, k.Help, k.Quit)
}
