package main

import (
	"fmt"
	"slices"
	"strings"

	"mnemo/ui"
)

// The key map: defaults, and the config file's [keys] table (action name ->
// keys) on top of them. Avoided as defaults: ctrl+b (tmux prefix), ctrl+h/j/k/l
// (tmux pane moves), ctrl+s and ctrl+q (flow control).

// defaultBindings is every default key of tui.md section 3, by action name.
// (ui/uitest holds a copy for the UI's own tests; keymap_test.go keeps them equal.)
func defaultBindings() map[string][]string {
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

// defaultKeymap is the key map without overrides.
func defaultKeymap() ui.KeyMap {
	km, err := ui.NewKeyMap(defaultBindings())
	if err != nil {
		// the defaults are checked by keymap_test.go; a conflict here is a build mistake
		panic(err)
	}
	return km
}

// loadKeymap applies the config file's [keys] overrides to the defaults. An
// unknown action is an error naming it; a key bound to two actions in one view
// is refused with a message naming both.
func loadKeymap(overrides map[string][]string) (ui.KeyMap, error) {
	bindings := defaultBindings()
	names := make([]string, 0, len(overrides))
	for name := range overrides {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		if _, ok := bindings[name]; !ok {
			return ui.KeyMap{}, fmt.Errorf("config [keys]: unknown action %q", name)
		}
		keys := make([]string, 0, len(overrides[name]))
		for _, k := range overrides[name] {
			if strings.TrimSpace(k) == "" {
				return ui.KeyMap{}, fmt.Errorf("config [keys]: action %q has a blank key", name)
			}
			keys = append(keys, strings.TrimSpace(k))
		}
		bindings[name] = keys
	}
	km, err := ui.NewKeyMap(bindings)
	if err != nil {
		return ui.KeyMap{}, fmt.Errorf("config [keys]: %w", err)
	}
	return km, nil
}
