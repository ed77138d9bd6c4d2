package curate

import (
	"slices"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

// features is what the method reads of a record's text: its content words
// (stemmed, stop words and values left out), its values (numbers, versions,
// dates, number and month words), whether it negates, and which content
// words are names (capitalised inside a sentence, or identifiers such as
// billing-db or fmt.Errorf).
type features struct {
	words  []string // sorted, unique
	values []string // sorted, with repeats
	names  map[string]bool
	// subject is the first name the text says (a hyphenated one aside):
	// what it is about, when it names something (the memcpy() function …).
	subject string
	// topics are the content words said twice or more: what the text is
	// about ("the user keyring … a user keyring").
	topics map[string]bool
	neg    bool
}

var stopWords = toSet(`a an the and or but if then so of to in on at by for with from into onto over under
as is are was were be been being am do does did done has have had having it its it's this that these those
there here which who whom whose what when where why how than too very can could should would may might must
will shall i you he she we they me him her us them my your his our their mine yours also just only any some
each every all both either more most other such own same about after before again against between through
during above below up down out off once further while because until via per let lets get gets got`)

var negations = toSet(`not no never cannot none nothing neither nor without nobody`)

var numberWords = map[string]string{
	"zero": "0", "one": "1", "two": "2", "three": "3", "four": "4", "five": "5", "six": "6",
	"seven": "7", "eight": "8", "nine": "9", "ten": "10", "eleven": "11", "twelve": "12",
	"fifteen": "15", "twenty": "20", "thirty": "30", "forty": "40", "fifty": "50", "hundred": "100",
	"thousand": "1000", "half": "0.5", "twice": "x2", "double": "x2", "triple": "x3", "once": "x1",
	"first": "#1", "second": "#2", "third": "#3",
}

var dateWords = toSet(`january february march april may june july august september october november december
jan feb mar apr jun jul aug sep sept oct nov dec monday tuesday wednesday thursday friday saturday sunday
spring summer autumn fall winter`)

func toSet(s string) map[string]bool {
	out := map[string]bool{}
	for _, w := range strings.Fields(s) {
		out[w] = true
	}
	return out
}

// extract reads the features of a text.
func extract(text string) features {
	var f features
	sentenceStart := true
	for _, raw := range tokens(text) {
		tok, endsSentence := raw.text, raw.end
		lower := lowerASCII(tok)
		start := sentenceStart
		sentenceStart = endsSentence
		switch {
		case negations[lower] || strings.HasSuffix(lower, "n't") || lower == "dont" || lower == "doesnt" || lower == "isnt" || lower == "cant" || lower == "wont":
			f.neg = true
			continue
		case hasDigit(lower):
			if isValue(lower) {
				f.values = append(f.values, strings.TrimPrefix(lower, "v"))
			}
			continue // ids and hashes (call_0165b073) are neither words nor values
		case numberWords[lower] != "" && lower != "second" && lower != "once":
			f.values = append(f.values, numberWords[lower])
			continue
		case dateWords[lower] && lower != "may" && lower != "fall":
			f.values = append(f.values, lower)
			continue
		case stopWords[lower] || utf8.RuneCountInString(lower) < 2:
			continue
		}
		w := stem(lower)
		f.words = append(f.words, w)
		if raw.call || isIdentifier(tok) || (!start && startsUpper(tok)) {
			if f.names == nil {
				f.names = map[string]bool{}
			}
			f.names[w] = true
			// A hyphenated word (bulk-ferment, easy-access) is more often
			// an English compound than the thing a text is about.
			if f.subject == "" && (raw.call || !strings.Contains(tok, "-")) {
				f.subject = w
			}
		}
	}
	sort.Strings(f.words)
	for i := 1; i < len(f.words); i++ {
		if f.words[i] == f.words[i-1] {
			if f.topics == nil {
				f.topics = map[string]bool{}
			}
			f.topics[f.words[i]] = true
		}
	}
	f.words = slices.Compact(f.words)
	sort.Strings(f.values)
	return f
}

// lowerASCII lowers a word, without allocating when it is lower-case ASCII already.
func lowerASCII(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 0x80 || ('A' <= c && c <= 'Z') {
			return strings.ToLower(s)
		}
	}
	return s
}

type token struct {
	text string
	end  bool // the token ends a sentence
	call bool // the token is followed by "(" (a function's name)
}

// tokens splits text into words, keeping inner . - _ / : ' % between letters
// or digits (fmt.Errorf, billing-db, 16.2, 2026-01-02, don't) and noting
// which words end a sentence.
func tokens(text string) []token {
	var out []token
	i := 0
	for i < len(text) {
		r, size := utf8.DecodeRuneInString(text[i:])
		if !isWordRune(r) {
			i += size
			continue
		}
		j := i + size
		for j < len(text) {
			r, size := utf8.DecodeRuneInString(text[j:])
			if isWordRune(r) {
				j += size
				continue
			}
			if strings.ContainsRune(".-_/:'%", r) && j+size < len(text) {
				if next, _ := utf8.DecodeRuneInString(text[j+size:]); isWordRune(next) {
					j += size
					continue
				}
			}
			break
		}
		t := token{text: text[i:j]}
		if j < len(text) {
			switch text[j] {
			case '.', '!', '?', ';', ':', '\n':
				t.end = true
			case '(':
				t.call = true
			}
		}
		out = append(out, t)
		i = j
	}
	return out
}

func isWordRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsDigit(r) || r == '%' || r == '$'
}

// isValue tells a number, version, date, time or short quantity (16, 1.22,
// v2.3.1, 2026-01-02, 10:30, 30ms, 8-bit, 50%) from an id or hash.
func isValue(s string) bool {
	if len(s) > 12 || strings.Contains(s, "_") {
		return false
	}
	letters := 0
	for _, r := range strings.TrimPrefix(s, "v") {
		if unicode.IsLetter(r) {
			letters++
		}
	}
	return letters <= 4
}

func hasDigit(s string) bool {
	for _, r := range s {
		if unicode.IsDigit(r) {
			return true
		}
	}
	return false
}

func startsUpper(s string) bool {
	r, _ := utf8.DecodeRuneInString(s)
	return unicode.IsUpper(r)
}

// isIdentifier tells a word that names something in code or infrastructure:
// one with an inner separator or a capital after its first letter.
func isIdentifier(s string) bool {
	if strings.ContainsAny(s, "-_./:") {
		return true
	}
	for i, r := range s {
		if i > 0 && unicode.IsUpper(r) {
			return true
		}
	}
	return false
}

// stem strips the commonest English suffixes so "wraps", "wrapped" and
// "wrapping" meet.
func stem(w string) string {
	if strings.ContainsAny(w, "-_./:") {
		return w
	}
	for _, suf := range []string{"ing", "edly", "ed", "ies", "es", "s", "ly"} {
		if strings.HasSuffix(w, suf) && len(w)-len(suf) >= 3 {
			base := w[:len(w)-len(suf)]
			if suf == "ies" {
				base += "y"
			}
			if n := len(base); (suf == "ing" || suf == "ed") && n >= 2 && base[n-1] == base[n-2] {
				base = base[:n-1]
			}
			return trimE(base)
		}
	}
	return trimE(w)
}

// trimE drops a final e so "prune" meets "prun(ed)".
func trimE(w string) string {
	if len(w) > 4 && strings.HasSuffix(w, "e") {
		return w[:len(w)-1]
	}
	return w
}
