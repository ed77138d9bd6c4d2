package ui

import (
	"context"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"mnemo/contract"
	"mnemo/ui/uitest"
)

// TestProgramFlow runs the whole program: start, drill down two levels, open a
// record, forget it with confirmation, undo, quit.
func TestProgramFlow(t *testing.T) {
	e, err := uitest.Fixture()
	if err != nil {
		t.Fatal(err)
	}
	m := newModel(Options{Engine: e, StoreLabel: "fixture", Keys: DefaultKeyMap(), Now: uitest.Now})
	probe := &screenProbe{model: m}
	tm := teatest.NewTestModel(t, probe, teatest.WithInitialTermSize(100, 30),
		teatest.WithProgramOptions(tea.WithColorProfile(colorprofile.Ascii)))
	wait := func(what string) {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for !strings.Contains(probe.screen(), what) {
			if time.Now().After(deadline) {
				t.Fatalf("screen never showed %q; last screen:\n%s", what, probe.screen())
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	press := func(keys ...string) {
		for _, k := range keys {
			tm.Send(KeyPress(k))
		}
	}
	wait("36 of 36")
	press("enter") // expand kind
	wait("conversation")
	press("j", "j", "enter") // kind=learning
	wait("kind=learning")
	wait("12 of 36")
	press("G", "enter")    // expand status
	wait("    superseded") // the bucket, not the scope line's "1 superseded"
	press("j", "enter")    // status=active (the largest bucket)
	wait("8 of 36")
	press("tab", "enter") // open the first record
	wait("Learning")
	press("d")
	wait("Cancel")
	press("y")
	wait("forgot 1 record")
	press("u")
	wait("restored 1 record")
	press("q")
	tm.WaitFinished(t, teatest.WithFinalTimeout(5*time.Second))

	final := tm.FinalModel(t).(*screenProbe).model
	if got := final.c.Scope.Words(" > "); got != "kind=learning > status=active" {
		t.Fatalf("final scope = %q", got)
	}
	page, err := e.Browse(context.Background(), contract.BrowseQuery{Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	if page.Total != 36 {
		t.Fatalf("store holds %d records after forget and undo, want 36", page.Total)
	}
	out, _ := io.ReadAll(tm.FinalOutput(t))
	if len(out) == 0 {
		t.Fatal("the program wrote nothing to the terminal")
	}
}

// screenProbe wraps the root model in the running program and keeps the last
// ANSI-stripped screen, so the test can wait on what the user sees without
// racing with the program's goroutine.
type screenProbe struct {
	model *model
	mu    sync.Mutex
	last  string
}

func (p *screenProbe) Init() tea.Cmd { return p.model.Init() }

func (p *screenProbe) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	_, cmd := p.model.Update(msg)
	s := ansi.Strip(p.model.render())
	p.mu.Lock()
	p.last = s
	p.mu.Unlock()
	return p, cmd
}

func (p *screenProbe) View() tea.View { return p.model.View() }

func (p *screenProbe) screen() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.last
}
