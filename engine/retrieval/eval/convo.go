package eval

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"
	"unicode"

	"mnemo/contract"
)

// Conversation question types.
const (
	ConvSingleHop = "single-hop"
	ConvTemporal  = "temporal"
	ConvMultiHop  = "multi-hop"
	// ConvRelative asks for a trip by its time relative to another event
	// of the same speaker ("Which city did Maya visit shortly before
	// adopting Biscuit?"): the answer shares no word with the question,
	// only the anchor does.
	ConvRelative = "relative"
	// ConvExchange asks about a fact told in an exchange: one speaker asks
	// ("Which language did you pick in the end?"), the other answers with
	// the thing ("Portuguese! I can order coffee now."). The answer is the
	// evidence; the question it answers is what shares words with the
	// question asked.
	ConvExchange = "exchange"
	ConvAll      = "all"
	// ConvShared and ConvUnshared split every question by whether it shares
	// a word with its evidence (convShares).
	ConvShared   = "shares a word"
	ConvUnshared = "shares none"
)

// convTypes are the columns of a result table.
var convTypes = []string{ConvSingleHop, ConvTemporal, ConvMultiHop, ConvRelative, ConvExchange, ConvShared, ConvUnshared, ConvAll}

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

// convWorld is what a generator draws from: the word pools, the sentences
// that state each kind of fact, and the paraphrases of the questions about
// it. Nothing in it comes from any benchmark: names, places and activities are
// common ones, the sentences are written for this generator. Templates take
// fmt arguments in the order each field's comment gives.
type convWorld struct {
	first, third, cities, relations, instruments, pets, petNames, hobbies, jobs, books, fillers []string

	trip       []string // city
	qTripWhen  []string // who, city
	qTripDay   []string // who, "2 January 2006"
	qTripMonth []string // who, "January 2006"
	instrument []string // instrument
	qInstr     []string // who
	pet        []string // pet, name
	qPetName   []string // who
	qPetWhen   []string // who, name
	hobby      []string // hobby
	qHobby     []string // who
	job        []string // job
	qJob       []string // who
	qJobWhen   []string // who
	book       []string // title
	qBook      []string // who
	relLives   []string // relation, third person, city
	relVisit   []string // third person
	qMulti     []string // who, relation
	qBefore    []string // who, anchor
	qAfter     []string // who, anchor
	anchorPet  []string // pet name
	anchorJob  []string // (none)
	anchorTrip []string // city
	exchanges  []convExchange
}

// convExchange is a kind of fact told in an exchange: the other speaker asks
// (ask: most name the kind, in words a question about it may or may not
// use; some only hint at it), the speaker answers with one of values
// (answer, its first letter made a capital, naming nothing of the kind),
// and q (who) asks about it.
type convExchange struct {
	values, ask, answer, q []string
}

// convWorldTune is the world of the tuning set (GenConversations).
var convWorldTune = convWorld{
	first: []string{"Maya", "Jonas", "Priya", "Tomas", "Aiko", "Rafael", "Ingrid", "Kwame", "Sofia", "Declan",
		"Leila", "Mateo", "Hannah", "Oskar", "Nadia", "Elliot", "Chiara", "Dmitri", "Amara", "Felix", "Yuki", "Gabriel"},
	third: []string{"Leo", "Beatriz", "Sam", "Noor", "Viktor", "Clara", "Ibrahim", "Greta", "Marcus", "Lena",
		"Paulo", "Tess", "Arjun", "Freya", "Hugo", "Mira"},
	cities: []string{"Lisbon", "Denver", "Kyoto", "Porto", "Edinburgh", "Montreal", "Seville", "Oslo", "Valparaiso",
		"Tbilisi", "Hanoi", "Marrakesh", "Cork", "Ljubljana", "Austin", "Bergen", "Cusco", "Naples"},
	relations:   []string{"sister", "brother", "cousin", "aunt", "uncle", "old roommate", "best friend", "neighbour"},
	instruments: []string{"cello", "ukulele", "drums", "piano", "saxophone", "banjo"},
	pets:        []string{"puppy", "kitten", "rescue greyhound", "parrot", "rabbit", "tortoise"},
	petNames:    []string{"Biscuit", "Pepper", "Juniper", "Mochi", "Otto", "Saffron", "Waffles", "Clementine", "Ziggy"},
	hobbies: []string{"pottery", "rock climbing", "woodworking", "salsa dancing", "birdwatching", "sourdough baking",
		"watercolour painting", "trail running", "chess"},
	jobs: []string{"a nurse at the children's hospital", "a data analyst at a shipping firm", "a sous chef at a bistro",
		"a high school chemistry teacher", "an architect at a small studio", "a park ranger", "a sound engineer for a theatre"},
	books: []string{"The Glass Orchard", "Salt and Lanterns", "A Map of Small Hours", "The Quiet Engineer",
		"Rivers Under Ice", "The Last Cartographer"},
	fillers: []string{
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
	},
	trip: []string{"I just got back from %s, the food alone was worth the flight.",
		"We spent four days in %s and I already miss it.",
		"Finally made it to %s last week! The old town was beautiful."},
	qTripWhen:  []string{"When did %s travel to %s?", "When was %s's trip to %s?", "When did %s visit %s?"},
	qTripDay:   []string{"Which city did %s visit around %s?"},
	qTripMonth: []string{"Where did %s go on holiday in %s?"},
	instrument: []string{"I signed up for %s lessons, my fingers hurt already.",
		"Guess what, I bought a second-hand %s and I'm learning it from videos.",
		"My teacher says my %s playing is finally improving."},
	qInstr: []string{"What instrument is %s learning to play?", "Which musical instrument did %s take up?"},
	pet: []string{"We adopted a %s and named it %s.", "Meet %[2]s, our new %[1]s! The house is chaos now.",
		"The shelter let us take home a %s, we call it %s."},
	qPetName: []string{"What is the name of %s's pet?", "What did %s call the animal they adopted?"},
	qPetWhen: []string{"When did %s adopt %s?", "When did %[1]s get a new pet?"},
	hobby: []string{"I've been going to a %s class every Thursday evening.",
		"Lately I'm obsessed with %s, I spend every weekend on it.", "A friend dragged me to try %s and I loved it."},
	qHobby: []string{"What hobby did %s pick up?", "What does %s do in their free time these days?"},
	job: []string{"I start my new job next Monday, I'll be %s.", "Big news: I got the offer and I'm going to work as %s.",
		"After years of applying I'm now %s."},
	qJob:     []string{"What is %s's new job?", "What does %s do for work now?", "Where did %s start working?"},
	qJobWhen: []string{"When did %s change jobs?", "When did %s get the job offer?"},
	book:     []string{"I couldn't put down %s, I finished it in two nights.", "My book club picked %s and the ending made me cry."},
	qBook:    []string{"Which novel did %s recommend?", "What book was %s reading?"},
	relLives: []string{"My %s %s just moved to %s for work.", "%[2]s, my %[1]s, bought a flat in %[3]s last month.",
		"Did I tell you my %s %s lives in %s now?"},
	relVisit: []string{"I'm flying out to see %s next weekend, can't wait.", "Spent the long weekend staying with %s, we cooked every night.",
		"%s showed me around their new neighbourhood."},
	qMulti:     []string{"Which city did %s travel to when visiting their %s?", "In what city was %s when they stayed with their %s?"},
	qBefore:    []string{"Which city did %s visit shortly before %s?", "Where did %s travel in the weeks before %s?"},
	qAfter:     []string{"Which city did %s visit not long after %s?", "Where did %s go in the weeks after %s?"},
	anchorPet:  []string{"adopting %s", "getting %s"},
	anchorJob:  []string{"changing jobs", "getting the new job"},
	anchorTrip: []string{"the trip to %s", "visiting %s"},
	exchanges: []convExchange{
		{values: []string{"Portuguese", "Japanese", "Italian", "Korean", "Dutch", "Greek"},
			ask: []string{"Are you still doing those evening language classes? What are you studying again?",
				"How's the language course going? Which one did you pick?", "You said you wanted to learn a new language, what did you go for?"},
			answer: []string{"%s! I can order coffee now, that's about it.", "Still %s, the grammar is killing me.", "%s, twice a week. My pronunciation is a disaster."},
			q:      []string{"Which language is %s learning?", "What language course did %s sign up for?"}},
		{values: []string{"five-a-side football", "volleyball", "ultimate frisbee", "water polo", "netball", "curling"},
			ask: []string{"Did you end up joining a team this season?", "What's the sport you keep getting bruises from?",
				"Who were you playing against on Saturday?"},
			answer: []string{"Yes, %s on Tuesdays, I'm the worst one there.", "%s, we lost again but it was fun.", "Oh, the %s league. We actually won for once!"},
			q:      []string{"Which team sport does %s play?", "What does %s play on a team?"}},
		{values: []string{"mushroom risotto", "lamb tagine", "pad thai", "shakshuka", "beef bourguignon", "vegetable lasagne"},
			ask: []string{"What did you cook for the dinner party in the end?", "So what did you cook when your in-laws came over?",
				"What were you making when you burned your hand?"},
			answer: []string{"%s, everyone had seconds.", "I went with %s, my grandmother's recipe.", "A huge pot of %s, there are leftovers for days."},
			q:      []string{"What dish did %s cook for guests?", "What meal did %s make for the dinner?"}},
		{values: []string{"Volvo estate", "Fiat Panda", "Toyota Prius", "Mini Cooper", "Subaru Outback", "Renault Clio"},
			ask: []string{"So what did you end up buying after all that test driving?", "Is that a new car I saw outside your place?",
				"Which car did you go for at the dealership?"},
			answer: []string{"A little %s, second-hand but it runs perfectly.", "Yes! A %s, I'm still scared to park it.", "The %s in the end, the blue one."},
			q:      []string{"What car did %s buy?", "Which vehicle does %s drive now?"}},
		{values: []string{"The Paper Kites", "Wild Harbour", "Neon Orchard", "The Velvet Tides", "Copper Fox", "Silver Lanterns"},
			ask: []string{"Who did you see at the festival?", "Was the concert any good? Who was playing?",
				"Which band were you seeing on Friday? Your photos looked great."},
			answer: []string{"%s! They played for three hours.", "%s, best night of the year.", "It was %s, I lost my voice singing along."},
			q:      []string{"Which band did %s see live?", "What group did %s go to hear in concert?"}},
		{values: []string{"tomatoes", "chillies", "strawberries", "sunflowers", "courgettes", "lavender"},
			ask: []string{"What are you growing on the balcony this year?", "How's the allotment? Anything coming up yet?",
				"What were those seedlings on your windowsill?"},
			answer: []string{"Mostly %s, if the snails leave them alone.", "The %s are finally coming up!", "%s, I'm weirdly proud of them."},
			q:      []string{"What is %s growing in the garden?", "What plants did %s grow this year?"}},
	},
}

// convWorldHeldOut is the world of the held-out set (GenConversationsHeldOut):
// other names, places, things and sentences, and other paraphrases of the
// questions. No retrieval choice is made on it.
var convWorldHeldOut = convWorld{
	first: []string{"Ruth", "Kenji", "Olga", "Emeka", "Lucia", "Anders", "Farah", "Bruno", "Siobhan", "Tariq",
		"Wen", "Petra", "Idris", "Camille", "Hamza", "Astrid", "Diego", "Zainab", "Malik", "Elsa"},
	third: []string{"Rosa", "Theo", "Ines", "Kofi", "Lars", "Meera", "Jude", "Anya", "Omar", "Pia", "Ravi", "Sunita", "Ezra", "Vera"},
	cities: []string{"Vienna", "Nairobi", "Reykjavik", "Bologna", "Quebec City", "Santiago", "Krakow", "Busan", "Galway",
		"Granada", "Tallinn", "Cape Town", "Salzburg", "Antwerp", "Hobart", "Zanzibar"},
	relations:   []string{"grandmother", "stepbrother", "niece", "godfather", "college friend", "former colleague", "twin sister"},
	instruments: []string{"violin", "trumpet", "harp", "flute", "accordion", "bass guitar", "mandolin"},
	pets:        []string{"beagle", "ginger cat", "hamster", "cockatiel", "border collie", "pair of goldfish"},
	petNames:    []string{"Nutmeg", "Bramble", "Pickle", "Domino", "Maple", "Gizmo", "Olive", "Rufus", "Tofu", "Sprout"},
	hobbies: []string{"bouldering", "knitting", "calligraphy", "kayaking", "beekeeping", "ceramics", "swing dancing",
		"amateur astronomy", "fencing", "community gardening"},
	jobs: []string{"a paramedic with the city ambulance service", "a software tester at a games studio", "a baker at a family bakery",
		"a primary school librarian", "a translator for a law firm", "a marine biologist at the aquarium", "a bus driver on the night routes"},
	books: []string{"The Orchard Keeper's Daughter", "Nine Bridges North", "A Thousand Paper Moons", "The Salt Road",
		"Winter in Copper Town", "The Clockmaker's Silence"},
	fillers: []string{
		"Morning! Did you sleep okay?", "Not bad at all, you?", "Ha, classic.", "Ugh, Mondays.",
		"I'm honestly exhausted today.", "No way!", "That's brilliant news.", "Oh no, I'm sorry to hear that.",
		"Totally agree.", "We really need to get coffee soon.", "It was such a good day.", "Hmm, maybe you're right.",
		"Enough about my week, how was yours?", "It's been raining non-stop.", "I need a holiday, seriously.",
		"You're the best, thank you.", "Go on, I'm listening.", "Busy week, but I survived.", "Oh, I wanted to ask you something.",
		"Works for me.", "Don't work too hard!", "Catch you later!", "So nice to hear from you.",
		"I made pancakes this morning, small victories.", "Everyone at home says hi.", "My phone died twice today.",
		"Any good films lately?", "I've had the same song in my head all day.", "The commute was a nightmare.",
		"Let's plan something for the spring.", "That takes me back.", "Keep me posted!", "Good luck, you've got this.",
	},
	trip: []string{"Back home after a week in %s, I could have stayed a month.",
		"%s was incredible, we walked everywhere and ate far too much.",
		"Just landed from %s, exhausted but so happy we went."},
	qTripWhen:  []string{"When was %s in %s?", "When did %s go to %s?", "At what point did %s take the trip to %s?"},
	qTripDay:   []string{"What place did %s come back from around %s?", "Where had %s travelled to by %s?"},
	qTripMonth: []string{"Which trip did %s take in %s?", "What city did %s visit during %s?"},
	instrument: []string{"I finally started %s lessons, my neighbours must hate me.",
		"Picked up a %s at a flea market and I practise every night now.",
		"Tonight I managed a whole song on the %s without a mistake."},
	qInstr: []string{"Which instrument has %s started learning?", "What does %s practise playing?", "What music lessons is %s taking?"},
	pet: []string{"We brought home a %s from the rescue centre, its name is %s.", "Say hello to %[2]s, the %[1]s who now owns our sofa.",
		"Our new %s %s kept us up all night."},
	qPetName: []string{"What is %s's new pet called?", "What name did %s give the animal from the rescue?"},
	qPetWhen: []string{"When did %s bring %s home?", "When did %[1]s get their new animal?"},
	hobby: []string{"I joined a %s group that meets on Sunday mornings.",
		"My new thing is %s, I watch tutorials every evening.", "I tried %s for the first time and I'm hooked."},
	qHobby: []string{"What new pastime did %s start?", "What activity is %s hooked on lately?"},
	job: []string{"Signed the contract today, from next month I'm %s.", "I handed in my notice, I'm starting as %s.",
		"First week done as %s, so much to learn."},
	qJob:     []string{"What work does %s do now?", "Which position did %s accept?", "What is %s's job these days?"},
	qJobWhen: []string{"When did %s start the new position?", "When did %s sign the job contract?"},
	book:     []string{"Just finished %s, I stayed up until three to read the end.", "You have to read %s, it's the best novel I've read this year."},
	qBook:    []string{"What novel did %s rave about?", "Which book did %s stay up late reading?"},
	relLives: []string{"My %s %s has settled in %s now.", "%[2]s, my %[1]s, found a place in %[3]s.",
		"Remember my %s %s? They live in %s these days."},
	relVisit: []string{"Just got back from staying at %s's place, we talked all night.", "Booked my tickets to go and see %s next month.",
		"%s took me to the best market on my visit."},
	qMulti:     []string{"Which city did %s go to in order to see their %s?", "Where did %s travel to stay with their %s?"},
	qBefore:    []string{"What place did %s travel to a little before %s?", "Which trip did %s take just before %s?"},
	qAfter:     []string{"Where did %s head soon after %s?", "What city did %s go to shortly after %s?"},
	anchorPet:  []string{"bringing %s home", "taking in %s"},
	anchorJob:  []string{"signing the job contract", "starting the new position"},
	anchorTrip: []string{"being in %s", "the time in %s"},
	exchanges: []convExchange{
		{values: []string{"Swahili", "Mandarin", "Turkish", "Polish", "Hindi", "Icelandic"},
			ask: []string{"How are the night classes going? Remind me which language.", "What's that app you practise with every morning teaching you?",
				"Which language are you taking at the community college?"},
			answer: []string{"%s, and I finally understood a whole podcast episode!", "It's %s, the verbs make my head spin.", "%s. Slowly getting there."},
			q:      []string{"What language does %s practise?", "Which language is %s studying these days?"}},
		{values: []string{"badminton", "rugby sevens", "hockey", "basketball", "cricket", "roller derby"},
			ask:    []string{"Which sports club did you join in the end?", "How did your team do at the weekend?", "Are you still playing with the work team?"},
			answer: []string{"%s, training is brutal but I love it.", "Our %s team scraped a draw!", "Yep, %s every Wednesday night."},
			q:      []string{"What sport does %s play with a team?", "Which team sport has %s taken up?"}},
		{values: []string{"chicken curry", "paella", "moussaka", "ramen", "fish pie", "stuffed peppers"},
			ask: []string{"What dish did you end up bringing to the potluck?", "What were you cooking when I called yesterday? It smelled amazing.",
				"What's the recipe you kept bragging about?"},
			answer: []string{"%s, not a crumb left.", "That was my %s, it took all afternoon.", "Homemade %s, my one party trick."},
			q:      []string{"What dish did %s bring to share?", "What did %s cook that everyone liked?"}},
		{values: []string{"Skoda Octavia", "Honda Jazz", "Kia Niro", "Peugeot 208", "Mazda MX-5", "Ford Transit van"},
			ask: []string{"Did you sort out a new car in the end?", "What's the car parked in your driveway now?",
				"What did you replace the old banger with?"},
			answer: []string{"A %s, it even has heated seats.", "Finally bought a %s, no more buses!", "That's my %s, isn't it lovely?"},
			q:      []string{"Which car does %s own now?", "What vehicle did %s get?"}},
		{values: []string{"The Midnight Owls", "Harbour Lights", "Blue Meridian", "The Tin Sparrows", "Glass Canyon", "Northern Static"},
			ask: []string{"Who was headlining on Saturday night?", "Which band did you get tickets for in the end?",
				"What was that concert you queued all day for?"},
			answer: []string{"%s, they opened with my favourite song.", "%s! Front row, I'm still deaf.", "It was %s, the crowd went wild."},
			q:      []string{"Which band did %s see play?", "What act did %s watch in concert?"}},
		{values: []string{"pumpkins", "basil", "runner beans", "raspberries", "sweet peas", "dahlias"},
			ask: []string{"What's growing in your garden at the moment?", "What did you plant in those big pots?",
				"Anything worth picking at the allotment yet?"},
			answer: []string{"%s, loads of them.", "The %s are taking over the whole bed.", "Just %s for now, fingers crossed."},
			q:      []string{"What does %s grow at home?", "Which plants is %s growing?"}},
	},
}

// GenConversations makes n long conversations of the tuning set (seeded, so
// the same seed gives the same set) of sessions sessions each, between two
// people, with single-hop, temporal and multi-hop questions whose evidence
// are turns.
func GenConversations(seed uint64, n, sessions int) []Conv {
	return genConversations(convWorldTune, "mnemo-eval-conv", seed, n, sessions)
}

// GenConversationsHeldOut makes conversations of the held-out set: the same
// shape as GenConversations from another world (names, places, things,
// sentences, question paraphrases). It is measured, never tuned on.
func GenConversationsHeldOut(seed uint64, n, sessions int) []Conv {
	return genConversations(convWorldHeldOut, "mnemo-eval-conv-heldout", seed, n, sessions)
}

// ConversationsOfTurns makes conversations of the tuning set of 24 sessions
// each (about 470 turns) until they hold turns turns, the last one cut short
// and its questions about turns cut off left out: a corpus of a given size
// for the latency benchmarks (`mnemo bench`, BenchmarkConvFetch*).
func ConversationsOfTurns(seed uint64, turns int) []Conv {
	convs := GenConversations(seed, max(1, turns/400+1), 24)
	total := 0
	for i, c := range convs {
		if total >= turns {
			return convs[:i]
		}
		if total+len(c.Turns) > turns {
			convs[i].Turns = c.Turns[:turns-total]
			kept := map[string]bool{}
			for _, t := range convs[i].Turns {
				kept[t.Key] = true
			}
			convs[i].Questions = slices.DeleteFunc(c.Questions, func(q ConvQuestion) bool {
				for _, k := range q.Evidence {
					if !kept[k] {
						return true
					}
				}
				return false
			})
		}
		total += len(convs[i].Turns)
	}
	return convs
}

// convFact is a planted fact: the turn that states it and the questions that
// ask about it.
type convFact struct {
	text      string
	questions []ConvQuestion
}

// q makes a question of type typ from one of the templates.
func convQ(typ, tmpl string, args ...any) ConvQuestion {
	return ConvQuestion{Text: fmt.Sprintf(tmpl, args...), Type: typ}
}

// genConversations plants facts in sessions of small talk. Each speaker has
// at most one fact of each kind (instrument, pet, hobby, job, book), one
// person of each relation and visits each city once, so every question has
// one right answer: a question whose answer two turns state equally would
// count one of them as a miss.
func genConversations(w convWorld, project string, seed uint64, n, sessions int) []Conv {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	pick := func(s []string) string { return s[r.IntN(len(s))] }
	convs := make([]Conv, n)
	for ci := range convs {
		names := slices.Clone(w.first)
		r.Shuffle(len(names), func(i, j int) { names[i], names[j] = names[j], names[i] })
		c := &convs[ci]
		c.Namespace = fmt.Sprintf("project:%s/user:c%02d", project, ci)
		c.Speakers = [2]string{names[0], names[1]}
		thirds := slices.Clone(w.third)
		r.Shuffle(len(thirds), func(i, j int) { thirds[i], thirds[j] = thirds[j], thirds[i] })
		cities := slices.Clone(w.cities)
		r.Shuffle(len(cities), func(i, j int) { cities[i], cities[j] = cities[j], cities[i] })
		day := time.Date(2022+r.IntN(3), time.Month(1+r.IntN(12)), 1+r.IntN(27), 18, 0, 0, 0, time.UTC)
		type pending struct {
			session int
			speaker int
			fact    func(key string, at time.Time) convFact
		}
		var plan []pending
		var events []convEvent // the dated facts, for the relative questions
		used := map[string]bool{}
		fresh := func(pool []string) (string, bool) {
			for range 50 {
				v := pick(pool)
				if !used[v] {
					used[v] = true
					return v, true
				}
			}
			return "", false
		}
		// once reports whether speaker sp has no fact of kind k yet, and marks it.
		once := func(sp int, k string) bool {
			key := fmt.Sprintf("%d/%s", sp, k)
			if used[key] {
				return false
			}
			used[key] = true
			return true
		}
		for s := range sessions {
			for f := 0; f < 2+r.IntN(2); f++ {
				sp := r.IntN(2)
				who := c.Speakers[sp]
				switch k := r.IntN(7); k {
				case 0: // trip: temporal
					city, ok := fresh(cities)
					if !ok {
						continue
					}
					plan = append(plan, pending{s, sp, func(key string, at time.Time) convFact {
						events = append(events, convEvent{"trip", sp, city, key, at})
						qs := []ConvQuestion{convQ(ConvTemporal, pick(w.qTripWhen), who, city)}
						if r.IntN(2) == 0 {
							qs = append(qs, convQ(ConvTemporal, pick(w.qTripDay), who, at.Format("2 January 2006")))
						} else {
							qs = append(qs, convQ(ConvTemporal, pick(w.qTripMonth), who, at.Format("January 2006")))
						}
						return convFact{fmt.Sprintf(pick(w.trip), city), qs}
					}})
				case 1: // instrument: single-hop
					if !once(sp, "instrument") {
						continue
					}
					in := pick(w.instruments)
					plan = append(plan, pending{s, sp, func(key string, at time.Time) convFact {
						return convFact{fmt.Sprintf(pick(w.instrument), in), []ConvQuestion{convQ(ConvSingleHop, pick(w.qInstr), who)}}
					}})
				case 2: // pet: single-hop + temporal
					if !once(sp, "pet") {
						continue
					}
					pet, pname, ok := pick(w.pets), "", false
					if pname, ok = fresh(w.petNames); !ok {
						continue
					}
					plan = append(plan, pending{s, sp, func(key string, at time.Time) convFact {
						events = append(events, convEvent{"pet", sp, pname, key, at})
						return convFact{fmt.Sprintf(pick(w.pet), pet, pname), []ConvQuestion{
							convQ(ConvSingleHop, pick(w.qPetName), who),
							convQ(ConvTemporal, pick(w.qPetWhen), who, pname),
						}}
					}})
				case 3: // hobby: single-hop
					if !once(sp, "hobby") {
						continue
					}
					h := pick(w.hobbies)
					plan = append(plan, pending{s, sp, func(key string, at time.Time) convFact {
						return convFact{fmt.Sprintf(pick(w.hobby), h), []ConvQuestion{convQ(ConvSingleHop, pick(w.qHobby), who)}}
					}})
				case 4: // job: single-hop + temporal
					if !once(sp, "job") {
						continue
					}
					job := pick(w.jobs)
					plan = append(plan, pending{s, sp, func(key string, at time.Time) convFact {
						events = append(events, convEvent{"job", sp, "", key, at})
						return convFact{fmt.Sprintf(pick(w.job), job), []ConvQuestion{
							convQ(ConvSingleHop, pick(w.qJob), who),
							convQ(ConvTemporal, pick(w.qJobWhen), who),
						}}
					}})
				case 5: // book: single-hop
					if !once(sp, "book") {
						continue
					}
					b := pick(w.books)
					plan = append(plan, pending{s, sp, func(key string, at time.Time) convFact {
						return convFact{fmt.Sprintf(pick(w.book), b), []ConvQuestion{convQ(ConvSingleHop, pick(w.qBook), who)}}
					}})
				case 6: // multi-hop: a relative lives in a city (earlier), later a visit
					rel := pick(w.relations)
					later := s + 1 + r.IntN(max(1, sessions-s))
					if later >= sessions || !once(sp, "rel "+rel) {
						continue
					}
					third, ok := fresh(thirds)
					if !ok {
						continue
					}
					city, ok := fresh(cities)
					if !ok {
						continue
					}
					var first string
					plan = append(plan, pending{s, sp, func(key string, at time.Time) convFact {
						first = key
						return convFact{fmt.Sprintf(pick(w.relLives), rel, third, city), nil}
					}})
					plan = append(plan, pending{later, sp, func(key string, at time.Time) convFact {
						q := convQ(ConvMultiHop, pick(w.qMulti), who, rel)
						q.Evidence = []string{first}
						return convFact{fmt.Sprintf(pick(w.relVisit), third), []ConvQuestion{q}}
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
			nTurns := max(14+r.IntN(12), len(facts)+3)
			slots := r.Perm(nTurns - 2)[:len(facts)]
			for t := range nTurns {
				sp := t % 2
				key := fmt.Sprintf("c%02d-t%04d", ci, tn)
				tn++
				text := pick(w.fillers)
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
		c.Questions = append(c.Questions, relativeQuestions(w, seed, ci, c.Speakers, events)...)
		exchangeTurns(w, seed, ci, sessions, c)
		// Two trips of a speaker in one month make the month's question
		// ambiguous: a question asked twice is left out.
		asked := map[string]int{}
		for _, q := range c.Questions {
			asked[q.Text]++
		}
		c.Questions = slices.DeleteFunc(c.Questions, func(q ConvQuestion) bool { return asked[q.Text] > 1 })
	}
	return convs
}

// exchangeTurns plants 2-3 facts per speaker told in an exchange (convExchange:
// the other speaker asks, the speaker answers in the next turn) in random
// sessions, between two turns of small talk or facts, and asks about each.
// They draw from their own random stream and their turns have keys of their
// own (cNN-xNN), so the rest of the set is the same with or without them.
func exchangeTurns(w convWorld, seed uint64, ci, sessions int, c *Conv) {
	if len(w.exchanges) == 0 || len(c.Turns) < 2 {
		return
	}
	r := rand.New(rand.NewPCG(seed^0x5ec0ffee, uint64(ci)+1))
	pick := func(s []string) string { return s[r.IntN(len(s))] }
	start := map[int]int{} // a session's first turn
	size := map[int]int{}
	for i, t := range c.Turns {
		if _, ok := start[t.Session]; !ok {
			start[t.Session] = i
		}
		size[t.Session]++
	}
	insert := map[int][]ConvTurn{} // before which turn
	used := map[string]bool{}
	n := 0
	for sp := range 2 {
		kinds := r.Perm(len(w.exchanges))
		for _, k := range kinds[:min(len(kinds), 2+r.IntN(2))] {
			x := w.exchanges[k]
			var v string
			for range 20 {
				if v = pick(x.values); !used[v] {
					break
				}
			}
			if used[v] {
				continue
			}
			at := -1
			for range 20 {
				s := r.IntN(sessions)
				if size[s] < 2 {
					continue
				}
				if i := start[s] + 1 + r.IntN(size[s]-1); insert[i] == nil {
					at = i
					break
				}
			}
			if at < 0 {
				continue
			}
			used[v] = true
			answer := []rune(fmt.Sprintf(pick(x.answer), v))
			answer[0] = unicode.ToUpper(answer[0])
			s := c.Turns[at].Session
			askKey, answerKey := fmt.Sprintf("c%02d-x%02d", ci, n), fmt.Sprintf("c%02d-x%02d", ci, n+1)
			n += 2
			insert[at] = []ConvTurn{
				{Key: askKey, Session: s, Speaker: c.Speakers[1-sp], Text: pick(x.ask), At: c.Turns[at].At},
				{Key: answerKey, Session: s, Speaker: c.Speakers[sp], Text: string(answer), At: c.Turns[at].At},
			}
			q := convQ(ConvExchange, pick(x.q), c.Speakers[sp])
			q.Evidence = []string{answerKey}
			c.Questions = append(c.Questions, q)
		}
	}
	turns := make([]ConvTurn, 0, len(c.Turns)+n)
	for i, t := range c.Turns {
		turns = append(turns, insert[i]...)
		turns = append(turns, t)
	}
	c.Turns = turns
}

// convEvent is a dated fact a relative question can name: a trip (arg the
// city), a pet adopted (arg its name) or a new job.
type convEvent struct {
	kind    string
	speaker int
	arg     string
	key     string
	at      time.Time
}

// relativeWindow is how far "shortly before" and "soon after" reach in the
// relative questions: a trip is asked about by an event of the same
// speaker at most this long after (or before) it, and only when it is that
// speaker's one trip in the window, so the question has one answer.
const relativeWindow = 60 * 24 * time.Hour

// relativeQuestions asks about trips by their time relative to another
// event of the same speaker. They draw from their own random stream, so the
// rest of the set is the same with or without them.
func relativeQuestions(w convWorld, seed uint64, ci int, speakers [2]string, events []convEvent) []ConvQuestion {
	r := rand.New(rand.NewPCG(seed^0x7e1a71fe, uint64(ci)+1))
	pick := func(s []string) string { return s[r.IntN(len(s))] }
	var out []ConvQuestion
	for _, trip := range events {
		if trip.kind != "trip" {
			continue
		}
		// only reports whether trip is its speaker's one trip in [from, to].
		only := func(from, to time.Time) bool {
			for _, o := range events {
				if o.kind == "trip" && o.speaker == trip.speaker && o.key != trip.key && !o.at.Before(from) && !o.at.After(to) {
					return false
				}
			}
			return true
		}
		var anchors []ConvQuestion
		for _, a := range events {
			if a.speaker != trip.speaker || a.key == trip.key || a.at.Equal(trip.at) {
				continue
			}
			var phrase string
			switch a.kind {
			case "trip":
				phrase = fmt.Sprintf(pick(w.anchorTrip), a.arg)
			case "pet":
				phrase = fmt.Sprintf(pick(w.anchorPet), a.arg)
			case "job":
				phrase = pick(w.anchorJob)
			}
			switch gap := a.at.Sub(trip.at); {
			case gap > 0 && gap <= relativeWindow && only(a.at.Add(-relativeWindow), a.at):
				anchors = append(anchors, convQ(ConvRelative, pick(w.qBefore), speakers[trip.speaker], phrase))
			case gap < 0 && -gap <= relativeWindow && only(a.at, a.at.Add(relativeWindow)):
				anchors = append(anchors, convQ(ConvRelative, pick(w.qAfter), speakers[trip.speaker], phrase))
			}
		}
		if len(anchors) > 0 {
			q := anchors[r.IntN(len(anchors))]
			q.Evidence = []string{trip.key}
			out = append(out, q)
		}
	}
	return out
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
	keyOf, err := StoreConversations(ctx, e, convs)
	if err != nil {
		return ConvResult{}, err
	}
	return MeasureConversations(ctx, e, convs, keyOf, contract.FetchModes()...)
}

// StoreConversations stores convs in e (ConvItems) and waits for e's
// embedder, if it learns; it returns each record id's turn key.
func StoreConversations(ctx context.Context, e contract.Engine, convs []Conv) (map[string]string, error) {
	keyOf := map[string]string{}
	for _, c := range convs {
		items, err := ConvItems(c)
		if err != nil {
			return nil, err
		}
		for lo := 0; lo < len(items); lo += contract.MaxStoreMany {
			hi := min(lo+contract.MaxStoreMany, len(items))
			rec, err := contract.StoreMany(ctx, e, items[lo:hi])
			if err != nil {
				return nil, fmt.Errorf("storing %s: %w", c.Namespace, err)
			}
			for i, r := range rec {
				keyOf[r.ID] = c.Turns[lo+i].Key
			}
		}
	}
	if w, ok := e.(interface{ WaitEmbedder(context.Context) error }); ok {
		if err := w.WaitEmbedder(ctx); err != nil {
			return nil, fmt.Errorf("waiting for the embedder: %w", err)
		}
	}
	return keyOf, nil
}

// MeasureConversations asks every question of convs of e (which holds them,
// keyOf naming each record's turn) in the given modes e serves.
func MeasureConversations(ctx context.Context, e contract.Engine, convs []Conv, keyOf map[string]string, modes ...contract.FetchMode) (ConvResult, error) {
	res := ConvResult{ByType: map[contract.FetchMode]map[string]Metrics{}, Count: map[string]int{}}
	for _, c := range convs {
		res.Turns += len(c.Turns)
		res.Questions += len(c.Questions)
		text := turnTexts(c)
		for _, q := range c.Questions {
			for _, typ := range convTypesOf(c, q, text) {
				res.Count[typ]++
			}
		}
	}
	for _, mode := range modes {
		if !e.Descriptor().Supports(mode) {
			continue
		}
		sum := map[string]Metrics{}
		for _, c := range convs {
			ns, _ := contract.ParseNamespace(c.Namespace)
			reach := contract.ReachSubtree(ns)
			text := turnTexts(c)
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
				for _, typ := range convTypesOf(c, q, text) {
					m := sum[typ]
					m.Recall += rec
					m.MRR += rr
					sum[typ] = m
				}
			}
		}
		for typ, m := range sum {
			m.Recall /= float64(max(1, res.Count[typ]))
			m.MRR /= float64(max(1, res.Count[typ]))
			sum[typ] = m
		}
		res.ByType[mode] = sum
	}
	return res, nil
}

// Row is one mode's figures as a markdown table row: recall@K per type
// (MRR@K in brackets).
func (r ConvResult) Row(label string, mode contract.FetchMode) string {
	m := r.ByType[mode]
	var b strings.Builder
	fmt.Fprintf(&b, "| %s |", label)
	for _, typ := range convTypes {
		fmt.Fprintf(&b, " %.3f (%.3f) |", m[typ].Recall, m[typ].MRR)
	}
	return b.String()
}

// Header is the head of a result table: the columns, each with its count of
// questions.
func (r ConvResult) Header(first string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "| %s |", first)
	for _, typ := range convTypes {
		fmt.Fprintf(&b, " %s (%d) |", typ, r.Count[typ])
	}
	b.WriteString("\n|")
	for range len(convTypes) + 1 {
		b.WriteString(" --- |")
	}
	return b.String()
}

// Table is the result as a markdown table of evidence recall@K (MRR@K of the
// first evidence turn in brackets), per type and by whether a question shares
// a word with its evidence.
func (r ConvResult) Table() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d turns, %d questions\n%s\n", r.Turns, r.Questions, r.Header("mode"))
	for _, mode := range contract.FetchModes() {
		if _, ok := r.ByType[mode]; ok {
			b.WriteString(r.Row(string(mode), mode) + "\n")
		}
	}
	return b.String()
}

// convStop are the words OverlapShare does not count as shared.
var convStop = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`the and did does what which when where who how was were is are their they them
with for from into what's has have had this that these those about your you our her his its not but can
all any new now get got one two out`) {
		m[w] = true
	}
	return m
}()

// convWords are a text's lowercase words of 3+ letters outside convStop, cut
// to their first five letters (a crude stem: "playing" meets "play").
func convWords(text string) map[string]bool {
	out := map[string]bool{}
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		if len(w) < 3 || convStop[w] {
			continue
		}
		out[w[:min(5, len(w))]] = true
	}
	return out
}

// convShares reports whether a question shares a word with one of its
// evidence turns, the speakers' names not counted (they are not in the
// turns' text): whether keyword search can find the evidence by its words at
// all. A set whose questions share none is one of knowledge (a cello is an
// instrument), not of search.
func convShares(c Conv, q ConvQuestion, text map[string]string) bool {
	qw := convWords(q.Text)
	for _, s := range c.Speakers {
		delete(qw, strings.ToLower(s)[:min(5, len(s))])
	}
	for _, k := range q.Evidence {
		for w := range convWords(text[k]) {
			if qw[w] {
				return true
			}
		}
	}
	return false
}

// convTypesOf are the columns a question counts in.
func convTypesOf(c Conv, q ConvQuestion, text map[string]string) []string {
	if convShares(c, q, text) {
		return []string{q.Type, ConvShared, ConvAll}
	}
	return []string{q.Type, ConvUnshared, ConvAll}
}

func turnTexts(c Conv) map[string]string {
	text := map[string]string{}
	for _, t := range c.Turns {
		text[t.Key] = t.Text
	}
	return text
}
