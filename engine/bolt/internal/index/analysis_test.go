package index

import (
	"reflect"
	"strconv"
	"strings"
	"testing"

	benchcorpus "mnemo/bench/corpus"
)

// TestBatchAnalysisMatchesPlainAnalysis: a batch's analysis, which
// remembers the stems of the words it met (shortStem's cache), makes of
// every text exactly the tokens the plain analysis makes, in the same order
// at the same places, whatever it met before: corpus texts, identifiers
// split into parts, a token too long to stem, and words again once the
// cache is full.
func TestBatchAnalysisMatchesPlainAnalysis(t *testing.T) {
	plain, err := newTextAnalysis()
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	benchcorpus.Each(2000, 1, func(_ int, e benchcorpus.Entry) bool {
		texts = append(texts, e.Item.RenderText())
		return true
	})
	texts = append(texts,
		"aiohttp.web's running RUNNING runs ran; http.request.clone snake_case 3.14 don't",
		"generously generous generation generational "+strings.Repeat("x", maxStemBytes+1)+"ing running",
		texts[0], texts[1])
	batch := plain.forBatch()
	check := func(batch *textAnalysis, text string) {
		t.Helper()
		want, got := plain.Analyze([]byte(text)), batch.Analyze([]byte(text))
		if len(got) != len(want) {
			t.Fatalf("%d tokens with the batch's analysis, %d without, for %q", len(got), len(want), text)
		}
		for i := range want {
			w, g := want[i], got[i]
			if string(g.Term) != string(w.Term) || g.Start != w.Start || g.End != w.End || g.Position != w.Position || g.Type != w.Type {
				t.Fatalf("token %d of %q: %q %d-%d @%d with the batch's analysis, %q %d-%d @%d without",
					i, text, g.Term, g.Start, g.End, g.Position, w.Term, w.Start, w.End, w.Position)
			}
		}
	}
	for _, text := range texts {
		check(batch, text)
	}
	if len(batch.stem.stems) == 0 {
		t.Fatal("the batch's analysis remembered no stem")
	}
	// A full cache remembers no more and stems the rest as before.
	full := plain.forBatch()
	for i := range maxBatchStems {
		full.stem.stems["\x00"+strconv.Itoa(i)] = "x" // no text's term

	}
	for _, text := range texts[:50] {
		check(full, text)
	}
	if len(full.stem.stems) != maxBatchStems {
		t.Fatalf("a full cache grew to %d terms", len(full.stem.stems))
	}
}

// TestDocumentsMatchOneBuilder: the documents of a batch split between
// builders (builder.documents, each part with its own stem cache) are the
// documents one builder makes one at a time: the same fields, each with the
// same analysed tokens at the same places, and the same text lengths.
func TestDocumentsMatchOneBuilder(t *testing.T) {
	b, err := newBuilder()
	if err != nil {
		t.Fatal(err)
	}
	docs := newCorpus(7).docs(4 * minDocsPerPart)
	docs = append(docs, doc("ident", "aiohttp.web's RUNNING runs; http.request.clone "+strings.Repeat("y", maxStemBytes+3)))
	built, err := b.documents(docs)
	if err != nil {
		t.Fatal(err)
	}
	if len(built) != len(docs) {
		t.Fatalf("%d documents built for %d", len(built), len(docs))
	}
	for i, d := range docs {
		want, wantLen, err := b.document(d)
		if err != nil {
			t.Fatal(err)
		}
		got := built[i]
		if got.doc.ID() != want.ID() || got.length != wantLen || len(got.doc.Fields) != len(want.Fields) {
			t.Fatalf("document %d: id %s, length %d, %d fields; one builder: %s, %d, %d",
				i, got.doc.ID(), got.length, len(got.doc.Fields), want.ID(), wantLen, len(want.Fields))
		}
		if len(want.Fields) == 0 || len(want.Fields[0].AnalyzedTokenFrequencies()) == 0 {
			t.Fatalf("document %d: no analysed text to compare", i)
		}
		for j, f := range want.Fields {
			g := got.doc.Fields[j]
			if g.Name() != f.Name() || g.AnalyzedLength() != f.AnalyzedLength() ||
				!reflect.DeepEqual(g.AnalyzedTokenFrequencies(), f.AnalyzedTokenFrequencies()) {
				t.Fatalf("document %d (%s), field %s differs from one builder's", i, d.ID, f.Name())
			}
		}
	}
}
