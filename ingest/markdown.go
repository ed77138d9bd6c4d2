package ingest

import (
	"strconv"
	"strings"
)

// section is a part of a markdown file: a heading and what follows it up to
// the next heading of any level.
type section struct {
	heading string // without the #s; "" for text before the first heading
	anchor  string // stable key: heading slug, "-2" etc. for repeats
	line    int    // 1-based line of the heading (or of the first text)
	body    string
}

// sections splits markdown at its ATX headings, ignoring # lines inside code
// fences. startLine is the file line of text's first line.
func sections(text string, startLine int) []section {
	lines := strings.Split(text, "\n")
	var out []section
	cur := section{line: startLine}
	var body []string
	fence := ""
	seen := map[string]int{}
	flush := func() {
		cur.body = strings.TrimSpace(strings.Join(body, "\n"))
		if cur.heading != "" || cur.body != "" {
			out = append(out, cur)
		}
	}
	for i, l := range lines {
		trimmed := strings.TrimSpace(l)
		if fence != "" {
			if strings.HasPrefix(trimmed, fence) {
				fence = ""
			}
			body = append(body, l)
			continue
		}
		if strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~") {
			fence = trimmed[:3]
			body = append(body, l)
			continue
		}
		if h, ok := atxHeading(l); ok {
			flush()
			slug := slugify(h)
			seen[slug]++
			if n := seen[slug]; n > 1 {
				slug += "-" + strconv.Itoa(n)
			}
			cur = section{heading: h, anchor: slug, line: startLine + i}
			body = nil
			continue
		}
		if len(body) == 0 && trimmed == "" && cur.heading == "" {
			cur.line = startLine + i + 1
			continue
		}
		body = append(body, l)
	}
	flush()
	return out
}

// atxHeading reads "# text" .. "###### text".
func atxHeading(l string) (string, bool) {
	if len(l) > 3 && strings.HasPrefix(l, "    ") {
		return "", false
	}
	l = strings.TrimLeft(l, " ")
	n := 0
	for n < len(l) && l[n] == '#' {
		n++
	}
	if n == 0 || n > 6 || n < len(l) && l[n] != ' ' && l[n] != '\t' {
		return "", false
	}
	h := strings.TrimSpace(strings.TrimRight(strings.TrimSpace(l[n:]), "#"))
	return h, h != ""
}

// slugify makes a heading an anchor: lower case, letters and digits, dashes.
func slugify(s string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(s) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 127 {
			b.WriteRune(r)
			dash = false
		} else if !dash && b.Len() > 0 {
			b.WriteByte('-')
			dash = true
		}
	}
	out := strings.TrimSuffix(b.String(), "-")
	if out == "" {
		return "section"
	}
	return out
}

// frontmatter splits "---\nyaml\n---\n" from the start of a markdown file. It
// returns the frontmatter lines, the rest, and the rest's first line number.
func frontmatter(text string) (fm []string, rest string, restLine int, ok bool) {
	text = strings.TrimPrefix(text, "\ufeff")
	if !strings.HasPrefix(text, "---\n") && !strings.HasPrefix(text, "---\r\n") {
		return nil, text, 1, false
	}
	lines := strings.Split(text, "\n")
	for i := 1; i < len(lines); i++ {
		if strings.TrimSpace(lines[i]) == "---" {
			for _, l := range lines[1:i] {
				fm = append(fm, strings.TrimRight(l, "\r"))
			}
			return fm, strings.Join(lines[i+1:], "\n"), i + 2, true
		}
	}
	return nil, text, 1, false
}
