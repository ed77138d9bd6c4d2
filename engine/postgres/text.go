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

// quotedLexeme is one lexeme quoted for tsvector and tsquery input.
func quotedLexeme(t string) string {
	var b strings.Builder
	quoteLexeme(&b, t)
	return b.String()
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

// repeatMark is appended to a term to make its repeat marker: the lexeme a
// record's tsvector also holds (without positions) for each term it holds at
// two positions or more. A term is letters, digits and marks only, so no
// query term is ever a marker (nor an id bucket). Keyword ranking reads the markers to rank the
// few records that can score above a single occurrence without reading every
// match (search.go).
const repeatMark = "+"

// idBucketMark starts the lexeme naming the first character of a record's
// id (its id bucket, one of 16 for a fingerprint): keyword ranking finds the
// smallest ids among many equal scores in the first bucket before the rest.
const idBucketMark = "#"

// idBucket is the id bucket lexeme of an id.
func idBucket(id string) string {
	if id == "" {
		return idBucketMark
	}
	return idBucketMark + id[:1]
}

// tsvectorLiteral is the tsvector input of record id's text: each term with
// its positions, the repeat marker of each term held at two positions or
// more (positions as PostgreSQL keeps them: capped, duplicates dropped) and
// the id bucket, both without positions.
func tsvectorLiteral(id, text string) string {
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
	var repeated []string
	for i, t := range order {
		if i > 0 {
			b.WriteByte(' ')
		}
		quoteLexeme(&b, t)
		b.WriteByte(':')
		p := slices.Compact(pos[t])
		if len(p) > 1 {
			repeated = append(repeated, t)
		}
		for j, n := range p {
			if j > 0 {
				b.WriteByte(',')
			}
			b.WriteString(strconv.Itoa(n))
		}
	}
	for _, t := range repeated {
		b.WriteByte(' ')
		quoteLexeme(&b, t+repeatMark)
	}
	if b.Len() > 0 {
		b.WriteByte(' ')
	}
	quoteLexeme(&b, idBucket(id))
	return b.String()
}

// queryTerms are the query's searchable terms, sorted, each once.
func queryTerms(q string) []string {
	ts := terms(q)
	slices.Sort(ts)
	return slices.Compact(ts)
}

// tsqueryLiteral is the terms joined by OR (every term optional, as in
// engine/bolt), or "" without a term.
func tsqueryLiteral(ts []string) string {
	var b strings.Builder
	for i, t := range ts {
		if i > 0 {
			b.WriteString(" | ")
		}
		quoteLexeme(&b, t)
	}
	return b.String()
}

// maxStagedTerms bounds the queries ranked in two stages: the first stage's
// query holds every pair of terms.
const maxStagedTerms = 8

// aboveOnceLiteral is the tsquery of the records whose ts_rank for the terms
// is above that of a record holding one term once: those holding two terms
// or more, or one term at two positions or more (its repeat marker).
func aboveOnceLiteral(ts []string) string {
	var b strings.Builder
	for i, t := range ts {
		if i > 0 {
			b.WriteString(" | ")
		}
		quoteLexeme(&b, t+repeatMark)
	}
	for i, t := range ts {
		for _, u := range ts[i+1:] {
			b.WriteString(" | (")
			quoteLexeme(&b, t)
			b.WriteString(" & ")
			quoteLexeme(&b, u)
			b.WriteByte(')')
		}
	}
	return b.String()
}
