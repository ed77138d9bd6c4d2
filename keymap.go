package main

import (
	"fmt"
	"slices"
	"strings"

	"mnemo/ui"
)

// The key map: the defaults (one table, ui.DefaultBindings: the action
// table in ui/common and each view's key in the registry, ui/views.go), and
// the config file's [keys] table (action name -> keys) on top of them.

// defaultKeymap is the key map without overrides.
func defaultKeymap() ui.KeyMap { return ui.DefaultKeyMap() }

// loadKeymap applies the config file's [keys] overrides to the defaults. An
// unknown action is an error naming it; a key bound to two actions in one view
// is refused with a message naming both.
func loadKeymap(overrides map[string][]string) (ui.KeyMap, error) {
	bindings := ui.DefaultBindings()
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
