// Package help draws the key help (every binding grouped by view, generated from
// the key map so rebinds show, filterable by typing) and the command palette
// (fuzzy matching over every action with its key).
package help

import (
	"sort"
	"strings"
	"unicode"

	tea "charm.land/bubbletea/v2"

	"mnemo/ui/common"
	"mnemo/ui/components"
)

// CloseMsg asks the shell to close the help or the palette.
type CloseMsg struct{}

// RunMsg asks the shell to run an action by pressing its first key.
type RunMsg struct {
	Action string
	Key    string
}

type entry struct {
	action common.Action
	keys   string
	group  string
}

func entries(c *common.Common) []entry {
	var out []entry
	for _, a := range c.Keys.Actions() {
		b := a.Binding(&c.Keys)
		group := "global"
		if !a.Global() {
			group = strings.Join(a.Views, ", ")
		}
		out = append(out, entry{action: a, keys: common.KeyLabel(b.Keys()), group: group})
	}
	return out
}

// Help is the `?` screen.
type Help struct {
	c      *common.Common
	filter components.Input
	offset int
}

// NewHelp opens the help screen.
func NewHelp(c *common.Common) *Help {
	return &Help{c: c, filter: components.NewInput(c, "filter: ")}
}

// Update: typing filters, arrows scroll, esc closes.
func (h *Help) Update(msg tea.Msg) tea.Cmd {
	kp, ok := msg.(tea.KeyPressMsg)
	if !ok {
		return nil
	}
	switch kp.String() {
	case "esc", "?":
		if kp.String() == "?" && h.filter.Value() != "" {
			break
		}
		return func() tea.Msg { return CloseMsg{} }
	case "up":
		h.offset = max(0, h.offset-1)
		return nil
	case "down":
		h.offset++
		return nil
	case "pgup":
		h.offset = max(0, h.offset-10)
		return nil
	case "pgdown":
		h.offset += 10
		return nil
	case "/":
		// `/` starts filtering; the filter line is always live, so it only clears it
		h.filter.SetValue("")
		return nil
	}
	if h.filter.Update(kp) {
		h.offset = 0
	}
	return nil
}

// Lines lists the visible help rows for the current filter.
func (h *Help) Lines(width int) []string {
	st := &h.c.Styles
	q := strings.ToLower(h.filter.Value())
	var lines []string
	views := append([]string{"global"}, h.c.Keys.Scopes()...)
	all := entries(h.c)
	for _, v := range views {
		var rows []string
		for _, e := range all {
			in := (v == "global" && e.action.Global()) || (v != "global" && !e.action.Global() && e.action.In(v))
			if !in || h.c.ReadOnly && e.action.Writes() {
				continue
			}
			text := e.keys + " " + e.action.Desc + " " + e.action.Name
			if q != "" && !strings.Contains(strings.ToLower(text), q) {
				continue
			}
			keys := e.keys
			if keys == "" {
				keys = "(unbound)"
			}
			rows = append(rows, "  "+st.FooterKey.Render(common.Fit(keys, 22))+
				st.Value.Render(common.Fit(e.action.Desc, 26))+st.Dim.Render(common.Fit(e.action.Name, width-52)))
		}
		if len(rows) == 0 {
			continue
		}
		lines = append(lines, st.Heading.Render(common.Fit(viewTitle(v), width)))
		lines = append(lines, rows...)
		lines = append(lines, common.Fit("", width))
	}
	return lines
}

func viewTitle(v string) string {
	if v == "global" {
		return "Everywhere"
	}
	r := []rune(v)
	r[0] = unicode.ToUpper(r[0])
	return string(r) + " view"
}

// View draws the help full screen.
func (h *Help) View(width, height int) string {
	st := &h.c.Styles
	inner := width - 2
	lines := h.Lines(inner)
	room := height - 3
	h.offset = min(h.offset, max(0, len(lines)-room))
	lines = lines[h.offset:min(len(lines), h.offset+room)]
	for len(lines) < room {
		lines = append(lines, common.Fit("", inner))
	}
	lines = append(lines, h.filter.View(inner, true))
	return components.Box(st, "Help: keys (type to filter, esc closes)", lines, width, height, true)
}

// Palette is the `:` command palette.
type Palette struct {
	c      *common.Common
	input  components.Input
	cursor int
}

// NewPalette opens the palette.
func NewPalette(c *common.Common) *Palette {
	return &Palette{c: c, input: components.NewInput(c, ": ")}
}

// Matches lists the actions matching the typed text, best first.
func (p *Palette) Matches() []common.Action {
	q := strings.ToLower(p.input.Value())
	type scored struct {
		a     common.Action
		score int
	}
	var out []scored
	for i, a := range p.c.Keys.Actions() {
		if len(a.Binding(&p.c.Keys).Keys()) == 0 || p.c.ReadOnly && a.Writes() {
			continue
		}
		s, ok := Fuzzy(q, a.Name+" "+a.Desc)
		if !ok {
			continue
		}
		out = append(out, scored{a, s*1000 - i})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].score > out[j].score })
	res := make([]common.Action, len(out))
	for i, s := range out {
		res[i] = s.a
	}
	return res
}

// Fuzzy tells whether every rune of q appears in s in order, and scores the
// match: consecutive runs and word starts count more.
func Fuzzy(q, s string) (int, bool) {
	if q == "" {
		return 0, true
	}
	s = strings.ToLower(s)
	score, run, qi := 0, 0, 0
	qr := []rune(q)
	prev := ' '
	for _, r := range s {
		if qi < len(qr) && r == qr[qi] {
			run++
			score += run
			if prev == ' ' || prev == '-' || prev == '/' {
				score += 3
			}
			qi++
		} else {
			run = 0
		}
		prev = r
	}
	return score, qi == len(qr)
}

// Update: typing filters, up/down choose, enter runs, esc closes.
func (p *Palette) Update(msg tea.Msg) tea.Cmd {
	kp, ok := msg.(tea.KeyPressMsg)
	if !ok {
		return nil
	}
	switch kp.String() {
	case "esc":
		return func() tea.Msg { return CloseMsg{} }
	case "up":
		p.cursor = max(0, p.cursor-1)
		return nil
	case "down":
		p.cursor++
		return nil
	case "enter":
		ms := p.Matches()
		if len(ms) == 0 {
			return nil
		}
		a := ms[min(p.cursor, len(ms)-1)]
		k := a.Binding(&p.c.Keys).Keys()[0]
		return func() tea.Msg { return RunMsg{Action: a.Name, Key: k} }
	}
	if p.input.Update(kp) {
		p.cursor = 0
	}
	return nil
}

// View draws the palette full screen.
func (p *Palette) View(width, height int) string {
	st := &p.c.Styles
	inner := width - 2
	ms := p.Matches()
	p.cursor = min(p.cursor, max(0, len(ms)-1))
	lines := []string{p.input.View(inner, true), common.Fit("", inner)}
	list := components.List{Height: height - 4}
	rows := make([]components.Row, len(ms))
	for i, a := range ms {
		keys := common.KeyLabel(a.Binding(&p.c.Keys).Keys())
		plain := "  " + common.Fit(a.Name, 20) + common.Fit(a.Desc, 28) + common.Fit(keys, inner-50)
		rows[i] = components.Row{Plain: plain, Styled: "  " + st.Value.Render(common.Fit(a.Name, 20)) +
			st.Dim.Render(common.Fit(a.Desc, 28)) + st.FooterKey.Render(common.Fit(keys, inner-50))}
	}
	list.SetRows(rows)
	list.Cursor = p.cursor
	list.Move(0)
	lines = append(lines, list.Lines(st, true, inner)...)
	return components.Box(st, "Commands (enter runs, esc closes)", lines, width, height, true)
}
