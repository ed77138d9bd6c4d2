package ui

import (
	"reflect"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"mnemo/contract"
	"mnemo/ui/common"
	"mnemo/ui/uitest"
	"mnemo/views/browse"
	"mnemo/views/explore"
	"mnemo/views/fetch"
	"mnemo/views/recall"
)

// harness drives a root model synchronously on the fixture store.
type harness struct {
	t *testing.T
	m *model
	// seen is every message the pump delivered, in order (tests look for the
	// commands' effects here, such as the clipboard write).
	seen []tea.Msg
}

// newHarness is a session on a fresh fixture store, sized and started.
func newHarness(t *testing.T, w, h int, mutate ...func(*Options)) *harness {
	t.Helper()
	e, err := uitest.Fixture()
	if err != nil {
		t.Fatal(err)
	}
	return harnessOn(t, e, "~/.local/share/mnemo", w, h, mutate...)
}

// harnessOn is a session on engine with the default keys, the fixed clock and
// instant timers, sized and started.
func harnessOn(t *testing.T, engine contract.Engine, label string, w, h int, mutate ...func(*Options)) *harness {
	t.Helper()
	opts := Options{Engine: engine, StoreLabel: label, Keys: DefaultKeyMap(), Now: uitest.Now, Timer: uitest.Timer}
	for _, f := range mutate {
		f(&opts)
	}
	hs := &harness{t: t, m: newModel(opts)}
	hs.send(tea.WindowSizeMsg{Width: w, Height: h})
	hs.pump(hs.m.Init())
	return hs
}

func (h *harness) pump(cmd tea.Cmd) {
	uitest.Drain(func(msg tea.Msg) tea.Cmd {
		if _, ok := msg.(spinTickMsg); ok {
			return nil
		}
		h.seen = append(h.seen, msg)
		_, c := h.m.Update(msg)
		return c
	}, cmd, 10*time.Second)
}

func (h *harness) send(msg tea.Msg) {
	_, cmd := h.m.Update(msg)
	h.pump(cmd)
}

func (h *harness) keys(names ...string) {
	for _, n := range names {
		h.send(KeyPress(n))
	}
}

// clipboard lists the texts the session asked the terminal to put on the
// clipboard (OSC52), in order: tea.SetClipboard's message type is
// unexported, so it is recognised by the type of the one it makes.
func (h *harness) clipboard() []string {
	write := reflect.TypeOf(tea.SetClipboard("")())
	var out []string
	for _, msg := range h.seen {
		if reflect.TypeOf(msg) == write {
			out = append(out, reflect.ValueOf(msg).String())
		}
	}
	return out
}

func (h *harness) screen() string {
	return ansi.Strip(h.m.View().Content)
}

func (h *harness) contains(want string) {
	h.t.Helper()
	if s := h.screen(); !strings.Contains(s, want) {
		h.t.Fatalf("screen lacks %q:\n%s", want, s)
	}
}

func (h *harness) lacks(unwanted string) {
	h.t.Helper()
	if s := h.screen(); strings.Contains(s, unwanted) {
		h.t.Fatalf("screen still shows %q:\n%s", unwanted, s)
	}
}

// The session's views, typed, for tests that look inside them.
func (m *model) exploreView() *explore.Model { return m.viewNamed(common.ViewExplore).(*explore.Model) }
func (m *model) browseView() *browse.Model   { return m.viewNamed(common.ViewBrowse).(*browse.Model) }
func (m *model) fetchView() *fetch.Model     { return m.viewNamed(common.ViewFetch).(*fetch.Model) }
func (m *model) recallView() *recall.Model   { return m.viewNamed(common.ViewRecall).(*recall.Model) }
