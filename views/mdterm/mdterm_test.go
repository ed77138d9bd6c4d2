package mdterm

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"

	"mnemo/ui/common"
)

// guide holds every element the renderer draws.
const guide = "# Guide\n\n" +
	"Run `mnemo import FILE.jsonl` first, then *explore* and **browse** the [docs](https://example.com/docs) or <https://x.io>.\n" +
	"A soft break here.  \nA hard break before this.\n\n" +
	"## Lists\n\n" +
	"- explore\n- browse\n  - nested item with a long text that should wrap across lines nicely\n- [x] done task\n- [ ] open task\n\n" +
	"9. nine\n10. ten\n\n" +
	"1) loose item\n\n   with a second paragraph\n\n2) and another\n\n" +
	"> quoted text that is long enough to wrap around the quote bar for sure\n>\n> second para\n\n" +
	"```go\nfunc main() {\n\tfmt.Println(\"a code line far longer than the narrowest width it is drawn at\")\n}\n```\n\n" +
	"    indented code\n\n" +
	"---\n\n" +
	"| name | count | note |\n|:-----|------:|:----:|\n| alpha | 1 | first one |\n| beta | 22 | ~~gone~~ |\n\n" +
	"![logo](img.png) ~~strike~~ &amp; \\*not em\\* caf&eacute; 漢字の文章\n\n" +
	"<div>\nhtml block\n</div>\n\n" +
	"supercalifragilisticexpialidocioussupercalifragilisticexpialidocious\n"

// unpainted is the styled theme's glyphs without its paints.
func unpainted() Theme {
	th := ThemeOf(stylesOf(false))
	return Theme{Bullet: th.Bullet, Quote: th.Quote, Rule: th.Rule, Cross: th.Cross, Ellipsis: th.Ellipsis}
}

func stylesOf(plain bool) *common.Styles {
	st := common.NewStyles(true, plain)
	return &st
}

// TestRenderGuide draws the guide at three widths with the styled theme's
// glyphs and with the plain theme (ASCII glyphs, no paint).
func TestRenderGuide(t *testing.T) {
	for _, width := range []int{24, 40, 80} {
		for _, mode := range []struct {
			name string
			th   Theme
		}{{"unicode", unpainted()}, {"plain", ThemeOf(stylesOf(true))}} {
			t.Run(fmt.Sprintf("%s-%d", mode.name, width), func(t *testing.T) {
				lines := Render(guide, width, mode.th)
				var b strings.Builder
				for _, l := range lines {
					if w := ansi.StringWidth(l); w > width {
						t.Errorf("line %q is %d cells wide, more than %d", l, w, width)
					}
					b.WriteString(l + "\n")
				}
				golden.RequireEqual(t, b.String())
			})
		}
	}
}

// TestPaintsOnlyStyle: the styled theme paints what the unpainted one draws,
// and changes nothing else.
func TestPaintsOnlyStyle(t *testing.T) {
	styled := Render(guide, 40, ThemeOf(stylesOf(false)))
	plain := Render(guide, 40, unpainted())
	if len(styled) != len(plain) {
		t.Fatalf("%d styled lines, %d unpainted", len(styled), len(plain))
	}
	painted := 0
	for i := range styled {
		if got := ansi.Strip(styled[i]); got != plain[i] {
			t.Errorf("line %d: styled %q, unpainted %q", i, got, plain[i])
		}
		if styled[i] != plain[i] {
			painted++
		}
	}
	if painted < 10 {
		t.Errorf("only %d of %d lines are painted", painted, len(styled))
	}
	if !strings.HasPrefix(styled[0], "\x1b[") {
		t.Errorf("the heading is not painted: %q", styled[0])
	}
}

// TestPlainThemeDrawsASCII: the plain theme's glyphs are ASCII, for screen
// readers and dumb terminals.
func TestPlainThemeDrawsASCII(t *testing.T) {
	for _, l := range Render(strings.NewReplacer("漢字の文章", "", "&eacute;", "e").Replace(guide), 40, ThemeOf(stylesOf(true))) {
		for _, r := range l {
			if r >= utf8.RuneSelf {
				t.Fatalf("line %q holds %q", l, r)
			}
		}
	}
}

// FuzzRender: any text renders, every line within the width, the paints
// changing nothing but style.
func FuzzRender(f *testing.F) {
	f.Add(guide, 40)
	f.Add("- a\n  - b\n    - c\n      > d `e` **f** [g](h)", 8)
	f.Add("|a|b|\n|-|-|\n|x|y|", 9)
	f.Add("# "+strings.Repeat("漢", 30), 11)
	f.Add("<div>\n\tx\n</div>\n\n\tcode\twith tabs", 20)
	styledTheme, plainTheme := ThemeOf(stylesOf(false)), unpainted()
	f.Fuzz(func(t *testing.T, src string, width int) {
		width = width%200 + 1
		if width < 0 {
			width = -width
		}
		styled := Render(src, width, styledTheme)
		plain := Render(src, width, plainTheme)
		if len(styled) != len(plain) {
			t.Fatalf("%d styled lines, %d unpainted", len(styled), len(plain))
		}
		for i, l := range styled {
			if w := ansi.StringWidth(l); w > max(width, 8) {
				t.Fatalf("width %d: line %q is %d cells wide", width, l, w)
			}
			if strings.ContainsAny(ansi.Strip(l), "\t\r\n") {
				t.Fatalf("line %q holds a tab or a line ending", l)
			}
			if ansi.Strip(l) != plain[i] {
				t.Fatalf("line %d: styled %q, unpainted %q", i, ansi.Strip(l), plain[i])
			}
		}
	})
}
