package forget

import (
	"strconv"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"mnemo/contract"
	"mnemo/ui/common"
	"mnemo/ui/uitest"
)

func dialog(count int) *Model {
	c := &common.Common{Keys: uitest.Keys(), Styles: common.NewStyles(true, false)}
	s, _ := common.Scope{}.Narrow(common.Crumb{Facet: contract.FacetKind, Value: "learning"})
	return New(c, common.ForgetTarget{Scope: &s, Count: count}, true)
}

func press(s string) tea.KeyPressMsg {
	switch s {
	case "enter":
		return tea.KeyPressMsg{Code: tea.KeyEnter}
	case "esc":
		return tea.KeyPressMsg{Code: tea.KeyEscape}
	}
	return tea.KeyPressMsg{Code: rune(s[0]), Text: s}
}

// outcome feeds keys until the dialog answers: "confirm", "cancel" or "" (still open).
func outcome(m *Model, keys []string) (string, int) {
	for i, k := range keys {
		cmd := m.Update(press(k))
		if cmd == nil {
			continue
		}
		switch cmd().(type) {
		case ConfirmedMsg:
			return "confirm", i
		case CancelledMsg:
			return "cancel", i
		}
	}
	return "", len(keys)
}

func TestDialogNamesScopeAndCount(t *testing.T) {
	t.Parallel()
	m := dialog(311)
	if q := m.Question(); q != "Forget 311 records matching kind=learning?" {
		t.Fatalf("question = %q", q)
	}
	view := m.View(72)
	if !strings.Contains(view, "Cancel") || !strings.Contains(view, "Type 311") {
		t.Fatalf("view:\n%s", view)
	}
}

func TestDialogKeys(t *testing.T) {
	t.Parallel()
	tests := []struct {
		keys []string
		want string
	}{
		{[]string{"enter"}, "cancel"},
		{[]string{"esc"}, "cancel"},
		{[]string{"n"}, "cancel"},
		{[]string{"y"}, "confirm"},
		{[]string{"3", "1", "1"}, "confirm"},
		{[]string{"3", "1"}, ""},
		{[]string{"3", "2"}, "cancel"},
		{[]string{"3", "1", "enter"}, "cancel"},
		{[]string{"d"}, "cancel"},
	}
	for _, tt := range tests {
		if got, _ := outcome(dialog(311), tt.keys); got != tt.want {
			t.Errorf("%v: got %q, want %q", tt.keys, got, tt.want)
		}
	}
}

// FuzzDialogOnlyConfirmsOnPurpose checks that no key sequence forgets except
// `y` or the exact count typed from the start.
func FuzzDialogOnlyConfirmsOnPurpose(f *testing.F) {
	f.Add(311, "311")
	f.Add(5, "y")
	f.Add(12, "1x2")
	f.Add(7, "\r7")
	f.Fuzz(func(t *testing.T, count int, typed string) {
		if count < 1 || count > 1_000_000 || len(typed) == 0 {
			return
		}
		var keys []string
		for _, r := range typed {
			switch {
			case r == '\r':
				keys = append(keys, "enter")
			case r == 0x1b:
				keys = append(keys, "esc")
			case r > 0x20 && r < 0x7f:
				keys = append(keys, string(r))
			}
		}
		if len(keys) == 0 {
			return
		}
		got, at := outcome(dialog(count), keys)
		if got != "confirm" {
			return
		}
		prefix := strings.Join(keys[:at+1], "")
		if prefix != "y" && prefix != "Y" && prefix != strconv.Itoa(count) {
			t.Fatalf("confirmed after %q for a count of %d", prefix, count)
		}
	})
}
