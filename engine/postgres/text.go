package postgres

import (
	"slices"
	"strconv"
	"strings"
	"unicode"
)

// Full-text limits of PostgreSQL: a lexeme under 2 KiB, positions up to
// 16383, at most 256 positions kept per lexeme.
const (
	maxLexemeBytes = 2046
	maxPosition    = 16383
	maxPositions   = 255
)

// terms splits text the way the keyword index of engine/bolt does: runs of
// letters, digits and marks, lower-cased. Both the stored tsvector and the
// query are built from it in Go, so PostgreSQL's own parser (which would
// split differently) never decides what a word is.
func terms(text string) []string {
	var out []string
	for _, f := range strings.FieldsFunc(text, func(r rune) bool {
		return !(unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r))
	}) {
		f = strings.ToLower(f)
		if len(f) <= maxLexemeBytes {
			out = append(out, f)
		}
	}
	return out
}

// quoteLexeme quotes one lexeme for tsvector and tsquery input.
func quoteLexeme(b *strings.Builder, t string) {
	b.WriteByte('\'')
	for _, r := range t {
		switch r {
		case '\'':
			b.WriteString("''")
		case '\\':
			b.WriteString(`\\`)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('\'')
}

// tsvectorLiteral is the tsvector input of a text: each term with its positions.
func tsvectorLiteral(text string) string {
	pos := map[string][]int{}
	var order []string
	for i, t := range terms(text) {
		p, seen := pos[t]
		if !seen {
			order = append(order, t)
		}
		if len(p) < maxPositions {
			pos[t] = append(p, min(i+1, maxPosition))
		}
	}
	var b strings.Builder
	for i, t := range order {
		if i > 0 {
			b.WriteByte(' ')
		}
		quoteLexeme(&b, t)
		b.WriteByte(':')
		p := slices.Compact(pos[t])
		for j, n := range p {
			if j > 0 {
				b.WriteByte(',')
			}
			b.WriteString(strconv.Itoa(n))
		}
	}
	return b.String()
}

// tsqueryLiteral is the query's terms joined by OR (every term optional, as in
// engine/bolt), or "" when the query has no searchable term.
func tsqueryLiteral(q string) string {
	ts := terms(q)
	slices.Sort(ts)
	ts = slices.Compact(ts)
	var b strings.Builder
	for i, t := range ts {
		if i > 0 {
			b.WriteString(" | ")
		}
		quoteLexeme(&b, t)
	}
	return b.String()
}
