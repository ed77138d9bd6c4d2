package components

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"
	"github.com/charmbracelet/x/ansi"

	"mnemo/ui/common"
)

// The shell's chrome: the header, the scope line and the footer around the
// view on screen, and the placement of boxes over it. Each draws one string
// from what it is given; the shell decides what that is.

// Tab is one view in the header: the keys that show it and its title.
type Tab struct {
	Keys  string
	Title string
}

// HeaderInfo is what the header shows. Store, Tabs and HelpKey are fixed for
// a session; the header redraws when the width, the active tab, the count or
// the theme changes.
type HeaderInfo struct {
	Width int
	Store string
	Total int // records in the store, -1 until known
	// Candidates awaiting review in the store, -1 until known; shown when
	// there are some ("· 12 to review", "12 candidates" in a read-only
	// session, which cannot review them).
	Candidates int
	ReadOnly   bool
	Plain      bool
	Tabs       []Tab
	Active     int
	HelpKey    string
}

type headerKey struct {
	width, active, total, candidates int
	dark, readOnly                   bool
}

// Header is the top line: app name, store, record count, the view tabs with
// the active one marked, and the help hint. It keeps its last drawing.
type Header struct {
	line string
	key  headerKey
}

// View draws the header (or returns the last drawing when nothing it shows changed).
func (h *Header) View(st *common.Styles, in HeaderInfo) string {
	k := headerKey{width: in.Width, active: in.Active, total: in.Total, candidates: in.Candidates, dark: st.Dark, readOnly: in.ReadOnly}
	if k != h.key || h.line == "" {
		h.line, h.key = drawHeader(st, in), k
	}
	return h.line
}

func drawHeader(st *common.Styles, in HeaderInfo) string {
	w := in.Width
	count := "… records"
	if in.Total >= 0 {
		count = common.Plural(in.Total, "record", "records")
	}
	if in.Candidates > 0 {
		review := common.Thousands(in.Candidates) + " to review"
		if in.ReadOnly {
			review = common.Plural(in.Candidates, "candidate", "candidates")
		}
		sep := " · "
		if in.Plain {
			sep = ", "
		}
		count += sep + review
	}
	help := st.HelpHint.Render(in.HelpKey + " help")
	left := " " + st.AppName.Render("mnemo") + "  "
	info := common.Width(count) + 2
	// The tabs show their titles when the store's label still fits (or gets
	// two dozen columns); on narrower screens the inactive ones show only
	// their keys.
	right := drawTabs(st, in, false) + " " + help + " "
	if room := w - common.Width(left) - common.Width(right) - info - 3; room < min(24, common.Width(in.Store)) {
		right = drawTabs(st, in, true) + " " + help + " "
	}
	room := w - common.Width(left) - common.Width(right)
	label := common.Cut(in.Store, max(0, room-info-3))
	mid := st.Store.Render(label) + "  " + st.Count.Render(count)
	line := left + mid
	pad := w - common.Width(line) - common.Width(right)
	if pad < 1 {
		line = common.Cut(line, max(0, w-common.Width(right)-1))
		pad = w - common.Width(line) - common.Width(right)
	}
	return line + strings.Repeat(" ", max(0, pad)) + right
}

func drawTabs(st *common.Styles, in HeaderInfo, short bool) string {
	var tabs strings.Builder
	for i, t := range in.Tabs {
		label := fmt.Sprintf("%s %s", t.Keys, t.Title)
		switch {
		case i == in.Active:
			tabs.WriteString(st.TabActive.Render("[" + label + "]"))
		case short:
			tabs.WriteString(st.Tab.Render(t.Keys))
		default:
			tabs.WriteString(st.Tab.Render(label))
		}
		tabs.WriteString("  ")
	}
	return tabs.String()
}

// ScopeLine is the second line: the scope as breadcrumbs and "N of M"
// (inScope of total; either -1 when unknown), marked read-only when it is,
// with the live indicator (drawn by the caller; empty when not live) before
// the count.
func ScopeLine(st *common.Styles, width int, scope common.Scope, inScope, total int, readOnly bool, live string) string {
	right := ""
	switch {
	case inScope >= 0 && total >= 0:
		right = st.ScopeCount.Render(common.Thousands(inScope)) + " of " + common.Thousands(total) + " "
	case total >= 0:
		right = common.Thousands(total) + " "
	}
	if live != "" {
		right = live + "  " + right
	}
	if readOnly {
		right = st.Warning.Render("read-only") + "  " + right
	}
	crumbs := Breadcrumbs(st, scope, width-common.Width(right)-2)
	pad := width - 1 - common.Width(crumbs) - common.Width(right)
	return " " + crumbs + strings.Repeat(" ", max(0, pad)) + right
}

// FooterInfo is what the footer shows: an error (which replaces the keys), or
// the keys of what has focus; the toast and the task in progress on the right.
type FooterInfo struct {
	Width int
	Error string
	Keys  []key.Binding
	Toast string
	// Task names the background task; SpinFrame is its spinner's frame, -1
	// while it is too young to show (quick answers never flash it).
	Task      string
	SpinFrame int
	Plain     bool
}

// Footer is the bottom line.
func Footer(st *common.Styles, in FooterInfo) string {
	w := in.Width
	right := ""
	if in.Task != "" && in.SpinFrame >= 0 {
		g := st.Glyphs.Spinner
		right = st.Spinner.Render(g[in.SpinFrame%len(g)]) + " " + in.Task + " "
	}
	if in.Toast != "" {
		right = st.Toast.Render(common.Cut(in.Toast, w/2)) + "  " + right
	}
	room := w - 1 - common.Width(right)
	var left string
	switch {
	case in.Error != "" && in.Plain:
		left = st.Error.Render(common.Cut("error: "+in.Error+"  (! details)", room))
	case in.Error != "":
		left = st.Error.Render(common.Cut("✗ "+in.Error+"  (! details)", room))
	default:
		left = ShortHelp(st, in.Keys, room)
	}
	pad := w - 1 - common.Width(left) - common.Width(right)
	return " " + left + strings.Repeat(" ", max(0, pad)) + right
}

// ErrorBox is the `!` popup: the whole error text, wrapped, in a box.
func ErrorBox(st *common.Styles, text string, width int) string {
	var lines []string
	for _, l := range strings.Split(common.Wrap(text, width-4), "\n") {
		lines = append(lines, " "+common.Fit(l, width-4)+" ")
	}
	lines = append(lines, " "+common.Fit("", width-4)+" ", " "+st.Dim.Render(common.Fit("any key closes", width-4))+" ")
	return Box(st, "Error", lines, width, len(lines)+2, true)
}

// Center draws box over the middle of body, keeping the body around it.
func Center(body, box string, width int) string {
	lines := strings.Split(body, "\n")
	boxLines := strings.Split(box, "\n")
	bw := 0
	for _, l := range boxLines {
		bw = max(bw, ansi.StringWidth(l))
	}
	x := max(0, (width-bw)/2)
	y := max(0, (len(lines)-len(boxLines))/2)
	for i, bl := range boxLines {
		if y+i >= len(lines) {
			break
		}
		l := lines[y+i]
		left := ansi.Truncate(l, x, "")
		if pad := x - ansi.StringWidth(left); pad > 0 {
			left += strings.Repeat(" ", pad)
		}
		right := ansi.TruncateLeft(l, x+bw, "")
		lines[y+i] = left + "\x1b[m" + bl + "\x1b[m" + right
	}
	return strings.Join(lines, "\n")
}

// Message places one line of text in the middle of a w x h screen.
func Message(w, h int, msg string) string {
	msg = common.Cut(msg, w)
	top := max(0, (h-1)/2)
	left := max(0, (w-common.Width(msg))/2)
	var b strings.Builder
	for i := 0; i < top; i++ {
		b.WriteByte('\n')
	}
	b.WriteString(strings.Repeat(" ", left) + msg)
	return b.String()
}
