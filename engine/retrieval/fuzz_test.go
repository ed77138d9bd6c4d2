package retrieval

import (
	"context"
	"math"
	"strings"
	"testing"
	"unicode/utf8"

	"mnemo/contract"
)

func FuzzSplitSentences(f *testing.F) {
	for _, s := range []string{"One. Two! Three?", "# T\n- a\n1. b", "e.g. x. Dr. Y", "user: hi [tools: x (1)]", "\"q.\" A", "...", "Ünï. Жук."} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		if !utf8.ValidString(text) {
			return
		}
		inWords := strings.Join(words(text), " ")
		for _, s := range splitSentences(text) {
			if strings.TrimSpace(s) != s || len(words(s)) == 0 {
				t.Fatalf("sentence %q is blank or padded", s)
			}
			// every sentence's words come from the text, in order
			if !strings.Contains(inWords, strings.Join(words(s), " ")) {
				t.Fatalf("sentence %q is not part of %q", s, text)
			}
		}
	})
}

func FuzzParseInstructions(f *testing.F) {
	for _, s := range []string{"", "one sentence", "99999999999999999999 sentences", "brief bullets", "detailed list of 3 points"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, instr string) {
		st := parseInstructions(instr)
		if st.count < 1 || st.count > maxSentences {
			t.Fatalf("%q: count %d out of 1..%d", instr, st.count, maxSentences)
		}
	})
}

func FuzzExtractive(f *testing.F) {
	f.Add("how do I feed the starter?", "short", "Feed it twice a day. Keep it warm.", "Other note.")
	f.Add("x", "", "", "\n\n")
	f.Fuzz(func(t *testing.T, question, instr, a, b string) {
		got, err := NewExtractive().Answer(context.Background(), AnswerRequest{
			Question: question, Instructions: instr,
			Citations: []contract.Citation{{ID: "a", Snippet: a}, {ID: "b", Snippet: b}},
		})
		if err != nil || got == "" {
			t.Fatalf("answer %q, %v", got, err)
		}
		if got != NothingStored && !strings.Contains(got, "[1]") && !strings.Contains(got, "[2]") {
			t.Fatalf("answer without a citation marker: %q", got)
		}
		if strings.Contains(got, "[3]") {
			t.Fatalf("answer cites a citation that does not exist: %q", got)
		}
	})
}

func FuzzHashEmbed(f *testing.F) {
	f.Add("The quick brown fox")
	f.Add("Ünïcode ЖУК 42x don't")
	f.Add("")
	e := NewHashEmbedder()
	f.Fuzz(func(t *testing.T, text string) {
		v, err := e.Embed(context.Background(), []string{text, text})
		if err != nil {
			t.Fatal(err)
		}
		var norm float64
		for i, x := range v[0] {
			if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) || x != v[1][i] {
				t.Fatalf("component %d: %v vs %v", i, x, v[1][i])
			}
			norm += float64(x) * float64(x)
		}
		if norm != 0 && math.Abs(norm-1) > 1e-4 {
			t.Fatalf("norm^2 = %v", norm)
		}
	})
}
