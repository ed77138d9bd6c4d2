package ui

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"mnemo/ui/common"
	"mnemo/ui/components"
)

// The screen: the chrome (ui/components) around the focused pane. View only
// assembles strings that the panes and components keep drawn.

// View assembles the screen from cached strings: header, scope line, the
// active view (or the detail) with any dialog or overlay, footer.
func (m *model) View() tea.View {
	// Bubble Tea asks for the screen after every message; a page of the
	// feed held for the live window's end (about four in five of a busy
	// feed's messages) changes nothing on it, and drawing it again cost a
	// live session most of its CPU. Every other message draws anew.
	if m.frame.ok {
		return m.frame.view
	}
	content := m.render()
	if m.c.Styles.ASCII != nil {
		content = m.c.Styles.ASCII.Replace(content)
	}
	v := tea.NewView(content)
	v.AltScreen = true
	v.WindowTitle = "mnemo"
	if m.mouse {
		v.MouseMode = tea.MouseModeCellMotion
	}
	m.frame = frame{view: v, ok: true}
	return v
}

// frame is the last screen View drew; ok until a message may change it.
type frame struct {
	view tea.View
	ok   bool
}

func (m *model) render() string {
	w, h := m.c.Width, m.c.Height
	if m.tooSmall() {
		return components.Message(w, h, fmt.Sprintf("mnemo needs %dx%d; this terminal is %dx%d", MinWidth, MinHeight, w, h))
	}
	st := &m.c.Styles
	inScope, listFilter := -1, ""
	if !m.detailOpen {
		inScope = m.activeView().Total()
		if f, ok := m.activeView().(interface{ ListFilter() string }); ok {
			listFilter = f.ListFilter()
		}
	}
	var b strings.Builder
	b.Grow(w * h * 4)
	hi := m.headerInfo()
	b.WriteString(m.header.View(st, hi))
	b.WriteByte('\n')
	counted := ""
	if !components.HeaderShowsCount(st, hi) {
		counted = components.HeaderCount(hi)
	}
	b.WriteString(components.ScopeLine(st, w, m.c.Scope, inScope, m.c.Total, m.c.ReadOnly, m.liveLabel(), counted, listFilter))
	b.WriteByte('\n')
	b.WriteString(m.body())
	b.WriteByte('\n')
	b.WriteString(components.Footer(st, m.footerInfo()))
	return b.String()
}

// body is the focused pane with what is on top of it: the forget dialog or
// the error popup centred over it, or an overlay instead of it.
func (m *model) body() string {
	w := m.c.Width
	body := m.focused().View()
	switch {
	case m.dialog != nil:
		return components.Center(body, m.dialog.View(min(72, w-4)), w)
	case m.showError:
		return components.Center(body, components.ErrorBox(&m.c.Styles, m.status.errFull, min(72, w-4)), w)
	case m.overlay != nil:
		return m.overlay.View(w, m.bodyHeight())
	}
	return body
}

func (m *model) headerInfo() components.HeaderInfo {
	return components.HeaderInfo{Width: m.c.Width, Store: m.c.StoreLabel, Counts: m.counts,
		ReadOnly: m.c.ReadOnly, Plain: m.c.Plain, Tabs: m.tabs,
		Active: m.active, HelpKey: common.KeyLabel(m.c.Keys.Help.Keys())}
}

func (m *model) footerInfo() components.FooterInfo {
	in := components.FooterInfo{Width: m.c.Width, Error: m.status.errText, Toast: m.status.toast,
		Task: m.busy(), SpinFrame: m.spinFrame(), Plain: m.c.Plain}
	switch {
	case m.dialog != nil:
		in.Keys = m.dialog.ShortHelp()
	case m.overlay != nil:
		in.Keys = []key.Binding{m.c.Keys.Back}
	default:
		in.Keys = m.focused().ShortHelp()
	}
	return in
}
