package common

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"

	"mnemo/contract"
)

// Fit cuts s to width cells (with an ellipsis) and pads it with spaces to exactly width.
func Fit(s string, width int) string {
	if width <= 0 {
		return ""
	}
	w := ansi.StringWidth(s)
	if w > width {
		s = ansi.Truncate(s, width, "…")
		w = ansi.StringWidth(s)
	}
	if w < width {
		s += strings.Repeat(" ", width-w)
	}
	return s
}

// Cut cuts s to width cells with an ellipsis, without padding.
func Cut(s string, width int) string {
	if width <= 0 {
		return ""
	}
	if ansi.StringWidth(s) <= width {
		return s
	}
	return ansi.Truncate(s, width, "…")
}

// CutAtWord cuts s to width cells like Cut, but at the end of a word when
// one ends in the last third of the room, so a message is never cut
// mid-word where it need not be.
func CutAtWord(s string, width int) string {
	if width <= 0 || ansi.StringWidth(s) <= width {
		return Cut(s, width)
	}
	cut := ansi.Truncate(s, width-1, "")
	if i := strings.LastIndexByte(cut, ' '); i > 0 && ansi.StringWidth(cut[:i]) >= width*2/3 {
		cut = strings.TrimRight(cut[:i], " ,;:")
	}
	return cut + "…"
}

// PadLeft right-aligns s in width cells.
func PadLeft(s string, width int) string {
	w := ansi.StringWidth(s)
	if w >= width {
		return Cut(s, width)
	}
	return strings.Repeat(" ", width-w) + s
}

// Width is the display width of s in cells, ANSI sequences excluded.
func Width(s string) int { return ansi.StringWidth(s) }

// OneLine turns text into a single line: the first non-blank line, tabs and
// control characters replaced, so rows never break the layout.
func OneLine(s string) string {
	for _, line := range strings.Split(s, "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		return Printable(strings.TrimLeft(line, "# "), false)
	}
	return ""
}

// Printable replaces control characters (C0, DEL, C1: what could move the
// cursor or start an escape sequence on the terminal) with spaces, keeping
// newlines and tabs when keepLayout. Stored text is data, never terminal
// commands.
func Printable(s string, keepLayout bool) string {
	return strings.Map(func(r rune) rune {
		if keepLayout && (r == '\n' || r == '\t') {
			return r
		}
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f) {
			return ' '
		}
		return r
	}, s)
}

// Thousands prints n with comma thousands separators: 12,408.
func Thousands(n int) string {
	s := strconv.Itoa(n)
	neg := strings.HasPrefix(s, "-")
	if neg {
		s = s[1:]
	}
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// Ago prints how long before now t was, coarsely: "now", "5m ago", "2d ago".
func Ago(now, t time.Time) string {
	d := now.Sub(t)
	switch {
	case d < time.Minute:
		return "now"
	case d < time.Hour:
		return fmt.Sprintf("%dm ago", int(d/time.Minute))
	case d < 24*time.Hour:
		return fmt.Sprintf("%dh ago", int(d/time.Hour))
	case d < 60*24*time.Hour:
		return fmt.Sprintf("%dd ago", int(d/(24*time.Hour)))
	case d < 730*24*time.Hour:
		return fmt.Sprintf("%dmo ago", int(d/(30*24*time.Hour)))
	}
	return fmt.Sprintf("%dy ago", int(d/(365*24*time.Hour)))
}

// ShortKind abbreviates a kind for narrow rows: doc, conv, lrn.
func ShortKind(k contract.ItemKind) string {
	switch k {
	case contract.KindDocument:
		return "doc"
	case contract.KindConversation:
		return "conv"
	case contract.KindLearning:
		return "lrn"
	}
	return string(k)
}

// ShortID is the first 8 hex digits of an id, enough to tell records apart on screen.
func ShortID(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}

// Plural writes "1 record" or "3 records".
func Plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return Thousands(n) + " " + many
}

// Wrap word-wraps s to width cells, breaking long words, keeping its
// newlines. s is data (a record's text, a field, an error): its control
// characters are drawn as spaces, so none starts an escape sequence on the
// terminal, and invalid UTF-8 as U+FFFD.
func Wrap(s string, width int) string {
	s = Printable(strings.ToValidUTF8(strings.ReplaceAll(s, "\t", "    "), "\uFFFD"), true)
	if width <= 0 {
		return s
	}
	return ansi.Wrap(s, width, "")
}

// Strip removes ANSI sequences.
func Strip(s string) string { return ansi.Strip(s) }
