package corpus

import (
	"reflect"
	"strings"
	"testing"

	"mnemo/contract"
)

func TestDeterministicAndPrefixStable(t *testing.T) {
	a := Generate(3000, 7)
	b := Generate(3000, 7)
	if !reflect.DeepEqual(a, b) {
		t.Fatal("two runs with the same seed differ")
	}
	short := Generate(500, 7)
	for i := range short {
		if short[i].Item.Fingerprint() != a[i].Item.Fingerprint() {
			t.Fatalf("entry %d of a 500-entry corpus differs from the 3000-entry one", i)
		}
	}
	other := Generate(50, 8)
	same := 0
	for i := range other {
		if other[i].Item.Fingerprint() == a[i].Item.Fingerprint() {
			same++
		}
	}
	if same > 0 {
		t.Fatalf("seed 8 repeats %d entries of seed 7", same)
	}
}

func renderAll(it *contract.StoreItem) string {
	s := it.RenderText()
	if it.Type == contract.KindDocument && it.Title != nil {
		s += " " + *it.Title
	}
	return strings.ToLower(s)
}

func TestShapeOfTwentyThousand(t *testing.T) {
	const n = 20_000
	kinds := map[contract.ItemKind]int{}
	statuses := map[contract.Status]int{}
	sources := map[contract.SourceKind]int{}
	tags := map[string]int{}
	namespaces := map[string]int{}
	ids := make(map[string]int, n)
	var expiring, common, needles int
	Each(n, 42, func(i int, e Entry) bool {
		if err := e.Item.Validate(); err != nil {
			t.Fatalf("entry %d is invalid: %v", i, err)
		}
		id := e.Item.Fingerprint()
		if j, dup := ids[id]; dup {
			t.Fatalf("entries %d and %d share fingerprint %s", j, i, id)
		}
		ids[id] = i
		kinds[e.Item.Type]++
		statuses[e.Status]++
		sources[e.Item.Meta.SourceKindOf()]++
		namespaces[e.Item.Meta.Namespace.String()]++
		for _, tg := range e.Item.Meta.Tags {
			tags[tg]++
		}
		if e.ExpiresAt != nil {
			expiring++
		}
		if (e.Status == contract.StatusSuperseded) != (e.SupersededBy == i+1) {
			t.Fatalf("entry %d: status %s with superseded_by %d", i, e.Status, e.SupersededBy)
		}
		text := renderAll(&e.Item)
		if strings.Contains(text, RareNeedle) != IsNeedle(i) {
			t.Fatalf("entry %d: needle present=%v, want %v", i, !IsNeedle(i), IsNeedle(i))
		}
		if IsNeedle(i) {
			needles++
		}
		if strings.Contains(text, CommonWord) {
			common++
		}
		return true
	})
	share := func(c int) float64 { return float64(c) / n }
	within := func(name string, got, lo, hi float64) {
		if got < lo || got > hi {
			t.Errorf("%s share %.3f, want %.2f..%.2f", name, got, lo, hi)
		}
	}
	within("learning", share(kinds[contract.KindLearning]), 0.47, 0.53)
	within("document", share(kinds[contract.KindDocument]), 0.27, 0.33)
	within("conversation", share(kinds[contract.KindConversation]), 0.17, 0.23)
	within("candidate", share(statuses[contract.StatusCandidate]), 0.08, 0.12)
	within("superseded", share(statuses[contract.StatusSuperseded]), 0.01, 0.03)
	within("expiring", share(expiring), 0.02, 0.04)
	within("common word", share(common), 0.2, 0.5)
	if needles != NeedleCount(n) || needles != 2 {
		t.Errorf("%d needles in %d entries, NeedleCount says %d", needles, n, NeedleCount(n))
	}
	for _, k := range contract.SourceKinds() {
		if sources[k] == 0 {
			t.Errorf("no entry has source kind %s", k)
		}
	}
	if len(namespaces) < 80 {
		t.Errorf("only %d namespaces in use", len(namespaces))
	}
	if namespaces["team:acme/service:nightly-digest"] == 0 || namespaces["root"] == 0 {
		t.Error("the service sandbox or the root holds nothing")
	}
	// Zipf: the most used tag is far more common than the median one.
	top, distinct := 0, len(tags)
	for _, c := range tags {
		top = max(top, c)
	}
	if distinct < 150 || top < 20*n/distinct/2 {
		t.Errorf("tags are not Zipf-like: %d distinct, top tag used %d times", distinct, top)
	}
}

func TestNeedleCount(t *testing.T) {
	for _, tc := range []struct{ n, want int }{{0, 0}, {1000, 0}, {1001, 1}, {11_000, 1}, {11_001, 2}, {100_000, 10}, {1_000_000, 100}} {
		if got := NeedleCount(tc.n); got != tc.want {
			t.Errorf("NeedleCount(%d) = %d, want %d", tc.n, got, tc.want)
		}
	}
}

func TestVocabularyAndQueries(t *testing.T) {
	v := Vocabulary()
	if len(v) != VocabularySize {
		t.Fatalf("vocabulary has %d words", len(v))
	}
	seen := map[string]bool{}
	for _, w := range v {
		if seen[w] || w == "" || strings.ContainsAny(w, " \t") || strings.Contains(w, "zqx") {
			t.Fatalf("bad or repeated word %q", w)
		}
		seen[w] = true
	}
	if !seen[CommonWord] {
		t.Fatalf("CommonWord %q is not in the vocabulary", CommonWord)
	}
	q := Queries(50, 1)
	if !reflect.DeepEqual(q, Queries(50, 1)) || reflect.DeepEqual(q, Queries(50, 2)) {
		t.Fatal("queries are not a function of the seed")
	}
	for _, s := range q {
		for _, w := range strings.Fields(s) {
			if !seen[w] {
				t.Fatalf("query word %q is not in the vocabulary", w)
			}
		}
	}
}

func BenchmarkEach(b *testing.B) {
	for b.Loop() {
		Each(10_000, 1, func(int, Entry) bool { return true })
	}
}
