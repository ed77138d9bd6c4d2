package memory

import (
	"math"
	"strings"
	"unicode"

	"mnemo/contract"
)

// vectorDims is the reference engine's embedding width.
const vectorDims = 64

// vectorThreshold is the cosine at or above which vector ranking counts a hit.
const vectorThreshold = 0.2

// words splits text on every non-alphanumeric rune and lowercases the pieces.
func words(text string) []string {
	fields := strings.FieldsFunc(text, func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
	for i, f := range fields {
		fields[i] = strings.ToLower(f)
	}
	return fields
}

// keywordScore is the fraction of the query's distinct words the text holds.
func keywordScore(queryWords []string, textWords map[string]bool) float64 {
	distinct := map[string]bool{}
	for _, w := range queryWords {
		distinct[w] = true
	}
	if len(distinct) == 0 {
		return 0
	}
	present := 0
	for w := range distinct {
		if textWords[w] {
			present++
		}
	}
	return float64(present) / float64(len(distinct))
}

// embed is the unit vector of FNV-1a hashed character trigrams of " word ",
// over every word; the zero vector when the text has no words.
func embed(ws []string) [vectorDims]float64 {
	var v [vectorDims]float64
	for _, w := range ws {
		runes := []rune(" " + w + " ")
		for i := 0; i+3 <= len(runes); i++ {
			h := contract.FNV1a32([]byte(string(runes[i : i+3])))
			v[h%vectorDims]++
		}
	}
	var norm float64
	for _, x := range v {
		norm += x * x
	}
	if norm == 0 {
		return v
	}
	norm = math.Sqrt(norm)
	for i := range v {
		v[i] /= norm
	}
	return v
}

func cosine(a, b *[vectorDims]float64) float64 {
	var dot float64
	for i := range a {
		dot += a[i] * b[i]
	}
	return dot
}

// query is a fetch or recall question prepared once for scoring many texts.
type query struct {
	words  []string
	vector [vectorDims]float64
}

func newQuery(text string) query {
	ws := words(text)
	return query{words: ws, vector: embed(ws)}
}

// scoredText is a record's text prepared once, at store time, for every later
// ranking: its distinct words and its embedding.
type scoredText struct {
	words  map[string]bool
	vector [vectorDims]float64
}

func prepare(text string) scoredText {
	ws := words(text)
	set := make(map[string]bool, len(ws))
	for _, w := range ws {
		set[w] = true
	}
	return scoredText{words: set, vector: embed(ws)}
}

// score ranks one text in a mode; ok tells whether the text is a hit at all.
func (q *query) score(mode contract.FetchMode, t *scoredText) (score float64, ok bool) {
	switch mode {
	case contract.ModeKeyword:
		kw := keywordScore(q.words, t.words)
		return kw, kw > 0
	case contract.ModeVector:
		c := cosine(&q.vector, &t.vector)
		return c, c >= vectorThreshold
	default:
		kw := keywordScore(q.words, t.words)
		c := cosine(&q.vector, &t.vector)
		return (kw + c) / 2, kw > 0 || c >= vectorThreshold
	}
}
