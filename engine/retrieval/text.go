package retrieval

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// words splits text into lowercased runs of letters and digits, the unit every
// scorer in this package counts. Apostrophes inside a word are dropped so that
// "don't" and "dont" meet. A word already in lower case is a substring of
// text, not a copy: most words are, and this runs for every text embedded.
func words(text string) []string {
	out := make([]string, 0, len(text)/6+1)
	start := -1   // byte offset of the current word, -1 between words
	clean := true // the word so far is text[start:i] verbatim
	var built []byte
	flush := func(end int) {
		if start < 0 {
			return
		}
		if clean {
			out = append(out, text[start:end])
		} else {
			out = append(out, string(built))
		}
		start = -1
	}
	for i, r := range text {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			if start < 0 {
				start, clean = i, true
			}
			lower := unicode.ToLower(r)
			if clean && lower != r {
				clean = false
				built = append(built[:0], text[start:i]...)
			}
			if !clean {
				built = utf8.AppendRune(built, lower)
			}
		case (r == '\'' || r == '\u2019') && start >= 0 && nextIsLetter(text, i+utf8.RuneLen(r)):
			// keep the word whole across an inner apostrophe, without it
			if clean {
				clean = false
				built = append(built[:0], text[start:i]...)
			}
		default:
			flush(i)
		}
	}
	flush(len(text))
	return out
}

func nextIsLetter(text string, at int) bool {
	if at >= len(text) {
		return false
	}
	r, _ := utf8.DecodeRuneInString(text[at:])
	return unicode.IsLetter(r)
}

// stopWords are the function words that carry no topic. Removing them keeps
// short questions ("how do I ...") from matching every note that shares only
// their grammar.
var stopWords = func() map[string]struct{} {
	list := `a about above after again against all am an and any are as at be because been before being
below between both but by can could did do does doing down during each few for from further had has
have having he her here hers herself him himself his how i if in into is it its itself just me might
more most must my myself no nor not now of off on once only or other our ours ourselves out over own
same she should so some such than that the their theirs them themselves then there these they this
those through to too under until up very was we were what when where which while who whom why will
with would you your yours yourself yourselves also get got use used using one two via per etc ever
let lets may much many im ive id youre dont doesnt didnt isnt wasnt whats thats theres`
	m := make(map[string]struct{})
	for _, w := range strings.Fields(list) {
		m[w] = struct{}{}
	}
	return m
}()

func isStopWord(w string) bool {
	_, ok := stopWords[w]
	return ok
}

// stem strips the commonest English inflections so that "caches", "cached"
// and "caching" share a feature. It is deliberately light: over-stemming
// merges unrelated words, and the character n-grams already cover the rest.
func stem(w string) string {
	if len(w) <= 3 || !isASCII(w) {
		return w
	}
	w = stripSuffix(w)
	// a final silent e goes too, so "code", "codes" and "coding" meet
	if len(w) > 3 && w[len(w)-1] == 'e' && w[len(w)-2] != 'e' {
		w = w[:len(w)-1]
	}
	return w
}

func stripSuffix(w string) string {
	n := len(w)
	switch {
	case strings.HasSuffix(w, "sses"):
		return w[:n-2]
	case strings.HasSuffix(w, "ies") && n > 4:
		return w[:n-3] + "y"
	case strings.HasSuffix(w, "ing") && n > 5:
		return undouble(w[:n-3])
	case strings.HasSuffix(w, "edly") && n > 6:
		return undouble(w[:n-4])
	case strings.HasSuffix(w, "ed") && n > 4:
		return undouble(w[:n-2])
	case strings.HasSuffix(w, "ly") && n > 5:
		return w[:n-2]
	case strings.HasSuffix(w, "es") && n > 4 && (strings.HasSuffix(w[:n-2], "sh") || strings.HasSuffix(w[:n-2], "ch") || strings.HasSuffix(w[:n-2], "x")):
		return w[:n-2]
	case strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") && !strings.HasSuffix(w, "us") && !strings.HasSuffix(w, "is"):
		return w[:n-1]
	}
	return w
}

// undouble turns "stopp" (from "stopping") back into "stop".
func undouble(w string) string {
	n := len(w)
	if n >= 3 && w[n-1] == w[n-2] && !strings.ContainsRune("lsz", rune(w[n-1])) && !strings.ContainsRune("aeiou", rune(w[n-1])) {
		return w[:n-1]
	}
	return w
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// terms are the content words of text: lowercased, stop words dropped, stemmed.
func terms(text string) []string {
	ws := words(text)
	out := ws[:0]
	for _, w := range ws {
		if isStopWord(w) {
			continue
		}
		out = append(out, stem(w))
	}
	return out
}
