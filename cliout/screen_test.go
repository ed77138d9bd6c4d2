package cliout

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"charm.land/lipgloss/v2"

	"mnemo/contract"
)

func TestCheckFormat(t *testing.T) {
	tests := []struct {
		json   bool
		output string
		want   string
	}{
		{false, "", ""},
		{true, "json", ""},
		{false, "text", ""},
		{false, "yaml", "invalid request: -o takes json or text, not `yaml`"},
		{true, "text", "invalid request: --json and -o text ask for different outputs; give one"},
	}
	for _, tt := range tests {
		err := CheckFormat(tt.json, tt.output)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != tt.want {
			t.Errorf("CheckFormat(%v, %q) = %q, want %q", tt.json, tt.output, got, tt.want)
		}
	}
}

// TestAnswerPicksTheForm: a terminal gets the human form (and indented JSON
// when it asks for JSON), a pipe gets compact JSON, -o text the human form.
func TestAnswerPicksTheForm(t *testing.T) {
	tests := []struct {
		name     string
		terminal bool
		json     bool
		format   string
		want     string
	}{
		{"pipe", false, false, "", `{"a":"<b>"}` + "\n"},
		{"terminal", true, false, "", "human\n"},
		{"terminal asking for json", true, true, "", "{\n  \"a\": \"<b>\"\n}\n"},
		{"terminal -o json", true, false, FormatJSON, "{\n  \"a\": \"<b>\"\n}\n"},
		{"pipe -o text", false, false, FormatText, "human\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			o := Out{Stdout: &out, Getenv: func(string) string { return "" }, Now: time.Now,
				IsTerminal: func(any) bool { return tt.terminal }, JSON: tt.json, Format: tt.format}
			if err := o.Answer(map[string]string{"a": "<b>"}, func(s *Screen) { s.Line("human") }); err != nil {
				t.Fatal(err)
			}
			if out.String() != tt.want {
				t.Errorf("got %q, want %q", out.String(), tt.want)
			}
		})
	}
}

func TestJSONLines(t *testing.T) {
	var out bytes.Buffer
	j := NewJSONLines(&out)
	for _, v := range []any{map[string]int{"n": 1}, "<x>"} {
		if err := j.Write(v); err != nil {
			t.Fatal(err)
		}
	}
	if out.Len() != 0 {
		t.Errorf("wrote before Flush: %q", out.String())
	}
	if err := j.Flush(); err != nil || out.String() != "{\"n\":1}\n\"<x>\"\n" {
		t.Errorf("flushed %q, %v", out.String(), err)
	}
}

// TestTableFitsTheWidth: the flex column gives way to fit the screen, a
// droppable column goes on a narrow one, stored control characters never
// reach the terminal, and no line ends in padding.
func TestTableFitsTheWidth(t *testing.T) {
	cols := []Column{{Title: "id"}, {Title: "tags", Shrink: true, Drop: 1}, {Title: "text", Flex: true}, {Title: "n", Right: true}}
	rows := [][]Cell{
		{PlainCell("a1"), PlainCell("style,ops,long-tag-name"), PlainCell(strings.Repeat("word ", 30) + "\x1b[31mred"), PlainCell("7")},
		{PlainCell("b2"), PlainCell(""), PlainCell("short"), {Text: "1,204", Style: lipgloss.NewStyle()}},
	}
	for _, width := range []int{100, 60, 40} {
		var out bytes.Buffer
		o := textOut(&out)
		o.Getenv = func(k string) string {
			if k == "COLUMNS" {
				return itoa(width)
			}
			return ""
		}
		s := o.NewScreen()
		if s.Width() != width {
			t.Fatalf("width %d, want $COLUMNS %d", s.Width(), width)
		}
		s.Table(cols, rows)
		if err := s.Flush(); err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
		if len(lines) != 3 || !strings.HasPrefix(lines[0], "ID") {
			t.Fatalf("%d columns: %q", width, out.String())
		}
		for _, l := range lines {
			if n := len([]rune(l)); n > width {
				t.Errorf("%d columns: line of %d: %q", width, n, l)
			}
			if strings.HasSuffix(l, " ") || strings.Contains(l, "\x1b") {
				t.Errorf("%d columns: padding or escape in %q", width, l)
			}
		}
		if hasTags := strings.Contains(lines[0], "TAGS"); hasTags != (width > 40) {
			t.Errorf("%d columns: tags shown %v:\n%s", width, hasTags, out.String())
		}
		if !strings.HasSuffix(lines[2], "1,204") {
			t.Errorf("%d columns: the number is not right-aligned: %q", width, lines[2])
		}
	}
}

func itoa(n int) string { return Count(n) }

func TestConfAndAgo(t *testing.T) {
	c := contract.F32(0.875)
	if Conf(&c) != "0.88" || Conf(nil) != "" {
		t.Errorf("Conf = %q, %q", Conf(&c), Conf(nil))
	}
	var out bytes.Buffer
	s := textOut(&out).NewScreen()
	if got := s.Ago(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)); got != "1d ago" {
		t.Errorf("Ago = %q", got)
	}
	if s.Ago(time.Time{}) != "" {
		t.Error("a zero time is not blank")
	}
}
