package components

import (
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"mnemo/ui/common"
)

// Row is one list row rendered twice: styled for normal display and plain for
// the cursor highlight (a reverse style over inner colour codes would break).
type Row struct {
	Styled string
	Plain  string
}

// List is a scrolling window over pre-rendered rows with a cursor. Moving the
// cursor re-renders nothing: rows are built once by their owner when data or
// width changes.
type List struct {
	Rows   []Row
	Cursor int
	Offset int
	Height int
}

// Len is the number of rows.
func (l *List) Len() int { return len(l.Rows) }

// SetRows replaces the rows, keeping the cursor in range.
func (l *List) SetRows(rows []Row) {
	l.Rows = rows
	l.clamp()
}

// SetHeight sets how many rows are visible.
func (l *List) SetHeight(h int) {
	l.Height = max(1, h)
	l.clamp()
}

// Move moves the cursor by delta rows.
func (l *List) Move(delta int) {
	l.Cursor += delta
	l.clamp()
}

// Top and Bottom jump to the ends.
func (l *List) Top()    { l.Cursor = 0; l.clamp() }
func (l *List) Bottom() { l.Cursor = len(l.Rows) - 1; l.clamp() }

// MoveByKey moves the cursor for the key map's movement keys (line, page,
// half page, top, bottom) and tells whether msg was one of them.
func (l *List) MoveByKey(k *common.KeyMap, msg tea.KeyPressMsg) bool {
	half := max(1, l.Height/2)
	switch {
	case key.Matches(msg, k.Up):
		l.Move(-1)
	case key.Matches(msg, k.Down):
		l.Move(1)
	case key.Matches(msg, k.PageUp):
		l.Move(-l.Height)
	case key.Matches(msg, k.PageDown):
		l.Move(l.Height)
	case key.Matches(msg, k.HalfPageUp):
		l.Move(-half)
	case key.Matches(msg, k.HalfPageDown):
		l.Move(half)
	case key.Matches(msg, k.Top):
		l.Top()
	case key.Matches(msg, k.End):
		l.Bottom()
	default:
		return false
	}
	return true
}

func (l *List) clamp() {
	if l.Cursor >= len(l.Rows) {
		l.Cursor = len(l.Rows) - 1
	}
	if l.Cursor < 0 {
		l.Cursor = 0
	}
	if l.Height <= 0 {
		l.Height = 1
	}
	if l.Cursor < l.Offset {
		l.Offset = l.Cursor
	}
	if l.Cursor >= l.Offset+l.Height {
		l.Offset = l.Cursor - l.Height + 1
	}
	if maxOff := max(0, len(l.Rows)-l.Height); l.Offset > maxOff {
		l.Offset = maxOff
	}
	if l.Offset < 0 {
		l.Offset = 0
	}
}

// Lines returns the visible rows, the cursor row highlighted (underlined when
// the list does not have focus). width pads the cursor row.
func (l *List) Lines(st *common.Styles, focused bool, width int) []string {
	end := min(len(l.Rows), l.Offset+l.Height)
	out := make([]string, 0, max(0, end-l.Offset))
	for i := l.Offset; i < end; i++ {
		if i == l.Cursor {
			paint := st.Paints.Cursor
			if !focused {
				paint = st.Paints.CursorBlurred
			}
			out = append(out, paint.Wrap(common.Fit(l.Rows[i].Plain, width)))
			continue
		}
		out = append(out, l.Rows[i].Styled)
	}
	return out
}

// NearEnd tells whether the cursor is within margin rows of the last row.
func (l *List) NearEnd(margin int) bool { return l.Cursor >= len(l.Rows)-1-margin }
