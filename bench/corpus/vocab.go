package corpus

import "strings"

// headWords are the most frequent words, in rank order: function words first
// (most analyzers drop them), then the words agent memory is full of. The rank
// of a word decides its Zipf frequency.
var headWords = strings.Fields(`
the to and of a in is for that on with it as be this are by or not from at
service user memory agent team data error request the api config test
when should was will can has have uses after before only each every but
prefers invoice payment customer deploy build release review query index
record store retry timeout latency cache queue worker event log metric alert
database table column schema migration backup restore replica cluster node
token session login password secret key certificate permission role access
file folder path repo branch commit merge tag version patch bug fix issue
ticket incident outage page oncall rotation runbook postmortem dashboard
email message thread chat reply answer question summary note document draft
plan goal task step procedure process rule policy limit budget threshold
price plan subscription refund credit currency tax account balance ledger
search result rank score match filter sort order page cursor total count
frontend backend server client browser mobile desktop terminal shell script
python golang rust typescript javascript sql bash docker kubernetes helm
terraform postgres redis bbolt bleve sqlite kafka nginx grafana prometheus
monday tuesday wednesday thursday friday morning evening weekly daily monthly
january february march april may june july august september october november december
fast slow large small new old first last next previous high low good bad
open closed pending active stale broken stable flaky green red yellow blue
always never often usually sometimes again already still also instead
create update delete read write send receive start stop run wait check verify
enable disable allow deny approve reject merge revert rollback promote
because however therefore although while until unless since during within
customer support engineer manager designer analyst admin owner reviewer author
london berlin paris madrid tokyo lisbon dublin amsterdam stockholm zurich
morning standup retro planning sync demo review interview onboarding offsite
`)

// syllables build the long tail of rarer words: pronounceable, never containing
// the letters q, x or z, so no generated word can contain RareNeedle.
var (
	onsets = strings.Fields("b c d f g h j k l m n p r s t v w br cl dr fl gr kr pl pr sk sl sp st tr")
	nuclei = strings.Fields("a e i o u ai ea ie oo ou")
	codas  = strings.Fields("_ _ _ n r s t l m nd rt st ck ng")
)

// buildVocabulary returns size words: the head words, then pseudo-words from
// syllables, all distinct.
func buildVocabulary(size int) []string {
	seen := make(map[string]bool, size)
	words := make([]string, 0, size)
	add := func(w string) {
		if !seen[w] && len(words) < size {
			seen[w] = true
			words = append(words, w)
		}
	}
	for _, w := range headWords {
		add(w)
	}
	// A fixed walk over syllable combinations gives the same tail every time.
	state := uint64(0x9e3779b97f4a7c15)
	for len(words) < size {
		var b strings.Builder
		parts := 2 + int(splitmix(&state)%2)
		for p := 0; p < parts; p++ {
			b.WriteString(onsets[splitmix(&state)%uint64(len(onsets))])
			b.WriteString(nuclei[splitmix(&state)%uint64(len(nuclei))])
			if c := codas[splitmix(&state)%uint64(len(codas))]; c != "_" {
				b.WriteString(c)
			}
		}
		add(b.String())
	}
	return words
}

// splitmix advances a SplitMix64 state and returns the next value.
func splitmix(state *uint64) uint64 {
	*state += 0x9e3779b97f4a7c15
	z := *state
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// mix64 is SplitMix64's finaliser: a bijection on uint64, so distinct inputs
// give distinct outputs (used for commit hashes that must never collide).
func mix64(z uint64) uint64 {
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}
