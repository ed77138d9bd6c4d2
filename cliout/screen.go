// Package cliout is the CLI's output: the contract JSON a command answers
// with (indented on a terminal, compact on a pipe; JSON lines for streams),
// the human form of every answer (aligned tables the width of the terminal,
// relative times, counts with separators, colour the terminal takes),
// progress lines on stderr, and whether a stream is a terminal at all.
//
// The one output rule of every command (docs/spec/cli.md section 2): when
// stdout is a terminal a command prints its human form (colour when the
// terminal takes it and NO_COLOR is unset); when stdout is not a terminal, or
// with --json / -o json, it prints exactly the contract JSON it always did.
// -o text asks for the human form on a pipe too (without colour).
package cliout

import (
	"bufio"
	"bytes"
	"encoding/json"
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
	FormatJSON = "json"
	FormatText = "text"
)

// defaultWidth is the width of the human form when the terminal reports none.
const defaultWidth = 80

// CheckFormat refuses an -o value that is not a format, and --json with -o text.
func CheckFormat(json bool, output string) error {
	switch output {
	case "", FormatJSON, FormatText:
	default:
		return contract.Invalid("-o takes json or text, not `%s`", output)
	}
	if json && output == FormatText {
		return contract.Invalid("--json and -o text ask for different outputs; give one")
	}
	return nil
}

// IsTerminal tells whether a stream is an interactive terminal.
func IsTerminal(stream any) bool {
	f, ok := stream.(*os.File)
	return ok && term.IsTerminal(f.Fd())
}

// Out is where and how one invocation answers.
type Out struct {
	Stdout io.Writer
	// Getenv reads the environment (colour, $COLUMNS); IsTerminal tells
	// whether a stream is a terminal; Now is the clock relative times read.
	Getenv     func(string) string
	IsTerminal func(stream any) bool
	Now        func() time.Time
	// JSON is --json; Format is -o ("", FormatJSON or FormatText).
	JSON   bool
	Format string
}

// WantsJSON is true when the user asked for JSON by flag (--json, -o json).
func (o Out) WantsJSON() bool { return o.JSON || o.Format == FormatJSON }

// Human tells whether stdout gets the human form: a terminal that did not ask
// for JSON, or -o text.
func (o Out) Human() bool {
	if o.WantsJSON() {
		return false
	}
	return o.Format == FormatText || o.IsTerminal(o.Stdout)
}

// Answer prints a command's result: the human form drawn by draw when a
// person reads stdout, else v as the contract JSON (WriteJSON, unchanged).
func (o Out) Answer(v any, draw func(s *Screen)) error {
	if !o.Human() {
		return o.WriteJSON(v)
	}
	s := o.NewScreen()
	draw(s)
	return s.Flush()
}

// WriteJSON prints one JSON value on stdout: indented for a person at a
// terminal, compact otherwise. HTML characters stay as they are.
func (o Out) WriteJSON(v any) error {
	if !o.IsTerminal(o.Stdout) {
		b, err := contract.MarshalWire(v)
		if err != nil {
			return contract.EngineErr("cannot encode the answer: %w", err)
		}
		_, err = o.Stdout.Write(append(b, '\n'))
		return err
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return contract.EngineErr("cannot encode the answer: %w", err)
	}
	_, err := o.Stdout.Write(buf.Bytes())
	return err
}

// JSONLines writes one compact JSON value per line, buffered.
type JSONLines struct {
	w *bufio.Writer
}

// NewJSONLines writes JSON lines on w; Flush when done.
func NewJSONLines(w io.Writer) *JSONLines {
	return &JSONLines{w: bufio.NewWriterSize(w, 64<<10)}
}

// Write adds one value as a line, as the wire writes it (contract.MarshalWire:
// what encoding/json writes, a change or a record by hand).
func (j *JSONLines) Write(v any) error {
	b, err := contract.MarshalWire(v)
	if err != nil {
		return err
	}
	if _, err := j.w.Write(b); err != nil {
		return err
	}
	return j.w.WriteByte('\n')
}

// Flush writes what is buffered.
func (j *JSONLines) Flush() error { return j.w.Flush() }

// Screen collects one command's human output. Colour and decoration come from
// the TUI's theme; the writer downsamples them for the terminal's profile and
// drops colour for NO_COLOR, and everything when stdout is not a terminal.
type Screen struct {
	out   *colorprofile.Writer
	width int
	now   time.Time
	// St are the TUI's styles the human form draws with.
	St  common.Styles
	buf strings.Builder
}

// NewScreen is a screen writing to stdout.
func (o Out) NewScreen() *Screen { return o.NewScreenOn(o.Stdout) }

// NewScreenOn is a screen writing to w (stderr, for what goes with a prompt).
func (o Out) NewScreenOn(w io.Writer) *Screen {
	return &Screen{
		out:   &colorprofile.Writer{Forward: w, Profile: colorprofile.Detect(w, o.colorEnv())},
		width: o.terminalWidth(),
		now:   o.Now(),
		St:    common.NewStyles(true, false),
	}
}

// Width is the screen's width in cells.
func (s *Screen) Width() int { return s.width }

// colorEnv is the part of the environment colour detection reads.
func (o Out) colorEnv() []string {
	var env []string
	for _, k := range []string{"TERM", "COLORTERM", "NO_COLOR", "CLICOLOR", "CLICOLOR_FORCE", "TTY_FORCE", "TERM_PROGRAM"} {
		if v := o.Getenv(k); v != "" {
			env = append(env, k+"="+v)
		}
	}
	return env
}

// terminalWidth is stdout's width in cells: the terminal's, else $COLUMNS, else 80.
func (o Out) terminalWidth() int {
	if f, ok := o.Stdout.(*os.File); ok && o.IsTerminal(f) {
		if w, _, err := term.GetSize(f.Fd()); err == nil && w > 0 {
			return w
		}
	}
	if n, err := strconv.Atoi(o.Getenv("COLUMNS")); err == nil && n > 0 {
		return n
	}
	return defaultWidth
}

// Line adds one line of styled parts.
func (s *Screen) Line(parts ...string) {
	s.buf.WriteString(strings.Join(parts, ""))
	s.buf.WriteByte('\n')
}

// Blank adds an empty line.
func (s *Screen) Blank() { s.buf.WriteByte('\n') }

// Wrapped adds text word-wrapped to the Screen's width, indented by indent.
// Stored text reaches the terminal only as printable characters and newlines.
func (s *Screen) Wrapped(text, indent string) {
	w := max(20, s.width-common.Width(indent))
	text = common.Printable(strings.ReplaceAll(text, "\t", "    "), true)
	for _, l := range strings.Split(common.Wrap(strings.TrimRight(text, "\n"), w), "\n") {
		s.Line(indent, l)
	}
}

// Flush writes everything collected.
func (s *Screen) Flush() error {
	_, err := io.WriteString(s.out, s.buf.String())
	return err
}

// Column is one Column of a table.
type Column struct {
	Title string
	// Right aligns numbers and times to the right.
	Right bool
	// Flex gives way first when the table is wider than the screen (the text
	// of a record); Shrink gives way next (namespaces, tags). Other columns
	// keep their width.
	Flex, Shrink bool
	// Drop, when above 0, lets a narrow terminal leave the column out,
	// highest first, before the flex column would fall below dropFlexWidth.
	Drop int
}

// Widths a Column gives way to, at least.
const (
	minFlexWidth   = 16
	minShrinkWidth = 8
	minAnyWidth    = 3
	// dropFlexWidth is the flex width below which droppable columns go.
	dropFlexWidth = 24
	// softShrinkWidth is where shrink columns stop before the flex Column
	// goes below a third of the screen.
	softShrinkWidth = 20
	columnGap       = 2
)

// fitColumns is each Column's width so the table fits width cells: from the
// natural widths, the flex columns give way to a third of the Screen, the
// shrink columns to softShrinkWidth and then to their minimum, the flex
// columns to theirs, each widest first, and on a very narrow terminal every
// Column down to minAnyWidth; room left over goes back to the flex columns.
func fitColumns(cols []Column, natural []int, width int) []int {
	w := slices.Clone(natural)
	total := func() int {
		t := columnGap * max(0, len(w)-1)
		for _, n := range w {
			t += n
		}
		return t
	}
	flex := func(c Column) bool { return c.Flex }
	shrink := func(c Column) bool { return c.Shrink }
	for _, pass := range []struct {
		pick  func(Column) bool
		floor int
	}{
		{flex, max(minFlexWidth, width/3)},
		{shrink, softShrinkWidth},
		{shrink, minShrinkWidth},
		{flex, minFlexWidth},
		// A very narrow terminal: every Column gives way, widest first.
		{func(Column) bool { return true }, minAnyWidth},
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
		if slack := width - total(); c.Flex && slack > 0 {
			w[i] += min(slack, natural[i]-w[i])
		}
	}
	return w
}

// Cell is one table Cell and its style.
type Cell struct {
	Text  string
	Style lipgloss.Style
}

// PlainCell is a cell without style.
func PlainCell(text string) Cell { return Cell{Text: text, Style: lipgloss.NewStyle()} }

// Table adds a borderless table (bold headers, two spaces between columns) at
// most the Screen's width (fitColumns), cells cut with an ellipsis and kept on
// one line; lipgloss's table lays it out and styles it.
func (s *Screen) Table(cols []Column, rows [][]Cell) {
	cols, rows = dropColumns(cols, rows, s.width)
	headers := make([]string, len(cols))
	for i, c := range cols {
		headers[i] = strings.ToUpper(c.Title)
	}
	natural := make([]int, len(cols))
	for i, h := range headers {
		natural[i] = common.Width(h)
	}
	data := make([][]string, len(rows))
	for i, r := range rows {
		data[i] = make([]string, len(r))
		for j, c := range r {
			data[i][j] = oneLineCell(c.Text)
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
				st = rows[row][col].Style
			}
			if row == table.HeaderRow {
				st = s.St.Label.Bold(true)
			}
			if col < len(cols)-1 {
				st = st.PaddingRight(columnGap)
			}
			if col < len(cols) && cols[col].Right {
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
func dropColumns(cols []Column, rows [][]Cell, width int) ([]Column, [][]Cell) {
	for {
		need := columnGap * max(0, len(cols)-1)
		victim := -1
		for i, c := range cols {
			natural := common.Width(c.Title)
			for _, r := range rows {
				if i < len(r) {
					natural = max(natural, common.Width(oneLineCell(r[i].Text)))
				}
			}
			switch {
			case c.Flex:
				need += min(natural, dropFlexWidth)
			case c.Shrink:
				need += min(natural, minShrinkWidth)
			default:
				need += natural
			}
			if c.Drop > 0 && (victim < 0 || c.Drop > cols[victim].Drop) {
				victim = i
			}
		}
		if need <= width || victim < 0 {
			return cols, rows
		}
		cols = slices.Delete(slices.Clone(cols), victim, victim+1)
		kept := make([][]Cell, len(rows))
		for i, r := range rows {
			kept[i] = r
			if victim < len(r) {
				kept[i] = slices.Delete(slices.Clone(r), victim, victim+1)
			}
		}
		rows = kept
	}
}

// oneLineCell keeps a Cell on one line of printable characters: newlines,
// tabs and every other control character become spaces.
func oneLineCell(s string) string { return common.Printable(s, false) }

// trimLines drops the trailing spaces of every line (the table pads its last
// Column), so a copied table carries none.
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

// Count prints n with thousands separators.
func Count[T ~int | ~uint64](n T) string { return common.Thousands(int(n)) }

// Counted prints "1 record" or "1,204 records".
func Counted[T ~int | ~uint64](n T, one, many string) string {
	return common.Plural(int(n), one, many)
}

// Ago prints an instant as the TUI does: "5m ago", "2d ago".
func (s *Screen) Ago(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return common.Ago(s.now, t)
}

// Conf prints a confidence with two decimals, or nothing.
func Conf(c *contract.F32) string {
	if c == nil {
		return ""
	}
	return fmt.Sprintf("%.2f", float32(*c))
}

// Plural is one or many by n, without the number.
func Plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
