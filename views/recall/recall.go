// Package recall is the question-answering view: a question line, an optional
// instructions line, and the answer with its numbered citations (enter opens
// one), the model that answered, a spinner with the elapsed time while waiting,
// and esc to cancel the request through its context.
package recall

import (
	"context"
	"fmt"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"mnemo/contract"
	"mnemo/ui/common"
	"mnemo/ui/components"
)

const citationLimit = 8

type focus int

const (
	focusQuestion focus = iota
	focusInstructions
	focusAnswer
)

// Model is the recall view.
type Model struct {
	c      *common.Common
	width  int
	height int

	question     components.Input
	instructions components.Input
	focus        focus

	gen     int
	waiting bool
	started time.Time
	elapsed time.Duration
	cancel  context.CancelFunc

	answer   *contract.RecallAnswer
	answered time.Duration
	// gone are the cited records the store no longer holds; stale says the
	// store changed in a way not known record by record, so Activate checks.
	gone  map[string]bool
	stale bool
	body  []string
	// bodyTop is the first answer line shown: a long answer scrolls
	// (pgdn/pgup, ctrl+d/ctrl+u, the mouse wheel).
	bodyTop  int
	bodyRoom int
	list     components.List
}

// New returns the recall view with the question focused.
func New(c *common.Common) *Model {
	return &Model{c: c, question: components.NewInput(c, "question: "),
		instructions: components.NewInput(c, "instructions: ")}
}

// AnswerMsg is a recall answer; Gen tells which question it answers.
type AnswerMsg struct {
	Gen    int
	Answer contract.RecallAnswer
	Err    error
}

type tickMsg struct{ gen int }

// presentMsg answers which cited records are still in the store.
type presentMsg struct {
	gen     int
	present map[string]bool
	err     error
}

// Init does nothing: recall waits for a question.
func (m *Model) Init() tea.Cmd { return nil }

// Activate checks, after a data change not known record by record, which
// cited records are still there.
func (m *Model) Activate() tea.Cmd {
	if !m.stale || m.answer == nil || len(m.answer.Citations) == 0 {
		m.stale = false
		return nil
	}
	m.stale = false
	ids := make([]string, len(m.answer.Citations))
	for i, c := range m.answer.Citations {
		ids[i] = c.ID
	}
	engine, ctx, gen := m.c.Engine, m.c.Context(), m.gen
	return func() tea.Msg {
		recs, err := engine.GetRecords(ctx, contract.GetRequest{IDs: ids})
		present := make(map[string]bool, len(recs))
		for _, r := range recs {
			present[r.ID] = true
		}
		return presentMsg{gen: gen, present: present, err: err}
	}
}

// Total is -1: recall counts no records.
func (m *Model) Total() int { return -1 }

// Gone tells whether a cited record was forgotten since the answer came.
func (m *Model) Gone(id string) bool { return m.gone[id] }

// Answer is the last answer (nil before one arrives).
func (m *Model) Answer() *contract.RecallAnswer { return m.answer }

// Waiting tells whether a question is in flight.
func (m *Model) Waiting() bool { return m.waiting }

func (m *Model) ask() tea.Cmd {
	q := strings.TrimSpace(m.question.Value())
	if q == "" {
		return nil
	}
	if m.cancel != nil {
		m.cancel()
	}
	m.gen++
	gen := m.gen
	ctx, cancel := context.WithCancel(m.c.Context())
	m.cancel = cancel
	m.waiting, m.started, m.elapsed = true, time.Now(), 0
	req := contract.RecallRequest{Question: q, Filter: m.c.Filter(), Limit: citationLimit}
	if in := strings.TrimSpace(m.instructions.Value()); in != "" {
		req.Instructions = &in
	}
	engine := m.c.Engine
	return tea.Batch(func() tea.Msg {
		ans, err := engine.Recall(ctx, req)
		return AnswerMsg{Gen: gen, Answer: ans, Err: err}
	}, m.tick(gen))
}

func (m *Model) tick(gen int) tea.Cmd {
	return m.c.Tick(100*time.Millisecond, func(time.Time) tea.Msg { return tickMsg{gen: gen} })
}

// Cancel stops the question in flight.
func (m *Model) Cancel() {
	if m.cancel != nil {
		m.cancel()
		m.cancel = nil
	}
	if m.waiting {
		m.waiting = false
		m.gen++
	}
}

// Update handles typing, the clock and answers.
func (m *Model) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case tickMsg:
		if msg.gen != m.gen || !m.waiting {
			return nil
		}
		m.elapsed = time.Since(m.started)
		return m.tick(msg.gen)
	case AnswerMsg:
		if msg.Gen != m.gen {
			return nil
		}
		m.waiting = false
		if m.cancel != nil {
			m.cancel()
			m.cancel = nil
		}
		if msg.Err != nil {
			return common.Fail("recall", msg.Err)
		}
		a := msg.Answer
		m.answer = &a
		m.gone, m.stale = nil, false
		m.answered = time.Since(m.started)
		m.focus = focusAnswer
		m.bodyTop = 0
		m.rebuild()
	case common.DataChangedMsg:
		if m.answer == nil {
			return nil
		}
		if msg.Gone == nil && msg.Removed == nil {
			m.stale = true
			return nil
		}
		// a change known record by record marks the citations that went
		for _, c := range m.answer.Citations {
			if msg.Goes(c.ID) {
				m.markGone(c.ID)
			}
		}
		m.rebuild()
	case presentMsg:
		if msg.gen != m.gen || m.answer == nil {
			return nil
		}
		if msg.err != nil {
			return common.Fail("recall", msg.err)
		}
		m.gone = nil // an undo brings records back
		for _, c := range m.answer.Citations {
			if !msg.present[c.ID] {
				m.markGone(c.ID)
			}
		}
		m.rebuild()
	case tea.MouseWheelMsg:
		if m.answer != nil {
			switch msg.Button {
			case tea.MouseWheelDown:
				m.scrollBody(3)
			case tea.MouseWheelUp:
				m.scrollBody(-3)
			}
		}
		return nil
	case tea.KeyPressMsg:
		return m.key(msg)
	}
	return nil
}

func (m *Model) markGone(id string) {
	if m.gone == nil {
		m.gone = map[string]bool{}
	}
	m.gone[id] = true
}

func (m *Model) key(msg tea.KeyPressMsg) tea.Cmd {
	k := &m.c.Keys
	if m.waiting && key.Matches(msg, k.Back) {
		m.Cancel()
		return common.Toast("recall cancelled")
	}
	if key.Matches(msg, k.NextPane) || key.Matches(msg, k.PrevPane) {
		step := 1
		if key.Matches(msg, k.PrevPane) {
			step = 2
		}
		m.focus = (m.focus + focus(step)) % 3
		return nil
	}
	switch m.focus {
	case focusQuestion, focusInstructions:
		in := &m.question
		if m.focus == focusInstructions {
			in = &m.instructions
		}
		switch msg.String() {
		case "enter":
			return m.ask()
		case "esc":
			m.focus = focusAnswer
			return nil
		}
		in.Update(msg)
		return nil
	}
	switch {
	case key.Matches(msg, k.Search):
		// one key back to the question, whatever has focus
		m.focus = focusQuestion
	case key.Matches(msg, k.PageDown), key.Matches(msg, k.HalfPageDown):
		m.scrollBody(max(1, m.bodyRoom/2))
	case key.Matches(msg, k.PageUp), key.Matches(msg, k.HalfPageUp):
		m.scrollBody(-max(1, m.bodyRoom/2))
	case key.Matches(msg, k.Up):
		m.list.Move(-1)
	case key.Matches(msg, k.Down):
		m.list.Move(1)
	case key.Matches(msg, k.Top):
		m.list.Top()
	case key.Matches(msg, k.End):
		m.list.Bottom()
	case key.Matches(msg, k.Open):
		if m.answer != nil && len(m.answer.Citations) > 0 {
			id := m.answer.Citations[m.list.Cursor].ID
			if m.gone[id] {
				return common.Toast("that record was forgotten")
			}
			return func() tea.Msg { return common.OpenRecordMsg{ID: id} }
		}
	case key.Matches(msg, k.Back):
		// esc already left the question line; staying here keeps the view
		// keys working instead of trapping the user back in the input
	}
	return nil
}

// scrollBody moves the answer's window by delta lines.
func (m *Model) scrollBody(delta int) {
	m.bodyTop = max(0, min(m.bodyTop+delta, len(m.body)-max(1, m.bodyRoom)))
}

// SetSize lays the view out.
func (m *Model) SetSize(width, height int) {
	m.width, m.height = width, height
	m.rebuild()
}

// rebuild renders the answer and citation rows on data or size change.
func (m *Model) rebuild() {
	inner := m.width - 2
	m.body = nil
	if m.answer == nil {
		return
	}
	st := &m.c.Styles
	for _, l := range strings.Split(common.Wrap(m.answer.Answer, inner-2), "\n") {
		m.body = append(m.body, " "+common.Fit(l, inner-1))
	}
	rows := make([]components.Row, len(m.answer.Citations))
	for i, c := range m.answer.Citations {
		n := fmt.Sprintf(" [%d] ", i+1)
		text := common.Fit(common.OneLine(c.Snippet), inner-len(n)-22)
		ns := " " + common.Fit(c.Meta.Namespace.String(), 21)
		if m.gone[c.ID] {
			// the answer's [n] still points here, so the row stays, saying the record went
			text = common.Fit("(forgotten) "+common.ShortID(c.ID), inner-len(n)-22)
			rows[i] = components.Row{Plain: common.Fit(n+text+ns, inner),
				Styled: st.Dim.Render(n + text + ns)}
			continue
		}
		rows[i] = components.Row{Plain: common.Fit(n+text+ns, inner),
			Styled: st.FooterKey.Render(n) + text + st.Dim.Render(ns)}
	}
	citeRoom := min(len(rows), max(3, (m.height-6)/2))
	m.list.SetHeight(citeRoom)
	// View's lines above the answer (two inputs, the status, a blank), the
	// box's borders, and below it a blank, the citations' heading and rows.
	m.bodyRoom = m.height - 2 - 4 - citeRoom - 2
	m.scrollBody(0)
	m.list.SetRows(rows)
}

// View draws the two input lines, the status line, the answer and the citations.
func (m *Model) View() string {
	st := &m.c.Styles
	inner := m.width - 2
	lines := []string{
		m.question.View(inner, m.focus == focusQuestion),
		m.instructions.View(inner, m.focus == focusInstructions),
	}
	status := ""
	switch {
	case m.waiting:
		g := st.Glyphs.Spinner
		frame := g[int(m.elapsed/(100*time.Millisecond))%len(g)]
		status = st.Spinner.Render(frame) + fmt.Sprintf(" thinking… %.1fs   esc cancels", m.elapsed.Seconds())
	case m.answer != nil:
		model := "unknown model"
		if m.answer.Model != nil {
			model = *m.answer.Model
		}
		status = st.Dim.Render(fmt.Sprintf("answered by %s, %s", model, common.Plural(len(m.answer.Citations), "citation", "citations")))
	default:
		status = st.Dim.Render("ask a question about what is remembered in this scope; enter asks")
	}
	lines = append(lines, common.Fit(" "+status, inner), common.Fit("", inner))
	if m.answer != nil {
		room := m.bodyRoom
		body := m.body
		if len(body) > room {
			// a window of the answer, with where it is and how to scroll
			top := max(0, min(m.bodyTop, len(body)-(room-1)))
			end := min(len(body), top+max(0, room-1))
			more := fmt.Sprintf(" lines %d–%d of %d   pgdn/pgup scroll", top+1, end, len(body))
			body = append(append([]string(nil), body[top:end]...), st.Dim.Render(common.Fit(more, inner)))
		}
		lines = append(lines, body...)
		lines = append(lines, common.Fit("", inner), st.Heading.Render(common.Fit("Citations (enter opens)", inner)))
		lines = append(lines, m.list.Lines(st, m.focus == focusAnswer, inner)...)
	}
	return components.Box(st, "Recall", lines, m.width, m.height, true)
}

// Capturing is true while an input line has focus.
func (m *Model) Capturing() bool { return m.focus != focusAnswer }

// Busy names what the view waits for.
func (m *Model) Busy() string {
	if m.waiting {
		return "recalling"
	}
	return ""
}

// ShortHelp lists the recall keys.
func (m *Model) ShortHelp() []key.Binding {
	k := &m.c.Keys
	if m.focus != focusAnswer {
		return []key.Binding{
			key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "ask")),
			k.NextPane,
			key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "leave line")),
		}
	}
	ask := key.NewBinding(key.WithKeys(k.Search.Keys()...), key.WithHelp(k.Search.Help().Key, "new question"))
	out := []key.Binding{ask, k.Open}
	if len(m.body) > m.bodyRoom {
		out = append(out, key.NewBinding(key.WithKeys(k.PageDown.Keys()...), key.WithHelp(k.PageDown.Help().Key, "scroll answer")))
	}
	return append(out, k.NextPane, k.Help, k.Quit)
}
