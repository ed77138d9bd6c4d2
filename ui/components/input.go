package components

import (
	"strings"
	"unicode"

	tea "charm.land/bubbletea/v2"

	"mnemo/ui/common"
)

// Input is a one-line text field: typing appends at the end, backspace and
// ctrl+w delete. It is small on purpose; queries and filters are short.
type Input struct {
	st     *common.Styles
	prompt string
	value  []rune
}

// NewInput returns an empty input with a prompt such as "query: ".
func NewInput(c *common.Common, prompt string) Input {
	return Input{st: &c.Styles, prompt: prompt}
}

// Value is the current text.
func (in *Input) Value() string { return string(in.value) }

// SetValue replaces the text.
func (in *Input) SetValue(s string) { in.value = []rune(s) }

// Update applies an editing key and tells whether the text changed.
func (in *Input) Update(msg tea.KeyPressMsg) bool {
	switch msg.String() {
	case "backspace":
		if len(in.value) == 0 {
			return false
		}
		in.value = in.value[:len(in.value)-1]
		return true
	case "ctrl+w":
		v := strings.TrimRightFunc(string(in.value), unicode.IsSpace)
		i := strings.LastIndexFunc(v, unicode.IsSpace)
		in.value = []rune(v[:i+1])
		return true
	case "ctrl+u":
		in.value = nil
		return true
	case "space":
		in.value = append(in.value, ' ')
		return true
	}
	if msg.Text != "" && msg.Mod&^tea.ModShift == 0 {
		for _, r := range msg.Text {
			if unicode.IsPrint(r) {
				in.value = append(in.value, r)
			}
		}
		return true
	}
	return false
}

// View draws the prompt and text in width cells, with a cursor when focused.
func (in *Input) View(width int, focused bool) string {
	st := in.st
	text := string(in.value)
	cur := ""
	if focused {
		cur = st.Glyphs.Cursor
	}
	room := width - common.Width(in.prompt) - common.Width(cur)
	if w := common.Width(text); room > 0 && w > room {
		// keep the end of a long text visible, where the typing happens
		r := []rune(text)
		for common.Width(string(r)) > room-1 && len(r) > 0 {
			r = r[1:]
		}
		text = st.Glyphs.Ellipsis + string(r)
	}
	line := common.Fit(in.prompt+text+cur, width)
	if !focused {
		return st.Dim.Render(line)
	}
	return st.Input.Render(line)
}
