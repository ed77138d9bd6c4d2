package main

import (
	"bytes"
	"os"
	"testing"

	"mnemo/engine/retrieval/lexicon/wordnet"
)

// TestEmbeddedIsGenerated checks that the lexicon in the repository is what
// genlexicon writes from WordNet, where Debian's wordnet-base is installed.
func TestEmbeddedIsGenerated(t *testing.T) {
	const dir = "/usr/share/wordnet"
	if _, err := os.Stat(dir); err != nil {
		t.Skip("no WordNet at " + dir + " (Debian's wordnet-base)")
	}
	db, err := wordnet.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	out, err := generate(db)
	if err != nil {
		t.Fatal(err)
	}
	have, err := os.ReadFile("../nouns.bin.gz")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out, have) {
		t.Fatal("engine/retrieval/lexicon/nouns.bin.gz is not what genlexicon writes: run go generate ./engine/retrieval/lexicon")
	}
}
