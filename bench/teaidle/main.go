// A Bubble Tea v2 program that draws one static frame and waits: the
// framework's own idle floor, to compare with mnemo's idle TUI.
package main

import tea "charm.land/bubbletea/v2"

type m struct{}

func (m) Init() tea.Cmd { return nil }
func (x m) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	if k, ok := msg.(tea.KeyPressMsg); ok && k.String() == "q" {
		return x, tea.Quit
	}
	return x, nil
}
func (m) View() tea.View { v := tea.NewView("idle"); v.AltScreen = true; return v }

func main() { _, _ = tea.NewProgram(m{}).Run() }
