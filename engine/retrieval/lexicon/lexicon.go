// Package lexicon knows what kind of thing a noun names: that a cello is an
// instrument, Oslo a city, basil a plant and badminton a sport. A question
// names a kind ("What instrument is Maya learning?") where the turn that
// answers it names the thing ("I signed up for cello lessons"), and shares
// no word with it; the conversation levers of hybrid fetch
// (retrieval.ConvConfig.Kind) read this package to tell that turn apart.
//
// What it knows is Princeton WordNet 3.0's nouns: their senses and each
// sense's hypernyms, embedded in the binary (nouns.bin.gz, 1.2 MB,
// written by genlexicon) and decoded on first use. Nothing is learned and
// nothing is read from disk at run time. WordNet 3.0 is Copyright 2006 by
// Princeton University, used under its licence (WORDNET-LICENSE).
package lexicon

import (
	"bufio"
	"bytes"
	"compress/gzip"
	_ "embed"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"sync"

	"mnemo/engine/retrieval/lexicon/wordnet"
)

//go:generate go run ./genlexicon -wordnet /usr/share/wordnet -out nouns.bin.gz

//go:embed nouns.bin.gz
var embedded []byte

// magic starts the encoded lexicon; a change to the format changes it.
const magic = "mnemo-lexicon 1\n"

// Source is a lexicon as genlexicon reads it from WordNet.
type Source struct {
	// Parents is each synset's hypernyms, as indexes into Parents.
	Parents [][]int
	// Lemmas is every noun, lower case, words joined by a space ("bass
	// guitar"), in sorted order.
	Lemmas []Lemma
	// Irregular is the plurals the suffix rules miss, and their lemmas
	// ("mice" -> "mouse").
	Irregular [][2]string
}

// Lemma is a noun and its senses (indexes into Source.Parents), the most
// frequent first.
type Lemma struct {
	Text   string
	Senses []int
}

// Lexicon is a decoded lexicon. It is read-only, so one serves every
// session of a process.
type Lexicon struct {
	parentAt, parents []int32 // synset i's hypernyms: parents[parentAt[i]:parentAt[i+1]]
	childAt, children []int32 // the same, downwards
	senses            map[string][]int32
	lemmaAt           []int32 // synset i's lemmas: lemmaOf[lemmaAt[i]:lemmaAt[i+1]]
	lemmaOf           []string
	irregular         map[string][]string
	compound          map[string]bool // the first words of the lemmas of two words or more
	detach            [][2]string     // WordNet's suffix rules for nouns
	synsets           int
	maxUnder          float64 // ln(1 + the number of synsets)
}

// Default is the lexicon embedded in the binary, decoded once (about 0.1 s
// and 20 MB of heap) on first use.
func Default() (*Lexicon, error) { return decodeEmbedded() }

var decodeEmbedded = sync.OnceValues(func() (*Lexicon, error) { return Decode(embedded) })

// Encode writes src in the embedded format: gzip of the magic, then
// uvarints (the synsets' parents, the lemmas with their senses, the
// irregular plurals).
func Encode(src Source) ([]byte, error) {
	var raw bytes.Buffer
	raw.WriteString(magic)
	num := func(n int) { raw.Write(binary.AppendUvarint(nil, uint64(n))) }
	str := func(s string) { num(len(s)); raw.WriteString(s) }
	num(len(src.Parents))
	for _, ps := range src.Parents {
		num(len(ps))
		for _, p := range ps {
			if p < 0 || p >= len(src.Parents) {
				return nil, fmt.Errorf("lexicon: parent %d out of range", p)
			}
			num(p)
		}
	}
	num(len(src.Lemmas))
	for _, l := range src.Lemmas {
		str(l.Text)
		num(len(l.Senses))
		for _, s := range l.Senses {
			if s < 0 || s >= len(src.Parents) {
				return nil, fmt.Errorf("lexicon: %q: sense %d out of range", l.Text, s)
			}
			num(s)
		}
	}
	num(len(src.Irregular))
	for _, x := range src.Irregular {
		str(x[0])
		str(x[1])
	}
	var out bytes.Buffer
	zw, err := gzip.NewWriterLevel(&out, gzip.BestCompression)
	if err != nil {
		return nil, err
	}
	if _, err := zw.Write(raw.Bytes()); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// errCorrupt is what Decode says of data that is not a lexicon.
var errCorrupt = errors.New("lexicon: corrupt data")

// Decode reads a lexicon Encode wrote.
func Decode(data []byte) (*Lexicon, error) {
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("lexicon: %w", err)
	}
	r := bufio.NewReader(zr)
	head := make([]byte, len(magic))
	if _, err := io.ReadFull(r, head); err != nil || string(head) != magic {
		return nil, fmt.Errorf("%w: not a mnemo lexicon of this version", errCorrupt)
	}
	var failed error
	num := func(limit int) int {
		if failed != nil {
			return 0
		}
		v, err := binary.ReadUvarint(r)
		if err != nil || v > uint64(limit) {
			failed = errCorrupt
			return 0
		}
		return int(v)
	}
	str := func() string {
		n := num(1 << 10)
		if failed != nil {
			return ""
		}
		b := make([]byte, n)
		if _, err := io.ReadFull(r, b); err != nil {
			failed = errCorrupt
		}
		return string(b)
	}
	const most = 1 << 22 // far above WordNet's 82,115 noun synsets
	l := &Lexicon{synsets: num(most)}
	l.parentAt = make([]int32, 0, l.synsets+1)
	for range l.synsets {
		l.parentAt = append(l.parentAt, int32(len(l.parents)))
		for range num(most) {
			l.parents = append(l.parents, int32(num(l.synsets-1)))
		}
		if failed != nil {
			return nil, failed
		}
	}
	l.parentAt = append(l.parentAt, int32(len(l.parents)))
	lemmas := num(most)
	l.senses = make(map[string][]int32, lemmas)
	for range lemmas {
		text := str()
		ss := make([]int32, num(most))
		for i := range ss {
			ss[i] = int32(num(l.synsets - 1))
		}
		if failed != nil {
			return nil, failed
		}
		l.senses[text] = ss
	}
	irregular := num(most)
	l.irregular = make(map[string][]string, irregular)
	for range irregular {
		form, base := str(), str()
		if failed != nil {
			return nil, failed
		}
		l.irregular[form] = append(l.irregular[form], base)
	}
	if _, err := r.ReadByte(); err != io.EOF {
		return nil, fmt.Errorf("%w: data after the end", errCorrupt)
	}
	l.buildChildren()
	l.buildLemmas()
	l.detach = wordnet.Detach(wordnet.Noun)
	l.compound = map[string]bool{}
	for text := range l.senses {
		if first, _, ok := strings.Cut(text, " "); ok {
			l.compound[first] = true
		}
	}
	l.maxUnder = math.Log1p(float64(l.synsets))
	return l, nil
}

func (l *Lexicon) buildChildren() {
	count := make([]int32, l.synsets+1)
	for _, p := range l.parents {
		count[p+1]++
	}
	for i := 1; i <= l.synsets; i++ {
		count[i] += count[i-1]
	}
	l.childAt = count
	l.children = make([]int32, len(l.parents))
	next := append([]int32(nil), count[:l.synsets]...)
	for s := range l.synsets {
		for _, p := range l.parents[l.parentAt[s]:l.parentAt[s+1]] {
			l.children[next[p]] = int32(s)
			next[p]++
		}
	}
}

func (l *Lexicon) buildLemmas() {
	count := make([]int32, l.synsets+1)
	for _, ss := range l.senses {
		for _, s := range ss {
			count[s+1]++
		}
	}
	for i := 1; i <= l.synsets; i++ {
		count[i] += count[i-1]
	}
	l.lemmaAt = count
	l.lemmaOf = make([]string, count[l.synsets])
	next := append([]int32(nil), count[:l.synsets]...)
	for text, ss := range l.senses {
		for _, s := range ss {
			l.lemmaOf[next[s]] = text
			next[s]++
		}
	}
	for s := range l.synsets { // map order above; sorted for stable answers
		slices.Sort(l.lemmaOf[l.lemmaAt[s]:l.lemmaAt[s+1]])
	}
}

// Lemmas is the lemmas a noun (lower case, words joined by a space) may be
// a form of: itself, its irregular plural's lemma, and what WordNet's
// suffix rules make of it ("tomatoes" -> "tomato", "runner beans" ->
// "runner bean"), those the lexicon holds.
func (l *Lexicon) Lemmas(noun string) []string {
	var out []string
	l.forms(noun, func(lemma string, _ []int32) { out = append(out, lemma) })
	return out
}

// forms calls yield with each lemma noun may be a form of (Lemmas), once,
// and its senses.
func (l *Lexicon) forms(noun string, yield func(lemma string, senses []int32)) {
	var seen [4]string // a noun has few forms: no map for them
	n := 0
	add := func(b string) {
		ss, ok := l.senses[b]
		if !ok {
			return
		}
		for _, x := range seen[:n] {
			if x == b {
				return
			}
		}
		if n < len(seen) {
			seen[n] = b
			n++
		}
		yield(b, ss)
	}
	add(noun)
	for _, b := range l.irregular[noun] {
		add(b)
	}
	for _, r := range l.detach {
		if strings.HasSuffix(noun, r[0]) && len(noun) > len(r[0]) {
			add(noun[:len(noun)-len(r[0])] + r[1])
		}
	}
}

// Kind is a noun taken as a kind of thing: every sense of every lemma it
// may be a form of, and what is under them.
type Kind struct {
	// Word is the noun the kind was made from, as given.
	Word string
	// Specificity is in [0, 1): 1 - ln(1 + the synsets under the kind) /
	// ln(1 + every synset). "instrument" 0.38, "animal" 0.27, "entity"
	// about 0: a kind that holds most things tells little.
	Specificity float64
	own         []uint64 // a bit per sense of the kind's own
	under       []uint64 // a bit per synset strictly under one of them
	lex         *Lexicon
}

// Kind is noun as a kind of thing, false when the lexicon does not know it
// as a noun or nothing is under it.
func (l *Lexicon) Kind(noun string) (*Kind, bool) {
	words := (l.synsets + 63) / 64
	bits := make([]uint64, 2*words)
	k := &Kind{Word: noun, own: bits[:words:words], under: bits[words:], lex: l}
	var queue []int32
	l.forms(noun, func(_ string, senses []int32) {
		for _, s := range senses {
			if !has(k.own, s) {
				set(k.own, s)
				queue = append(queue, s)
			}
		}
	})
	n := 0
	for len(queue) > 0 {
		s := queue[len(queue)-1]
		queue = queue[:len(queue)-1]
		for _, c := range l.children[l.childAt[s]:l.childAt[s+1]] {
			if !has(k.under, c) {
				set(k.under, c)
				n++
				queue = append(queue, c)
			}
		}
	}
	if n == 0 {
		return nil, false
	}
	k.Specificity = 1 - math.Log1p(float64(n))/l.maxUnder
	return k, true
}

// Holds reports whether noun (lower case, words joined by a space) names,
// in one of its senses, something under the kind: "cello" for
// "instrument", "tomatoes" for "plant". The kind's own word does not count
// ("instrument" is not held by "instrument").
func (k *Kind) Holds(noun string) bool {
	return k.lex.MostSpecific(noun, []*Kind{k}) != nil
}

// MostSpecific is the most specific of kinds (all of this lexicon) that
// holds noun (Kind.Holds), nil when none does. The noun's forms are looked
// up once for all of them.
func (l *Lexicon) MostSpecific(noun string, kinds []*Kind) *Kind {
	var best *Kind
	l.forms(noun, func(_ string, senses []int32) {
		for _, k := range kinds {
			if best != nil && best.Specificity >= k.Specificity {
				continue
			}
			for _, s := range senses {
				if has(k.under, s) && !has(k.own, s) {
					best = k
					break
				}
			}
		}
	})
	return best
}

func has(bits []uint64, i int32) bool { return bits[i/64]&(1<<(i%64)) != 0 }
func set(bits []uint64, i int32)      { bits[i/64] |= 1 << (i % 64) }

// StartsCompound reports whether word is the first of a lemma of more
// words ("bass" of "bass guitar"): only then is a pair of words worth
// looking up.
func (l *Lexicon) StartsCompound(word string) bool { return l.compound[word] }

// Held is the lemmas a store holds, as far as the lexicon goes (Lexicon.Held).
type Held struct {
	lemmas map[string]bool
	synset []uint64 // a bit per synset with a held lemma
}

// Held is the lemmas accept takes, and the synsets they are senses of. It
// asks accept of every lemma once (117,798 of them), so it is made once
// for what it describes (a store's vocabulary) and kept.
func (l *Lexicon) Held(accept func(lemma string) bool) *Held {
	h := &Held{lemmas: map[string]bool{}, synset: make([]uint64, (l.synsets+63)/64)}
	for text, ss := range l.senses {
		if accept(text) {
			h.lemmas[text] = true
			for _, s := range ss {
				set(h.synset, s)
			}
		}
	}
	return h
}

// Nouns calls yield with every held lemma of every sense under the kind
// (each once, the nearest senses first, in lemma order within a sense),
// until yield returns false: the words a turn of the store may name a
// thing of the kind with.
func (k *Kind) Nouns(h *Held, yield func(string) bool) {
	l := k.lex
	seen := map[string]bool{}
	visited := make([]uint64, len(k.under))
	var queue []int32
	for s := range int32(l.synsets) {
		if has(k.own, s) {
			queue = append(queue, s)
		}
	}
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		for _, c := range l.children[l.childAt[s]:l.childAt[s+1]] {
			if has(visited, c) || has(k.own, c) {
				continue
			}
			set(visited, c)
			queue = append(queue, c)
			if !has(h.synset, c) {
				continue
			}
			for _, w := range l.lemmaOf[l.lemmaAt[c]:l.lemmaAt[c+1]] {
				if h.lemmas[w] && !seen[w] {
					seen[w] = true
					if !yield(w) {
						return
					}
				}
			}
		}
	}
}
