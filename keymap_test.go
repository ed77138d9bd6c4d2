package main

import (
	"strings"
	"testing"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"mnemo/ui"
)

func TestDefaultKeymapCoversEveryAction(t *testing.T) {
	km := defaultKeymap()
	b := km.Bindings()
	for _, a := range km.Actions() {
		if len(b[a.Name]) == 0 {
			t.Errorf("action %q has no default key", a.Name)
		}
	}
}

func TestDefaultsAvoidTerminalKeys(t *testing.T) {
	for name, keys := range ui.DefaultBindings() {
		for _, k := range keys {
			switch k {
			case "ctrl+b", "ctrl+h", "ctrl+j", "ctrl+k", "ctrl+l", "ctrl+s", "ctrl+q":
				t.Errorf("action %q uses %q by default (tmux or flow control)", name, k)
			}
		}
	}
}

func TestLoadKeymap(t *testing.T) {
	press := func(s string) tea.KeyPressMsg { return ui.KeyPress(s) }
	tests := []struct {
		name      string
		overrides map[string][]string
		wantErr   string
		check     func(t *testing.T, km ui.KeyMap)
	}{
		{name: "no overrides gives the defaults", check: func(t *testing.T, km ui.KeyMap) {
			if !key.Matches(press("d"), km.Forget) || !key.Matches(press("q"), km.Quit) {
				t.Fatal("defaults not bound")
			}
		}},
		{name: "an override replaces the keys", overrides: map[string][]string{"forget": {"X"}}, check: func(t *testing.T, km ui.KeyMap) {
			if key.Matches(press("d"), km.Forget) || !key.Matches(press("X"), km.Forget) {
				t.Fatal("forget not rebound to X")
			}
			if km.Forget.Help().Key != "X" {
				t.Fatalf("help shows %q", km.Forget.Help().Key)
			}
		}},
		{name: "keys may move between views", overrides: map[string][]string{"export": {"d"}}, check: func(t *testing.T, km ui.KeyMap) {
			t.Fatal("d is forget in the detail view; export on d must conflict")
		}, wantErr: `key "d" is bound to both "forget" and "export" in the detail view`},
		{name: "unknown action", overrides: map[string][]string{"delete-sort": {"z"}}, wantErr: `unknown action "delete-sort"`},
		{name: "conflict in one view", overrides: map[string][]string{"forget": {"s"}}, wantErr: `key "s" is bound to both "forget" and "sort" in the browse view`},
		{name: "blank key", overrides: map[string][]string{"quit": {" "}}, wantErr: `action "quit" has a blank key`},
		{name: "the same key in different views is fine", overrides: map[string][]string{"load-demo": {"a"}}, check: func(t *testing.T, km ui.KeyMap) {
			if !key.Matches(press("a"), km.LoadDemo) || !key.Matches(press("a"), km.Approve) {
				t.Fatal("a should load the demo in explore and approve in browse")
			}
		}},
		{name: "unbinding an action", overrides: map[string][]string{"toggle-mouse": {}}, check: func(t *testing.T, km ui.KeyMap) {
			if key.Matches(press("m"), km.ToggleMouse) {
				t.Fatal("m still toggles the mouse")
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			km, err := loadKeymap(tt.overrides)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want it to contain %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, km)
		})
	}
}
