package ui

import (
	"strings"
	"testing"

	"mnemo/ui/common"
	"mnemo/views/help"
)

// Every registered view gets its tab, its key, its palette entry and its help
// group from its one registration.
func TestRegistryDrivesTabsKeysPaletteAndHelp(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 120, 40)
	km := h.m.c.Keys
	for i, s := range Registry() {
		keys := km.View(s.Name).Keys()
		if len(keys) == 0 {
			t.Fatalf("view %s has no key", s.Name)
		}
		h.keys(keys[0])
		if h.m.active != i {
			t.Fatalf("%s switched to view %d, want %d (%s)", keys[0], h.m.active, i, s.Name)
		}
		h.contains("[" + common.KeyLabel(keys) + " " + s.Title + "]")
		a, ok := km.Action(s.SwitchAction())
		if !ok || !a.Global() {
			t.Fatalf("no global action %s in the catalogue", s.SwitchAction())
		}
		for _, name := range s.Actions {
			if a, ok := km.Action(name); !ok || !a.In(s.Name) {
				t.Fatalf("view %s offers %s, which the key map does not scope to it", s.Name, name)
			}
		}
		h.keys("esc")
	}
	h.keys(":")
	for _, s := range Registry() {
		h.contains(s.SwitchAction())
	}
	h.keys("esc")
	lines := common.Strip(strings.Join(help.NewHelp(h.m.c).Lines(100), "\n"))
	for _, s := range Registry() {
		if !strings.Contains(lines, s.Title+" view") {
			t.Fatalf("help has no %s group:\n%s", s.Title, lines)
		}
	}
}

// A registration that names an action the catalogue does not have, or a
// global one, is refused when the key map is built.
func TestCatalogueRefusesBadRegistrations(t *testing.T) {
	t.Parallel()
	bad := []common.ViewInfo{
		{Name: "watch", Title: "Watch", Keys: []string{"7"}, Actions: []string{"frobnicate"}},
		{Name: "watch", Title: "Watch", Keys: []string{"7"}, Actions: []string{"quit"}},
	}
	for _, v := range bad {
		if _, err := common.Catalogue(append(viewInfos(), v)); err == nil || !strings.Contains(err.Error(), `view "watch" offers`) {
			t.Fatalf("registration %v: err = %v", v.Actions, err)
		}
	}
	if _, err := common.Catalogue(append(viewInfos(), viewInfos()[0])); err == nil {
		t.Fatal("a view registered twice was accepted")
	}
	// a new view with a key of its own is one registration: its switch action,
	// default key and scope follow
	watch := common.ViewInfo{Name: "watch", Title: "Watch", Keys: []string{"7"}, Actions: []string{"up", "down", "open"}}
	b, err := common.DefaultBindings(append(viewInfos(), watch))
	if err != nil {
		t.Fatal(err)
	}
	km, err := common.NewKeyMap(append(viewInfos(), watch), b)
	if err != nil {
		t.Fatal(err)
	}
	if got := km.View("watch").Keys(); len(got) != 1 || got[0] != "7" {
		t.Fatalf("watch view keys = %v", got)
	}
	if a, _ := km.Action("open"); !a.In("watch") {
		t.Fatal("open is not scoped to the watch view")
	}
}
