// Command genlexicon writes the lexicon mnemo embeds (package lexicon's
// nouns.bin.gz) from Princeton WordNet 3.0's noun files: every noun synset
// with its hypernyms (instance hypernyms included: Oslo is an instance of a
// national capital), every noun lemma with its senses, and the irregular
// plurals. Run it where Debian's wordnet-base is installed:
//
//	go generate ./engine/retrieval/lexicon
//
// The output depends on WordNet alone, so running it again writes the same
// bytes (TestEmbeddedIsGenerated checks that when WordNet is installed).
package main

import (
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"

	"mnemo/engine/retrieval/lexicon"
	"mnemo/engine/retrieval/lexicon/wordnet"
)

func main() {
	dir := flag.String("wordnet", "/usr/share/wordnet", "WordNet 3.0's database directory")
	out := flag.String("out", "nouns.bin.gz", "the file to write")
	flag.Parse()
	if err := run(*dir, *out); err != nil {
		fmt.Fprintln(os.Stderr, "genlexicon:", err)
		os.Exit(1)
	}
}

func run(dir, out string) error {
	db, err := wordnet.Open(dir)
	if err != nil {
		return err
	}
	data, err := generate(db)
	if err != nil {
		return err
	}
	return os.WriteFile(out, data, 0o644)
}

// generate is the encoded lexicon of db's nouns.
func generate(db *wordnet.DB) ([]byte, error) {
	src, err := Source(db)
	if err != nil {
		return nil, err
	}
	return lexicon.Encode(src)
}

// Source reads the nouns of db into what lexicon.Encode writes.
func Source(db *wordnet.DB) (lexicon.Source, error) {
	var src lexicon.Source
	index := map[int64]int{} // a synset's offset -> its index in src.Parents
	var offsets []int64
	lemmas := db.Lemmas(wordnet.Noun)
	senses := make([][]int64, len(lemmas))
	for i, l := range lemmas {
		ss, err := db.Senses(l, wordnet.Noun)
		if err != nil {
			return src, err
		}
		for _, s := range ss {
			senses[i] = append(senses[i], s.Offset)
			if _, ok := index[s.Offset]; !ok {
				index[s.Offset] = -1
				offsets = append(offsets, s.Offset)
			}
		}
	}
	// Synsets in the order of the data file, so the output is stable.
	slices.Sort(offsets)
	for i, o := range offsets {
		index[o] = i
	}
	src.Parents = make([][]int, len(offsets))
	for i, o := range offsets {
		s, err := db.SynsetAt(wordnet.Noun, o)
		if err != nil {
			return src, err
		}
		for _, p := range s.Pointers {
			if (p.Symbol == "@" || p.Symbol == "@i") && p.POS == wordnet.Noun {
				j, ok := index[p.Offset]
				if !ok {
					return src, fmt.Errorf("synset %d: hypernym %d has no lemma", o, p.Offset)
				}
				src.Parents[i] = append(src.Parents[i], j)
			}
		}
	}
	for i, l := range lemmas {
		w := lexicon.Lemma{Text: strings.ReplaceAll(l, "_", " ")}
		for _, o := range senses[i] {
			w.Senses = append(w.Senses, index[o])
		}
		src.Lemmas = append(src.Lemmas, w)
	}
	exc := db.Exceptions(wordnet.Noun)
	forms := make([]string, 0, len(exc))
	for f := range exc {
		forms = append(forms, f)
	}
	slices.Sort(forms)
	for _, f := range forms {
		for _, b := range exc[f] {
			src.Irregular = append(src.Irregular, [2]string{strings.ReplaceAll(f, "_", " "), strings.ReplaceAll(b, "_", " ")})
		}
	}
	return src, nil
}
