package eval

// A reader of Princeton WordNet 3.0's database files (Debian's
// wordnet-base, /usr/share/wordnet), far enough for TestExpansionSweep's
// query expansion: the index (lemma -> senses, most frequent first), the
// exception lists of irregular forms, and the synsets with their pointers.
// Only the evaluation reads it; nothing in mnemo depends on WordNet.

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// wnPOS is a part of speech as WordNet's file names and pointers spell it.
type wnPOS byte

const (
	wnNoun wnPOS = 'n'
	wnVerb wnPOS = 'v'
	wnAdj  wnPOS = 'a'
	wnAdv  wnPOS = 'r'
)

// wnAllPOS is every part of speech, in the order lookups try them.
func wnAllPOS() []wnPOS { return []wnPOS{wnNoun, wnVerb, wnAdj, wnAdv} }

func (p wnPOS) file() string {
	switch p {
	case wnNoun:
		return "noun"
	case wnVerb:
		return "verb"
	case wnAdj, 's':
		return "adj"
	default:
		return "adv"
	}
}

// wnPointer is one relation of a synset to another.
type wnPointer struct {
	Symbol string // "@" hypernym, "&" similar to, "+" derivation, ...
	POS    wnPOS
	Offset int64
}

// wnSynset is one sense: its words (lower case, multi-word lemmas with "_"),
// its relations and its gloss.
type wnSynset struct {
	POS      wnPOS
	Offset   int64
	Words    []string
	Pointers []wnPointer
	Gloss    string
}

// wordNet is a WordNet database: the index (lemma -> synset offsets, most
// frequent sense first), the exception lists of irregular forms, and the
// data files, all read into memory.
type wordNet struct {
	index map[wnPOS]map[string][]int64
	exc   map[wnPOS]map[string][]string
	data  map[wnPOS][]byte
	cache map[wnPOS]map[int64]*wnSynset
}

// openWordNet reads the database in dir.
func openWordNet(dir string) (*wordNet, error) {
	db := &wordNet{
		index: map[wnPOS]map[string][]int64{},
		exc:   map[wnPOS]map[string][]string{},
		data:  map[wnPOS][]byte{},
		cache: map[wnPOS]map[int64]*wnSynset{},
	}
	for _, p := range wnAllPOS() {
		idx, err := readLines(filepath.Join(dir, "index."+p.file()))
		if err != nil {
			return nil, err
		}
		m := map[string][]int64{}
		for _, l := range idx {
			if strings.HasPrefix(l, " ") || l == "" {
				continue // the licence
			}
			f := strings.Fields(l)
			if len(f) < 6 {
				return nil, fmt.Errorf("wordnet index.%s: short line %q", p.file(), l)
			}
			synsets, err1 := strconv.Atoi(f[2])
			ptrs, err2 := strconv.Atoi(f[3])
			if err1 != nil || err2 != nil || len(f) < 4+ptrs+2+synsets {
				return nil, fmt.Errorf("wordnet index.%s: bad line %q", p.file(), l)
			}
			for _, o := range f[4+ptrs+2 : 4+ptrs+2+synsets] {
				off, err := strconv.ParseInt(o, 10, 64)
				if err != nil {
					return nil, fmt.Errorf("wordnet index.%s: bad offset in %q", p.file(), l)
				}
				m[f[0]] = append(m[f[0]], off)
			}
		}
		db.index[p] = m
		exc, err := readLines(filepath.Join(dir, p.file()+".exc"))
		if err != nil {
			return nil, err
		}
		e := map[string][]string{}
		for _, l := range exc {
			if f := strings.Fields(l); len(f) >= 2 {
				e[f[0]] = append(e[f[0]], f[1:]...)
			}
		}
		db.exc[p] = e
		data, err := os.ReadFile(filepath.Join(dir, "data."+p.file()))
		if err != nil {
			return nil, err
		}
		db.data[p] = data
		db.cache[p] = map[int64]*wnSynset{}
	}
	return db, nil
}

func readLines(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		out = append(out, sc.Text())
	}
	return out, sc.Err()
}

// Senses is the synsets of lemma as part of speech p, most frequent first.
func (db *wordNet) Senses(lemma string, p wnPOS) ([]*wnSynset, error) {
	var out []*wnSynset
	for _, off := range db.index[p][lemma] {
		s, err := db.Synset(p, off)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// detach is WordNet's morphy suffix rules: an inflected ending and what
// replaces it.
func detach(p wnPOS) [][2]string {
	return map[wnPOS][][2]string{
		wnNoun: {{"s", ""}, {"ses", "s"}, {"xes", "x"}, {"zes", "z"}, {"ches", "ch"}, {"shes", "sh"}, {"men", "man"}, {"ies", "y"}},
		wnVerb: {{"s", ""}, {"ies", "y"}, {"es", "e"}, {"es", ""}, {"ed", "e"}, {"ed", ""}, {"ing", "e"}, {"ing", ""}},
		wnAdj:  {{"er", ""}, {"est", ""}, {"er", "e"}, {"est", "e"}},
	}[p]
}

// BaseForms is morphy: the lemmas of p that word may be an inflection of
// (itself, its exceptions, its regular detachments), in that order.
func (db *wordNet) BaseForms(word string, p wnPOS) []string {
	var out []string
	add := func(b string) {
		if _, ok := db.index[p][b]; !ok {
			return
		}
		for _, x := range out {
			if x == b {
				return
			}
		}
		out = append(out, b)
	}
	add(word)
	for _, b := range db.exc[p][word] {
		add(b)
	}
	for _, r := range detach(p) {
		if strings.HasSuffix(word, r[0]) {
			add(word[:len(word)-len(r[0])] + r[1])
		}
	}
	return out
}

// Synset reads the synset at offset of p's data file.
func (db *wordNet) Synset(p wnPOS, off int64) (*wnSynset, error) {
	if p == 's' {
		p = wnAdj
	}
	if s, ok := db.cache[p][off]; ok {
		return s, nil
	}
	data := db.data[p]
	if off < 0 || off >= int64(len(data)) {
		return nil, fmt.Errorf("wordnet data.%s: offset %d out of range", p.file(), off)
	}
	line := data[off:]
	if i := strings.IndexByte(string(line[:min(len(line), 1<<16)]), '\n'); i >= 0 {
		line = line[:i]
	}
	body, gloss, _ := strings.Cut(string(line), "|")
	f := strings.Fields(body)
	bad := func() (*wnSynset, error) {
		return nil, fmt.Errorf("wordnet data.%s: bad synset at %d", p.file(), off)
	}
	if len(f) < 4 {
		return bad()
	}
	wc, err := strconv.ParseInt(f[3], 16, 32)
	if err != nil || len(f) < 4+2*int(wc)+1 {
		return bad()
	}
	s := &wnSynset{POS: wnPOS(f[2][0]), Offset: off, Gloss: strings.TrimSpace(gloss)}
	for i := range int(wc) {
		w := strings.ToLower(f[4+2*i])
		if j := strings.IndexByte(w, '('); j > 0 { // adjective markers: "big(a)"
			w = w[:j]
		}
		s.Words = append(s.Words, w)
	}
	at := 4 + 2*int(wc)
	pc, err := strconv.Atoi(f[at])
	if err != nil || len(f) < at+1+4*pc {
		return bad()
	}
	for j := range pc {
		q := f[at+1+4*j : at+5+4*j]
		o, err := strconv.ParseInt(q[1], 10, 64)
		if err != nil {
			return bad()
		}
		s.Pointers = append(s.Pointers, wnPointer{Symbol: q[0], POS: wnPOS(q[2][0]), Offset: o})
	}
	db.cache[p][off] = s
	return s, nil
}
