package bolt_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"mnemo/contract"
	"mnemo/engine/bolt"
	"mnemo/engine/retrieval"
)

// chatItems is a two-person chat of small talk over 30 sessions a week
// apart, one item per turn as `mnemo import` stores a transcript, with three
// turns that matter: a trip in the session of 6 May 2024 (named by no word
// a question about it uses), a cousin who lives in Oslo, and a later visit
// to that cousin by name only.
func chatItems(t *testing.T) (items []contract.StoreItem, key []string) {
	t.Helper()
	ns, err := contract.ParseNamespace("project:chat/user:c1")
	if err != nil {
		t.Fatal(err)
	}
	small := []string{"How have you been?", "Pretty good, thanks!", "Work is busy this week.", "Talk soon!",
		"The weather is awful.", "I went for a walk this morning.", "Same here, honestly.", "Let me know how it goes!"}
	day := time.Date(2024, 3, 4, 18, 0, 0, 0, time.UTC)
	for s := range 30 {
		at := day.AddDate(0, 0, 7*s)
		for i := range 12 {
			speaker, text, k := []string{"Maya", "Jonas"}[i%2], small[(s+i)%len(small)], ""
			switch {
			case at.Format("2006-01-02") == "2024-05-06" && i == 4:
				text, k = "Finally made it to Porto last week! The old town was beautiful.", "trip"
			case s == 3 && i == 6:
				text, k = "My cousin Leo just moved to Oslo for work.", "cousin"
			case s == 20 && i == 8:
				text, k = "Spent the long weekend staying with Leo, we cooked every night.", "visit"
			}
			items = append(items, spokenTurn(ns, speaker, text, at))
			key = append(key, k)
		}
	}
	return items, key
}

// TestHybridFindsConversationTurns: hybrid fetch over a chat finds the turn
// of the dates a question names though it shares no word with it (with the
// levers off it does not), and both turns of a question whose answer spans
// two (the second by the name the first holds).
func TestHybridFindsConversationTurns(t *testing.T) {
	ctx := context.Background()
	items, key := chatItems(t)
	dir := t.TempDir()
	e := openStore(t, dir, bolt.Options{})
	var ids []string
	for lo := 0; lo < len(items); lo += contract.MaxStoreMany {
		recs, err := e.StoreManyWith(ctx, items[lo:min(lo+contract.MaxStoreMany, len(items))], contract.WriteOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range recs {
			ids = append(ids, r.ID)
		}
	}
	if err := e.WaitEmbedder(ctx); err != nil {
		t.Fatal(err)
	}
	keyOf := map[string]string{}
	for i, id := range ids {
		keyOf[id] = key[i]
	}
	top := func(e *bolt.Engine, q string) []string {
		page, err := e.Fetch(ctx, contract.FetchRequest{Query: q, Mode: contract.ModeHybrid, Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, h := range page.Hits {
			got = append(got, keyOf[h.ID])
		}
		return got
	}
	cases := []struct {
		q    string
		want []string
	}{
		{"Where did Maya go on holiday in May 2024?", []string{"trip"}},
		{"Which city did Maya travel to when visiting their cousin?", []string{"cousin", "visit"}},
		// Dated by another event: the weeks after the cousin's move.
		{"Which city did Maya see in the weeks after Leo moved to Oslo?", []string{"trip"}},
	}
	// The trip in the weeks after the move ranks above the visit to Leo
	// months later, which shares the question's name: with anchored dates
	// (and only with them).
	before := func(got []string, a, b string) bool {
		i, j := slices.Index(got, a), slices.Index(got, b)
		return i >= 0 && (j < 0 || i < j)
	}
	if got := top(e, cases[2].q); !before(got, "trip", "visit") {
		t.Errorf("%q: the trip does not rank above the visit months later: %v", cases[2].q, got)
	}
	for _, c := range cases {
		got := top(e, c.q)
		for _, w := range c.want {
			if !slices.Contains(got, w) {
				t.Errorf("%q: the %s turn is not in the top 10 %v", c.q, w, got)
			}
		}
	}
	e.Close()
	noAnchor := retrieval.DefaultConvConfig()
	noAnchor.AnchorDays = 0
	na := openStore(t, dir, bolt.Options{Conversation: &noAnchor})
	if err := na.WaitEmbedder(ctx); err != nil {
		t.Fatal(err)
	}
	if got := top(na, cases[2].q); before(got, "trip", "visit") {
		t.Errorf("%q: the trip ranks above the visit without anchored dates too (%v); the test no longer shows them", cases[2].q, got)
	}
	na.Close()
	off := openStore(t, dir, bolt.Options{Conversation: &retrieval.ConvConfig{}})
	defer off.Close()
	if err := off.WaitEmbedder(ctx); err != nil {
		t.Fatal(err)
	}
	if got := top(off, cases[0].q); slices.Contains(got, "trip") {
		t.Errorf("%q: found without the conversation levers too (%v); the test no longer tells them apart", cases[0].q, got)
	}
}

// TestConversationLeversLeaveDocumentsAlone: on a store of documents with
// dates and authors, hybrid's ranking is the same with the conversation
// levers on and off.
func TestConversationLeversLeaveDocumentsAlone(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	e := openStore(t, dir, bolt.Options{})
	var items []contract.StoreItem
	for i := range 150 {
		at := time.Date(2024, time.Month(1+i%12), 1+i%27, 0, 0, 0, 0, time.UTC)
		name := []string{"Maya", "Jonas"}[i%2]
		items = append(items, contract.Document(fmt.Sprintf("release note %d: the %s cache was tuned for %s", i, []string{"disk", "page", "query"}[i%3], name),
			contract.MemoryMeta{ObservedAt: &at, ObservedActor: &contract.ObservedActor{ID: name, Name: &name}}))
	}
	for lo := 0; lo < len(items); lo += contract.MaxStoreMany {
		if _, err := e.StoreManyWith(ctx, items[lo:min(lo+contract.MaxStoreMany, len(items))], contract.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.WaitEmbedder(ctx); err != nil {
		t.Fatal(err)
	}
	queries := []string{"What did Maya tune in May 2024?", "page cache", "Jonas query cache last year"}
	rank := func(e *bolt.Engine) [][]string {
		var out [][]string
		for _, q := range queries {
			page, err := e.Fetch(ctx, contract.FetchRequest{Query: q, Mode: contract.ModeHybrid, Limit: 10})
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			for _, h := range page.Hits {
				ids = append(ids, h.ID)
			}
			out = append(out, ids)
		}
		return out
	}
	on := rank(e)
	e.Close()
	off := openStore(t, dir, bolt.Options{Conversation: &retrieval.ConvConfig{}})
	defer off.Close()
	if err := off.WaitEmbedder(ctx); err != nil {
		t.Fatal(err)
	}
	for i, got := range rank(off) {
		if !slices.Equal(got, on[i]) {
			t.Errorf("%q: documents ranked %v with the levers, %v without", queries[i], on[i], got)
		}
	}
}

// TestSpeakerByIDWhenUnnamed: a speaker the source knows only by an id
// (mem0's actor_id, an importer's role) is matched by that id, so a question
// naming them ranks their turn above one that says the question's words more.
func TestSpeakerByIDWhenUnnamed(t *testing.T) {
	ctx := context.Background()
	ns, err := contract.ParseNamespace("project:chat")
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2025, 2, 3, 10, 0, 0, 0, time.UTC)
	turns := []struct{ actor, text string }{
		{"bob", "The garden needs work, the garden beds most of all."},
		{"alice", "Plant the tomatoes in the garden by the fence."},
		{"bob", "Did you book the train for Friday?"},
		{"alice", "Yes, the early one."},
		{"bob", "The dog chewed the sofa again."},
		{"alice", "He needs a longer walk."},
	}
	e := openStore(t, t.TempDir(), bolt.Options{})
	var items []contract.StoreItem
	for _, tr := range turns {
		items = append(items, contract.Conversation([]contract.Turn{{Role: contract.RoleUser, Text: tr.text}},
			contract.MemoryMeta{Namespace: ns, ObservedAt: &at, ObservedActor: &contract.ObservedActor{ID: tr.actor}}))
	}
	recs, err := e.StoreManyWith(ctx, items, contract.WriteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.WaitEmbedder(ctx); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		mode contract.FetchMode
		want string
	}{{contract.ModeKeyword, recs[0].ID}, {contract.ModeHybrid, recs[1].ID}} {
		page, err := e.Fetch(ctx, contract.FetchRequest{Query: "What did Alice say about the garden?", Mode: tc.mode, Limit: 5})
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Hits) == 0 || page.Hits[0].ID != tc.want {
			t.Errorf("%s: best hit %+v, want %s", tc.mode, page.Hits, tc.want)
		}
	}
}

// TestReplyFoundThroughItsQuestion: a reply that shares no word with a
// question about it ("Cello, my fingers hurt already.") is found through the
// turn it answers ("Which instrument did you pick in the end?"), with the
// neighbour lever and only with it; the next session's first turn, days
// later, is not the question's neighbour.
func TestReplyFoundThroughItsQuestion(t *testing.T) {
	dir := t.TempDir()
	// The kind lever finds the reply too ("cello" is an instrument): it is
	// off on both sides, so this is the neighbour lever's doing.
	cfg := retrieval.DefaultConvConfig()
	cfg.Kind = 0
	e := openStore(t, dir, bolt.Options{Conversation: &cfg})
	keyOf := weeklyChat(t, e, "project:chat/user:c2", 30, func(s, i int) (string, string) {
		switch {
		case s == 10 && i == 5:
			return "Which instrument did you pick in the end?", "ask"
		case s == 10 && i == 6:
			return "Cello, my fingers hurt already.", "reply"
		case s == 20 && i == 11:
			return "Did you ever pick an instrument for the school band?", "late"
		case s == 21 && i == 0:
			return "Bramble ate my slippers again.", "next session"
		}
		return "", ""
	})
	q := "Which instrument is Maya learning?"
	on := rankOfKey(t, e, q, keyOf, "reply")
	if on == 0 || on > 3 {
		t.Errorf("%q: the reply ranks %d with the neighbour lever, want 3 or better", q, on)
	}
	// Jonas's question at the end of session 20 lends nothing to Maya's
	// first turn of session 21, a week later.
	if r := rankOfKey(t, e, "Did Jonas pick an instrument for the school band?", keyOf, "next session"); r != 0 && r <= 3 {
		t.Errorf("the next session's first turn ranks %d: taken as the question's neighbour", r)
	}
	e.Close()
	cfg.Neighbour = 0
	off := openStore(t, dir, bolt.Options{Conversation: &cfg})
	defer off.Close()
	r := rankOfKey(t, off, q, keyOf, "reply")
	t.Logf("%q: the reply ranks %d with the neighbour lever, %d without (0: not in the top 10)", q, on, r)
	if r != 0 && r <= on {
		t.Errorf("%q: the reply ranks %d without the neighbour lever, %d with it; the test no longer tells them apart", q, r, on)
	}
}

// TestTurnFoundByItsKind checks the kind lever: "What instrument is Maya
// learning to play?" finds "Bought a second-hand ukulele, I practise every
// night." though they share no word, among turns of Maya's that name other
// things (cities, a puppy, a novel) and small talk, because the lexicon
// knows a ukulele is an instrument; without the lever it is not found.
func TestTurnFoundByItsKind(t *testing.T) {
	specific := []string{"Just got back from Lisbon, the custard tarts were worth the flight.",
		"We adopted a puppy and called him Biscuit.", "My book club picked The Glass Orchard.",
		"Spent four days in Kyoto and I already miss it.", "The plumber finally fixed the boiler.",
		"My sister moved to Denver for work.", "I ran a half marathon on Sunday!", "We repainted the kitchen yellow."}
	dir := t.TempDir()
	e := openStore(t, dir, bolt.Options{})
	keyOf := weeklyChat(t, e, "project:chat/user:c3", 40, func(s, i int) (string, string) {
		switch {
		case s == 17 && i == 4:
			return "Bought a second-hand ukulele, I practise every night.", "ukulele"
		case i == 2:
			return specific[s%len(specific)], ""
		}
		return "", ""
	})
	const q = "What instrument is Maya learning to play?"
	on := rankOfKey(t, e, q, keyOf, "ukulele")
	e.Close()
	cfg := retrieval.DefaultConvConfig()
	cfg.Kind = 0
	off := openStore(t, dir, bolt.Options{Conversation: &cfg})
	defer off.Close()
	r := rankOfKey(t, off, q, keyOf, "ukulele")
	t.Logf("%q: the ukulele turn ranks %d with the kind lever, %d without (0: not in the top 10)", q, on, r)
	if on == 0 || on > 3 {
		t.Errorf("the ukulele turn ranks %d with the kind lever, want 3 or better", on)
	}
	if r != 0 && r <= on {
		t.Errorf("the ukulele turn ranks %d without the kind lever, %d with it; the test no longer tells them apart", r, on)
	}
}

// weeklyChat stores weeks sessions of 12 turns between Maya and Jonas in
// namespace ns, a week apart, each turn small talk unless plant gives its
// text (and a key to find it by); it returns the keys by record id.
func weeklyChat(t *testing.T, e *bolt.Engine, ns string, weeks int, plant func(session, turn int) (text, key string)) map[string]string {
	t.Helper()
	space, err := contract.ParseNamespace(ns)
	if err != nil {
		t.Fatal(err)
	}
	small := []string{"How have you been?", "Pretty good, thanks!", "Work is busy this week.", "Talk soon!",
		"The weather is awful.", "I went for a walk this morning.", "Same here, honestly.", "Let me know how it goes!",
		"Yes, it was amazing!", "Tell me more!", "Sounds like a plan.", "I love that idea."}
	var items []contract.StoreItem
	var key []string
	day := time.Date(2024, 3, 4, 18, 0, 0, 0, time.UTC)
	for s := range weeks {
		at := day.AddDate(0, 0, 7*s)
		for i := range 12 {
			text, k := plant(s, i)
			if text == "" {
				text = small[(3*s+i)%len(small)]
			}
			items = append(items, spokenTurn(space, []string{"Maya", "Jonas"}[i%2], text, at))
			key = append(key, k)
		}
	}
	keyOf := map[string]string{}
	for lo := 0; lo < len(items); lo += contract.MaxStoreMany {
		recs, err := e.StoreManyWith(context.Background(), items[lo:min(lo+contract.MaxStoreMany, len(items))], contract.WriteOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for i, r := range recs {
			keyOf[r.ID] = key[lo+i]
		}
	}
	return keyOf
}

// rankOfKey is the rank in hybrid fetch's top 10 for q of the turn keyed k
// (weeklyChat), 0 when it is not there.
func rankOfKey(t *testing.T, e *bolt.Engine, q string, keyOf map[string]string, k string) int {
	t.Helper()
	ctx := context.Background()
	if err := e.WaitEmbedder(ctx); err != nil {
		t.Fatal(err)
	}
	page, err := e.Fetch(ctx, contract.FetchRequest{Query: q, Mode: contract.ModeHybrid, Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	for i, h := range page.Hits {
		if keyOf[h.ID] == k {
			return i + 1
		}
	}
	return 0
}

// spokenTurn is one turn of Maya (the user) or Jonas (the assistant) stored
// on its own, as imports store transcripts: the speaker as observed_actor,
// the turn's time as observed_at.
func spokenTurn(ns contract.Namespace, speaker, text string, at time.Time) contract.StoreItem {
	name := speaker
	role := contract.RoleUser
	if speaker == "Jonas" {
		role = contract.RoleAssistant
	}
	return contract.Conversation([]contract.Turn{{Role: role, Text: text, At: &at}},
		contract.MemoryMeta{Namespace: ns, ObservedAt: &at, ObservedActor: &contract.ObservedActor{ID: speaker, Name: &name},
			Source: contract.SourceRef{Kind: contract.SourceConversation}})
}
