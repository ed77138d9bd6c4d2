package common

import (
	"fmt"
	"slices"
	"strings"

	"charm.land/bubbles/v2/key"
)

// View names, used to scope key bindings: a key may serve two actions only
// when no view offers both. The shell's registry (ui/views.go) says which
// actions each view offers.
const (
	ViewExplore  = "explore"
	ViewBrowse   = "browse"
	ViewFetch    = "fetch"
	ViewRecall   = "recall"
	ViewActivity = "activity"
	ViewCurate   = "curate"
	ViewDetail   = "detail"
)

// ViewInfo is what the key map needs to know of a view: its name (the key
// scope, the SwitchViewMsg target and, as "view-<name>", the action that
// shows it), its title, the default keys that show it, and the actions of the
// catalogue it offers besides the global ones.
type ViewInfo struct {
	Name  string
	Title string
	// Keys are the default keys of the action "view-<Name>"; a view without
	// keys (the detail) has no such action and no tab.
	Keys []string
	// Actions names the catalogue actions the view offers (not the global ones).
	Actions []string
}

// SwitchAction is the name of the action that shows the view.
func (v ViewInfo) SwitchAction() string { return "view-" + v.Name }

// KeyMap holds every bindable action of the TUI. Build it with NewKeyMap so that
// unknown actions and conflicting keys are refused. Once built a key map is
// never changed: copies (one per session) share its catalogue and view keys.
type KeyMap struct {
	Quit, Help, Palette, NextPane, PrevPane                        key.Binding
	Back, Refresh, ToggleMouse, ShowError                          key.Binding
	Up, Down, PageUp, PageDown, HalfPageUp, HalfPageDown, Top, End key.Binding
	Expand, Collapse, Open, Filter, Search, NextMatch, PrevMatch   key.Binding
	CopyID, CopyText, Forget, ForgetScope, Undo                    key.Binding
	Approve, Reject, Select, Sort, AddSort, FilterEditor           key.Binding
	TogglePreview, Export, LoadDemo, CycleMode                     key.Binding
	PrevColumn, NextColumn, PauseLive, PauseFeed                   key.Binding
	KeepNewest, KeepConfident, KeepThis, Dismiss                   key.Binding

	// views are the keys that show each view, by view name.
	views map[string]*key.Binding
	// actions is the catalogue the key map was built from.
	actions []Action
	// scopes are the views that own key bindings, in the order help shows them.
	scopes []string
}

// Action describes one bindable action: its config name, what it does, the
// views it acts in and where its binding lives.
type Action struct {
	Name string
	Desc string
	// Views are the views the action works in, in registry order; empty for a
	// global action.
	Views   []string
	global  bool
	keys    []string
	binding func(*KeyMap) *key.Binding
}

// Binding returns the action's binding inside km.
func (a Action) Binding(km *KeyMap) *key.Binding { return a.binding(km) }

// Writes tells whether the action changes the store (or writes anything on
// the machine the TUI runs on): a session that may not write (a reader,
// --readonly) offers none of them, in footers, in help or in the palette.
func (a Action) Writes() bool {
	switch a.Name {
	case "forget", "forget-scope", "undo", "approve", "reject", "load-demo", "export",
		"keep-newest", "keep-confident", "keep-this", "dismiss":
		// export edits the record on a local TUI; over SSH (never read-only
		// there for this reason alone) the footer still offers its copy.
		return true
	}
	return false
}

// Global tells whether the action works in every view.
func (a Action) Global() bool { return a.global }

// In tells whether the action works in view.
func (a Action) In(view string) bool { return a.global || slices.Contains(a.Views, view) }

// DefaultKeys are the keys the action has unless the config file rebinds it.
func (a Action) DefaultKeys() []string { return slices.Clone(a.keys) }

// actionTable is every action that is not a view switch, in the order help
// lists them, with its default keys (docs/spec/tui.md section 3). Avoided as defaults:
// ctrl+b (tmux prefix), ctrl+h/j/k/l (tmux pane moves), ctrl+s and ctrl+q
// (flow control). Global actions work in every view; the others work in the
// views whose registration names them.
func actionTable() []Action {
	g := func(name, desc string, keys []string, b func(*KeyMap) *key.Binding) Action {
		return Action{Name: name, Desc: desc, global: true, keys: keys, binding: b}
	}
	a := func(name, desc string, keys []string, b func(*KeyMap) *key.Binding) Action {
		return Action{Name: name, Desc: desc, keys: keys, binding: b}
	}
	k := func(keys ...string) []string { return keys }
	return []Action{
		g("quit", "quit", k("q", "ctrl+c"), func(k *KeyMap) *key.Binding { return &k.Quit }),
		g("help", "help", k("?"), func(k *KeyMap) *key.Binding { return &k.Help }),
		g("palette", "command palette", k(":"), func(k *KeyMap) *key.Binding { return &k.Palette }),
		a("next-pane", "next pane", k("tab"), func(k *KeyMap) *key.Binding { return &k.NextPane }),
		a("prev-pane", "previous pane", k("shift+tab"), func(k *KeyMap) *key.Binding { return &k.PrevPane }),
		// the view switches ("view-<name>") come here, from the registry
		g("back", "back", k("esc"), func(k *KeyMap) *key.Binding { return &k.Back }),
		g("refresh", "refresh", k("r"), func(k *KeyMap) *key.Binding { return &k.Refresh }),
		g("toggle-mouse", "mouse on/off", k("m"), func(k *KeyMap) *key.Binding { return &k.ToggleMouse }),
		g("show-error", "error details", k("!"), func(k *KeyMap) *key.Binding { return &k.ShowError }),
		g("pause-live", "pause / resume live", k("P"), func(k *KeyMap) *key.Binding { return &k.PauseLive }),
		a("up", "up", k("up", "k"), func(k *KeyMap) *key.Binding { return &k.Up }),
		a("down", "down", k("down", "j"), func(k *KeyMap) *key.Binding { return &k.Down }),
		a("page-up", "page up", k("pgup"), func(k *KeyMap) *key.Binding { return &k.PageUp }),
		a("page-down", "page down", k("pgdown"), func(k *KeyMap) *key.Binding { return &k.PageDown }),
		a("half-page-up", "half page up", k("ctrl+u"), func(k *KeyMap) *key.Binding { return &k.HalfPageUp }),
		a("half-page-down", "half page down", k("ctrl+d"), func(k *KeyMap) *key.Binding { return &k.HalfPageDown }),
		a("top", "top", k("g", "home"), func(k *KeyMap) *key.Binding { return &k.Top }),
		a("bottom", "bottom", k("G", "end"), func(k *KeyMap) *key.Binding { return &k.End }),
		a("expand", "expand / narrow / open", k("right", "l", "enter"), func(k *KeyMap) *key.Binding { return &k.Expand }),
		a("collapse", "collapse / widen", k("left", "h", "backspace"), func(k *KeyMap) *key.Binding { return &k.Collapse }),
		a("open", "open", k("enter"), func(k *KeyMap) *key.Binding { return &k.Open }),
		a("filter", "filter", k("/"), func(k *KeyMap) *key.Binding { return &k.Filter }),
		a("search", "search", k("/"), func(k *KeyMap) *key.Binding { return &k.Search }),
		a("next-match", "next match", k("n"), func(k *KeyMap) *key.Binding { return &k.NextMatch }),
		a("prev-match", "previous match", k("N"), func(k *KeyMap) *key.Binding { return &k.PrevMatch }),
		a("copy-id", "copy id", k("y"), func(k *KeyMap) *key.Binding { return &k.CopyID }),
		a("copy-text", "copy text", k("Y"), func(k *KeyMap) *key.Binding { return &k.CopyText }),
		a("forget", "forget", k("d"), func(k *KeyMap) *key.Binding { return &k.Forget }),
		a("forget-scope", "forget scope", k("D"), func(k *KeyMap) *key.Binding { return &k.ForgetScope }),
		a("undo", "undo", k("u"), func(k *KeyMap) *key.Binding { return &k.Undo }),
		a("approve", "approve", k("a"), func(k *KeyMap) *key.Binding { return &k.Approve }),
		a("reject", "reject", k("x"), func(k *KeyMap) *key.Binding { return &k.Reject }),
		a("select", "select", k("space"), func(k *KeyMap) *key.Binding { return &k.Select }),
		a("sort", "sort column", k("s"), func(k *KeyMap) *key.Binding { return &k.Sort }),
		a("add-sort", "add sort key", k("S"), func(k *KeyMap) *key.Binding { return &k.AddSort }),
		a("prev-column", "column left", k("left", "h"), func(k *KeyMap) *key.Binding { return &k.PrevColumn }),
		a("next-column", "column right", k("right", "l"), func(k *KeyMap) *key.Binding { return &k.NextColumn }),
		a("filter-editor", "filter editor", k("f"), func(k *KeyMap) *key.Binding { return &k.FilterEditor }),
		a("toggle-preview", "preview", k("p"), func(k *KeyMap) *key.Binding { return &k.TogglePreview }),
		a("export", "edit", k("e"), func(k *KeyMap) *key.Binding { return &k.Export }),
		a("load-demo", "load demo", k("L"), func(k *KeyMap) *key.Binding { return &k.LoadDemo }),
		a("cycle-mode", "next mode", k("tab"), func(k *KeyMap) *key.Binding { return &k.CycleMode }),
		a("pause-feed", "pause / resume the feed", k("space"), func(k *KeyMap) *key.Binding { return &k.PauseFeed }),
		a("keep-newest", "keep newest", k("n"), func(k *KeyMap) *key.Binding { return &k.KeepNewest }),
		a("keep-confident", "keep confident", k("c"), func(k *KeyMap) *key.Binding { return &k.KeepConfident }),
		a("keep-this", "keep this", k("K"), func(k *KeyMap) *key.Binding { return &k.KeepThis }),
		a("dismiss", "dismiss", k("x"), func(k *KeyMap) *key.Binding { return &k.Dismiss }),
	}
}

// Catalogue is every action for these views, in the order help lists them:
// the table above with, after the pane keys, one "view-<name>" action for
// each view that has keys. It refuses a view that names an unknown or global
// action, and two views of one name.
func Catalogue(views []ViewInfo) ([]Action, error) {
	table := actionTable()
	index := make(map[string]int, len(table))
	for i, a := range table {
		index[a.Name] = i
	}
	seen := map[string]bool{}
	for _, v := range views {
		if v.Name == "" || seen[v.Name] {
			return nil, fmt.Errorf("view %q registered twice or without a name", v.Name)
		}
		seen[v.Name] = true
		for _, name := range v.Actions {
			i, ok := index[name]
			if !ok || table[i].global {
				return nil, fmt.Errorf("view %q offers %q, which is not a view action of the catalogue", v.Name, name)
			}
			if !slices.Contains(table[i].Views, v.Name) {
				table[i].Views = append(table[i].Views, v.Name)
			}
		}
	}
	var switches []Action
	for _, v := range views {
		if len(v.Keys) == 0 {
			continue
		}
		name := v.Name
		switches = append(switches, Action{Name: v.SwitchAction(), Desc: strings.ToLower(v.Title) + " view", global: true,
			keys: slices.Clone(v.Keys), binding: func(k *KeyMap) *key.Binding { return k.views[name] }})
	}
	at := index["prev-pane"] + 1
	return slices.Concat(table[:at], switches, table[at:]), nil
}

// DefaultBindings is every action's default keys for these views, by action
// name: what NewKeyMap is given when the config file rebinds nothing.
func DefaultBindings(views []ViewInfo) (map[string][]string, error) {
	actions, err := Catalogue(views)
	if err != nil {
		return nil, err
	}
	out := make(map[string][]string, len(actions))
	for _, a := range actions {
		out[a.Name] = a.DefaultKeys()
	}
	return out, nil
}

// NewKeyMap builds a key map for these views from action names to keys. Every
// action of the catalogue must be named; an unknown action is refused by
// name, and so is a key that two actions share in one view.
func NewKeyMap(views []ViewInfo, bindings map[string][]string) (KeyMap, error) {
	actions, err := Catalogue(views)
	if err != nil {
		return KeyMap{}, err
	}
	km := KeyMap{views: map[string]*key.Binding{}, actions: actions}
	for _, v := range views {
		km.scopes = append(km.scopes, v.Name)
		if len(v.Keys) > 0 {
			km.views[v.Name] = new(key.Binding)
		}
	}
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
	if err := checkConflicts(km.scopes, actions, bindings); err != nil {
		return KeyMap{}, err
	}
	return km, nil
}

func checkConflicts(views []string, actions []Action, bindings map[string][]string) error {
	for _, view := range views {
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

// Actions is the catalogue the key map was built from, in the order help lists them.
func (km *KeyMap) Actions() []Action { return km.actions }

// Action is the catalogue entry of that name (ok false when there is none).
func (km *KeyMap) Action(name string) (Action, bool) {
	for _, a := range km.actions {
		if a.Name == name {
			return a, true
		}
	}
	return Action{}, false
}

// Scopes lists every view that owns key bindings, in the order help shows them.
func (km *KeyMap) Scopes() []string { return km.scopes }

// View is the binding that shows the named view (an empty binding for a view
// without keys).
func (km *KeyMap) View(name string) key.Binding {
	if b := km.views[name]; b != nil {
		return *b
	}
	return key.Binding{}
}

// Bindings returns the key map as action name -> keys (the inverse of NewKeyMap).
func (km *KeyMap) Bindings() map[string][]string {
	out := map[string][]string{}
	for _, a := range km.actions {
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
