// Package forget is the confirmation dialog in front of every forget: it names
// exactly what goes (one record's title and id, or the scope in words with its
// exact count), focuses Cancel, and confirms only on `y` or the typed count.
package forget

import (
	"fmt"
	"strconv"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"mnemo/ui/common"
	"mnemo/ui/components"
)

// ConfirmedMsg is sent when the user confirmed the forget.
type ConfirmedMsg struct{ Target common.ForgetTarget }

// CancelledMsg is sent when the dialog closed without forgetting.
type CancelledMsg struct{}

// Model is the dialog. Cancel is always the focused button: only `y` or typing
// the exact count confirms, and any other key cancels.
type Model struct {
	c      *common.Common
	target common.ForgetTarget
	typed  string
	// Undoable is false when the target is too large to keep for undo.
	Undoable bool
}

// New opens the dialog for target.
func New(c *common.Common, target common.ForgetTarget, undoable bool) *Model {
	return &Model{c: c, target: target, Undoable: undoable}
}

// ShortHelp is the footer while the dialog is open.
func (m *Model) ShortHelp() []key.Binding {
	return []key.Binding{
		key.NewBinding(key.WithKeys("y"), key.WithHelp("y", "forget")),
		key.NewBinding(key.WithKeys("esc"), key.WithHelp("any other key", "cancel")),
	}
}

// Target is what the dialog would forget.
func (m *Model) Target() common.ForgetTarget { return m.target }

// Question is the dialog's sentence, naming exactly what goes.
func (m *Model) Question() string {
	t := m.target
	switch {
	case t.Scope != nil:
		return fmt.Sprintf("Forget %s matching %s?", common.Plural(t.Count, "record", "records"), t.Scope.Words(m.c.Styles.Glyphs.Crumb))
	case len(t.IDs) == 1:
		return fmt.Sprintf("Forget %q (id %s)?", common.Cut(t.Title, 60), t.IDs[0])
	}
	return fmt.Sprintf("Forget the %s selected?", common.Plural(t.Count, "record", "records"))
}

// Update handles one key: `y` or the completed count confirms, a digit that
// continues the count waits for more, anything else cancels.
func (m *Model) Update(msg tea.Msg) tea.Cmd {
	kp, ok := msg.(tea.KeyPressMsg)
	if !ok {
		return nil
	}
	s := kp.String()
	count := strconv.Itoa(m.target.Count)
	confirm := func() tea.Msg { return ConfirmedMsg{Target: m.target} }
	cancel := func() tea.Msg { return CancelledMsg{} }
	switch {
	case (s == "y" || s == "Y") && m.typed == "":
		return confirm
	case len(s) == 1 && s[0] >= '0' && s[0] <= '9' && strings.HasPrefix(count, m.typed+s):
		m.typed += s
		if m.typed == count {
			return confirm
		}
		return nil
	}
	return cancel
}

// View draws the dialog box, width cells wide.
func (m *Model) View(width int) string {
	st := &m.c.Styles
	inner := width - 4
	var lines []string
	add := func(s string) { lines = append(lines, " "+common.Fit(s, inner)+" ") }
	add("")
	for _, l := range strings.Split(common.Wrap(m.Question(), inner), "\n") {
		add(st.Warning.Render(l))
	}
	add("")
	if m.target.Scope != nil || m.target.Count > 1 {
		add(fmt.Sprintf("Type %d or press y to forget; any other key cancels.", m.target.Count))
	} else {
		add("Press y to forget; any other key cancels.")
	}
	if m.typed != "" {
		add("typed: " + m.typed)
	}
	if !m.Undoable {
		add(st.Error.Render("Too many records to keep for undo: this cannot be undone."))
	} else {
		add(st.Dim.Render("u undoes it afterwards, in this session."))
	}
	add("")
	buttons := st.ButtonFocused.Render("Cancel") + "   " + st.Button.Render("Forget (y)")
	add(lipglossCenter(buttons, inner))
	add("")
	return components.Box(st, "Forget", lines, width, len(lines)+2, true)
}

func lipglossCenter(s string, width int) string {
	pad := (width - common.Width(s)) / 2
	if pad <= 0 {
		return s
	}
	return strings.Repeat(" ", pad) + s
}
