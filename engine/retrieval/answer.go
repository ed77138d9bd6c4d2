package retrieval

import (
	"cmp"
	"context"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"mnemo/contract"
)

// AnswerRequest is what recall hands an answerer: the question, the caller's
// instructions (may be empty) and the citations in rank order. Answers refer
// to citation i as [i+1].
type AnswerRequest struct {
	Question     string
	Instructions string
	Citations    []contract.Citation
}

// Answerer synthesises a recall answer from citations.
type Answerer interface {
	// Model is the id recall reports as the answer's model.
	Model() string
	// Answer returns the answer text, citing citations as [n].
	Answer(ctx context.Context, req AnswerRequest) (string, error)
}

// ExtractiveModelID is the model id of the built-in extractive answerer.
const ExtractiveModelID = "mnemo-extractive"

// NothingStored is the answer when no citation was found.
const NothingStored = "Nothing stored answers this question."

// extractive answers with the cited sentences that best match the question.
type extractive struct{}

// NewExtractive returns the built-in answerer (model "mnemo-extractive"): it
// splits the cited texts into sentences, scores each against the question
// (term overlap weighted by rarity across the citations, plus the citation's
// rank and the sentence's position), and answers with the best few, each
// followed by its [n] marker. Instructions steer the length ("one sentence",
// "short", "brief", "detailed", "3 sentences") and the form ("bullets",
// "list").
func NewExtractive() Answerer { return extractive{} }

func (extractive) Model() string { return ExtractiveModelID }

func (extractive) Answer(ctx context.Context, req AnswerRequest) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", contract.Unavailable("answer cancelled: %w", err)
	}
	if len(req.Citations) == 0 {
		return NothingStored, nil
	}
	style := parseInstructions(req.Instructions)
	picked := pickSentences(req.Question, req.Citations, style.count)
	if len(picked) == 0 {
		return NothingStored, nil
	}
	var b strings.Builder
	for i, s := range picked {
		marker := "[" + strconv.Itoa(s.citation+1) + "]"
		if style.bullets {
			if i > 0 {
				b.WriteByte('\n')
			}
			b.WriteString("- ")
			b.WriteString(strings.TrimRight(s.text, ".;: "))
			b.WriteString(" ")
			b.WriteString(marker)
			continue
		}
		if i > 0 {
			b.WriteByte(' ')
		}
		body, end := splitEnd(s.text)
		b.WriteString(body)
		b.WriteString(" ")
		b.WriteString(marker)
		b.WriteString(end)
	}
	return b.String(), nil
}

// splitEnd separates a sentence's final punctuation so the marker can go
// before it ("... tabs [1]."); a sentence without one gets a full stop.
func splitEnd(s string) (string, string) {
	body := strings.TrimRight(s, ".!?;: ")
	end := strings.TrimSpace(s[len(body):])
	switch {
	case strings.HasPrefix(end, "?"):
		end = "?"
	case strings.HasPrefix(end, "!"):
		end = "!"
	default:
		end = "."
	}
	return body, end
}

// answerStyle is what instructions ask of the answer's shape.
type answerStyle struct {
	count   int
	bullets bool
}

const (
	defaultSentences  = 3
	shortSentences    = 2
	detailedSentences = 6
	maxSentences      = 12
)

var (
	countRe    = regexp.MustCompile(`\b(\d+|one|two|three|four|five|six|seven|eight|nine|ten|single)\s+(?:short\s+|brief\s+|key\s+|main\s+)?(sentences?|points?|bullets?|bullet points?|items?|lines?|facts?)\b`)
	bulletsRe  = regexp.MustCompile(`\b(?:bullets?|bulleted|list|itemi[sz]e|points)\b`)
	detailedRe = regexp.MustCompile(`\b(?:detailed|detail|thorough|comprehensive|in[- ]depth|long|elaborate|everything)\b`)
	shortRe    = regexp.MustCompile(`\b(?:short|brief|briefly|concise|succinct|quick|tl;dr|tldr)\b`)
	numbers    = map[string]int{"one": 1, "single": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10}
)

func parseInstructions(instr string) answerStyle {
	st := answerStyle{count: defaultSentences}
	text := strings.ToLower(instr)
	if bulletsRe.MatchString(text) {
		st.bullets = true
	}
	switch {
	case detailedRe.MatchString(text):
		st.count = detailedSentences
	case shortRe.MatchString(text):
		st.count = shortSentences
	}
	if m := countRe.FindStringSubmatch(text); m != nil {
		n, ok := numbers[m[1]]
		if !ok {
			n, _ = strconv.Atoi(m[1])
		}
		if n > 0 {
			st.count = min(n, maxSentences)
		}
		if strings.HasPrefix(m[2], "point") || strings.HasPrefix(m[2], "bullet") || strings.HasPrefix(m[2], "item") {
			st.bullets = true
		}
	}
	return st
}

// sentence is one candidate sentence of a citation.
type sentence struct {
	text     string
	citation int // index in the citations
	position int // index within the citation, headings not counted
	question bool
	terms    []string
	context  []string // terms of the heading above it
	overlap  float64
	score    float64
}

// Weights of the sentence score: the question's words dominate; a citation's
// rank and a sentence's place in it break ties between equally matching
// sentences; a heading's words count for the sentences under it at a fraction.
const (
	headingShare       = 0.3
	questionPenalty    = 0.6
	rankPrior          = 0.3
	positionPrior      = 0.15
	keepShareOfBest    = 0.35
	longSentenceTerms  = 20
	longSentenceDamper = 0.015
)

// pickSentences returns up to n sentences, best first. Sentences that share
// no word with the question are left out when some do, and so are sentences
// matching far worse than the best one; a question none of the sentences
// matches gets the first statement of the best-ranked citation.
func pickSentences(question string, cites []contract.Citation, n int) []sentence {
	var all []sentence
	for ci, c := range cites {
		var heading []string
		pos := 0
		for _, u := range splitSentenceUnits(c.Snippet) {
			if u.heading {
				heading = terms(u.text)
				continue
			}
			all = append(all, sentence{text: u.text, citation: ci, position: pos, question: strings.HasSuffix(u.text, "?"), terms: terms(u.text), context: heading})
			pos++
		}
		if pos == 0 && heading != nil {
			// a citation that is only a heading still has something to say
			all = append(all, sentence{text: cleanLine(firstLine(c.Snippet)), citation: ci, terms: heading})
		}
	}
	if len(all) == 0 {
		return nil
	}
	// rarity of each term across the cited sentences: a word every citation
	// shares (often the topic itself) tells sentences apart less than a rare one
	df := make(map[string]int)
	for _, s := range all {
		for _, t := range uniq(append(slices.Clone(s.terms), s.context...)) {
			df[t]++
		}
	}
	idf := func(t string) float64 { return math.Log(1 + float64(len(all))/float64(max(1, df[t]))) }
	qterms := uniq(terms(question))
	best := 0.0
	for i := range all {
		s := &all[i]
		var overlap float64
		for _, t := range qterms {
			switch {
			case slices.Contains(s.terms, t):
				overlap += idf(t)
			case slices.Contains(s.context, t):
				overlap += headingShare * idf(t)
			}
		}
		// long sentences match more words by length alone
		overlap /= 1 + longSentenceDamper*float64(max(0, len(s.terms)-longSentenceTerms))
		if s.question {
			overlap *= questionPenalty
		}
		s.overlap = overlap
		best = max(best, overlap)
		s.score = overlap + rankPrior/float64(s.citation+1) + positionPrior/float64(s.position+1)
	}
	if best == 0 {
		// nothing matches: the search still ranked the first citation best, so
		// offer its opening statement (a question is no answer)
		for _, s := range all {
			if !s.question {
				return []sentence{s}
			}
		}
		return []sentence{all[0]}
	}
	slices.SortStableFunc(all, func(a, b sentence) int {
		if c := cmp.Compare(b.score, a.score); c != 0 {
			return c
		}
		if c := cmp.Compare(a.citation, b.citation); c != 0 {
			return c
		}
		return cmp.Compare(a.position, b.position)
	})
	var out []sentence
	seen := make(map[string]struct{})
	for _, s := range all {
		if s.overlap < keepShareOfBest*best {
			continue
		}
		key := strings.Join(s.terms, " ")
		if key == "" {
			key = strings.ToLower(s.text)
		}
		if _, dup := seen[key]; dup {
			continue
		}
		seen[key] = struct{}{}
		out = append(out, s)
		if len(out) == n {
			break
		}
	}
	return out
}

func firstLine(s string) string {
	for _, line := range strings.Split(s, "\n") {
		if strings.TrimSpace(line) != "" {
			return line
		}
	}
	return ""
}

func uniq(ts []string) []string {
	out := slices.Clone(ts)
	slices.Sort(out)
	return slices.Compact(out)
}

// splitSentences cuts text into sentences (see splitSentenceUnits), headings
// included.
func splitSentences(text string) []string {
	var out []string
	for _, u := range splitSentenceUnits(text) {
		out = append(out, u.text)
	}
	return out
}

// unit is one sentence of a text, or one heading line.
type unit struct {
	text    string
	heading bool
}

// splitSentenceUnits cuts text into sentences: at . ! ? followed by a space
// (unless the word before is a common abbreviation or an initial, or the next
// word starts with a lower-case letter after a short word), and at line
// breaks (headings, list items and conversation turns are units of their
// own). Markdown heading and list markers and conversation role prefixes are
// dropped; fragments without a single word are skipped.
func splitSentenceUnits(text string) []unit {
	var out []unit
	for _, raw := range strings.Split(text, "\n") {
		heading := headingRe.MatchString(strings.TrimSpace(raw))
		line := cleanLine(raw)
		if line == "" {
			continue
		}
		if heading {
			out = appendUnit(out, line, true)
			continue
		}
		start := 0
		rs := []rune(line)
		for i := 0; i < len(rs); i++ {
			if rs[i] != '.' && rs[i] != '!' && rs[i] != '?' {
				continue
			}
			j := i + 1
			for j < len(rs) && (rs[j] == '.' || rs[j] == '!' || rs[j] == '?' || rs[j] == '"' || rs[j] == '\'' || rs[j] == ')') {
				j++
			}
			if j >= len(rs) || !unicode.IsSpace(rs[j]) {
				continue
			}
			k := j
			for k < len(rs) && unicode.IsSpace(rs[k]) {
				k++
			}
			if isAbbreviation(rs[start:i]) {
				continue
			}
			if k < len(rs) && unicode.IsLower(rs[k]) && !startsSentenceLowercase(rs[start:i]) {
				continue
			}
			out = appendUnit(out, string(rs[start:j]), false)
			start = k
			i = k - 1
		}
		out = appendUnit(out, string(rs[start:]), false)
	}
	return out
}

// startsSentenceLowercase tells whether a full stop after this text ends a
// sentence even though the next word is lower case (a command or identifier
// such as "git" opening the next sentence): true when the sentence so far is
// long enough that the stop cannot be an abbreviation inside it.
func startsSentenceLowercase(before []rune) bool {
	return len(words(string(before))) >= 4
}

func appendUnit(out []unit, s string, heading bool) []unit {
	s = strings.TrimSpace(s)
	if len(words(s)) == 0 {
		return out
	}
	return append(out, unit{text: s, heading: heading})
}

// isAbbreviation tells whether the text before a full stop ends in a common
// abbreviation ("e.g.", "Dr.") that does not end a sentence.
func isAbbreviation(before []rune) bool {
	i := len(before)
	for i > 0 && !unicode.IsSpace(before[i-1]) {
		i--
	}
	w := strings.ToLower(string(before[i:]))
	switch w {
	case "e.g", "i.e", "etc", "vs", "dr", "mr", "mrs", "ms", "st", "approx", "fig", "no", "cf", "a.m", "p.m", "u.s":
		return true
	}
	if isListNumber(w, before[:i]) {
		return true
	}
	return len([]rune(w)) == 1 && unicode.IsLetter([]rune(w)[0])
}

// isListNumber tells whether w is the number of an inline list item ("rotate
// it: 1. create ...; 2. deploy ..."): one or two digits opening the text or
// following a colon, semicolon or comma. Its full stop does not end a sentence.
func isListNumber(w string, before []rune) bool {
	if len(w) == 0 || len(w) > 2 {
		return false
	}
	for _, r := range w {
		if r < '0' || r > '9' {
			return false
		}
	}
	j := len(before)
	for j > 0 && unicode.IsSpace(before[j-1]) {
		j--
	}
	return j == 0 || before[j-1] == ':' || before[j-1] == ';' || before[j-1] == ','
}

var (
	headingRe = regexp.MustCompile(`^#{1,6}\s+`)
	listRe    = regexp.MustCompile(`^(?:[-*+•]|\d+[.)])\s+`)
	roleRe    = regexp.MustCompile(`^(?:user|assistant|system|tool):\s*`)
	toolsRe   = regexp.MustCompile(`\s*\[tools: [^\]]*\]$`)
)

// cleanLine strips a line's markdown and conversation decorations. Each
// pattern runs only when the line's first or last byte makes a match
// possible: most lines have none, and regular expressions are slow.
func cleanLine(line string) string {
	line = strings.TrimSpace(line)
	if line == "" {
		return line
	}
	if line[0] == '#' {
		line = headingRe.ReplaceAllString(line, "")
	}
	if c := line[0]; c == '-' || c == '*' || c == '+' || (c >= '0' && c <= '9') || strings.HasPrefix(line, "•") {
		line = listRe.ReplaceAllString(line, "")
	}
	if strings.IndexByte(line, ':') > 0 {
		line = roleRe.ReplaceAllString(line, "")
	}
	if strings.HasSuffix(line, "]") {
		line = toolsRe.ReplaceAllString(line, "")
	}
	return strings.TrimSpace(line)
}
