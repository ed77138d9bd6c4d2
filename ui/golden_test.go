package ui

import (
	"fmt"
	"testing"
)

// TestGoldenScreens renders every view on the fixture store at 80x24 and
// 120x40 and compares the ANSI-stripped screens with testdata/golden.
func TestGoldenScreens(t *testing.T) {
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
		{"fetch", []string{"3", "r", "e", "l", "e", "a", "s", "e"}},
		{"recall", []string{"4", "w", "h", "a", "t", "space", "a", "b", "o", "u", "t", "space", "t", "a", "b", "s", "enter"}},
		{"detail-learning", []string{"tab", "enter"}},
		{"detail-markdown", []string{"2", "G", "k", "k", "k", "k", "k", "k", "k", "k", "k", "k", "k", "k", "k", "k", "k", "enter"}},
		{"detail-conversation", []string{"tab", "j", "j", "j", "j", "j", "j", "j", "j", "j", "enter"}},
		{"forget-dialog", []string{"enter", "j", "j", "enter", "D"}},
		{"help", []string{"?"}},
		{"palette", []string{":", "f", "o", "r"}},
	}
	for _, size := range [][2]int{{80, 24}, {120, 40}} {
		for _, s := range screens {
			name := fmt.Sprintf("%s-%dx%d", s.name, size[0], size[1])
			t.Run(name, func(t *testing.T) {
				h := newHarness(t, size[0], size[1])
				h.keys(s.keys...)
				golden(t, name, h.screen())
			})
		}
	}
}

func TestGoldenTooSmallAndWelcome(t *testing.T) {
	h := newHarness(t, 60, 20)
	golden(t, "too-small-60x20", h.screen())
	w := harnessOn(t, memoryEngine(), "/tmp/empty", 80, 24)
	golden(t, "welcome-80x24", w.screen())
}

func TestGoldenPlain(t *testing.T) {
	h := newHarness(t, 80, 24, func(o *Options) { o.Plain = true })
	h.keys("enter")
	golden(t, "explore-plain-80x24", h.screen())
}
