package main

// The one output rule of every command (docs/spec/cli.md section 2, README "Output"):
// when stdout is a terminal a command prints its human form (aligned tables
// the width of the terminal, relative times, counts with separators, colour
// when the terminal takes it and NO_COLOR is unset); when stdout is not a
// terminal, or with --json / -o json, it prints exactly the contract JSON it
// always did. -o text asks for the human form on a pipe too (without colour).

import (
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"charm.land/lipgloss/v2"
	"charm.land/lipgloss/v2/table"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/term"

	"mnemo/contract"
	"mnemo/ui/common"
)

// Output formats of -o.
const (
	outputJSON = "json"
	outputText = "text"
)

// defaultWidth is the width of the human form when the terminal reports none.
const defaultWidth = 80

// checkOutputFlags refuses an -o value that is not a format.
func (a *app) checkOutputFlags() error {
	switch a.flags.output {
	case "", outputJSON, outputText:
	default:
		return usageError(fmt.Sprintf("-o takes json or text, not `%s`", a.flags.output))
	}
	if a.flags.json && a.flags.output == outputText {
		return usageError("--json and -o text ask for different outputs; give one")
	}
	return nil
}

// wantsJSON is true when the user asked for JSON by flag (--json, -o json).
func (a *app) wantsJSON() bool { return a.flags.json || a.flags.output == outputJSON }

// human tells whether stdout gets the human form: a terminal that did not ask
// for JSON, or -o text.
func (a *app) human() bool {
	if a.wantsJSON() {
		return false
	}
	return a.flags.output == outputText || a.isTerminal(a.stdout)
}

// answer prints a command's result: the human form drawn by draw when a person
// reads stdout, else v as the contract JSON (writeJSON, unchanged).
func (a *app) answer(v any, draw func(s *screen)) error {
	if !a.human() {
		return a.writeJSON(v)
	}
	s := a.newScreen()
	draw(s)
	return s.flush()
}

// screen collects one command's human output. Colour and decoration come from
// the TUI's theme; the writer downsamples them for the terminal's profile and
// drops colour for NO_COLOR, and everything when stdout is not a terminal.
type screen struct {
	out   *colorprofile.Writer
	width int
	now   time.Time
	st    common.Styles
	buf   strings.Builder
}

func (a *app) newScreen() *screen { return a.newScreenOn(a.stdout) }

// newScreenOn is a screen writing to w (stderr, for what goes with a prompt).
func (a *app) newScreenOn(w io.Writer) *screen {
	return &screen{
		out:   &colorprofile.Writer{Forward: w, Profile: colorprofile.Detect(w, a.colorEnv())},
		width: a.terminalWidth(),
		now:   a.now(),
		st:    common.NewStyles(true, false),
	}
}

// colorEnv is the part of the environment colour detection reads.
func (a *app) colorEnv() []string {
	var env []string
	for _, k := range []string{"TERM", "COLORTERM", "NO_COLOR", "CLICOLOR", "CLICOLOR_FORCE", "TTY_FORCE", "TERM_PROGRAM"} {
		if v := a.getenv(k); v != "" {
			env = append(env, k+"="+v)
		}
	}
	return env
}

// terminalWidth is stdout's width in cells: the terminal's, else $COLUMNS, else 80.
func (a *app) terminalWidth() int {
	if f, ok := a.stdout.(*os.File); ok && a.isTerminal(f) {
		if w, _, err := term.GetSize(f.Fd()); err == nil && w > 0 {
			return w
		}
	}
	if n, err := strconv.Atoi(a.getenv("COLUMNS")); err == nil && n > 0 {
		return n
	}
	return defaultWidth
}

// line adds one line of styled parts.
func (s *screen) line(parts ...string) {
	s.buf.WriteString(strings.Join(parts, ""))
	s.buf.WriteByte('\n')
}

// blank adds an empty line.
func (s *screen) blank() { s.buf.WriteByte('\n') }

// wrapped adds text word-wrapped to the screen's width, indented by indent.
// Stored text reaches the terminal only as printable characters and newlines.
func (s *screen) wrapped(text, indent string) {
	w := max(20, s.width-common.Width(indent))
	text = printable(strings.ReplaceAll(text, "\t", "    "), true)
	for _, l := range strings.Split(common.Wrap(strings.TrimRight(text, "\n"), w), "\n") {
		s.line(indent, l)
	}
}

// flush writes everything collected.
func (s *screen) flush() error {
	_, err := io.WriteString(s.out, s.buf.String())
	return err
}

// column is one column of a table.
type column struct {
	title string
	// right aligns numbers and times to the right.
	right bool
	// flex gives way first when the table is wider than the screen (the text
	// of a record); shrink gives way next (namespaces, tags). Other columns
	// keep their width.
	flex, shrink bool
	// drop, when above 0, lets a narrow terminal leave the column out,
	// highest first, before the flex column would fall below dropFlexWidth.
	drop int
}

// Widths a column gives way to, at least.
const (
	minFlexWidth   = 16
	minShrinkWidth = 8
	minAnyWidth    = 3
	// dropFlexWidth is the flex width below which droppable columns go.
	dropFlexWidth = 24
	// softShrinkWidth is where shrink columns stop before the flex column
	// goes below a third of the screen.
	softShrinkWidth = 20
	columnGap       = 2
)

// fitColumns is each column's width so the table fits width cells: from the
// natural widths, the flex columns give way to a third of the screen, the
// shrink columns to softShrinkWidth and then to their minimum, the flex
// columns to theirs, each widest first, and on a very narrow terminal every
// column down to minAnyWidth; room left over goes back to the flex columns.
func fitColumns(cols []column, natural []int, width int) []int {
	w := slices.Clone(natural)
	total := func() int {
		t := columnGap * max(0, len(w)-1)
		for _, n := range w {
			t += n
		}
		return t
	}
	flex := func(c column) bool { return c.flex }
	shrink := func(c column) bool { return c.shrink }
	for _, pass := range []struct {
		pick  func(column) bool
		floor int
	}{
		{flex, max(minFlexWidth, width/3)},
		{shrink, softShrinkWidth},
		{shrink, minShrinkWidth},
		{flex, minFlexWidth},
		// A very narrow terminal: every column gives way, widest first.
		{func(column) bool { return true }, minAnyWidth},
	} {
		for total() > width {
			widest := -1
			for i, c := range cols {
				if pass.pick(c) && w[i] > pass.floor && (widest < 0 || w[i] > w[widest]) {
					widest = i
				}
			}
			if widest < 0 {
				break
			}
			w[widest] = max(pass.floor, w[widest]-(total()-width))
		}
	}
	// What the shrink columns gave beyond need goes back to the flex columns.
	for i, c := range cols {
		if slack := width - total(); c.flex && slack > 0 {
			w[i] += min(slack, natural[i]-w[i])
		}
	}
	return w
}

// cell is one table cell and its style.
type cell struct {
	text  string
	style lipgloss.Style
}

func plainCell(text string) cell { return cell{text: text, style: lipgloss.NewStyle()} }

// table adds a borderless table (bold headers, two spaces between columns) at
// most the screen's width (fitColumns), cells cut with an ellipsis and kept on
// one line; lipgloss's table lays it out and styles it.
func (s *screen) table(cols []column, rows [][]cell) {
	cols, rows = dropColumns(cols, rows, s.width)
	headers := make([]string, len(cols))
	for i, c := range cols {
		headers[i] = strings.ToUpper(c.title)
	}
	natural := make([]int, len(cols))
	for i, h := range headers {
		natural[i] = common.Width(h)
	}
	data := make([][]string, len(rows))
	for i, r := range rows {
		data[i] = make([]string, len(r))
		for j, c := range r {
			data[i][j] = oneLineCell(c.text)
			if j < len(natural) {
				natural[j] = max(natural[j], common.Width(data[i][j]))
			}
		}
	}
	widths := fitColumns(cols, natural, s.width)
	for i := range headers {
		headers[i] = common.Cut(headers[i], widths[i])
	}
	for i := range data {
		for j := range data[i] {
			if j < len(widths) {
				data[i][j] = common.Cut(data[i][j], widths[j])
			}
		}
	}
	t := table.New().
		Headers(headers...).
		Rows(data...).
		Border(lipgloss.HiddenBorder()).
		BorderTop(false).BorderBottom(false).BorderLeft(false).BorderRight(false).
		BorderHeader(false).BorderColumn(false).
		Wrap(false).
		StyleFunc(func(row, col int) lipgloss.Style {
			st := lipgloss.NewStyle()
			if row >= 0 && row < len(rows) && col < len(rows[row]) {
				st = rows[row][col].style
			}
			if row == table.HeaderRow {
				st = s.st.Label.Bold(true)
			}
			if col < len(cols)-1 {
				st = st.PaddingRight(columnGap)
			}
			if col < len(cols) && cols[col].right {
				st = st.Align(lipgloss.Right)
			}
			return st
		})
	s.buf.WriteString(trimLines(t.String()))
	s.buf.WriteByte('\n')
}

// dropColumns leaves out droppable columns, highest drop first, while the
// table cannot give its flex columns dropFlexWidth even with its shrink
// columns at their minimum.
func dropColumns(cols []column, rows [][]cell, width int) ([]column, [][]cell) {
	for {
		need := columnGap * max(0, len(cols)-1)
		victim := -1
		for i, c := range cols {
			natural := common.Width(c.title)
			for _, r := range rows {
				if i < len(r) {
					natural = max(natural, common.Width(oneLineCell(r[i].text)))
				}
			}
			switch {
			case c.flex:
				need += min(natural, dropFlexWidth)
			case c.shrink:
				need += min(natural, minShrinkWidth)
			default:
				need += natural
			}
			if c.drop > 0 && (victim < 0 || c.drop > cols[victim].drop) {
				victim = i
			}
		}
		if need <= width || victim < 0 {
			return cols, rows
		}
		cols = slices.Delete(slices.Clone(cols), victim, victim+1)
		kept := make([][]cell, len(rows))
		for i, r := range rows {
			kept[i] = r
			if victim < len(r) {
				kept[i] = slices.Delete(slices.Clone(r), victim, victim+1)
			}
		}
		rows = kept
	}
}

// oneLineCell keeps a cell on one line of printable characters: newlines,
// tabs and every other control character become spaces.
func oneLineCell(s string) string { return printable(s, false) }

// printable replaces control characters (C0, DEL, C1: what could move the
// cursor or start an escape sequence on the terminal) with spaces, keeping
// newlines when asked. Stored text is data, never terminal commands.
func printable(s string, keepNewlines bool) string {
	return strings.Map(func(r rune) rune {
		if r == '\n' && keepNewlines {
			return r
		}
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f) {
			return ' '
		}
		return r
	}, s)
}

// trimLines drops the trailing spaces of every line (the table pads its last
// column), so a copied table carries none.
func trimLines(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if m := trailingBlank.FindStringIndex(l); m != nil {
			lines[i] = l[:m[0]] + strings.Join(sgrOnly.FindAllString(l[m[0]:], -1), "")
		}
	}
	return strings.Join(lines, "\n")
}

// trailingBlank is the spaces at the end of a line, styled or not: the
// spaces go, the style sequences among them stay.
var (
	trailingBlank = regexp.MustCompile(`(?: |\x1b\[[0-9;:]*m)+$`)
	sgrOnly       = regexp.MustCompile(`\x1b\[[0-9;:]*m`)
)

// count prints n with thousands separators.
func count[T ~int | ~uint64](n T) string { return common.Thousands(int(n)) }

// counted prints "1 record" or "1,204 records".
func counted[T ~int | ~uint64](n T, one, many string) string {
	return common.Plural(int(n), one, many)
}

// ago prints an instant as the TUI does: "5m ago", "2d ago".
func (s *screen) ago(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return common.Ago(s.now, t)
}

// conf prints a confidence with two decimals, or nothing.
func conf(c *contract.F32) string {
	if c == nil {
		return ""
	}
	return fmt.Sprintf("%.2f", float32(*c))
}
