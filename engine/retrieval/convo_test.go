package retrieval

import (
	"slices"
	"testing"
	"time"

	"mnemo/engine/retrieval/lexicon"
)

func TestQueryDates(t *testing.T) {
	now := time.Date(2026, time.March, 10, 15, 0, 0, 0, time.UTC)
	day := func(y int, m time.Month, d int) time.Time { return time.Date(y, m, d, 0, 0, 0, 0, time.UTC) }
	for _, c := range []struct {
		q        string
		ok       bool
		from, to time.Time
	}{
		{"Which city did Nadia visit around 29 April 2022?", true, day(2022, 4, 26), day(2022, 5, 14)},
		{"what happened on April 29th, 2022", true, day(2022, 4, 26), day(2022, 5, 14)},
		{"Where did Aiko go on holiday in May 2023?", true, day(2023, 5, 1), day(2023, 6, 15)},
		{"what did we decide in sept 2024", true, day(2024, 9, 1), day(2024, 10, 15)},
		{"the deploy of 2024-06-02", true, day(2024, 5, 30), day(2024, 6, 17)},
		{"What did Maya do in 2023?", true, day(2023, 1, 1), day(2024, 1, 15)},
		{"what did I say yesterday", true, day(2026, 3, 6), day(2026, 3, 24)},
		{"what did we discuss last week", true, day(2026, 2, 24), day(2026, 3, 11)},
		{"the plan from last month", true, day(2026, 2, 1), day(2026, 3, 15)},
		{"When did Jonas visit Porto last year?", true, day(2025, 1, 1), day(2026, 1, 15)},
		// now is Tuesday 10 March 2026
		{"what did we decide three days ago", true, day(2026, 3, 4), day(2026, 3, 22)},
		{"the fix from 2 days ago", true, day(2026, 3, 5), day(2026, 3, 23)},
		{"what did Maya say a couple of weeks ago", true, day(2026, 2, 20), day(2026, 3, 14)},
		{"a week ago", true, day(2026, 2, 27), day(2026, 3, 21)},
		{"the plan from 2 months ago", true, day(2026, 1, 1), day(2026, 2, 15)},
		{"what we said a year ago", true, day(2025, 1, 1), day(2026, 1, 15)},
		{"what did Priya say last Friday?", true, day(2026, 3, 3), day(2026, 3, 21)},
		{"what did Priya say last Tuesday?", true, day(2026, 2, 28), day(2026, 3, 18)},
		{"the hike last weekend", true, day(2026, 3, 6), day(2026, 3, 23)},
		{"what did we agree today", true, day(2026, 3, 9), day(2026, 3, 11)},
		{"notes from this week", true, day(2026, 3, 3), day(2026, 3, 11)},
		{"everything this month", true, day(2026, 3, 1), day(2026, 3, 11)},
		{"long ago in a galaxy far away", false, time.Time{}, time.Time{}},
		{"what do we do on Friday", false, time.Time{}, time.Time{}},
		{"When did Jonas visit Porto?", false, time.Time{}, time.Time{}},
		{"may I ask what the 2023 budget was", false, time.Time{}, time.Time{}},
		{"port 8080 and 1999 bugs", false, time.Time{}, time.Time{}},
		{"", false, time.Time{}, time.Time{}},
	} {
		got, ok := QueryDates(c.q, now)
		if ok != c.ok || ok && (!got.From.Equal(c.from) || !got.To.Equal(c.to)) {
			t.Errorf("QueryDates(%q) = %v..%v %v, want %v..%v %v", c.q, got.From, got.To, ok, c.from, c.to, c.ok)
		}
	}
}

func FuzzQueryDates(f *testing.F) {
	for _, s := range []string{"in May 2023", "around 2 June 2022", "2022-06-02", "last year", "31 February 2023", "June 99 2023", "0000-00-00",
		"a couple of weeks ago", "400 years ago", "last sunday", "last weekend"} {
		f.Add(s)
	}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, q string) {
		d, ok := QueryDates(q, now)
		if ok && !d.From.Before(d.To) {
			t.Errorf("QueryDates(%q) = %v..%v, an empty range", q, d.From, d.To)
		}
	})
}

func TestQueryNames(t *testing.T) {
	for _, tc := range []struct {
		q    string
		want []string
	}{
		{"What did Maya say about Melanie's kids in Lisbon?", []string{"lisbon", "maya", "melanie"}},
		// A capital opening the question is no name, unless it is a possessive.
		{"Claude's advice on the retry budget?", []string{"claude"}},
		{"Claude said what about retries?", nil},
		{"Where does Jonas\u2019s cousin live?", []string{"jonas"}},
	} {
		got := QueryNames(tc.q)
		var names []string
		for w := range got {
			names = append(names, w)
		}
		slices.Sort(names)
		if !slices.Equal(names, tc.want) {
			t.Errorf("QueryNames(%q) = %v, want %v", tc.q, names, tc.want)
		}
	}
}

func TestSeedNames(t *testing.T) {
	seeds := []Turn{
		{Text: "Did I tell you my cousin Leo lives in Oslo now?", Speaker: "Maya"},
		{Text: "Leo says hi. Maya, you would love Oslo.", Speaker: "Jonas"},
	}
	got := SeedNames("Which city did Maya visit when staying with their cousin?", seeds)
	if !slices.Equal(got, []string{"Leo", "Oslo"}) {
		t.Errorf("SeedNames = %v, want [Leo Oslo] (not the sentence starts, the speakers or the question's words)", got)
	}
}

func TestRerankTurns(t *testing.T) {
	may := time.Date(2023, 5, 12, 18, 0, 0, 0, time.UTC)
	june := time.Date(2023, 6, 30, 18, 0, 0, 0, time.UTC)
	turns := []Turn{
		{ID: "a", Score: 1.0, Text: "Talk soon!", Speaker: "Jonas", At: june},
		{ID: "b", Score: 0.9, Text: "Talk soon!", Speaker: "Jonas", At: june},
		{ID: "c", Score: 0.5, Text: "We spent four days in Porto.", Speaker: "Maya", At: may, Specificity: 0.9},
		{ID: "d", Score: 0.6, Text: "Work was busy.", Speaker: "Maya", At: june},
		{ID: "e", Score: 0.0, Text: "Leo showed me around.", Speaker: "Maya", At: june},
	}
	ids := func(l []ScoredID) []string {
		var out []string
		for _, x := range l {
			out = append(out, x.ID)
		}
		return out
	}
	q := "Where did Maya go in May 2023?"
	dates, ok := QueryDates(q, june)
	if !ok {
		t.Fatal("no dates in the question")
	}
	if got := ids(RerankTurns(q, turns, dates, ok, nil, ConvConfig{})); !slices.Equal(got, []string{"a", "b", "d", "c", "e"}) {
		t.Errorf("no levers: %v, want the fused order", got)
	}
	if got := ids(RerankTurns(q, turns, dates, ok, nil, ConvConfig{Speaker: 0.6})); got[0] != "d" || got[1] != "c" {
		t.Errorf("speaker: %v, want Maya's turns first", got)
	}
	if got := ids(RerankTurns(q, turns, dates, ok, nil, ConvConfig{Time: 1})); got[0] != "c" {
		t.Errorf("dates: %v, want the May turn first", got)
	}
	if got := ids(RerankTurns(q, turns, dates, ok, nil, ConvConfig{Duplicate: 0.2})); got[1] == "b" {
		t.Errorf("duplicates: %v, want the copy of \"Talk soon!\" lower", got)
	}
	if got := ids(RerankTurns(q, turns, dates, ok, []ScoredID{{ID: "e", Score: 3}}, ConvConfig{Second: 1.5})); got[0] != "e" {
		t.Errorf("second round: %v, want its best hit first", got)
	}
	if got := ids(RerankTurns(q, turns, dates, ok, nil, ConvConfig{Specific: 1})); got[0] != "c" {
		t.Errorf("specificity: %v, want the specific turn first", got)
	}
}

func TestSpecificity(t *testing.T) {
	var texts []string
	for range 40 {
		texts = append(texts, "Same here, honestly.", "Thanks for asking, pretty good.")
	}
	texts = append(texts, "We spent four days in Valparaiso and loved it.")
	m, err := Learn(t.Context(), texts, 1, DefaultLearnConfig())
	if err != nil {
		t.Fatal(err)
	}
	small, named := m.Specificity("Same here, honestly."), m.Specificity("Valparaiso was lovely")
	if !(small < 0.6 && named > 0.9) {
		t.Errorf("Specificity: small talk %.2f (want < 0.6), a rare name %.2f (want > 0.9)", small, named)
	}
	if m.Specificity("") != 0 {
		t.Errorf("Specificity of no words = %.2f, want 0", m.Specificity(""))
	}
}

func TestQueryAnchor(t *testing.T) {
	for _, c := range []struct {
		q      string
		ok     bool
		event  string
		before bool
		days   int
	}{
		{"Which city did Jonas visit shortly before adopting Biscuit?", true, "adopting biscuit", true, 0},
		{"Where did Maya go in the weeks after Leo moved to Oslo?", true, "leo moved oslo", false, 0},
		{"what did we ship the day before the release", true, "release", true, 1},
		{"what broke two weeks after the migration?", true, "migration", false, 14},
		{"the plan a week prior to the launch", true, "launch", true, 7},
		{"what did Priya say a couple of months after her trip to Kyoto", true, "trip kyoto", false, 62},
		{"what happens after", false, "", false, 0},
		{"Where did Aiko go on holiday in May 2023?", false, "", false, 0},
	} {
		a, ok := QueryAnchor(c.q)
		if ok != c.ok || ok && (a.Event != c.event || a.Before != c.before || a.Days != c.days) {
			t.Errorf("QueryAnchor(%q) = %+v %v, want %q before=%v days=%d %v", c.q, a, ok, c.event, c.before, c.days, c.ok)
		}
	}
}

func TestAnchorWindow(t *testing.T) {
	at := time.Date(2024, 5, 20, 18, 0, 0, 0, time.UTC)
	day := func(m time.Month, d int) time.Time { return time.Date(2024, m, d, 0, 0, 0, 0, time.UTC) }
	for _, c := range []struct {
		a        Anchor
		from, to time.Time
	}{
		// up to the end of the anchor's day, or from its start on
		{Anchor{Before: true}, day(3, 21), day(5, 21)},
		{Anchor{}, day(5, 20), day(7, 20)},
		{Anchor{Before: true, Days: 1}, day(5, 19), day(5, 21)},
		{Anchor{Days: 14}, day(5, 20), day(6, 4)},
	} {
		w := c.a.Window(at, 60)
		if !w.From.Equal(c.from) || !w.To.Equal(c.to) {
			t.Errorf("%+v.Window = %v..%v, want %v..%v", c.a, w.From, w.To, c.from, c.to)
		}
		if !w.Contains(at) {
			t.Errorf("%+v.Window leaves out the anchor's own day", c.a)
		}
	}
}

func TestAnchorTurnPrefersTheSpeakerNamed(t *testing.T) {
	turns := []Turn{{ID: "a", Speaker: "Jonas"}, {ID: "b", Speaker: "Maya"}, {ID: "c", Speaker: "Maya"}}
	if got, ok := AnchorTurn("Where did Maya go after adopting Biscuit?", turns); !ok || got.ID != "b" {
		t.Errorf("got %+v, want Maya's first turn b", got)
	}
	if got, ok := AnchorTurn("What happened after adopting Biscuit?", turns); !ok || got.ID != "a" {
		t.Errorf("no speaker named: got %+v, want the best turn a", got)
	}
	if _, ok := AnchorTurn("after adopting Biscuit?", nil); ok {
		t.Error("an anchor with no turn")
	}
}

func FuzzQueryAnchor(f *testing.F) {
	for _, s := range []string{"two weeks after the migration", "a couple of months before her trip", "prior to", "400 days after x"} {
		f.Add(s)
	}
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, q string) {
		a, ok := QueryAnchor(q)
		if !ok {
			return
		}
		if a.Event == "" || a.Days < 0 {
			t.Errorf("QueryAnchor(%q) = %+v", q, a)
		}
		if w := a.Window(at, 60); !w.From.Before(w.To) || !w.Contains(at) {
			t.Errorf("QueryAnchor(%q).Window = %v..%v", q, w.From, w.To)
		}
	})
}

func TestReplyContext(t *testing.T) {
	got := ReplyContext([]Asked{
		{Text: "Which instrument did you pick in the end?", Score: 0.9, Reply: "cello"},
		{Text: "Have you been reading anything good?", Score: 0.8, Reply: "r1"},
		{Text: "have you been reading anything GOOD?", Score: 0.6, Reply: "r2"},
		{Text: "I signed up for cello lessons.", Score: 1, Reply: "filler"},
		{Text: "Is that a new car?", Score: 0.5, Reply: ""},
		{Text: "Oh wow, really?", Score: 0.2, Reply: "cello"},
	})
	want := map[string]float64{"cello": 0.9, "r1": 0.4, "r2": 0.3}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s: lent %v, want %v (all: %v)", k, got[k], w, got)
		}
	}
}

func TestKindTermsAreThingsOfTheKindsAsked(t *testing.T) {
	store := map[string]bool{"cello": true, "ukulele": true, "piano": true, "lisbon": true, "oslo": true, "puppy": true, "pepper": true, "chilli": true}
	lex, err := lexicon.Default()
	if err != nil {
		t.Fatal(err)
	}
	held := lex.Held(func(w string) bool { return store[w] })
	for _, c := range []struct {
		q            string
		want, absent []string
	}{
		{"What instrument is Maya learning to play?", []string{"cello", "ukulele", "piano"}, []string{"lisbon", "puppy"}},
		{"Which cities did Jonas visit in May?", []string{"lisbon", "oslo"}, []string{"cello"}},
		{"What did Maya call the animal they adopted?", []string{"puppy"}, []string{"oslo"}},
		// A name is not a kind: Pepper is the dog, not the plant.
		{"When did Pepper first see a vet?", nil, []string{"chilli"}},
		{"How have you been?", nil, []string{"cello", "oslo"}},
	} {
		km := QueryKinds(c.q)
		km.Hold(held)
		got := km.Terms()
		for _, w := range c.want {
			if !slices.Contains(got, w) {
				t.Errorf("Terms of %q: = %v, want %q among them", c.q, got, w)
			}
		}
		for _, w := range c.absent {
			if slices.Contains(got, w) {
				t.Errorf("Terms of %q: = %v, want no %q", c.q, got, w)
			}
		}
	}
}

func TestKindLeverLiftsTheTurnThatNamesTheThing(t *testing.T) {
	turns := []Turn{
		{ID: "a", Score: 0.5, Text: "Music always helps me relax."},
		{ID: "b", Score: 0.5, Text: "Bought a bass guitar, my fingers hurt."},
		{ID: "c", Score: 0.5, Text: "We went to Oslo for the weekend."},
	}
	q := "Which instrument did Maya take up?"
	off := RerankTurns(q, turns, DateRange{}, false, nil, ConvConfig{})
	if off[0].ID != "a" {
		t.Fatalf("without the lever, ties go by id: %v", off)
	}
	km := QueryKinds(q)
	for i := range turns {
		turns[i].Kind = km.Score(turns[i].Text)
	}
	on := RerankTurns(q, turns, DateRange{}, false, nil, ConvConfig{Kind: 0.1})
	if on[0].ID != "b" || on[0].Score <= 0.5 || on[1].Score != 0.5 {
		t.Errorf("with the kind lever, the bass guitar (two words, one thing) should lead alone: %v", on)
	}
}
