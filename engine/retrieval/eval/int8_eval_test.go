package eval

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"mnemo/engine/retrieval"
)

// TestEvalInt8Agreement100k measures how often int8 search returns the same
// top 10 as float32 over 100,000 hashed embeddings of note-like texts (each
// a mix of two corpus notes' words), queried with the 91 evaluation queries.
func TestEvalInt8Agreement100k(t *testing.T) {
	if !*runEval {
		t.Skip("run with -eval")
	}
	queries, err := Queries()
	if err != nil {
		t.Fatal(err)
	}
	const n = 100_000
	texts := mixedNoteTexts(t, rand.New(rand.NewPCG(3, 4)), n)
	emb := retrieval.NewHashEmbedder()
	ctx := context.Background()
	t0 := time.Now()
	vecs, err := emb.Embed(ctx, texts)
	if err != nil {
		t.Fatal(err)
	}
	embedTime := time.Since(t0)
	qt := make([]string, len(queries))
	for i, q := range queries {
		qt[i] = q.Text
	}
	qv, err := emb.Embed(ctx, qt)
	if err != nil {
		t.Fatal(err)
	}
	f32 := retrieval.NewVectorIndex(emb.Dim())
	i8 := retrieval.NewVectorIndex(emb.Dim(), retrieval.WithInt8())
	for i, v := range vecs {
		id := fmt.Sprintf("t%06d", i)
		f32.Upsert(id, v)
		i8.Upsert(id, v)
	}
	var shared, total int
	var tf, ti time.Duration
	for _, q := range qv {
		s := time.Now()
		a := f32.Search(ctx, q, 10, nil)
		tf += time.Since(s)
		s = time.Now()
		b := i8.Search(ctx, q, 10, nil)
		ti += time.Since(s)
		for _, x := range a {
			if slices.ContainsFunc(b, func(y retrieval.Scored) bool { return y.ID == x.ID }) {
				shared++
			}
		}
		total += len(a)
	}
	agreement := float64(shared) / float64(total)
	t.Logf("100k hashed embeddings (dim %d): embedded in %s (%.0f texts/s); int8 recall@10 against float32 = %.3f; mean search float32 %s, int8 %s (wall, machine shared)",
		emb.Dim(), embedTime.Round(time.Millisecond), float64(n)/embedTime.Seconds(), agreement,
		(tf / time.Duration(len(qv))).Round(time.Microsecond), (ti / time.Duration(len(qv))).Round(time.Microsecond))
	if agreement < 0.9 {
		t.Errorf("int8 agreement %.3f below 0.9", agreement)
	}
}

// mixedNoteTexts is n note-like texts: each two thirds of one corpus note's
// words and a third of another's, shuffled.
func mixedNoteTexts(t *testing.T, r *rand.Rand, n int) []string {
	t.Helper()
	notes, err := Corpus()
	if err != nil {
		t.Fatal(err)
	}
	noteWords := make([][]string, len(notes))
	for i, note := range notes {
		noteWords[i] = strings.Fields(note.Item.RenderText())
	}
	texts := make([]string, n)
	for i := range texts {
		a, b := noteWords[r.IntN(len(noteWords))], noteWords[r.IntN(len(noteWords))]
		mixed := append(slices.Clone(a[:max(1, len(a)*2/3)]), b[:max(1, len(b)/3)]...)
		r.Shuffle(len(mixed), func(x, y int) { mixed[x], mixed[y] = mixed[y], mixed[x] })
		texts[i] = strings.Join(mixed, " ")
	}
	return texts
}
