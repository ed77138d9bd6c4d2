package common

import (
	"fmt"
	"slices"
	"strings"

	"charm.land/bubbles/v2/key"
)

// View names, used to scope key bindings: a key may serve two actions only
// when no view offers both.
const (
	ViewExplore = "explore"
	ViewBrowse  = "browse"
	ViewFetch   = "fetch"
	ViewRecall  = "recall"
	ViewDetail  = "detail"
)

// KeyViews lists every view that owns key bindings, in the order help shows them.
func KeyViews() []string {
	return []string{ViewExplore, ViewBrowse, ViewFetch, ViewRecall, ViewDetail}
}

// KeyMap holds every bindable action of the TUI. Build it with NewKeyMap so that
// unknown actions and conflicting keys are refused.
type KeyMap struct {
	Quit, Help, Palette, NextPane, PrevPane                        key.Binding
	ExploreView, BrowseView, FetchView, RecallView                 key.Binding
	Back, Refresh, ToggleMouse, ShowError                          key.Binding
	Up, Down, PageUp, PageDown, HalfPageUp, HalfPageDown, Top, End key.Binding
	Expand, Collapse, Open, Filter, Search, NextMatch, PrevMatch   key.Binding
	CopyID, CopyText, Forget, ForgetScope, Undo                    key.Binding
	Approve, Reject, Select, Sort, AddSort, FilterEditor           key.Binding
	TogglePreview, Export, LoadDemo, CycleMode                     key.Binding
	PrevColumn, NextColumn                                         key.Binding
}

// Action describes one bindable action: its config name, what it does, the
// views it acts in (nil means every view) and where its binding lives.
type Action struct {
	Name    string
	Desc    string
	Views   []string
	binding func(*KeyMap) *key.Binding
}

// Binding returns the action's binding inside km.
func (a Action) Binding(km *KeyMap) *key.Binding { return a.binding(km) }

// Global tells whether the action works in every view.
func (a Action) Global() bool { return a.Views == nil }

// In tells whether the action works in view.
func (a Action) In(view string) bool { return a.Views == nil || slices.Contains(a.Views, view) }

// Actions is the catalogue of every action, in the order help lists them.
func Actions() []Action {
	lists := []string{ViewExplore, ViewBrowse, ViewFetch, ViewRecall, ViewDetail}
	a := func(name, desc string, views []string, b func(*KeyMap) *key.Binding) Action {
		return Action{Name: name, Desc: desc, Views: views, binding: b}
	}
	v := func(names ...string) []string { return names }
	return []Action{
		a("quit", "quit", nil, func(k *KeyMap) *key.Binding { return &k.Quit }),
		a("help", "help", nil, func(k *KeyMap) *key.Binding { return &k.Help }),
		a("palette", "command palette", nil, func(k *KeyMap) *key.Binding { return &k.Palette }),
		a("next-pane", "next pane", v(ViewExplore, ViewBrowse, ViewRecall, ViewDetail), func(k *KeyMap) *key.Binding { return &k.NextPane }),
		a("prev-pane", "previous pane", v(ViewExplore, ViewBrowse, ViewRecall, ViewDetail), func(k *KeyMap) *key.Binding { return &k.PrevPane }),
		a("view-explore", "explore view", nil, func(k *KeyMap) *key.Binding { return &k.ExploreView }),
		a("view-browse", "browse view", nil, func(k *KeyMap) *key.Binding { return &k.BrowseView }),
		a("view-fetch", "fetch view", nil, func(k *KeyMap) *key.Binding { return &k.FetchView }),
		a("view-recall", "recall view", nil, func(k *KeyMap) *key.Binding { return &k.RecallView }),
		a("back", "back", nil, func(k *KeyMap) *key.Binding { return &k.Back }),
		a("refresh", "refresh", nil, func(k *KeyMap) *key.Binding { return &k.Refresh }),
		a("toggle-mouse", "mouse on/off", nil, func(k *KeyMap) *key.Binding { return &k.ToggleMouse }),
		a("show-error", "error details", nil, func(k *KeyMap) *key.Binding { return &k.ShowError }),
		a("up", "up", lists, func(k *KeyMap) *key.Binding { return &k.Up }),
		a("down", "down", lists, func(k *KeyMap) *key.Binding { return &k.Down }),
		a("page-up", "page up", lists, func(k *KeyMap) *key.Binding { return &k.PageUp }),
		a("page-down", "page down", lists, func(k *KeyMap) *key.Binding { return &k.PageDown }),
		a("half-page-up", "half page up", lists, func(k *KeyMap) *key.Binding { return &k.HalfPageUp }),
		a("half-page-down", "half page down", lists, func(k *KeyMap) *key.Binding { return &k.HalfPageDown }),
		a("top", "top", lists, func(k *KeyMap) *key.Binding { return &k.Top }),
		a("bottom", "bottom", lists, func(k *KeyMap) *key.Binding { return &k.End }),
		a("expand", "expand / narrow / open", v(ViewExplore), func(k *KeyMap) *key.Binding { return &k.Expand }),
		a("collapse", "collapse / widen", v(ViewExplore), func(k *KeyMap) *key.Binding { return &k.Collapse }),
		a("open", "open", v(ViewBrowse, ViewFetch, ViewRecall), func(k *KeyMap) *key.Binding { return &k.Open }),
		a("filter", "filter", v(ViewExplore, ViewBrowse), func(k *KeyMap) *key.Binding { return &k.Filter }),
		a("search", "search", v(ViewDetail), func(k *KeyMap) *key.Binding { return &k.Search }),
		a("next-match", "next match", v(ViewDetail), func(k *KeyMap) *key.Binding { return &k.NextMatch }),
		a("prev-match", "previous match", v(ViewDetail), func(k *KeyMap) *key.Binding { return &k.PrevMatch }),
		a("copy-id", "copy id", v(ViewExplore, ViewBrowse, ViewFetch, ViewDetail), func(k *KeyMap) *key.Binding { return &k.CopyID }),
		a("copy-text", "copy text", v(ViewExplore, ViewBrowse, ViewFetch, ViewDetail), func(k *KeyMap) *key.Binding { return &k.CopyText }),
		a("forget", "forget", v(ViewExplore, ViewBrowse, ViewFetch, ViewDetail), func(k *KeyMap) *key.Binding { return &k.Forget }),
		a("forget-scope", "forget scope", v(ViewExplore, ViewBrowse), func(k *KeyMap) *key.Binding { return &k.ForgetScope }),
		a("undo", "undo forget", v(ViewExplore, ViewBrowse, ViewFetch, ViewDetail), func(k *KeyMap) *key.Binding { return &k.Undo }),
		a("approve", "approve", v(ViewBrowse), func(k *KeyMap) *key.Binding { return &k.Approve }),
		a("reject", "reject", v(ViewBrowse), func(k *KeyMap) *key.Binding { return &k.Reject }),
		a("select", "select", v(ViewBrowse), func(k *KeyMap) *key.Binding { return &k.Select }),
		a("sort", "sort column", v(ViewBrowse), func(k *KeyMap) *key.Binding { return &k.Sort }),
		a("add-sort", "add sort key", v(ViewBrowse), func(k *KeyMap) *key.Binding { return &k.AddSort }),
		a("prev-column", "column left", v(ViewBrowse), func(k *KeyMap) *key.Binding { return &k.PrevColumn }),
		a("next-column", "column right", v(ViewBrowse), func(k *KeyMap) *key.Binding { return &k.NextColumn }),
		a("filter-editor", "filter editor", v(ViewBrowse), func(k *KeyMap) *key.Binding { return &k.FilterEditor }),
		a("toggle-preview", "preview", v(ViewExplore, ViewBrowse), func(k *KeyMap) *key.Binding { return &k.TogglePreview }),
		a("export", "export JSON", v(ViewDetail), func(k *KeyMap) *key.Binding { return &k.Export }),
		a("load-demo", "load demo", v(ViewExplore), func(k *KeyMap) *key.Binding { return &k.LoadDemo }),
		a("cycle-mode", "next mode", v(ViewFetch), func(k *KeyMap) *key.Binding { return &k.CycleMode }),
	}
}

// NewKeyMap builds a key map from action names to keys. Every action of the
// catalogue must be named; an unknown action is refused by name, and so is a
// key that two actions share in one view.
func NewKeyMap(bindings map[string][]string) (KeyMap, error) {
	var km KeyMap
	actions := Actions()
	known := make(map[string]bool, len(actions))
	for _, a := range actions {
		known[a.Name] = true
	}
	names := make([]string, 0, len(bindings))
	for name := range bindings {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		if !known[name] {
			return KeyMap{}, fmt.Errorf("unknown key action %q (see the help screen for action names)", name)
		}
	}
	for _, a := range actions {
		keys, ok := bindings[a.Name]
		if !ok {
			return KeyMap{}, fmt.Errorf("key action %q has no keys", a.Name)
		}
		for _, k := range keys {
			if strings.TrimSpace(k) == "" {
				return KeyMap{}, fmt.Errorf("key action %q has a blank key", a.Name)
			}
		}
		b := a.binding(&km)
		if len(keys) == 0 {
			*b = key.NewBinding(key.WithDisabled())
			continue
		}
		*b = key.NewBinding(key.WithKeys(keys...), key.WithHelp(KeyLabel(keys), a.Desc))
	}
	if err := checkConflicts(actions, bindings); err != nil {
		return KeyMap{}, err
	}
	return km, nil
}

func checkConflicts(actions []Action, bindings map[string][]string) error {
	for _, view := range KeyViews() {
		owner := map[string]string{}
		for _, a := range actions {
			if !a.In(view) {
				continue
			}
			for _, k := range bindings[a.Name] {
				if other, taken := owner[k]; taken && other != a.Name {
					return fmt.Errorf("key %q is bound to both %q and %q in the %s view", k, other, a.Name, view)
				}
				owner[k] = a.Name
			}
		}
	}
	return nil
}

// Bindings returns the key map as action name -> keys (the inverse of NewKeyMap).
func (km *KeyMap) Bindings() map[string][]string {
	out := map[string][]string{}
	for _, a := range Actions() {
		out[a.Name] = a.binding(km).Keys()
	}
	return out
}

// KeyLabel is how help shows a list of keys: "↑/k".
func KeyLabel(keys []string) string {
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = prettyKey(k)
	}
	return strings.Join(parts, "/")
}

func prettyKey(k string) string {
	switch k {
	case "up":
		return "↑"
	case "down":
		return "↓"
	case "left":
		return "←"
	case "right":
		return "→"
	case "pgdown":
		return "pgdn"
	}
	return k
}
