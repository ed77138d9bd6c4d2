package browse

import (
	"fmt"
	"strconv"
	"strings"

	tea "charm.land/bubbletea/v2"

	"mnemo/contract"
	"mnemo/ui/common"
	"mnemo/ui/components"
)

// editorDoneMsg carries the edited filters back to the table.
type editorDoneMsg struct {
	status  []contract.Status
	kinds   []contract.ItemKind
	filters []contract.BrowseFilter
}

type editorCancelMsg struct{}

type fieldRow struct {
	field string
	ops   []string
	op    int
	input components.Input
}

// editor edits every browse filter: the status and kind sets, content,
// namespace, confidence and the three day fields. Ranges are written "a..b".
type editor struct {
	c      *common.Common
	row    int
	sub    int
	status map[contract.Status]bool
	kinds  map[contract.ItemKind]bool
	fields []*fieldRow
	err    string
}

func newEditor(c *common.Common, status []contract.Status, kinds []contract.ItemKind, filters []contract.BrowseFilter) *editor {
	e := &editor{c: c, status: map[contract.Status]bool{}, kinds: map[contract.ItemKind]bool{}}
	for _, s := range status {
		e.status[s] = true
	}
	for _, k := range kinds {
		e.kinds[k] = true
	}
	days := []string{"on_day", "before_day", "after_day", "between_days"}
	spec := []struct {
		field string
		ops   []string
	}{
		{"content", []string{"contains", "not_contains", "equals", "not_equals", "starts_with", "ends_with"}},
		{"namespace", []string{"equals", "within"}},
		{"confidence", []string{"gt", "gte", "lt", "lte", "eq", "neq", "between"}},
		{"updated_at", days}, {"created_at", days}, {"observed_at", days},
	}
	for _, s := range spec {
		fr := &fieldRow{field: s.field, ops: s.ops, input: components.NewInput(c, "")}
		for _, f := range filters {
			if f.Field != s.field {
				continue
			}
			for i, op := range s.ops {
				if op == f.Op {
					fr.op = i
				}
			}
			fr.input.SetValue(operandText(f))
		}
		e.fields = append(e.fields, fr)
	}
	return e
}

func operandText(f contract.BrowseFilter) string {
	switch {
	case f.Op == "between":
		return fmt.Sprintf("%g..%g", f.Min, f.Max)
	case f.Op == "between_days":
		return f.FromDay + ".." + f.UntilDay
	case f.Field == "confidence":
		return strconv.FormatFloat(f.Num, 'g', -1, 64)
	case f.Day != "":
		return f.Day
	}
	return f.Text
}

func (e *editor) rows() int { return 2 + len(e.fields) }

func (e *editor) update(msg tea.KeyPressMsg) tea.Cmd {
	e.err = ""
	switch msg.String() {
	case "esc":
		return func() tea.Msg { return editorCancelMsg{} }
	case "up", "shift+tab":
		e.row = (e.row + e.rows() - 1) % e.rows()
		e.sub = 0
		return nil
	case "down":
		e.row = (e.row + 1) % e.rows()
		e.sub = 0
		return nil
	case "enter":
		return e.apply()
	}
	if e.row < 2 {
		// On the checkbox rows j and k move like the arrows (in a text
		// field they are letters).
		switch msg.String() {
		case "k":
			e.row = (e.row + e.rows() - 1) % e.rows()
			e.sub = 0
			return nil
		case "j":
			e.row = (e.row + 1) % e.rows()
			e.sub = 0
			return nil
		}
		n := len(contract.Statuses())
		if e.row == 1 {
			n = len(contract.ItemKinds())
		}
		switch msg.String() {
		case "left", "h":
			e.sub = (e.sub + n - 1) % n
		case "right", "l", "tab":
			e.sub = (e.sub + 1) % n
		case "space":
			if e.row == 0 {
				s := contract.Statuses()[e.sub]
				e.status[s] = !e.status[s]
			} else {
				k := contract.ItemKinds()[e.sub]
				e.kinds[k] = !e.kinds[k]
			}
		}
		return nil
	}
	fr := e.fields[e.row-2]
	if msg.String() == "tab" {
		fr.op = (fr.op + 1) % len(fr.ops)
		return nil
	}
	fr.input.Update(msg)
	return nil
}

// build turns the form into browse query parts, checking operands.
func (e *editor) build() (editorDoneMsg, error) {
	var out editorDoneMsg
	for _, s := range contract.Statuses() {
		if e.status[s] {
			out.status = append(out.status, s)
		}
	}
	for _, k := range contract.ItemKinds() {
		if e.kinds[k] {
			out.kinds = append(out.kinds, k)
		}
	}
	for _, fr := range e.fields {
		v := strings.TrimSpace(fr.input.Value())
		if v == "" {
			continue
		}
		f := contract.BrowseFilter{Field: fr.field, Op: fr.ops[fr.op]}
		lo, hi, isRange := strings.Cut(v, "..")
		switch {
		case f.Op == "between" || f.Op == "between_days":
			if !isRange {
				return out, fmt.Errorf("%s %s needs a range written a..b", f.Field, f.Op)
			}
		case isRange:
			return out, fmt.Errorf("%s %s takes one value, not a range", f.Field, f.Op)
		}
		switch {
		case f.Op == "between":
			a, err1 := strconv.ParseFloat(strings.TrimSpace(lo), 64)
			b, err2 := strconv.ParseFloat(strings.TrimSpace(hi), 64)
			if err1 != nil || err2 != nil {
				return out, fmt.Errorf("confidence between needs two numbers, as 0.5..0.9")
			}
			f.Min, f.Max = a, b
		case f.Field == "confidence":
			n, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return out, fmt.Errorf("confidence %s needs a number, not %q", f.Op, v)
			}
			f.Num = n
		case f.Op == "between_days":
			f.FromDay, f.UntilDay = strings.TrimSpace(lo), strings.TrimSpace(hi)
		case strings.HasSuffix(f.Op, "_day"):
			f.Day = v
		default:
			f.Text = fr.input.Value()
		}
		out.filters = append(out.filters, f)
	}
	return out, nil
}

func (e *editor) apply() tea.Cmd {
	out, err := e.build()
	if err == nil {
		q := contract.BrowseQuery{Status: out.status, Kind: out.kinds, Filters: out.filters}
		err = q.Validate()
	}
	if err != nil {
		e.err = contract.AsError(err).Message
		if ce, ok := err.(*contract.Error); !ok || ce == nil {
			e.err = err.Error()
		}
		return nil
	}
	return func() tea.Msg { return out }
}

func (e *editor) view(width, height int) string {
	st := &e.c.Styles
	inner := width - 2
	var lines []string
	add := func(s string) { lines = append(lines, common.Fit(s, inner)) }
	for _, l := range strings.Split(common.Wrap("Filters apply together with the scope. ↑/↓ (j/k on the checkboxes) field, tab operator or next value, space toggles, type the value (ranges a..b, days YYYY-MM-DD), enter applies, esc cancels.", inner-2), "\n") {
		add(" " + l)
	}
	add("")
	set := func(i int, label string, names []string, on func(int) bool) {
		var b strings.Builder
		cursor := "  "
		if e.row == i {
			cursor = st.Glyphs.Cursor + " "
		}
		b.WriteString(cursor + common.Fit(label, 12))
		for j, n := range names {
			box := "[ ] "
			if on(j) {
				box = "[x] "
			}
			cell := box + n
			if e.row == i && e.sub == j {
				cell = st.Cursor.Render(cell)
			}
			b.WriteString(cell + "  ")
		}
		add(b.String())
	}
	var sn, kn []string
	for _, s := range contract.Statuses() {
		sn = append(sn, string(s))
	}
	for _, k := range contract.ItemKinds() {
		kn = append(kn, string(k))
	}
	set(0, "status", sn, func(j int) bool { return e.status[contract.Statuses()[j]] })
	set(1, "kind", kn, func(j int) bool { return e.kinds[contract.ItemKinds()[j]] })
	for i, fr := range e.fields {
		cursor := "  "
		if e.row == i+2 {
			cursor = st.Glyphs.Cursor + " "
		}
		op := common.Fit(fr.ops[fr.op], 14)
		add(cursor + common.Fit(fr.field, 12) + st.Kind.Render(op) + fr.input.View(inner-30, e.row == i+2))
	}
	add("")
	if e.err != "" {
		add(st.Error.Render(" " + e.err))
	}
	return components.Box(st, "Browse filters", lines, width, height, true)
}

// describeFilters sums up the active filters for the table title.
func describeFilters(status []contract.Status, kinds []contract.ItemKind, filters []contract.BrowseFilter) string {
	var parts []string
	if status != nil {
		var s []string
		for _, x := range status {
			s = append(s, string(x))
		}
		parts = append(parts, "status in "+strings.Join(s, ","))
	}
	if kinds != nil {
		var s []string
		for _, x := range kinds {
			s = append(s, string(x))
		}
		parts = append(parts, "kind in "+strings.Join(s, ","))
	}
	for _, f := range filters {
		parts = append(parts, f.Field+" "+f.Op+" "+operandText(f))
	}
	return strings.Join(parts, "; ")
}
