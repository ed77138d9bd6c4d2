package lexicon

import (
	"bytes"
	"compress/gzip"
	"errors"
	"testing"
)

func TestKindsHoldWhatTheyName(t *testing.T) {
	l, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		kind, noun string
		holds      bool
	}{
		{"instrument", "cello", true},
		{"instrument", "bass guitar", true},
		{"instruments", "ukuleles", true}, // plurals on both sides
		{"city", "oslo", true},            // an instance of a capital
		{"city", "galway", true},
		{"plant", "tomatoes", true},
		{"plant", "runner beans", true},
		{"sport", "badminton", true},
		{"dish", "paella", true},
		{"language", "swahili", true},
		{"animal", "mice", true}, // an irregular plural
		{"animal", "beagle", true},
		{"vehicle", "van", true},
		{"city", "cello", false},
		{"instrument", "instrument", false}, // the kind's own word is keyword's to find
		{"animal", "rug", false},
		{"instrument", "gloriously", false}, // not a noun
	} {
		k, ok := l.Kind(c.kind)
		if !ok {
			t.Fatalf("Kind(%q): not a kind", c.kind)
		}
		if got := k.Holds(c.noun); got != c.holds {
			t.Errorf("Kind(%q).Holds(%q) = %v, want %v", c.kind, c.noun, got, c.holds)
		}
	}
	if _, ok := l.Kind("cellos"); ok {
		t.Error(`"cellos": nothing is under a cello, so it is no kind`)
	}
	if _, ok := l.Kind("quickly"); ok {
		t.Error(`"quickly" is no noun`)
	}
}

func TestSpecificityFallsWithWhatAKindHolds(t *testing.T) {
	l, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	spec := func(w string) float64 {
		k, ok := l.Kind(w)
		if !ok {
			t.Fatalf("%q is no kind", w)
		}
		return k.Specificity
	}
	if a, b := spec("violin"), spec("instrument"); !(a > b) {
		t.Errorf("violin %.3f should be more specific than instrument %.3f", a, b)
	}
	if a, b := spec("instrument"), spec("entity"); !(a > b) {
		t.Errorf("instrument %.3f should be more specific than entity %.3f", a, b)
	}
	if s := spec("entity"); s > 0.05 {
		t.Errorf("entity holds every noun, specificity %.3f", s)
	}
}

func TestDecodeRefusesWhatIsNotALexicon(t *testing.T) {
	gz := func(b []byte) []byte {
		var out bytes.Buffer
		w := gzip.NewWriter(&out)
		w.Write(b)
		w.Close()
		return out.Bytes()
	}
	good, err := Encode(Source{Parents: [][]int{{}, {0}}, Lemmas: []Lemma{{Text: "thing", Senses: []int{0}}, {Text: "cello", Senses: []int{1}}}})
	if err != nil {
		t.Fatal(err)
	}
	l, err := Decode(good)
	if err != nil {
		t.Fatal(err)
	}
	if k, ok := l.Kind("thing"); !ok || !k.Holds("cello") || !k.Holds("cellos") {
		t.Errorf("a two-synset lexicon: thing should hold cello")
	}
	for name, data := range map[string][]byte{
		"not gzip":      []byte("hello"),
		"another magic": gz([]byte("mnemo-lexicon 0\n")),
		"cut short":     gz([]byte(magic + "\x02\x00")),
		"parent beyond": gz([]byte(magic + "\x01\x01\x05")),
		"trailing":      gz(append(raw(t, good), 0)),
	} {
		if _, err := Decode(data); err == nil {
			t.Errorf("%s: decoded", name)
		} else if name != "not gzip" && !errors.Is(err, errCorrupt) {
			t.Errorf("%s: %v, want corrupt", name, err)
		}
	}
}

// raw is the uncompressed bytes of an encoded lexicon.
func raw(t *testing.T, data []byte) []byte {
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if _, err := b.ReadFrom(zr); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func FuzzDecode(f *testing.F) {
	good, _ := Encode(Source{Parents: [][]int{{}, {0}, {1, 0}}, Lemmas: []Lemma{{Text: "a", Senses: []int{0}}, {Text: "b c", Senses: []int{2, 1}}}, Irregular: [][2]string{{"bs", "b c"}}})
	f.Add(good)
	f.Add(raw(&testing.T{}, good))
	f.Fuzz(func(t *testing.T, data []byte) {
		if l, err := Decode(data); err == nil {
			for w := range l.senses {
				if k, ok := l.Kind(w); ok {
					k.Holds(w)
				}
			}
		}
		// The same bytes as the gzip body: the decoder must not panic on
		// any payload either.
		var out bytes.Buffer
		w := gzip.NewWriter(&out)
		w.Write(data)
		w.Close()
		Decode(out.Bytes())
	})
}
