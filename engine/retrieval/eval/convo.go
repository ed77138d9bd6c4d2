package eval

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"mnemo/contract"
)

// Conversation question types.
const (
	ConvSingleHop = "single-hop"
	ConvTemporal  = "temporal"
	ConvMultiHop  = "multi-hop"
	ConvAll       = "all"
)

// ConvTurn is one turn of a generated conversation: who said it, when (its
// session's date) and its key, which questions name as evidence.
type ConvTurn struct {
	Key     string
	Session int
	Speaker string
	Text    string
	At      time.Time
}

// ConvQuestion is a question about one conversation whose answer is in the
// Evidence turns (all of them, for multi-hop).
type ConvQuestion struct {
	Text     string
	Type     string
	Evidence []string
}

// Conv is one long two-person conversation over many sessions.
type Conv struct {
	Namespace string
	Speakers  [2]string
	Turns     []ConvTurn
	Questions []ConvQuestion
}

// Word pools for the generated conversations. None of it comes from any
// benchmark: names, places and activities are common ones, the sentences are
// written for this generator.
var (
	convFirstNames = []string{"Maya", "Jonas", "Priya", "Tomas", "Aiko", "Rafael", "Ingrid", "Kwame", "Sofia", "Declan",
		"Leila", "Mateo", "Hannah", "Oskar", "Nadia", "Elliot", "Chiara", "Dmitri", "Amara", "Felix", "Yuki", "Gabriel"}
	convThirdNames = []string{"Leo", "Beatriz", "Sam", "Noor", "Viktor", "Clara", "Ibrahim", "Greta", "Marcus", "Lena",
		"Paulo", "Tess", "Arjun", "Freya", "Hugo", "Mira"}
	convCities = []string{"Lisbon", "Denver", "Kyoto", "Porto", "Edinburgh", "Montreal", "Seville", "Oslo", "Valparaiso",
		"Tbilisi", "Hanoi", "Marrakesh", "Cork", "Ljubljana", "Austin", "Bergen", "Cusco", "Naples"}
	convRelations   = []string{"sister", "brother", "cousin", "aunt", "uncle", "old roommate", "best friend", "neighbour"}
	convInstruments = [][2]string{{"cello", "instrument"}, {"ukulele", "instrument"}, {"drums", "instrument"},
		{"piano", "instrument"}, {"saxophone", "instrument"}, {"banjo", "instrument"}}
	convPets     = []string{"puppy", "kitten", "rescue greyhound", "parrot", "rabbit", "tortoise"}
	convPetNames = []string{"Biscuit", "Pepper", "Juniper", "Mochi", "Otto", "Saffron", "Waffles", "Clementine", "Ziggy"}
	convHobbies  = [][2]string{{"pottery", "make"}, {"rock climbing", "sport"}, {"woodworking", "make"},
		{"salsa dancing", "dance"}, {"birdwatching", "outdoor"}, {"sourdough baking", "bake"}, {"watercolour painting", "paint"},
		{"trail running", "sport"}, {"chess", "game"}}
	convJobs = []string{"a nurse at the children's hospital", "a data analyst at a shipping firm", "a sous chef at a bistro",
		"a high school chemistry teacher", "an architect at a small studio", "a park ranger", "a sound engineer for a theatre"}
	convBooks = []string{"The Glass Orchard", "Salt and Lanterns", "A Map of Small Hours", "The Quiet Engineer",
		"Rivers Under Ice", "The Last Cartographer"}
	convFillers = []string{
		"How have you been lately?", "Pretty good, thanks for asking!", "That sounds wonderful.",
		"Haha, I know exactly what you mean.", "Work has been a bit hectic this week.", "Oh wow, really?",
		"I'm so happy for you!", "That must have been a lot to handle.", "Same here, honestly.",
		"We should catch up properly soon.", "Yes, it was amazing!", "I hadn't thought about it that way.",
		"Anyway, enough about me. What's new with you?", "The weather has been awful here.",
		"I've been trying to get more sleep.", "Thanks, that means a lot.", "Tell me more!",
		"It's been a long week, but a good one.", "I've been meaning to ask you about that.",
		"Sounds like a plan.", "Take care of yourself, okay?", "Talk soon!", "Good to hear from you again.",
		"I went for a walk this morning and felt much better.", "My family is doing well, thanks.",
		"I'm thinking of taking a trip sometime this year.", "Have you been reading anything good?",
		"Music always helps me relax.", "Work keeps me busy, but I like it.", "I love that idea.",
		"That reminds me of when we were in school.", "Let me know how it goes!", "Fingers crossed for you.",
	}
)

// convFact is a planted fact: the turn that states it and the questions that
// ask about it, with how many turns of the same session come first.
type convFact struct {
	text      string
	questions []ConvQuestion
}

// GenConversations makes n long conversations (seeded, so the same seed gives
// the same set) of sessions sessions each, between two people, with
// single-hop, temporal and multi-hop questions whose evidence are turns.
func GenConversations(seed uint64, n, sessions int) []Conv {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	pick := func(s []string) string { return s[r.IntN(len(s))] }
	convs := make([]Conv, n)
	for ci := range convs {
		names := slices.Clone(convFirstNames)
		r.Shuffle(len(names), func(i, j int) { names[i], names[j] = names[j], names[i] })
		c := &convs[ci]
		c.Namespace = fmt.Sprintf("project:mnemo-eval-conv/user:c%02d", ci)
		c.Speakers = [2]string{names[0], names[1]}
		thirds := slices.Clone(convThirdNames)
		r.Shuffle(len(thirds), func(i, j int) { thirds[i], thirds[j] = thirds[j], thirds[i] })
		cities := slices.Clone(convCities)
		r.Shuffle(len(cities), func(i, j int) { cities[i], cities[j] = cities[j], cities[i] })
		day := time.Date(2022+r.IntN(3), time.Month(1+r.IntN(12)), 1+r.IntN(27), 18, 0, 0, 0, time.UTC)
		// facts per session, built lazily so each session's date is known
		type pending struct {
			session int
			speaker int
			fact    func(key string, at time.Time) convFact
		}
		var plan []pending
		used := map[string]bool{}
		fresh := func(pool []string) string {
			for range 50 {
				v := pick(pool)
				if !used[v] {
					used[v] = true
					return v
				}
			}
			return pick(pool)
		}
		// Multi-hop facts need two turns; they are planted as linked pairs.
		for s := range sessions {
			for f := 0; f < 2+r.IntN(2); f++ {
				sp := r.IntN(2)
				who := c.Speakers[sp]
				switch r.IntN(7) {
				case 0: // trip: temporal + single-hop
					city := fresh(cities)
					plan = append(plan, pending{s, sp, func(key string, at time.Time) convFact {
						text := pick([]string{
							"I just got back from %s, the food alone was worth the flight.",
							"We spent four days in %s and I already miss it.",
							"Finally made it to %s last week! The old town was beautiful.",
						})
						when := at.Format("2 January 2006")
						return convFact{fmt.Sprintf(text, city), []ConvQuestion{
							{pick([]string{"When did %s travel to %s?", "When was %s's trip to %s?", "When did %s visit %s?"}), ConvTemporal, nil},
							{pick([]string{"Which city did %s visit around " + when + "?", "Where did %s go on holiday in " + at.Format("January 2006") + "?"}), ConvTemporal, nil},
						}}.fill(who, city)
					}})
				case 1: // instrument
					in := convInstruments[r.IntN(len(convInstruments))][0]
					plan = append(plan, pending{s, sp, func(key string, at time.Time) convFact {
						text := pick([]string{"I signed up for %s lessons, my fingers hurt already.", "Guess what, I bought a second-hand %s and I'm learning it from videos.", "My teacher says my %s playing is finally improving."})
						return convFact{fmt.Sprintf(text, in), []ConvQuestion{
							{pick([]string{"What instrument is %s learning to play?", "Which musical instrument did %s take up?"}), ConvSingleHop, nil},
						}}.fill(who, "")
					}})
				case 2: // pet
					pet, pname := pick(convPets), fresh(convPetNames)
					plan = append(plan, pending{s, sp, func(key string, at time.Time) convFact {
						text := pick([]string{"We adopted a %s and named it %s.", "Meet %[2]s, our new %[1]s! The house is chaos now.", "The shelter let us take home a %s, we call it %s."})
						return convFact{fmt.Sprintf(text, pet, pname), []ConvQuestion{
							{pick([]string{"What is the name of %s's pet?", "What did %s call the animal they adopted?"}), ConvSingleHop, nil},
							{pick([]string{"When did %s adopt " + pname + "?", "When did %s get a new pet?"}), ConvTemporal, nil},
						}}.fill(who, "")
					}})
				case 3: // hobby
					h := convHobbies[r.IntN(len(convHobbies))][0]
					plan = append(plan, pending{s, sp, func(key string, at time.Time) convFact {
						text := pick([]string{"I've been going to a %s class every Thursday evening.", "Lately I'm obsessed with %s, I spend every weekend on it.", "A friend dragged me to try %s and I loved it."})
						return convFact{fmt.Sprintf(text, h), []ConvQuestion{
							{pick([]string{"What hobby did %s pick up?", "What does %s do in their free time these days?"}), ConvSingleHop, nil},
						}}.fill(who, "")
					}})
				case 4: // job
					job := pick(convJobs)
					plan = append(plan, pending{s, sp, func(key string, at time.Time) convFact {
						text := pick([]string{"I start my new job next Monday, I'll be %s.", "Big news: I got the offer and I'm going to work as %s.", "After years of applying I'm now %s."})
						return convFact{fmt.Sprintf(text, job), []ConvQuestion{
							{pick([]string{"What is %s's new job?", "What does %s do for work now?", "Where did %s start working?"}), ConvSingleHop, nil},
							{pick([]string{"When did %s change jobs?", "When did %s get the job offer?"}), ConvTemporal, nil},
						}}.fill(who, "")
					}})
				case 5: // book
					b := pick(convBooks)
					plan = append(plan, pending{s, sp, func(key string, at time.Time) convFact {
						text := pick([]string{"I couldn't put down %s, I finished it in two nights.", "My book club picked %s and the ending made me cry."})
						return convFact{fmt.Sprintf(text, b), []ConvQuestion{
							{pick([]string{"Which novel did %s recommend?", "What book was %s reading?"}), ConvSingleHop, nil},
						}}.fill(who, "")
					}})
				case 6: // multi-hop: a relative/friend lives in a city (earlier), later a visit
					rel, third, city := pick(convRelations), thirds[r.IntN(len(thirds))], fresh(cities)
					later := s + 1 + r.IntN(max(1, sessions-s))
					if later >= sessions {
						continue
					}
					var first string
					plan = append(plan, pending{s, sp, func(key string, at time.Time) convFact {
						first = key
						text := pick([]string{"My %s %s just moved to %s for work.", "%[2]s, my %[1]s, bought a flat in %[3]s last month.", "Did I tell you my %s %s lives in %s now?"})
						return convFact{fmt.Sprintf(text, rel, third, city), nil}
					}})
					plan = append(plan, pending{later, sp, func(key string, at time.Time) convFact {
						text := pick([]string{"I'm flying out to see %s next weekend, can't wait.", "Spent the long weekend staying with %s, we cooked every night.", "%s showed me around their new neighbourhood."})
						return convFact{fmt.Sprintf(text, third), []ConvQuestion{
							{Text: fmt.Sprintf(pick([]string{"Which city did %s travel to when visiting their %s?", "In what city was %s when they stayed with their %s?"}), who, rel), Type: ConvMultiHop, Evidence: []string{first}},
						}}
					}})
				}
			}
		}
		// Write the sessions: fillers around the planted facts, alternating speakers.
		tn := 0
		for s := range sessions {
			at := day
			var facts []pending
			for _, p := range plan {
				if p.session == s {
					facts = append(facts, p)
				}
			}
			nTurns := 14 + r.IntN(12)
			slots := r.Perm(nTurns - 2)[:len(facts)]
			for t := range nTurns {
				sp := t % 2
				key := fmt.Sprintf("c%02d-t%04d", ci, tn)
				tn++
				text := pick(convFillers)
				var qs []ConvQuestion
				for fi, slot := range slots {
					if slot+1 == t {
						f := facts[fi].fact(key, at)
						sp = facts[fi].speaker
						text = f.text
						qs = f.questions
					}
				}
				c.Turns = append(c.Turns, ConvTurn{Key: key, Session: s, Speaker: c.Speakers[sp], Text: text, At: at})
				for _, q := range qs {
					q.Evidence = append(q.Evidence, key)
					c.Questions = append(c.Questions, q)
				}
			}
			day = day.AddDate(0, 0, 4+r.IntN(25))
		}
	}
	return convs
}

// fill puts the speaker (and a second value, when the template has one) into
// the questions.
func (f convFact) fill(who, what string) convFact {
	for i := range f.questions {
		if strings.Count(f.questions[i].Text, "%s") >= 2 {
			f.questions[i].Text = fmt.Sprintf(f.questions[i].Text, who, what)
		} else {
			f.questions[i].Text = fmt.Sprintf(f.questions[i].Text, who)
		}
	}
	return f
}

// ConvItems are the store items of a conversation: one conversation item of
// one turn per turn, observed at its session's date, with its speaker as the
// observed actor: how `mnemo import` stores a transcript.
func ConvItems(c Conv) ([]contract.StoreItem, error) {
	ns, err := contract.ParseNamespace(c.Namespace)
	if err != nil {
		return nil, err
	}
	items := make([]contract.StoreItem, len(c.Turns))
	for i, t := range c.Turns {
		role := contract.RoleUser
		if t.Speaker == c.Speakers[1] {
			role = contract.RoleAssistant
		}
		at, name := t.At, t.Speaker
		items[i] = contract.Conversation([]contract.Turn{{Role: role, Text: t.Text, At: &at}},
			contract.MemoryMeta{Namespace: ns, ObservedAt: &at, ObservedActor: &contract.ObservedActor{ID: strings.ToLower(name), Name: &name},
				Source: contract.SourceRef{Kind: contract.SourceConversation}})
	}
	return items, nil
}

// ConvResult is evidence recall@K per fetch mode and question type.
type ConvResult struct {
	Turns, Questions int
	ByType           map[contract.FetchMode]map[string]Metrics
	Count            map[string]int
}

// RunConversations stores convs in e and asks each question in every mode e
// serves, within its conversation's namespace. A question's evidence recall
// is the share of its evidence turns in the top K; the figure per type is
// the mean over its questions.
func RunConversations(ctx context.Context, e contract.Engine, convs []Conv) (ConvResult, error) {
	res := ConvResult{ByType: map[contract.FetchMode]map[string]Metrics{}, Count: map[string]int{}}
	keyOf := map[string]string{}
	for _, c := range convs {
		items, err := ConvItems(c)
		if err != nil {
			return res, err
		}
		for lo := 0; lo < len(items); lo += contract.MaxStoreMany {
			hi := min(lo+contract.MaxStoreMany, len(items))
			rec, err := contract.StoreMany(ctx, e, items[lo:hi])
			if err != nil {
				return res, fmt.Errorf("storing %s: %w", c.Namespace, err)
			}
			for i, r := range rec {
				keyOf[r.ID] = c.Turns[lo+i].Key
			}
		}
		res.Turns += len(c.Turns)
		res.Questions += len(c.Questions)
		for _, q := range c.Questions {
			res.Count[q.Type]++
			res.Count[ConvAll]++
		}
	}
	if w, ok := e.(interface{ WaitEmbedder(context.Context) error }); ok {
		if err := w.WaitEmbedder(ctx); err != nil {
			return res, fmt.Errorf("waiting for the embedder: %w", err)
		}
	}
	for _, mode := range contract.FetchModes() {
		if !e.Descriptor().Supports(mode) {
			continue
		}
		sum := map[string]Metrics{}
		for _, c := range convs {
			ns, _ := contract.ParseNamespace(c.Namespace)
			reach := contract.ReachSubtree(ns)
			for _, q := range c.Questions {
				page, err := e.Fetch(ctx, contract.FetchRequest{Query: q.Text, Mode: mode, Filter: contract.MetaFilter{Reach: &reach}, Limit: K})
				if err != nil {
					return res, fmt.Errorf("%s fetch %q: %w", mode, q.Text, err)
				}
				found, rr := 0, 0.0
				for i, h := range page.Hits {
					if slices.Contains(q.Evidence, keyOf[h.ID]) {
						found++
						if rr == 0 {
							rr = 1 / float64(i+1)
						}
					}
				}
				rec := float64(found) / float64(len(q.Evidence))
				for _, typ := range []string{q.Type, ConvAll} {
					m := sum[typ]
					m.Recall += rec
					m.MRR += rr
					sum[typ] = m
				}
			}
		}
		for typ, m := range sum {
			m.Recall /= float64(res.Count[typ])
			m.MRR /= float64(res.Count[typ])
			sum[typ] = m
		}
		res.ByType[mode] = sum
	}
	return res, nil
}

// Table is the result as a markdown table of evidence recall@K (MRR@K of the
// first evidence turn in brackets).
func (r ConvResult) Table() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d turns, %d questions\n| mode | single-hop (%d) | temporal (%d) | multi-hop (%d) | all (%d) |\n| --- | --- | --- | --- | --- |\n",
		r.Turns, r.Questions, r.Count[ConvSingleHop], r.Count[ConvTemporal], r.Count[ConvMultiHop], r.Count[ConvAll])
	for _, mode := range contract.FetchModes() {
		m, ok := r.ByType[mode]
		if !ok {
			continue
		}
		fmt.Fprintf(&b, "| %s |", mode)
		for _, typ := range []string{ConvSingleHop, ConvTemporal, ConvMultiHop, ConvAll} {
			fmt.Fprintf(&b, " %.3f (%.3f) |", m[typ].Recall, m[typ].MRR)
		}
		b.WriteString("\n")
	}
	return b.String()
}
