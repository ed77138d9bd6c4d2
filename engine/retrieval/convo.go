package retrieval

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"mnemo/engine/retrieval/lexicon"
)

// ConvConfig sets the conversation levers of hybrid fetch: what a ranking of
// conversation turns (one turn per item, observed_at its session's date, the
// speaker its observed actor) is reordered by after the fusion. Every weight
// is added to a fused score, whose best is about 1. A zero field turns its
// lever off.
type ConvConfig struct {
	// Speaker is added to a turn whose speaker the question names
	// ("What did Maya ...", "Maya's sister").
	Speaker float64
	// Time is added to a turn observed within the dates the question names
	// ("in May 2023", "around 2 June 2022", "last year"), and up to
	// TimeWindow turns of those dates (however little they share with the
	// question, the first written when there are more) and the keyword
	// ranking's best TimeWindow within them join the candidates.
	Time       float64
	TimeWindow int
	// Second is the weight of a second keyword round seeded by the first
	// round's SecondSeeds best turns: the names they hold that the question
	// does not ("my cousin Leo lives in Oslo" -> "Leo"), for questions whose
	// answer is spread over turns. Its best hit adds Second, the others less
	// by their score.
	Second      float64
	SecondSeeds int
	// Specific is added times a turn's specificity (how rare its rarest word
	// is in the store, LearnedModel.Specificity): a turn that names
	// something says more than small talk.
	Specific float64
	// VectorPool is how many of the vector ranking's best join the
	// candidates (the fusion takes its HybridVectorWindow of them): turns
	// that share no word with the question, for the levers to lift.
	VectorPool int
	// Duplicate multiplies the score of a turn whose text an earlier turn of
	// the ranking already has ("Talk soon!"): a copy tells nothing new.
	Duplicate float64
	// AnchorDays is how far "before X" or "after X" reaches when the
	// question says no more ("shortly before", "in the weeks after"): the
	// dates named are those days up to the anchor X's turn (the keyword
	// ranking's best for X), or after it, and the Time lever applies to
	// them. 0 turns anchored dates off.
	AnchorDays int
	// Neighbour is added times the fused score of the turn just before a
	// turn in its conversation (the same namespace and thread, next in the
	// order written, close in observed_at) when that turn asks something: a
	// reply ("Cello, my fingers hurt already.") is found through the
	// question it answers ("Which instrument did you pick in the end?").
	// A question asked in the same words by several ranked turns lends each
	// reply its share (ReplyContext). The turns after the fused hits join
	// the candidates.
	Neighbour float64
	// Kind is added times the specificity of a kind of thing the question
	// names ("What instrument ...", "Which city ...") to a turn that names
	// a thing of that kind ("cello lessons", "back from Oslo"), as the
	// lexicon knows (package lexicon, WordNet's nouns): the turn that
	// answers a question often shares no word with it.
	Kind float64
	// KindPool is how many turns join the candidates from a keyword search
	// of the things of those kinds the store holds (KindMatch.Terms): the turn
	// that names one is rarely among the others.
	KindPool int
}

// DefaultConvConfig is the hybrid fetch's conversation levers, chosen on the
// tuning conversation set (eval.GenConversations; docs/retrieval.md).
func DefaultConvConfig() ConvConfig {
	return ConvConfig{Speaker: 0.5, Time: 1.0, TimeWindow: 100, Second: 0.3, SecondSeeds: 2, Duplicate: 0.2, Specific: 0.4, VectorPool: 200, AnchorDays: 60, Neighbour: 0.3, Kind: 0.1, KindPool: 20}
}

// Turn is a candidate of a conversation ranking: its fused score and what the
// levers read.
type Turn struct {
	ID      string
	Score   float64
	Text    string
	Speaker string    // the observed actor's name, "" when none
	At      time.Time // observed_at, zero when unset
	// Specificity is in [0, 1] (LearnedModel.Specificity), 0 when unknown.
	Specificity float64
	// Before is what the turn just before it in its conversation lends it
	// (ReplyContext): its fused score when it asks something, else 0.
	Before float64
	// Kind is the specificity of the most specific kind the question names
	// that the turn names a thing of (KindMatch.Score), 0 when none.
	Kind float64
}

// DateRange is a span of days a question names, [From, To).
type DateRange struct{ From, To time.Time }

// Contains reports whether t falls within the range.
func (d DateRange) Contains(t time.Time) bool {
	return !t.Before(d.From) && t.Before(d.To)
}

var monthNames = func() map[string]time.Month {
	m := map[string]time.Month{}
	for mo := time.January; mo <= time.December; mo++ {
		name := strings.ToLower(mo.String())
		m[name] = mo
		m[name[:3]] = mo
	}
	m["sept"] = time.September
	return m
}()

// eventSlack is how long after an event a conversation may mention it
// ("I got back from Oslo last week"): a turn observed that long after the
// dates a question names still falls within them.
const eventSlack = 14 * 24 * time.Hour

// QueryDates finds the dates a question names: a day ("2 June 2022",
// "June 2, 2022", "2022-06-02"), a month ("May 2023"), a year ("in 2023"), or
// one relative to now ("yesterday", "today", "last week", "last month",
// "last year", "this week", "this month", "this year", "three days ago", "a
// couple of weeks ago", "2 months ago", "last Tuesday", "last weekend"). The
// range runs from the start of the span named to eventSlack after its end (a day named is taken from three days before it). ok is false
// when the question names no date.
func QueryDates(q string, now time.Time) (DateRange, bool) {
	ws := words(q)
	day := func(y int, m time.Month, d int) time.Time { return time.Date(y, m, d, 0, 0, 0, 0, time.UTC) }
	year := func(s string) (int, bool) {
		if len(s) != 4 {
			return 0, false
		}
		y, err := strconv.Atoi(s)
		return y, err == nil && y >= 1900 && y <= 2200
	}
	dayNum := func(s string) (int, bool) {
		s = strings.TrimRight(s, "stndrh") // 1st 2nd 3rd 4th
		d, err := strconv.Atoi(s)
		return d, err == nil && d >= 1 && d <= 31
	}
	spanDay := func(t time.Time) DateRange {
		return DateRange{t.Add(-3 * 24 * time.Hour), t.Add(24*time.Hour + eventSlack)}
	}
	for i, w := range ws {
		if mo, ok := monthNames[w]; ok && len(w) >= 3 {
			// "2 June 2022", "June 2 2022", "June 2022"
			if i+1 < len(ws) {
				if y, ok := year(ws[i+1]); ok {
					if i > 0 {
						if d, ok := dayNum(ws[i-1]); ok {
							return spanDay(day(y, mo, d)), true
						}
					}
					from := day(y, mo, 1)
					return DateRange{from, from.AddDate(0, 1, 0).Add(eventSlack)}, true
				}
				if d, ok := dayNum(ws[i+1]); ok && i+2 < len(ws) {
					if y, ok := year(ws[i+2]); ok {
						return spanDay(day(y, mo, d)), true
					}
				}
			}
		}
	}
	// 2022-06-02 splits into three words of digits.
	for i := 0; i+2 < len(ws); i++ {
		if y, ok := year(ws[i]); ok {
			m, err1 := strconv.Atoi(ws[i+1])
			d, err2 := strconv.Atoi(ws[i+2])
			if err1 == nil && err2 == nil && m >= 1 && m <= 12 && d >= 1 && d <= 31 && len(ws[i+1]) <= 2 {
				return spanDay(day(y, time.Month(m), d)), true
			}
		}
	}
	for i, w := range ws {
		if y, ok := year(w); ok && i > 0 && (ws[i-1] == "in" || ws[i-1] == "during" || ws[i-1] == "of" || ws[i-1] == "since") {
			from := day(y, time.January, 1)
			return DateRange{from, from.AddDate(1, 0, 0).Add(eventSlack)}, true
		}
	}
	today := day(now.Year(), now.Month(), now.Day())
	for i, w := range ws {
		next := ""
		if i+1 < len(ws) {
			next = ws[i+1]
		}
		// "three days ago", "a week ago", "2 months ago", "a couple of years ago"
		if w == "ago" && i > 0 {
			n, unit := agoCount(ws[:i-1]), ws[i-1]
			switch strings.TrimSuffix(unit, "s") {
			case "day":
				return spanDay(today.AddDate(0, 0, -n)), true
			case "week":
				d := today.AddDate(0, 0, -7*n)
				return DateRange{d.AddDate(0, 0, -4), d.AddDate(0, 0, 4).Add(eventSlack)}, true
			case "month":
				from := day(now.Year(), now.Month(), 1).AddDate(0, -n, 0)
				return DateRange{from, from.AddDate(0, 1, 0).Add(eventSlack)}, true
			case "year":
				from := day(now.Year()-n, time.January, 1)
				return DateRange{from, from.AddDate(1, 0, 0).Add(eventSlack)}, true
			}
		}
		if wd, ok := weekdays[next]; ok && (w == "last" || w == "past") {
			// the latest such day before today
			back := (int(today.Weekday()) - int(wd) + 7) % 7
			if back == 0 {
				back = 7
			}
			return spanDay(today.AddDate(0, 0, -back)), true
		}
		switch {
		case w == "today":
			return DateRange{today.AddDate(0, 0, -1), today.Add(24 * time.Hour)}, true
		case (w == "last" || w == "past") && next == "weekend":
			back := (int(today.Weekday()) - int(time.Saturday) + 7) % 7
			if back == 0 {
				back = 7
			}
			sat := today.AddDate(0, 0, -back)
			return DateRange{sat.AddDate(0, 0, -1), sat.AddDate(0, 0, 2).Add(eventSlack)}, true
		case w == "this" && next == "week":
			return DateRange{today.AddDate(0, 0, -7), today.Add(24 * time.Hour)}, true
		case w == "this" && next == "month":
			return DateRange{day(now.Year(), now.Month(), 1), today.Add(24 * time.Hour)}, true
		case w == "yesterday":
			return spanDay(today.AddDate(0, 0, -1)), true
		case w == "last" && next == "week":
			return DateRange{today.AddDate(0, 0, -14), today.Add(24 * time.Hour)}, true
		case w == "last" && next == "month":
			from := day(now.Year(), now.Month(), 1).AddDate(0, -1, 0)
			return DateRange{from, from.AddDate(0, 1, 0).Add(eventSlack)}, true
		case w == "last" && next == "year":
			from := day(now.Year()-1, time.January, 1)
			return DateRange{from, from.AddDate(1, 0, 0).Add(eventSlack)}, true
		case w == "this" && next == "year":
			from := day(now.Year(), time.January, 1)
			return DateRange{from, from.AddDate(1, 0, 0)}, true
		}
	}
	return DateRange{}, false
}

// Anchor is an event a question dates its answer by: "before adopting
// Biscuit", "two weeks after the trip to Oslo".
type Anchor struct {
	// Event is the words naming the event, for a keyword search.
	Event string
	// Before: the answer comes before the event (else after it).
	Before bool
	// Days is the reach the question names ("the day before": 1, "two
	// weeks after": 14), 0 when it names none.
	Days int
}

var spanDays = map[string]int{"day": 1, "days": 1, "week": 7, "weeks": 7, "month": 31, "months": 31, "year": 366, "years": 366}

// QueryAnchor finds the event a question dates its answer by: the words
// after its last "before", "after" or "prior to", pronouns and function
// words dropped. ok is false when there is none, or no word names it.
func QueryAnchor(q string) (Anchor, bool) {
	ws := words(q)
	// start is where the keyword begins, at where it ends.
	start, at, before := -1, -1, false
	for i, w := range ws {
		switch {
		case w == "before" || w == "after":
			start, at, before = i, i, w == "before"
		case w == "prior" && i+1 < len(ws) && ws[i+1] == "to":
			start, at, before = i, i+1, true
		}
	}
	if at < 0 {
		return Anchor{}, false
	}
	var event []string
	for _, w := range ws[at+1:] {
		if !isStopWord(w) {
			event = append(event, w)
		}
	}
	if len(event) == 0 {
		return Anchor{}, false
	}
	a := Anchor{Event: strings.Join(event, " "), Before: before}
	// "the day before", "two weeks after", "a couple of months before";
	// "in the weeks after" names no count, so no reach.
	if start > 0 {
		unit := ws[start-1]
		if d, ok := spanDays[unit]; ok {
			n, counted := countOf(ws[:start-1])
			switch {
			case counted:
				a.Days = d * n
			case !strings.HasSuffix(unit, "s"):
				a.Days = d
			}
		}
	}
	return a, true
}

// Window is the dates an anchor names, its event's turn observed at at:
// days (the anchor's own, else dflt) up to the end of that day, or from its
// start on.
func (a Anchor) Window(at time.Time, dflt int) DateRange {
	days := a.Days
	if days == 0 {
		days = dflt
	}
	d := time.Date(at.Year(), at.Month(), at.Day(), 0, 0, 0, 0, time.UTC)
	if a.Before {
		return DateRange{d.AddDate(0, 0, -days), d.Add(24 * time.Hour)}
	}
	return DateRange{d, d.AddDate(0, 0, days+1)}
}

// AnchorTurn picks the turn an anchor's event was said in from the keyword
// ranking's best for it (best first): the first said by a speaker the
// question names, else the first. ok is false when turns is empty.
func AnchorTurn(q string, turns []Turn) (Turn, bool) {
	if len(turns) == 0 {
		return Turn{}, false
	}
	names := QueryNames(q)
	for _, t := range turns {
		if speakerNamed(names, t.Speaker) {
			return t, true
		}
	}
	return turns[0], true
}

var weekdays = func() map[string]time.Weekday {
	m := map[string]time.Weekday{}
	for d := time.Sunday; d <= time.Saturday; d++ {
		m[strings.ToLower(d.String())] = d
	}
	return m
}()

var countWords = map[string]int{"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
	"seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "couple": 2, "few": 3}

// agoCount is the count before "<unit> ago" (the words before the unit):
// "three", "3", "a", "a couple of", "a few"; 1 when none is given.
func agoCount(before []string) int {
	n, _ := countOf(before)
	return n
}

// countOf reads the count that ends before (see agoCount); counted is false,
// and n 1, when there is none.
func countOf(before []string) (n int, counted bool) {
	for i := len(before) - 1; i >= 0 && i >= len(before)-3; i-- {
		w := before[i]
		if w == "of" {
			continue
		}
		if n, ok := countWords[w]; ok {
			return n, true
		}
		if n, err := strconv.Atoi(w); err == nil && n > 0 && n <= 400 {
			return n, true
		}
		break
	}
	return 1, false
}

// QueryNames are the words of a question written with a capital that are
// not its first word (unless it is a possessive: "Maya's sister ..."),
// lowercased, a possessive dropped ("Maya's" -> "maya"): the people and
// places it names.
func QueryNames(q string) map[string]bool {
	names := map[string]bool{}
	for i, f := range strings.Fields(q) {
		w := strings.TrimFunc(f, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
		bare := strings.TrimSuffix(strings.TrimSuffix(w, "'s"), "\u2019s")
		possessive := bare != w
		w = bare
		r, _ := utf8.DecodeRuneInString(w)
		if i == 0 && !possessive || !unicode.IsUpper(r) {
			continue
		}
		names[strings.ToLower(w)] = true
	}
	return names
}

// speakerNamed reports whether the question names the speaker (any word of
// the speaker's name).
func speakerNamed(names map[string]bool, speaker string) bool {
	if speaker == "" || len(names) == 0 {
		return false
	}
	for _, w := range words(speaker) {
		if names[w] {
			return true
		}
	}
	return false
}

// SeedNames are the names the seed turns hold that the question and the
// speakers do not: words written with a capital that do not begin a sentence
// and are not stop words ("Spent the weekend with Leo in Oslo" -> leo, oslo).
// They seed the second round of a question whose answer spans turns.
func SeedNames(q string, seeds []Turn) []string {
	inQuery := map[string]bool{}
	for _, w := range words(q) {
		inQuery[w] = true
	}
	var out []string
	seen := map[string]bool{}
	for _, s := range seeds {
		for _, w := range words(s.Speaker) {
			inQuery[w] = true
		}
	}
	for _, s := range seeds {
		start := true
		for _, f := range strings.Fields(s.Text) {
			w := strings.TrimFunc(f, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
			w = strings.TrimSuffix(strings.TrimSuffix(w, "'s"), "\u2019s")
			r, _ := utf8.DecodeRuneInString(w)
			isName := !start && unicode.IsUpper(r)
			start = strings.HasSuffix(f, ".") || strings.HasSuffix(f, "!") || strings.HasSuffix(f, "?") || strings.HasSuffix(f, ":")
			if !isName {
				continue
			}
			lw := strings.ToLower(w)
			if _, stop := stopWords[lw]; stop || inQuery[lw] || seen[lw] {
				continue
			}
			seen[lw] = true
			out = append(out, w)
		}
	}
	return out
}

// RerankTurns reorders a fused ranking by the conversation levers: the
// speaker the question names, the dates it names (dates, when ok), and the
// second round's ranking (second, best first, scores positive), and demotes
// copies of a text already ranked. The result is best first, ties by id.
func RerankTurns(q string, turns []Turn, dates DateRange, datesOK bool, second []ScoredID, cfg ConvConfig) []ScoredID {
	names := QueryNames(q)
	secondScore := map[string]float64{}
	if len(second) > 0 && second[0].Score > 0 {
		for _, s := range second {
			if _, ok := secondScore[s.ID]; !ok {
				secondScore[s.ID] = cfg.Second * s.Score / second[0].Score
			}
		}
	}
	out := make([]ScoredID, len(turns))
	for i, t := range turns {
		s := t.Score
		if cfg.Speaker != 0 && speakerNamed(names, t.Speaker) {
			s += cfg.Speaker
		}
		if cfg.Time != 0 && datesOK && !t.At.IsZero() && dates.Contains(t.At) {
			s += cfg.Time
		}
		s += secondScore[t.ID] + cfg.Specific*t.Specificity + cfg.Neighbour*t.Before
		s += cfg.Kind * t.Kind
		out[i] = ScoredID{ID: t.ID, Score: s}
	}
	text := make(map[string]string, len(turns))
	for _, t := range turns {
		text[t.ID] = t.Text
	}
	sortScored(out)
	if cfg.Duplicate != 0 && cfg.Duplicate != 1 {
		seen := map[string]bool{}
		for i := range out {
			k := strings.Join(words(text[out[i].ID]), " ")
			if seen[k] {
				out[i].Score *= cfg.Duplicate
			}
			seen[k] = true
		}
		sortScored(out)
	}
	return out
}

// KindMatch is the kinds of thing a question names and what each turn's
// words and word pairs were found to be, kept for the question: the turns
// of a conversation repeat their words. It is one question's, not safe for
// concurrent use.
type KindMatch struct {
	lex   *lexicon.Lexicon
	kinds []*lexicon.Kind
	// After Hold: the things of the kinds the store holds and the
	// specificity of the most specific kind of each, in the order listed,
	// and the first words of those of two words or more.
	held   map[string]float64
	order  []string
	firsts map[string]bool
	terms  map[string]float64 // a turn's word or word pair -> the best specificity of a kind it is of
}

// QueryKinds is the kinds the question's words name (the names it holds and
// stop words aside: "Pepper" the dog is no pepper), nil when none or when
// the lexicon cannot be read.
func QueryKinds(q string) *KindMatch {
	names := QueryNames(q)
	lex, err := lexicon.Default()
	if err != nil {
		return nil
	}
	m := &KindMatch{lex: lex, terms: map[string]float64{}}
	seen := map[string]bool{}
	for _, w := range words(q) {
		if _, stop := stopWords[w]; stop || names[w] || seen[w] || len(w) < 3 {
			continue
		}
		seen[w] = true
		if k, ok := lex.Kind(w); ok {
			m.kinds = append(m.kinds, k)
		}
	}
	if len(m.kinds) == 0 {
		return nil
	}
	return m
}

// kindTermsMax bounds the words KindMatch.Terms gives: "animal" holds thousands.
const kindTermsMax = 64

// Terms is the words of things of the kinds the question names that the
// store holds (Hold), the nearest kinds first, at most kindTermsMax:
// "cello", "ukulele", "drums" for "What instrument is Maya learning?". nil
// when the question names no kind or before Hold.
func (m *KindMatch) Terms() []string {
	if m == nil {
		return nil
	}
	return m.order[:min(len(m.order), kindTermsMax)]
}

// kindFloor is the least specificity of a kind Hold lists the things of:
// a kind that holds most things ("thing", "group") would list most of the
// store for a credit of next to nothing.
const kindFloor = 0.25

// Hold narrows the kinds to the things of them the store holds (held:
// KindHeld): Terms lists them, and Score looks a turn's words up among them
// rather than asking the lexicon of every word.
func (m *KindMatch) Hold(held *lexicon.Held) {
	if m == nil || held == nil {
		return
	}
	m.held, m.order, m.firsts = map[string]float64{}, nil, map[string]bool{}
	for _, k := range m.kinds {
		if k.Specificity < kindFloor {
			continue
		}
		k.Nouns(held, func(n string) bool {
			if v, ok := m.held[n]; !ok {
				m.order = append(m.order, n)
				m.held[n] = k.Specificity
			} else if k.Specificity > v {
				m.held[n] = k.Specificity
			}
			if first, _, ok := strings.Cut(n, " "); ok {
				m.firsts[first] = true
			}
			return true
		})
	}
}

// KindHeld is the lexicon's nouns the model's store holds and says in at
// most maxShare of its texts (a thing said everywhere, "weekend" for a
// time, finds nothing a question of a kind wants, and its search costs
// its postings); nil without the lexicon. It reads the whole lexicon
// (60-68 ms for a model of 50,000 turns), so it is made once per model.
func KindHeld(m *LearnedModel, maxShare float64) *lexicon.Held {
	lex, err := lexicon.Default()
	if err != nil || m == nil {
		return nil
	}
	return lex.Held(func(lemma string) bool {
		share, ok := m.DocShare(lemma)
		return ok && share <= maxShare
	})
}

// Score is the best specificity of a kind the question names that a word
// of text, or two words together ("bass guitar"), is of; 0 when none.
func (m *KindMatch) Score(text string) float64 {
	if m == nil {
		return 0
	}
	ws := words(text)
	best := 0.0
	for i, w := range ws {
		if _, stop := stopWords[w]; !stop {
			best = max(best, m.term(w))
		}
		if i > 0 && (m.held == nil && m.lex.StartsCompound(ws[i-1]) || m.firsts[ws[i-1]]) {
			best = max(best, m.term(ws[i-1]+" "+w))
		}
	}
	return best
}

func (m *KindMatch) term(t string) float64 {
	if v, ok := m.terms[t]; ok {
		return v
	}
	v := 0.0
	if m.held != nil {
		// The store's things of the kinds, as the turn writes them
		// ("tomatoes").
		for _, lemma := range m.lex.Lemmas(t) {
			v = max(v, m.held[lemma])
		}
	} else if k := m.lex.MostSpecific(t, m.kinds); k != nil {
		v = k.Specificity
	}
	m.terms[t] = v
	return v
}

// Asked is a turn of a ranking and the turn after it in its conversation.
type Asked struct {
	Text  string  // the turn's text
	Score float64 // its fused score
	Reply string  // the id of the turn after it, "" when none
}

// ReplyContext is what each reply is lent by the turn before it (Turn.Before):
// the fused score of a turn that asks something (it holds a question mark),
// shared among the ranked turns that ask it in the same words ("Have you
// been reading anything good?" asked in ten sessions lends each reply a
// tenth: a question said that often is small talk), the best when a reply
// has two.
func ReplyContext(asked []Asked) map[string]float64 {
	copies := map[string]int{}
	keys := make([]string, len(asked))
	asks := make([]bool, len(asked))
	for i, a := range asked {
		if a.Reply == "" || !strings.Contains(a.Text, "?") {
			continue
		}
		asks[i], keys[i] = true, strings.Join(words(a.Text), " ")
		copies[keys[i]]++
	}
	out := map[string]float64{}
	for i, a := range asked {
		if asks[i] {
			out[a.Reply] = max(out[a.Reply], a.Score/float64(copies[keys[i]]))
		}
	}
	return out
}

func sortScored(l []ScoredID) {
	slices.SortStableFunc(l, func(a, b ScoredID) int {
		if c := cmp.Compare(b.Score, a.Score); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
}
