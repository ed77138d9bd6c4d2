package postgres

import (
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"mnemo/bench/corpus"
)

// referenceTsvector is tsvectorLiteral as it was first written, from
// terms(): the one-pass version must build the very same literal (the
// stored tsvectors of older rows and of newer ones are compared as equal by
// keyword ranking).
func referenceTsvector(id, text string) string {
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

func TestTsvectorLiteralMatchesTerms(t *testing.T) {
	var texts []string
	corpus.Each(300, 1, func(_ int, en corpus.Entry) bool {
		texts = append(texts, en.Item.RenderText())
		return true
	})
	texts = append(texts, "", "   ", "ÉCOLE école İstanbul ǅemal ß straße", "a\xffb\xfe c", "x\u0301y z\u200bw",
		"日本語のテキスト 123 ٣٤٥", strings.Repeat("w ", 17000)+"w", strings.Repeat("long", 600)+" tail",
		strings.Repeat("α", 1023)+" "+strings.Repeat("β", 1024))
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := []rune("aZ9 _-'\\\"ÉéİıßΣσς日\u0301\u200b\xff.,")
	for range 500 {
		var b strings.Builder
		for range rng.IntN(80) {
			b.WriteRune(alphabet[rng.IntN(len(alphabet))])
		}
		texts = append(texts, b.String())
	}
	for i, text := range texts {
		id := strconv.FormatInt(int64(i)*7919, 16)
		if got, want := tsvectorLiteral(id, text), referenceTsvector(id, text); got != want {
			t.Fatalf("text %d %q:\n got %.300s\nwant %.300s", i, text, got, want)
		}
	}
}
