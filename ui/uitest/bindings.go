// Package uitest holds what the TUI's tests share: the fixture store (a small,
// fixed memory store over every facet, built on the in-memory engine with a
// fixed clock), a key map for the views' own tests and a synchronous message
// pump.
package uitest

import "mnemo/ui/common"

// Keys is the default key map of the actions views handle themselves, from
// the one table of defaults (ui/common's action table). It has no view
// switches and no key scopes: those come from the shell's registry, which
// imports the views, so the shell's tests and the binary use
// ui.DefaultKeyMap instead.
func Keys() common.KeyMap {
	b, err := common.DefaultBindings(nil)
	if err != nil {
		panic(err)
	}
	km, err := common.NewKeyMap(nil, b)
	if err != nil {
		panic(err)
	}
	return km
}
