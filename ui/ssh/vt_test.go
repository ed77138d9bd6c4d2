package ssh_test

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

// vt replays what a session wrote to its terminal and keeps the resulting
// screen. The renderer only redraws the cells that changed between frames
// (cursor jumps, erases, inserted and deleted lines, repeated characters), so
// a text on screen is often not contiguous in the byte stream: asserting on
// what a user sees needs the screen, not the stream. It covers the control
// sequences the ultraviolet renderer emits; the rest (colours, titles,
// queries) change nothing on screen and are ignored.
type vt struct {
	w, h     int
	cells    [][]rune
	row, col int
	// top and bottom bound the scrolling region (inclusive, 0-based).
	top, bottom int
	// pendingWrap is set after writing the last column: the next printable
	// character goes to the start of the next line (when autowrap is on).
	pendingWrap bool
	autowrap    bool
	insert      bool
	last        rune
	savedRow    int
	savedCol    int
}

func newVT(w, h int) *vt {
	v := &vt{w: w, h: h, autowrap: true}
	v.reset()
	return v
}

func (v *vt) reset() {
	v.cells = make([][]rune, v.h)
	for i := range v.cells {
		v.cells[i] = v.blankLine()
	}
	v.row, v.col, v.top, v.bottom, v.pendingWrap = 0, 0, 0, v.h-1, false
}

func (v *vt) blankLine() []rune {
	line := make([]rune, v.w)
	for i := range line {
		line[i] = ' '
	}
	return line
}

// replay returns the screen after writing data to a fresh terminal.
func replay(w, h int, data []byte) string {
	v := newVT(w, h)
	p := ansi.NewParser()
	p.SetHandler(ansi.Handler{
		Print:     v.print,
		Execute:   v.execute,
		HandleCsi: v.csi,
		HandleEsc: v.esc,
	})
	p.Parse(data)
	return v.screen()
}

func (v *vt) screen() string {
	lines := make([]string, v.h)
	for i, line := range v.cells {
		var b strings.Builder
		for _, r := range line {
			if r != 0 { // 0 is the right half of a wide character
				b.WriteRune(r)
			}
		}
		lines[i] = strings.TrimRight(b.String(), " ")
	}
	return strings.Join(lines, "\n")
}

func (v *vt) print(r rune) {
	width := ansi.StringWidth(string(r))
	if width == 0 {
		return
	}
	if v.pendingWrap && v.autowrap {
		v.col = 0
		v.lineFeed()
	}
	v.pendingWrap = false
	if v.col+width > v.w {
		if !v.autowrap {
			v.col = v.w - width
		} else {
			v.col = 0
			v.lineFeed()
		}
	}
	if v.insert {
		v.insertChars(width)
	}
	v.cells[v.row][v.col] = r
	if width == 2 && v.col+1 < v.w {
		v.cells[v.row][v.col+1] = 0
	}
	v.last = r
	if v.col+width >= v.w {
		v.col = v.w - 1
		v.pendingWrap = v.autowrap
		return
	}
	v.col += width
}

func (v *vt) execute(b byte) {
	switch b {
	case '\r':
		v.moveTo(v.row, 0)
	case '\n', '\v', '\f':
		v.pendingWrap = false
		v.lineFeed()
	case '\b':
		v.moveTo(v.row, v.col-1)
	case '\t':
		v.tab(1)
	}
}

func (v *vt) tab(n int) {
	col := v.col
	for ; n > 0; n-- {
		col = (col/8 + 1) * 8
	}
	v.moveTo(v.row, min(col, v.w-1))
}

func (v *vt) backTab(n int) {
	col := v.col
	for ; n > 0 && col > 0; n-- {
		col = (col - 1) / 8 * 8
	}
	v.moveTo(v.row, col)
}

func (v *vt) moveTo(row, col int) {
	v.row = max(0, min(row, v.h-1))
	v.col = max(0, min(col, v.w-1))
	v.pendingWrap = false
}

func (v *vt) lineFeed() {
	if v.row == v.bottom {
		v.scrollUp(1)
		return
	}
	if v.row < v.h-1 {
		v.row++
	}
}

func (v *vt) reverseIndex() {
	v.pendingWrap = false
	if v.row == v.top {
		v.scrollDown(1)
		return
	}
	if v.row > 0 {
		v.row--
	}
}

// scrollUp moves the lines of the scrolling region up by n, blank lines
// entering at its bottom.
func (v *vt) scrollUp(n int) {
	for ; n > 0; n-- {
		copy(v.cells[v.top:v.bottom], v.cells[v.top+1:v.bottom+1])
		v.cells[v.bottom] = v.blankLine()
	}
}

func (v *vt) scrollDown(n int) {
	for ; n > 0; n-- {
		copy(v.cells[v.top+1:v.bottom+1], v.cells[v.top:v.bottom])
		v.cells[v.top] = v.blankLine()
	}
}

func (v *vt) insertLines(n int) {
	if v.row < v.top || v.row > v.bottom {
		return
	}
	for ; n > 0; n-- {
		copy(v.cells[v.row+1:v.bottom+1], v.cells[v.row:v.bottom])
		v.cells[v.row] = v.blankLine()
	}
	v.col = 0
}

func (v *vt) deleteLines(n int) {
	if v.row < v.top || v.row > v.bottom {
		return
	}
	for ; n > 0; n-- {
		copy(v.cells[v.row:v.bottom], v.cells[v.row+1:v.bottom+1])
		v.cells[v.bottom] = v.blankLine()
	}
	v.col = 0
}

func (v *vt) insertChars(n int) {
	line := v.cells[v.row]
	n = min(n, v.w-v.col)
	copy(line[v.col+n:], line[v.col:v.w-n])
	for i := v.col; i < v.col+n; i++ {
		line[i] = ' '
	}
}

func (v *vt) deleteChars(n int) {
	line := v.cells[v.row]
	n = min(n, v.w-v.col)
	copy(line[v.col:], line[v.col+n:])
	for i := v.w - n; i < v.w; i++ {
		line[i] = ' '
	}
}

func (v *vt) erase(row, from, to int) {
	for c := max(0, from); c < min(to, v.w); c++ {
		v.cells[row][c] = ' '
	}
}

func (v *vt) esc(cmd ansi.Cmd) {
	if cmd.Intermediate() != 0 { // charset designations and the like
		return
	}
	switch cmd.Final() {
	case 'M':
		v.reverseIndex()
	case 'D':
		v.pendingWrap = false
		v.lineFeed()
	case 'E':
		v.moveTo(v.row, 0)
		v.lineFeed()
	case '7':
		v.savedRow, v.savedCol = v.row, v.col
	case '8':
		v.moveTo(v.savedRow, v.savedCol)
	case 'c':
		v.reset()
	}
}

func (v *vt) csi(cmd ansi.Cmd, params ansi.Params) {
	param := func(i, def int) int {
		n, _, _ := params.Param(i, def)
		return n
	}
	count := func() int { return max(1, param(0, 1)) }
	if cmd.Prefix() == '?' {
		v.privateMode(cmd.Final(), params)
		return
	}
	if cmd.Prefix() != 0 || cmd.Intermediate() != 0 {
		return
	}
	switch cmd.Final() {
	case 'A':
		v.moveTo(v.row-count(), v.col)
	case 'B', 'e':
		v.moveTo(v.row+count(), v.col)
	case 'C', 'a':
		v.moveTo(v.row, v.col+count())
	case 'D':
		v.moveTo(v.row, v.col-count())
	case 'E':
		v.moveTo(v.row+count(), 0)
	case 'F':
		v.moveTo(v.row-count(), 0)
	case 'G', '`':
		v.moveTo(v.row, count()-1)
	case 'd':
		v.moveTo(count()-1, v.col)
	case 'H', 'f':
		v.moveTo(max(1, param(0, 1))-1, max(1, param(1, 1))-1)
	case 'I':
		v.tab(count())
	case 'Z':
		v.backTab(count())
	case 'J':
		switch param(0, 0) {
		case 0:
			v.erase(v.row, v.col, v.w)
			for r := v.row + 1; r < v.h; r++ {
				v.cells[r] = v.blankLine()
			}
		case 1:
			for r := 0; r < v.row; r++ {
				v.cells[r] = v.blankLine()
			}
			v.erase(v.row, 0, v.col+1)
		case 2, 3:
			for r := range v.cells {
				v.cells[r] = v.blankLine()
			}
		}
	case 'K':
		switch param(0, 0) {
		case 0:
			v.erase(v.row, v.col, v.w)
		case 1:
			v.erase(v.row, 0, v.col+1)
		case 2:
			v.erase(v.row, 0, v.w)
		}
	case 'X':
		v.erase(v.row, v.col, v.col+count())
	case 'b':
		for n := count(); n > 0 && v.last != 0; n-- {
			v.print(v.last)
		}
	case '@':
		v.insertChars(count())
	case 'P':
		v.deleteChars(count())
	case 'L':
		v.insertLines(count())
	case 'M':
		v.deleteLines(count())
	case 'S':
		v.scrollUp(count())
	case 'T':
		v.scrollDown(count())
	case 'r':
		top, bottom := max(1, param(0, 1))-1, param(1, v.h)
		if bottom <= 0 || bottom > v.h {
			bottom = v.h
		}
		if top < bottom-1 {
			v.top, v.bottom = top, bottom-1
		}
		v.moveTo(0, 0)
	case 'h', 'l':
		if param(0, 0) == 4 {
			v.insert = cmd.Final() == 'h'
		}
	}
}

func (v *vt) privateMode(final byte, params ansi.Params) {
	if final != 'h' && final != 'l' {
		return
	}
	on := final == 'h'
	params.ForEach(0, func(_, mode int, _ bool) {
		switch mode {
		case 7:
			v.autowrap = on
		case 1049, 1047, 47:
			// Entering or leaving the alternate screen starts from a blank one.
			for r := range v.cells {
				v.cells[r] = v.blankLine()
			}
		}
	})
}

func TestVTReplaysTheRenderersSequences(t *testing.T) {
	cases := []struct {
		name, in, want string
	}{
		{"print and wrap", "abcdefgh", "abcdef\ngh\n\n"},
		{"cursor position and erase line", "xxxxxx\x1b[1;3Hyy\x1b[K", "xxyy\n\n\n"},
		{"cursor forward keeps cells", "abcdef\r\x1b[2Cz", "abzdef\n\n\n"},
		{"repeat and erase characters", "a\x1b[3b\x1b[1;2H\x1b[2X", "a  a\n\n\n"},
		{"insert and delete characters", "abcd\x1b[1;2H\x1b[2@\x1b[1;5H\x1b[P", "a  bd\n\n\n"},
		{"insert and delete lines", "1\r\n2\r\n3\x1b[2;1H\x1b[L\x1b[4;1H\x1b[M", "1\n\n2\n"},
		{"scroll region", "\x1b[2;3r\x1b[2;1Hb\r\nc\r\nd", "\nc\nd\n"},
		{"autowrap off overwrites the last column", "\x1b[?7labcdefgh", "abcdeh\n\n\n"},
		{"erase below", "aa\r\nbb\r\ncc\x1b[2;2H\x1b[J", "aa\nb\n\n"},
		{"colours change nothing", "\x1b[1;31mred\x1b[m \x1b]11;?\x07ok", "red ok\n\n\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := replay(6, 4, []byte(c.in)); got != c.want {
				t.Fatalf("replay(%q) =\n%q, want\n%q", c.in, got, c.want)
			}
		})
	}
}
