// Package mdterm renders Markdown for the terminal: headings, emphasis, code,
// links, lists, task lists, quotes, tables and rules, styled with the
// session's paints and word-wrapped to a width in cells. The detail view
// draws a markdown document's body with it.
//
// It stands in for glamour, whose dependencies' package initialisers
// (chroma's lexers and styles, goldmark's extensions, bluemonday) ran in every
// mnemo process whatever its command: 53 ms of the 71 ms its initialisers
// took, `mnemo --help` 60-70 ms against 30 without them. Code blocks are
// drawn as they are, without syntax colours.
package mdterm

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	east "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"

	"mnemo/ui/common"
)

// Theme is how a rendering looks: a paint per kind of text (empty paints draw
// plain text) and the glyphs that draw bullets, quotes and rules.
type Theme struct {
	Heading, Marker, Strong, Emph, Code, Link, Dim, Strike common.Paint
	Bullet, Quote, Rule, Cross, Ellipsis                   string
}

// ThemeOf builds the theme of a session's styles: plain styles give ASCII
// glyphs and no paint.
func ThemeOf(st *common.Styles) Theme {
	if st.Plain {
		return Theme{Bullet: "*", Quote: "|", Rule: "-", Cross: "+", Ellipsis: "~"}
	}
	n := lipgloss.NewStyle
	return Theme{
		Heading:  common.PaintOf(st.TitleFocused),
		Marker:   common.PaintOf(st.Dim),
		Strong:   common.PaintOf(n().Bold(true)),
		Emph:     common.PaintOf(n().Italic(true)),
		Code:     common.PaintOf(st.Kind),
		Link:     common.PaintOf(st.Scope.Underline(true)),
		Dim:      common.PaintOf(st.Dim),
		Strike:   common.PaintOf(n().Strikethrough(true)),
		Bullet:   "•",
		Quote:    "│",
		Rule:     "─",
		Cross:    "┼",
		Ellipsis: "…",
	}
}

// Render renders src as lines of at most width cells (width below 8 counts
// as 8), without trailing blank lines. Control characters in src are drawn
// as spaces, invalid UTF-8 as U+FFFD.
func Render(src string, width int, th Theme) []string {
	width = max(width, 8)
	// Stored text is data: no escape sequence in it reaches the terminal.
	src = strings.ToValidUTF8(strings.ReplaceAll(src, "\r\n", "\n"), "\uFFFD")
	source := []byte(common.Printable(src, true))
	md := goldmark.New(goldmark.WithExtensions(extension.Table, extension.Strikethrough, extension.TaskList))
	doc := md.Parser().Parse(text.NewReader(source))
	r := &renderer{src: source, th: th}
	lines := r.blocks(doc, width)
	// Nesting deeper than the width allows cuts what cannot fit.
	for i, l := range lines {
		lines[i] = r.clip(l, width)
	}
	for len(lines) > 0 && strings.TrimSpace(ansi.Strip(lines[len(lines)-1])) == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

type renderer struct {
	src []byte
	th  Theme
}

// blocks renders the block children of n, a blank line between two of them
// unless n is a tight list's item.
func (r *renderer) blocks(n ast.Node, width int) []string {
	tight := false
	if li, ok := n.(*ast.ListItem); ok {
		if l, ok := li.Parent().(*ast.List); ok {
			tight = l.IsTight
		}
	}
	var out []string
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		lines := r.block(c, width)
		if len(lines) == 0 {
			continue
		}
		if len(out) > 0 && !tight {
			out = append(out, "")
		}
		out = append(out, lines...)
	}
	return out
}

func (r *renderer) block(n ast.Node, width int) []string {
	switch n := n.(type) {
	case *ast.Heading:
		marker := strings.Repeat("#", n.Level) + " "
		words := r.inline(n, r.th.Heading)
		return wrap(words, width, r.th.Marker.Wrap(marker), strings.Repeat(" ", len(marker)))
	case *ast.Paragraph, *ast.TextBlock:
		return wrap(r.inline(n, common.Paint{}), width, "", "")
	case *ast.ThematicBreak:
		return []string{r.th.Dim.Wrap(strings.Repeat(r.th.Rule, width))}
	case *ast.CodeBlock, *ast.FencedCodeBlock:
		return r.code(n, width)
	case *ast.HTMLBlock:
		var lines []string
		for i := 0; i < n.Lines().Len(); i++ {
			seg := n.Lines().At(i)
			lines = append(lines, r.th.Dim.Wrap(r.clip(lineOf(seg.Value(r.src)), width)))
		}
		if n.HasClosure() {
			lines = append(lines, r.th.Dim.Wrap(r.clip(lineOf(n.ClosureLine.Value(r.src)), width)))
		}
		return lines
	case *ast.Blockquote:
		bar := r.th.Dim.Wrap(r.th.Quote)
		inner := r.blocks(n, width-2)
		for i, l := range inner {
			if l == "" {
				inner[i] = bar
			} else {
				inner[i] = bar + " " + l
			}
		}
		return inner
	case *ast.List:
		return r.list(n, width)
	case *east.Table:
		return r.table(n, width)
	}
	// Anything else: its blocks, or its text.
	if n.FirstChild() != nil && n.FirstChild().Type() == ast.TypeBlock {
		return r.blocks(n, width)
	}
	return wrap(r.inline(n, common.Paint{}), width, "", "")
}

// code draws a code block's lines as they are, tabs as four spaces, each cut
// to the width.
func (r *renderer) code(n ast.Node, width int) []string {
	var lines []string
	for i := 0; i < n.Lines().Len(); i++ {
		seg := n.Lines().At(i)
		lines = append(lines, r.th.Code.Wrap(r.clip("  "+lineOf(seg.Value(r.src)), width)))
	}
	return lines
}

// lineOf is a source line as drawn: no line ending, tabs as four spaces
// (a tab would move the terminal's cursor past the cells counted).
func lineOf(b []byte) string {
	return strings.ReplaceAll(strings.TrimRight(string(b), "\r\n"), "\t", "    ")
}

func (r *renderer) clip(s string, width int) string {
	if ansi.StringWidth(s) <= width {
		return s
	}
	return ansi.Truncate(s, width, r.th.Ellipsis)
}

func (r *renderer) list(l *ast.List, width int) []string {
	var out []string
	num := l.Start
	last := num + l.ChildCount() - 1
	numWidth := len(strconv.Itoa(last))
	for item := l.FirstChild(); item != nil; item = item.NextSibling() {
		marker := r.th.Bullet + " "
		if l.IsOrdered() {
			marker = fmt.Sprintf("%*d%c ", numWidth, num, l.Marker)
			num++
		}
		pad := strings.Repeat(" ", ansi.StringWidth(marker))
		inner := r.blocks(item, width-len(pad))
		if len(inner) == 0 {
			inner = []string{""}
		}
		if len(out) > 0 && !l.IsTight {
			out = append(out, "")
		}
		for i, line := range inner {
			switch {
			case i == 0:
				out = append(out, r.th.Marker.Wrap(marker)+line)
			case line == "":
				out = append(out, "")
			default:
				out = append(out, pad+line)
			}
		}
	}
	return out
}

// table draws a table's cells in columns as wide as their widest cell,
// narrowed (the widest first, cells cut) when they do not fit the width.
func (r *renderer) table(t *east.Table, width int) []string {
	var rows [][]string // plain cell texts
	header := 0
	for row := t.FirstChild(); row != nil; row = row.NextSibling() {
		if _, ok := row.(*east.TableHeader); ok {
			header++
		}
		var cells []string
		for c := row.FirstChild(); c != nil; c = c.NextSibling() {
			cells = append(cells, plainText(r.inline(c, common.Paint{})))
		}
		rows = append(rows, cells)
	}
	cols := len(t.Alignments)
	for _, row := range rows {
		cols = max(cols, len(row))
	}
	if cols == 0 {
		return nil
	}
	widths := make([]int, cols)
	for _, row := range rows {
		for i, c := range row {
			widths[i] = max(widths[i], ansi.StringWidth(c))
		}
	}
	sep := " " + r.th.Quote + " "
	avail := width - (cols-1)*ansi.StringWidth(sep)
	for sum(widths) > avail {
		widest := 0
		for i := range widths {
			if widths[i] > widths[widest] {
				widest = i
			}
		}
		if widths[widest] <= 3 {
			break
		}
		widths[widest]--
	}
	line := func(cells []string, paint common.Paint) string {
		var b strings.Builder
		for i := range cols {
			if i > 0 {
				b.WriteString(" " + r.th.Dim.Wrap(r.th.Quote) + " ")
			}
			c := ""
			if i < len(cells) {
				c = cells[i]
			}
			if ansi.StringWidth(c) > widths[i] {
				c = ansi.Truncate(c, widths[i], r.th.Ellipsis)
			}
			gap := strings.Repeat(" ", widths[i]-ansi.StringWidth(c))
			align := east.AlignNone
			if i < len(t.Alignments) {
				align = t.Alignments[i]
			}
			switch align {
			case east.AlignRight:
				b.WriteString(gap + paint.Wrap(c))
			case east.AlignCenter:
				half := len(gap) / 2
				b.WriteString(gap[:half] + paint.Wrap(c) + gap[half:])
			default:
				b.WriteString(paint.Wrap(c) + gap)
			}
		}
		return r.clip(strings.TrimRight(b.String(), " "), width)
	}
	var out []string
	for i, row := range rows {
		if i < header {
			out = append(out, line(row, r.th.Strong))
			continue
		}
		if i == header && header > 0 {
			parts := make([]string, cols)
			for k, w := range widths {
				parts[k] = strings.Repeat(r.th.Rule, w)
			}
			out = append(out, r.th.Dim.Wrap(r.clip(strings.Join(parts, r.th.Rule+r.th.Cross+r.th.Rule), width)))
		}
		out = append(out, line(row, common.Paint{}))
	}
	return out
}

func sum(xs []int) int {
	s := 0
	for _, x := range xs {
		s += x
	}
	return s
}

// word is a unit of wrapping: its text, its paint, whether a space comes
// before it, and whether a line must break before it (a hard break).
type word struct {
	text  string
	paint common.Paint
	space bool
	brk   bool
}

// asSpace maps line endings and tabs to a space.
func asSpace(r rune) rune {
	switch r {
	case '\r', '\n', '\t':
		return ' '
	}
	return r
}

// inline flattens n's inline children into words, painted with base unless
// a child has a paint of its own.
func (r *renderer) inline(n ast.Node, base common.Paint) []word {
	var ws []word
	space := false
	add := func(s string, p common.Paint) {
		// A code span or inline HTML may run over lines: its line endings
		// are spaces, as CommonMark has a code span's, and so are tabs (a
		// run of them splits as one space would: empty fields are skipped).
		s = strings.Map(asSpace, s)
		for i, f := range strings.Split(s, " ") {
			if i > 0 {
				space = true
			}
			if f == "" {
				continue
			}
			ws = append(ws, word{text: f, paint: p, space: space})
			space = false
		}
	}
	var walk func(n ast.Node, p common.Paint)
	walk = func(n ast.Node, p common.Paint) {
		for c := n.FirstChild(); c != nil; c = c.NextSibling() {
			switch c := c.(type) {
			case *ast.Text:
				v := c.Segment.Value(r.src)
				if !c.IsRaw() {
					v = unescape(v)
				}
				add(string(v), p)
				switch {
				case c.HardLineBreak():
					ws = append(ws, word{brk: true})
					space = false
				case c.SoftLineBreak():
					space = true
				}
			case *ast.String:
				add(string(c.Value), p)
			case *ast.CodeSpan:
				var b bytes.Buffer
				for t := c.FirstChild(); t != nil; t = t.NextSibling() {
					if t, ok := t.(*ast.Text); ok {
						b.Write(t.Segment.Value(r.src))
					}
				}
				add(b.String(), r.th.Code)
			case *ast.Emphasis:
				paint := r.th.Emph
				if c.Level >= 2 {
					paint = r.th.Strong
				}
				walk(c, paint)
			case *east.Strikethrough:
				walk(c, r.th.Strike)
			case *ast.Link:
				before := len(ws)
				walk(c, r.th.Link)
				dest := string(c.Destination)
				if dest != "" && plainText(ws[before:]) != dest {
					add("("+dest+")", r.th.Dim)
				}
			case *ast.AutoLink:
				add(string(c.URL(r.src)), r.th.Link)
			case *ast.Image:
				add("[image:", r.th.Dim)
				space = true
				walk(c, r.th.Dim)
				add("]", r.th.Dim)
				if dest := string(c.Destination); dest != "" {
					space = true
					add("("+dest+")", r.th.Dim)
				}
			case *ast.RawHTML:
				for i := 0; i < c.Segments.Len(); i++ {
					seg := c.Segments.At(i)
					add(string(seg.Value(r.src)), r.th.Dim)
				}
			case *east.TaskCheckBox:
				box := "[ ]"
				if c.IsChecked {
					box = "[x]"
				}
				add(box, r.th.Marker)
				space = true
			default:
				walk(c, p)
			}
		}
	}
	walk(n, base)
	return ws
}

// unescape resolves a text's backslash escapes and character references as
// goldmark's HTML renderer does.
func unescape(v []byte) []byte {
	return util.UnescapePunctuations(util.ResolveNumericReferences(util.ResolveEntityNames(v)))
}

// plainText is words as one line of plain text.
func plainText(ws []word) string {
	var b strings.Builder
	for _, w := range ws {
		if w.brk {
			b.WriteByte(' ')
			continue
		}
		if w.space && b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(w.text)
	}
	return b.String()
}

// wrap lays words out in lines of at most width cells, the first prefixed by
// first and the others by rest (the two of one width); a word wider than a
// line is broken across lines.
func wrap(ws []word, width int, first, rest string) []string {
	indent := ansi.StringWidth(rest)
	avail := max(width-indent, 1)
	var lines []string
	var b strings.Builder
	used := 0
	flush := func() {
		prefix := rest
		if len(lines) == 0 {
			prefix = first
		}
		lines = append(lines, prefix+b.String())
		b.Reset()
		used = 0
	}
	for _, w := range ws {
		if w.brk {
			flush()
			continue
		}
		cells := ansi.StringWidth(w.text)
		gap := 0
		if w.space && used > 0 {
			gap = 1
		}
		if used > 0 && used+gap+cells > avail {
			flush()
			gap = 0
		}
		t := w.text
		for used == 0 && cells > avail {
			// A word wider than a whole line: as much as fits, then the rest.
			head, tail := breakWord(t, avail)
			b.WriteString(w.paint.Wrap(head))
			flush()
			t, cells = tail, ansi.StringWidth(tail)
		}
		if gap > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(w.paint.Wrap(t))
		used += gap + cells
	}
	if used > 0 || len(lines) == 0 {
		flush()
	}
	return lines
}

// breakWord splits plain text t after at most avail cells, and after one
// character at least.
func breakWord(t string, avail int) (head, tail string) {
	used := 0
	for i, c := range t {
		w := ansi.StringWidth(string(c))
		if used+w > avail && i > 0 {
			return t[:i], t[i:]
		}
		used += w
	}
	return t, ""
}
