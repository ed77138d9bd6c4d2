package retrieval

import (
	"context"
	"testing"

	"mnemo/contract"
)

func cites(snippets ...string) []contract.Citation {
	out := make([]contract.Citation, len(snippets))
	for i, s := range snippets {
		out[i] = contract.Citation{ID: "id" + string(rune('a'+i)), Kind: contract.KindDocument, Snippet: s}
	}
	return out
}

func TestExtractiveAnswers(t *testing.T) {
	sourdough := cites(
		"Feed the sourdough starter twice a day. Keep it at room temperature. A healthy starter doubles in four to six hours.",
		"The bakery on Elm Street sells rye bread. It opens at seven.",
	)
	tests := []struct {
		name     string
		question string
		instr    string
		cites    []contract.Citation
		want     string
	}{
		{"no citations", "what is the wifi password?", "", nil, NothingStored},
		{
			"best sentence first, marker before the stop",
			"how often should I feed the starter?", "one sentence", sourdough,
			"Feed the sourdough starter twice a day [1].",
		},
		{
			"a number of sentences",
			"when does the bakery open?", "2 sentences", sourdough,
			"The bakery on Elm Street sells rye bread [2]. It opens at seven [2].",
		},
		{
			"bullets",
			"how do I keep a sourdough starter healthy?", "answer as a bulleted list, brief", sourdough,
			"- Feed the sourdough starter twice a day [1]\n- A healthy starter doubles in four to six hours [1]",
		},
		{
			"markdown and conversation prefixes are stripped",
			"which port does the api listen on?", "one sentence",
			cites("# API notes\n\n- The API listens on port 7077.", "user: which port?\nassistant: I think 8080 [tools: grep]"),
			"The API listens on port 7077 [1].",
		},
		{
			"headings steer but are not answers; unrelated sentences are left out",
			"how many hours does bulk fermentation take at the bakery?", "",
			cites("# Bulk fermentation\n\nLet it grow by half, four to five hours at 24 degrees. Cold kitchens need longer.", "Bread sells out early."),
			"Let it grow by half, four to five hours at 24 degrees [1].",
		},
		{
			"nothing matches: the top citation's first sentence",
			"what should I know?", "",
			cites("user: is this ok?\nassistant: Feed the starter twice a day. Keep it warm.", "Other note."),
			"Feed the starter twice a day [1].",
		},
		{
			"a question mark is kept",
			"should we shard the database?", "one sentence",
			cites("Should we shard the database? Not before it passes a terabyte."),
			"Should we shard the database [1]?",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := NewExtractive().Answer(context.Background(), AnswerRequest{Question: tt.question, Instructions: tt.instr, Citations: tt.cites})
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("answer:\n%s\nwant:\n%s", got, tt.want)
			}
		})
	}
	if NewExtractive().Model() != "mnemo-extractive" {
		t.Errorf("model = %q", NewExtractive().Model())
	}
}

func TestParseInstructions(t *testing.T) {
	tests := []struct {
		in      string
		count   int
		bullets bool
	}{
		{"", 3, false},
		{"one sentence please", 1, false},
		{"in a single sentence", 1, false},
		{"keep it short", 2, false},
		{"Brief.", 2, false},
		{"a detailed answer", 6, false},
		{"five sentences", 5, false},
		{"use 4 bullet points", 4, true},
		{"as a list", 3, true},
		{"give me 40 points", 12, true},
		{"shorter than the last one", 3, false},
	}
	for _, tt := range tests {
		st := parseInstructions(tt.in)
		if st.count != tt.count || st.bullets != tt.bullets {
			t.Errorf("%q: count %d bullets %v, want %d %v", tt.in, st.count, st.bullets, tt.count, tt.bullets)
		}
	}
}

func TestSplitSentences(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"One. Two! Three? four", []string{"One.", "Two!", "Three? four"}},
		{"Use e.g. Redis. Dr. Smith agrees.", []string{"Use e.g. Redis.", "Dr. Smith agrees."}},
		{"Version 1.2 shipped. It works.", []string{"Version 1.2 shipped.", "It works."}},
		{"# Title\n\n* item one\n2. item two", []string{"Title", "item one", "item two"}},
		{"He said \"stop.\" Then left.", []string{"He said \"stop.\"", "Then left."}},
		{"...\n---", nil},
		{"A hard reset threw away a day of work. git reflog still listed it.", []string{"A hard reset threw away a day of work.", "git reflog still listed it."}},
		{"Use approx. five cups.", []string{"Use approx. five cups."}},
		{"To rotate the secret: 1. create the new value; 2. deploy it. Then verify.", []string{"To rotate the secret: 1. create the new value; 2. deploy it.", "Then verify."}},
		{"We shipped 12. Then we rested.", []string{"We shipped 12.", "Then we rested."}},
	}
	for _, tt := range tests {
		got := splitSentences(tt.in)
		if len(got) != len(tt.want) {
			t.Errorf("%q: got %q, want %q", tt.in, got, tt.want)
			continue
		}
		for i := range got {
			if got[i] != tt.want[i] {
				t.Errorf("%q: got %q, want %q", tt.in, got, tt.want)
				break
			}
		}
	}
}
