package ui

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/charmbracelet/x/exp/golden"
)

// goldenScreen is a screen as its golden file holds it: each line without
// its trailing blanks, and a final newline.
func goldenScreen(screen string) string {
	lines := strings.Split(screen, "\n")
	for i := range lines {
		lines[i] = strings.TrimRight(lines[i], " ")
	}
	return strings.Join(lines, "\n") + "\n"
}

// The golden screens are ui/testdata/<test>/<screen>.golden, compared
// through x/exp/golden (which shows a diff); go test ./ui -update rewrites
// them. A screen is stored ANSI-stripped, each line without its trailing
// blanks.

// TestGoldenScreens renders every view on the fixture store at 80x24 and
// 120x40 and compares the screens with their golden files.
func TestGoldenScreens(t *testing.T) {
	t.Parallel()
	screens := []struct {
		name string
		keys []string
	}{
		{"explore", nil},
		{"explore-expanded", []string{"enter", "j", "j", "enter", "j", "j", "j", "j", "enter"}},
		{"explore-namespace-tree", []string{"G", "k", "enter", "j", "l"}},
		{"explore-preview-toggled", []string{"tab", "j", "p"}},
		{"browse", []string{"2"}},
		{"browse-filters", []string{"2", "f"}},
		// a narrow column sorted: its arrow shows, its title gives way
		{"browse-sorted-narrow-column", []string{"2", "s", "s"}},
		{"fetch", []string{"3", "r", "e", "l", "e", "a", "s", "e"}},
		{"recall", []string{"4", "w", "h", "a", "t", "space", "a", "b", "o", "u", "t", "space", "t", "a", "b", "s", "enter"}},
		// a long answer scrolled down one step, then the question refocused
		{"recall-scrolled", []string{"4", "w", "h", "a", "t", "space", "a", "b", "o", "u", "t", "space", "t", "a", "b", "s", "enter", "pgdown"}},
		{"recall-ask-again", []string{"4", "t", "a", "b", "s", "enter", "/", "x"}},
		{"detail-learning", []string{"tab", "enter"}},
		{"detail-markdown", []string{"2", "G", "k", "k", "k", "k", "k", "k", "k", "k", "k", "k", "k", "k", "k", "k", "k", "enter"}},
		{"detail-conversation", []string{"tab", "j", "j", "j", "j", "j", "j", "j", "j", "j", "enter"}},
		{"forget-dialog", []string{"enter", "j", "j", "enter", "D"}},
		{"curate", []string{"6"}},
		// a cluster open, its members side by side, the second one chosen
		{"curate-cluster", []string{"6", "enter", "l"}},
		{"help", []string{"?"}},
		{"palette", []string{":", "f", "o", "r"}},
	}
	for _, size := range [][2]int{{80, 24}, {120, 40}} {
		for _, s := range screens {
			name := fmt.Sprintf("%s-%dx%d", s.name, size[0], size[1])
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				h := newHarness(t, size[0], size[1])
				h.keys(s.keys...)
				golden.RequireEqual(t, goldenScreen(h.screen()))
			})
		}
	}
}

func TestGoldenTooSmallAndWelcome(t *testing.T) {
	t.Parallel()
	t.Run("too-small-60x20", func(t *testing.T) {
		t.Parallel()
		golden.RequireEqual(t, goldenScreen(newHarness(t, 60, 20).screen()))
	})
	t.Run("welcome-80x24", func(t *testing.T) {
		t.Parallel()
		golden.RequireEqual(t, goldenScreen(harnessOn(t, memoryEngine(), "/tmp/empty", 80, 24).screen()))
	})
}

func TestGoldenPlain(t *testing.T) {
	t.Parallel()
	t.Run("explore-plain-80x24", func(t *testing.T) {
		h := newHarness(t, 80, 24, func(o *Options) { o.Plain = true })
		h.keys("enter")
		golden.RequireEqual(t, goldenScreen(h.screen()))
	})
}

// TestGoldenReader: a session that may not write (a reader's token over
// --remote, or --readonly) offers no write action: Browse's footer has no
// approve, reject or forget, and help lists none of them.
// writeAction is a write action's name as a footer or help shows it.
var writeAction = regexp.MustCompile(`\b(approve|reject|forget|undo|edit)\b`)

func TestGoldenReader(t *testing.T) {
	t.Parallel()
	for _, s := range []struct {
		name string
		keys []string
	}{
		{"reader-browse-80x24", []string{"2"}},
		{"reader-help-80x24", []string{"?"}},
	} {
		t.Run(s.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, 80, 24, func(o *Options) { o.ReadOnly = true })
			h.keys(s.keys...)
			screen := h.screen()
			if w := writeAction.FindString(screen); w != "" {
				t.Errorf("a reader's screen offers %q:\n%s", w, screen)
			}
			golden.RequireEqual(t, goldenScreen(screen))
		})
	}
}
