// Package wordnet reads Princeton WordNet 3.0's database files (Debian's
// wordnet-base, /usr/share/wordnet): the index (lemma -> senses, most
// frequent first), the exception lists of irregular forms, and the synsets
// with their pointers. The lexicon's generator (genlexicon) and the
// retrieval evaluation read it; mnemo at run time reads only the lexicon the
// generator wrote, never WordNet itself.
package wordnet

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// POS is a part of speech as WordNet's file names and pointers spell it.
type POS byte

const (
	Noun POS = 'n'
	Verb POS = 'v'
	Adj  POS = 'a'
	Adv  POS = 'r'
)

// AllPOS is every part of speech, in the order lookups try them.
func AllPOS() []POS { return []POS{Noun, Verb, Adj, Adv} }

// File is p's name in WordNet's file names (data.noun, noun.exc).
func (p POS) File() string {
	switch p {
	case Noun:
		return "noun"
	case Verb:
		return "verb"
	case Adj, 's':
		return "adj"
	default:
		return "adv"
	}
}

// Pointer is one relation of a synset to another.
type Pointer struct {
	Symbol string // "@" hypernym, "&" similar to, "+" derivation, ...
	POS    POS
	Offset int64
}

// Synset is one sense: its words (lower case, multi-word lemmas with "_"),
// its relations and its gloss.
type Synset struct {
	POS      POS
	Offset   int64
	Words    []string
	Pointers []Pointer
	Gloss    string
}

// DB is a WordNet database: the index (lemma -> synset offsets, most
// frequent sense first), the exception lists of irregular forms, and the
// data files, all read into memory.
type DB struct {
	index map[POS]map[string][]int64
	exc   map[POS]map[string][]string
	data  map[POS][]byte
	cache map[POS]map[int64]*Synset
}

// Open reads the database in dir.
func Open(dir string) (*DB, error) {
	db := &DB{
		index: map[POS]map[string][]int64{},
		exc:   map[POS]map[string][]string{},
		data:  map[POS][]byte{},
		cache: map[POS]map[int64]*Synset{},
	}
	for _, p := range AllPOS() {
		idx, err := readLines(filepath.Join(dir, "index."+p.File()))
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
				return nil, fmt.Errorf("wordnet index.%s: short line %q", p.File(), l)
			}
			synsets, err1 := strconv.Atoi(f[2])
			ptrs, err2 := strconv.Atoi(f[3])
			if err1 != nil || err2 != nil || len(f) < 4+ptrs+2+synsets {
				return nil, fmt.Errorf("wordnet index.%s: bad line %q", p.File(), l)
			}
			for _, o := range f[4+ptrs+2 : 4+ptrs+2+synsets] {
				off, err := strconv.ParseInt(o, 10, 64)
				if err != nil {
					return nil, fmt.Errorf("wordnet index.%s: bad offset in %q", p.File(), l)
				}
				m[f[0]] = append(m[f[0]], off)
			}
		}
		db.index[p] = m
		exc, err := readLines(filepath.Join(dir, p.File()+".exc"))
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
		data, err := os.ReadFile(filepath.Join(dir, "data."+p.File()))
		if err != nil {
			return nil, err
		}
		db.data[p] = data
		db.cache[p] = map[int64]*Synset{}
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
func (db *DB) Senses(lemma string, p POS) ([]*Synset, error) {
	var out []*Synset
	for _, off := range db.index[p][lemma] {
		s, err := db.SynsetAt(p, off)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// Detach is WordNet's morphy suffix rules: an inflected ending and what
// replaces it.
func Detach(p POS) [][2]string {
	return map[POS][][2]string{
		Noun: {{"s", ""}, {"ses", "s"}, {"xes", "x"}, {"zes", "z"}, {"ches", "ch"}, {"shes", "sh"}, {"men", "man"}, {"ies", "y"}},
		Verb: {{"s", ""}, {"ies", "y"}, {"es", "e"}, {"es", ""}, {"ed", "e"}, {"ed", ""}, {"ing", "e"}, {"ing", ""}},
		Adj:  {{"er", ""}, {"est", ""}, {"er", "e"}, {"est", "e"}},
	}[p]
}

// BaseForms is morphy: the lemmas of p that word may be an inflection of
// (itself, its exceptions, its regular detachments), in that order.
func (db *DB) BaseForms(word string, p POS) []string {
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
	for _, r := range Detach(p) {
		if strings.HasSuffix(word, r[0]) {
			add(word[:len(word)-len(r[0])] + r[1])
		}
	}
	return out
}

// SynsetAt reads the synset at offset of p's data file.
func (db *DB) SynsetAt(p POS, off int64) (*Synset, error) {
	if p == 's' {
		p = Adj
	}
	if s, ok := db.cache[p][off]; ok {
		return s, nil
	}
	data := db.data[p]
	if off < 0 || off >= int64(len(data)) {
		return nil, fmt.Errorf("wordnet data.%s: offset %d out of range", p.File(), off)
	}
	line := data[off:]
	if i := strings.IndexByte(string(line[:min(len(line), 1<<16)]), '\n'); i >= 0 {
		line = line[:i]
	}
	body, gloss, _ := strings.Cut(string(line), "|")
	f := strings.Fields(body)
	bad := func() (*Synset, error) {
		return nil, fmt.Errorf("wordnet data.%s: bad synset at %d", p.File(), off)
	}
	if len(f) < 4 {
		return bad()
	}
	wc, err := strconv.ParseInt(f[3], 16, 32)
	if err != nil || len(f) < 4+2*int(wc)+1 {
		return bad()
	}
	s := &Synset{POS: POS(f[2][0]), Offset: off, Gloss: strings.TrimSpace(gloss)}
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
		s.Pointers = append(s.Pointers, Pointer{Symbol: q[0], POS: POS(q[2][0]), Offset: o})
	}
	db.cache[p][off] = s
	return s, nil
}

// Lemmas is every lemma of p in the index, sorted.
func (db *DB) Lemmas(p POS) []string {
	out := make([]string, 0, len(db.index[p]))
	for l := range db.index[p] {
		out = append(out, l)
	}
	slices.Sort(out)
	return out
}

// Exceptions is p's exception list: an irregular form and its base forms
// ("mice" -> "mouse").
func (db *DB) Exceptions(p POS) map[string][]string { return db.exc[p] }
