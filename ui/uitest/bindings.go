// Package uitest holds what the TUI's tests share: the fixture store (a small,
// fixed memory store over every facet, built on the in-memory engine with a
// fixed clock), the default bindings and a synchronous message pump.
package uitest

import "mnemo/ui/common"

// Bindings returns the default key bindings of tui.md section 3. The binary's
// keymap.go holds the same table; its test checks the two never drift apart.
func Bindings() map[string][]string {
	return map[string][]string{
		"quit":           {"q", "ctrl+c"},
		"help":           {"?"},
		"palette":        {":"},
		"next-pane":      {"tab"},
		"prev-pane":      {"shift+tab"},
		"view-explore":   {"1"},
		"view-browse":    {"2"},
		"view-fetch":     {"3"},
		"view-recall":    {"4"},
		"back":           {"esc"},
		"refresh":        {"r"},
		"toggle-mouse":   {"m"},
		"show-error":     {"!"},
		"up":             {"up", "k"},
		"down":           {"down", "j"},
		"page-up":        {"pgup"},
		"page-down":      {"pgdown"},
		"half-page-up":   {"ctrl+u"},
		"half-page-down": {"ctrl+d"},
		"top":            {"g", "home"},
		"bottom":         {"G", "end"},
		"expand":         {"right", "l", "enter"},
		"collapse":       {"left", "h", "backspace"},
		"open":           {"enter"},
		"filter":         {"/"},
		"search":         {"/"},
		"next-match":     {"n"},
		"prev-match":     {"N"},
		"copy-id":        {"y"},
		"copy-text":      {"Y"},
		"forget":         {"d"},
		"forget-scope":   {"D"},
		"undo":           {"u"},
		"approve":        {"a"},
		"reject":         {"x"},
		"select":         {"space"},
		"sort":           {"s"},
		"add-sort":       {"S"},
		"prev-column":    {"left", "h"},
		"next-column":    {"right", "l"},
		"filter-editor":  {"f"},
		"toggle-preview": {"p"},
		"export":         {"e"},
		"load-demo":      {"L"},
		"cycle-mode":     {"tab"},
	}
}

// Keys is the default key map.
func Keys() common.KeyMap {
	km, err := common.NewKeyMap(Bindings())
	if err != nil {
		panic(err)
	}
	return km
}
