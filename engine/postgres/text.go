package postgres

import (
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
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
// the id bucket, both without positions. The terms are those of terms(),
// found in one pass with an ASCII fast path: building it was the largest
// share of a record's cost in the client (38 µs a record through terms and
// a map of position slices).
func tsvectorLiteral(id, text string) string {
	type termPositions struct {
		term string
		pos  []int32
	}
	var (
		order []termPositions
		index = make(map[string]int, 64)
		word  []byte // the current term, lower-cased
		n     int    // terms kept so far (a term's position is n+1)
	)
	end := func() {
		if len(word) == 0 {
			return
		}
		if len(word) <= maxLexemeBytes {
			p := int32(min(n+1, maxPosition))
			n++
			k, seen := index[string(word)]
			if !seen {
				k = len(order)
				t := string(word)
				index[t] = k
				order = append(order, termPositions{term: t})
			}
			tp := &order[k]
			if len(tp.pos) < maxPositions && (len(tp.pos) == 0 || tp.pos[len(tp.pos)-1] != p) {
				tp.pos = append(tp.pos, p)
			}
		}
		word = word[:0]
	}
	for i := 0; i < len(text); {
		c := text[i]
		if c < utf8.RuneSelf {
			switch {
			case 'a' <= c && c <= 'z', '0' <= c && c <= '9':
				word = append(word, c)
			case 'A' <= c && c <= 'Z':
				word = append(word, c+('a'-'A'))
			default:
				end()
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(text[i:])
		i += size
		if r != utf8.RuneError && (unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r)) {
			word = utf8.AppendRune(word, unicode.ToLower(r))
		} else {
			end()
		}
	}
	end()
	var b strings.Builder
	b.Grow(len(text) + len(order)*4 + 8)
	var repeated []string
	for i := range order {
		tp := &order[i]
		if i > 0 {
			b.WriteByte(' ')
		}
		quoteLexeme(&b, tp.term)
		b.WriteByte(':')
		if len(tp.pos) > 1 {
			repeated = append(repeated, tp.term)
		}
		for j, p := range tp.pos {
			if j > 0 {
				b.WriteByte(',')
			}
			var num [8]byte
			b.Write(strconv.AppendInt(num[:0], int64(p), 10))
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
