package common

import (
	"strings"

	"charm.land/lipgloss/v2"
)

// Glyphs are the characters the UI draws with; plain mode swaps them for ASCII
// so screen readers and dumb terminals get no box drawing noise.
type Glyphs struct {
	Horizontal, Vertical                 string
	TopLeft, TopRight, BottomLeft, BotRt string
	Expanded, Collapsed, Leaf            string
	Active, Candidate, Superseded        string
	Selected                             string
	Clustered                            string // a record in a cluster to curate
	Bar                                  string
	Crumb                                string
	None                                 string
	Ellipsis                             string
	Cursor                               string
	Spinner                              []string
}

func unicodeGlyphs() Glyphs {
	return Glyphs{
		Horizontal: "─", Vertical: "│", TopLeft: "┌", TopRight: "┐", BottomLeft: "└", BotRt: "┘",
		Expanded: "▾", Collapsed: "▸", Leaf: " ",
		Active: "●", Candidate: "○", Superseded: "×", Selected: "✓", Clustered: "≈",
		Bar: "█", Crumb: " › ", None: "—", Ellipsis: "…", Cursor: "▌",
		Spinner: []string{"⣾", "⣽", "⣻", "⢿", "⡿", "⣟", "⣯", "⣷"},
	}
}

func asciiGlyphs() Glyphs {
	return Glyphs{
		Horizontal: "-", Vertical: "|", TopLeft: "+", TopRight: "+", BottomLeft: "+", BotRt: "+",
		Expanded: "v", Collapsed: ">", Leaf: " ",
		Active: "*", Candidate: "?", Superseded: "x", Selected: "+", Clustered: "~",
		Bar: "#", Crumb: " > ", None: "-", Ellipsis: "...", Cursor: ">",
		Spinner: []string{"|", "/", "-", "\\"},
	}
}

// Styles is every style of the UI, built once per session (and again when the
// terminal reports its background), never inside View.
type Styles struct {
	Plain  bool
	Dark   bool
	Glyphs Glyphs

	App, AppName, Store, Count, Tab, TabActive, HelpHint lipgloss.Style
	Scope, ScopeCount                                    lipgloss.Style
	Border, BorderFocused, Title, TitleFocused           lipgloss.Style
	Row, Cursor, CursorBlurred, Selected, Dim            lipgloss.Style
	Candidate, Superseded, Kind, Number, Bar, Missing    lipgloss.Style
	FooterKey, FooterDesc, Toast, Error, Spinner, Match  lipgloss.Style
	Label, Value, Heading, Chip, Button, ButtonFocused   lipgloss.Style
	Dialog, Warning, Input, Placeholder                  lipgloss.Style

	// ASCII rewrites the few non-ASCII characters drawn by shared helpers
	// (ellipses, arrow key names) cell for cell in plain mode; nil otherwise.
	ASCII *strings.Replacer

	// Paints are the hot styles as prebuilt escape sequences: wrapping a string
	// in them costs a concatenation, where Style.Render re-parses the style.
	Paints Paints
}

// Paints hold the styles drawn on every frame.
type Paints struct {
	Border, BorderFocused, Title, TitleFocused   Paint
	Cursor, CursorBlurred, FooterKey, FooterDesc Paint
}

// Paint is a simple style (colours and attributes, no padding, borders or
// width) split into the sequences before and after its text.
type Paint struct{ open, close string }

// PaintOf splits a simple style around a marker rune.
func PaintOf(st lipgloss.Style) Paint {
	r := st.Render("x")
	i := strings.Index(r, "x")
	if i < 0 {
		return Paint{}
	}
	return Paint{open: r[:i], close: r[i+1:]}
}

// Wrap styles s.
func (p Paint) Wrap(s string) string {
	if p.open == "" || s == "" {
		return s
	}
	return p.open + s + p.close
}

// NewStyles builds the default theme from the 16 ANSI colours, so it follows the
// terminal's own palette (and tmux's) on light and dark backgrounds; Bubble Tea
// downsamples or drops colours for the detected profile and NO_COLOR.
func NewStyles(dark, plain bool) Styles {
	ld := lipgloss.LightDark(dark)
	accent := lipgloss.Color("4")  // blue
	accent2 := lipgloss.Color("6") // cyan
	dim := ld(lipgloss.Color("8"), lipgloss.Color("8"))
	warn := lipgloss.Color("3")
	bad := lipgloss.Color("1")
	good := lipgloss.Color("2")
	s := Styles{Plain: plain, Dark: dark, Glyphs: unicodeGlyphs()}
	if plain {
		s.Glyphs = asciiGlyphs()
		s.ASCII = strings.NewReplacer("…", "~", "↑", "^", "↓", "v", "←", "<", "→", ">", "▌", ">")
	}
	n := lipgloss.NewStyle
	s.App = n()
	s.AppName = n().Bold(true).Foreground(accent)
	s.Store = n().Foreground(dim)
	s.Count = n().Bold(true)
	s.Tab = n().Foreground(dim)
	s.TabActive = n().Bold(true).Reverse(true)
	s.HelpHint = n().Foreground(dim)
	s.Scope = n().Foreground(accent2)
	s.ScopeCount = n().Bold(true)
	s.Border = n().Foreground(dim)
	s.BorderFocused = n().Foreground(accent)
	s.Title = n().Foreground(dim)
	s.TitleFocused = n().Bold(true).Foreground(accent)
	s.Row = n()
	s.Cursor = n().Reverse(true)
	s.CursorBlurred = n().Underline(true)
	s.Selected = n().Foreground(good).Bold(true)
	s.Dim = n().Foreground(dim)
	s.Candidate = n().Foreground(warn)
	s.Superseded = n().Foreground(dim).Strikethrough(true)
	s.Kind = n().Foreground(accent2)
	s.Number = n()
	s.Bar = n().Foreground(accent)
	s.Missing = n().Foreground(dim).Italic(true)
	s.FooterKey = n().Bold(true)
	s.FooterDesc = n().Foreground(dim)
	s.Toast = n().Foreground(good).Bold(true)
	s.Error = n().Foreground(bad).Bold(true)
	s.Spinner = n().Foreground(accent)
	s.Match = n().Reverse(true).Bold(true)
	s.Label = n().Foreground(dim)
	s.Value = n()
	s.Heading = n().Bold(true).Underline(true)
	s.Chip = n().Foreground(accent2).Bold(true)
	s.Button = n().Padding(0, 1)
	s.ButtonFocused = n().Padding(0, 1).Reverse(true).Bold(true)
	s.Dialog = n().Foreground(bad)
	s.Warning = n().Foreground(warn).Bold(true)
	s.Input = n()
	s.Placeholder = n().Foreground(dim)
	s.Paints = Paints{
		Border: PaintOf(s.Border), BorderFocused: PaintOf(s.BorderFocused),
		Title: PaintOf(s.Title), TitleFocused: PaintOf(s.TitleFocused),
		Cursor: PaintOf(s.Cursor), CursorBlurred: PaintOf(s.CursorBlurred),
		FooterKey: PaintOf(s.FooterKey), FooterDesc: PaintOf(s.FooterDesc),
	}
	return s
}
