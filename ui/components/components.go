// Package components holds the small render-cached widgets the mnemo views are
// built from: pane frames, a scrolling row list, the short help line, the
// breadcrumbs and a text input line. They draw strings; they do no I/O.
package components

import (
	"strings"

	"charm.land/bubbles/v2/key"

	"mnemo/ui/common"
)

// Box draws content inside a border with a title in the top edge. Content lines
// must already be fitted to width-2 cells; missing lines are padded.
func Box(st *common.Styles, title string, lines []string, width, height int, focused bool) string {
	if width < 4 || height < 2 {
		return ""
	}
	g := st.Glyphs
	border, titleStyle := st.Paints.Border, st.Paints.Title
	if focused {
		border, titleStyle = st.Paints.BorderFocused, st.Paints.TitleFocused
	}
	inner := width - 2
	var b strings.Builder
	b.Grow((width + 8) * height)
	t := ""
	if title != "" {
		t = " " + common.Cut(title, inner-2) + " "
	}
	b.WriteString(border.Wrap(g.TopLeft))
	b.WriteString(titleStyle.Wrap(t))
	b.WriteString(border.Wrap(strings.Repeat(g.Horizontal, max(0, inner-common.Width(t))) + g.TopRight))
	side := border.Wrap(g.Vertical)
	blank := strings.Repeat(" ", inner)
	for i := 0; i < height-2; i++ {
		b.WriteByte('\n')
		b.WriteString(side)
		if i < len(lines) {
			b.WriteString(lines[i])
		} else {
			b.WriteString(blank)
		}
		b.WriteString(side)
	}
	b.WriteByte('\n')
	b.WriteString(border.Wrap(g.BottomLeft + strings.Repeat(g.Horizontal, inner) + g.BotRt))
	return b.String()
}

// ShortHelp renders "key desc" pairs for the footer, keeping only whole pairs
// that fit in width cells. Disabled bindings are skipped.
func ShortHelp(st *common.Styles, bindings []key.Binding, width int) string {
	var b strings.Builder
	used := 0
	for _, kb := range bindings {
		if !kb.Enabled() {
			continue
		}
		h := kb.Help()
		if h.Key == "" {
			continue
		}
		w := common.Width(h.Key) + 1 + common.Width(h.Desc)
		sep := 0
		if used > 0 {
			sep = 2
		}
		if used+sep+w > width {
			break
		}
		if sep > 0 {
			b.WriteString("  ")
		}
		b.WriteString(st.Paints.FooterKey.Wrap(h.Key))
		b.WriteByte(' ')
		b.WriteString(st.Paints.FooterDesc.Wrap(h.Desc))
		used += sep + w
	}
	return b.String()
}

// Breadcrumbs renders the scope as crumbs cut to width: "kind=learning › tag=style".
func Breadcrumbs(st *common.Styles, scope common.Scope, width int) string {
	if scope.IsRoot() {
		return st.Dim.Render(common.Cut("all records", width))
	}
	return st.Scope.Render(common.Cut(scope.Words(st.Glyphs.Crumb), width))
}
