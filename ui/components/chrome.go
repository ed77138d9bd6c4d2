package components

import (
	"fmt"
	"mnemo/contract"
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
	// Counts is what the session's base scope holds (nil until known), in
	// the words every surface counts by: "1,351 active · 74 to review".
	Counts   *contract.RecordCounts
	ReadOnly bool
	Plain    bool
	Tabs     []Tab
	Active   int
	HelpKey  string
}

type headerKey struct {
	width, active  int
	counts         contract.RecordCounts
	counted        bool
	dark, readOnly bool
}

// Header is the top line: app name, store, record count, the view tabs with
// the active one marked, and the help hint. It keeps its last drawing.
type Header struct {
	line string
	key  headerKey
}

// View draws the header (or returns the last drawing when nothing it shows changed).
func (h *Header) View(st *common.Styles, in HeaderInfo) string {
	k := headerKey{width: in.Width, active: in.Active, counted: in.Counts != nil, dark: st.Dark, readOnly: in.ReadOnly}
	if in.Counts != nil {
		k.counts = *in.Counts
	}
	if k != h.key || h.line == "" {
		h.line, h.key = drawHeader(st, in), k
	}
	return h.line
}

// HeaderCount is the header's count, in the words of mnemo info
// (contract.RecordCounts.Words): "1,351 active · 74 to review · 7 expired".
func HeaderCount(in HeaderInfo) string {
	if in.Counts == nil {
		return "… records"
	}
	words := in.Counts.Words(common.Thousands)
	if in.Plain {
		words = strings.ReplaceAll(words, countSep, ", ")
	}
	return words
}

// countSep parts the words of a count.
const countSep = " · "

// fitCount drops the last parts of a count (the rarer states: superseded,
// expired, sandboxes) until it is at most width cells; "" when not even
// the first part fits.
func fitCount(count string, width int) string {
	sep := countSep
	if !strings.Contains(count, sep) {
		sep = ", "
	}
	for common.Width(count) > width {
		i := strings.LastIndex(count, sep)
		if i < 0 {
			return ""
		}
		count = count[:i]
	}
	return count
}

// HeaderShowsCount tells whether the header has room for its count beside
// the view names; when it has not, the scope line says it (ScopeLine's
// counted).
func HeaderShowsCount(st *common.Styles, in HeaderInfo) bool {
	_, shown := layoutHeader(st, in)
	return shown
}

func drawHeader(st *common.Styles, in HeaderInfo) string {
	line, _ := layoutHeader(st, in)
	return line
}

func layoutHeader(st *common.Styles, in HeaderInfo) (string, bool) {
	w := in.Width
	count := HeaderCount(in)
	help := st.HelpHint.Render(in.HelpKey + " help")
	left := " " + st.AppName.Render("mnemo") + "  "
	info := common.Width(count) + 2
	// The view names matter more than the store's path: the label gives
	// way first (to its last element), then the count (the scope line
	// below says "N of M" anyway), and only when even that leaves no room
	// do the inactive tabs show just their keys.
	right := drawTabs(st, in, false, "  ") + " " + help + " "
	store := in.Store
	fits := func(label string, info int) bool {
		return w-common.Width(left)-common.Width(right)-info-3 >= common.Width(label)
	}
	showCount := true
	if !fits(store, info) {
		short := ShortStoreLabel(store)
		switch {
		case fits(short, info):
			store = short
		case fits("…", 0):
			// the short label is cut to the room left (a long temporary
			// directory's name), the view names stay
			store, showCount, info = short, false, 0
		default:
			// the tabs close up and the help hint keeps only its key
			// before the view names give way
			store, showCount, info = short, false, 0
			right = drawTabs(st, in, false, " ") + " " + st.HelpHint.Render(in.HelpKey) + " "
			if !fits("…", 0) {
				right = drawTabs(st, in, true, "  ") + " " + help + " "
			}
		}
	}
	room := w - common.Width(left) - common.Width(right)
	label := common.Cut(store, max(0, room-info-3))
	mid := st.Store.Render(label)
	if showCount {
		mid += "  " + st.Count.Render(count)
	}
	line := left + mid
	pad := w - common.Width(line) - common.Width(right)
	if pad < 1 {
		line = common.Cut(line, max(0, w-common.Width(right)-1))
		pad = w - common.Width(line) - common.Width(right)
	}
	return line + strings.Repeat(" ", max(0, pad)) + right, showCount
}

// ShortStoreLabel is a store's label cut to what names it: a directory's last
// element ("…/mnemo"), a server's host and port.
func ShortStoreLabel(label string) string {
	if i := strings.Index(label, "://"); i >= 0 {
		rest := label[i+3:]
		if j := strings.IndexByte(rest, '/'); j >= 0 {
			rest = rest[:j]
		}
		return rest
	}
	trimmed := strings.TrimRight(label, "/")
	i := strings.LastIndexByte(trimmed, '/')
	if i < 0 {
		return label
	}
	return "…/" + trimmed[i+1:]
}

func drawTabs(st *common.Styles, in HeaderInfo, short bool, sep string) string {
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
		tabs.WriteString(sep)
	}
	return tabs.String()
}

// ScopeLine is the second line: the scope as breadcrumbs and "N of M"
// (inScope of total; either -1 when unknown), marked read-only when it is,
// with the live indicator (drawn by the caller; empty when not live) before
// the count. counted is the header's count when the header had no room for
// it ("1,351 active · 74 to review"), empty otherwise.
//
// listFilter, when set, is the text the active list is filtered by: the line
// says so after the scope ("all records · contains "kafka""), since the count
// on the right is then the filtered one.
func ScopeLine(st *common.Styles, width int, scope common.Scope, inScope, total int, readOnly bool, live, counted, listFilter string) string {
	right := ""
	switch {
	case inScope >= 0 && total >= 0:
		right = st.ScopeCount.Render(common.Thousands(inScope)) + " of " + common.Plural(total, "record", "records") + " "
	case total >= 0:
		right = common.Plural(total, "record", "records") + " "
	}
	if counted != "" && total >= 0 && listFilter == "" {
		// The header had no room for its count: "12 of 1,432 · 1,351 active
		// · 74 to review", as much of it as leaves the scope room (a list
		// filter's words come first).
		sep := countSep
		if strings.Contains(counted, ", ") && !strings.Contains(counted, countSep) {
			sep = ", "
		}
		if fit := fitCount(counted, width-common.Width(right)-common.Width(sep)-24); fit != "" {
			right = strings.TrimSuffix(right, " ") + sep + fit + " "
		}
	}
	if live != "" {
		right = live + "  " + right
	}
	if readOnly {
		right = st.Warning.Render("read-only") + "  " + right
	}
	room := width - common.Width(right) - 2
	filtered := ""
	if listFilter != "" {
		filtered = common.Cut(" · contains \""+listFilter+"\"", max(0, room/2))
		room -= common.Width(filtered)
		filtered = st.Warning.Render(filtered)
	}
	crumbs := Breadcrumbs(st, scope, room) + filtered
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
		right = st.Toast.Render(common.CutAtWord(in.Toast, w/2)) + "  " + right
	}
	room := w - 1 - common.Width(right)
	if right != "" {
		// Two columns at least between the keys and a message.
		room -= 2
	}
	var left string
	switch {
	case in.Error != "" && in.Plain:
		left = st.Error.Render(common.CutAtWord("error: "+in.Error+"  (! details)", room))
	case in.Error != "":
		left = st.Error.Render(common.CutAtWord("✗ "+in.Error+"  (! details)", room))
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
