package retrieval

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"flag"
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
	"testing"

	"mnemo/bench/corpus"
)

var updateEmbedGolden = flag.Bool("update-embed", false, "rewrite testdata/embed_golden.txt from the current embedders")

// embedGoldenTexts are the bench corpus's texts and the edge cases of
// tokenizing: no words, stop words alone, apostrophes, case folding beyond
// ASCII, digits, and a text past the learned model's MaxTokens.
func embedGoldenTexts() []string {
	var texts []string
	corpus.Each(600, 7, func(_ int, e corpus.Entry) bool {
		texts = append(texts, e.Item.RenderText())
		return true
	})
	long := strings.Repeat("Rotating the billing-db credentials weekly keeps PgBouncer's pool of 39 honest. ", 200)
	return append(texts, "", "   ", "the who", "what is it", "Don't stop: it's o'clock, ’quoted’ words",
		"naïve CAFÉ über STRASSE straße ΑΘΗΝΑ Κόσμε", "v1.2.3 returned 404 at 10:42 on host-7", "🙂 emoji 🙂 only", long,
		"tabs tabs tabs tabs", "a b c d e f g", "ab", "running runner runs ran")
}

func vectorDigest(v []float32) string {
	h := sha256.New()
	var b [4]byte
	for _, x := range v {
		binary.LittleEndian.PutUint32(b[:], math.Float32bits(x))
		h.Write(b[:])
	}
	return hex.EncodeToString(h.Sum(nil)[:12])
}

// TestEmbeddingsKeepTheirBits: the embedders give every text the vector, to
// the bit, that testdata/embed_golden.txt recorded. Stored vectors carry
// only their model's id, and a record holding a vector of the model in use
// is not embedded again, so a change to how a vector is computed that
// changes any bit needs a new model id, not just new code.
func TestEmbeddingsKeepTheirBits(t *testing.T) {
	ctx := context.Background()
	texts := embedGoldenTexts()
	m, err := Learn(ctx, texts, 3, DefaultLearnConfig())
	if err != nil {
		t.Fatal(err)
	}
	learned := NewLearnedEmbedder(DefaultLearnConfig())
	if err := learned.Use(m); err != nil {
		t.Fatal(err)
	}
	hashed, err := NewHashEmbedder().Embed(ctx, texts)
	if err != nil {
		t.Fatal(err)
	}
	lv, err := learned.Embed(ctx, texts)
	if err != nil {
		t.Fatal(err)
	}
	// The words' facts an embedder keeps from call to call change nothing:
	// the texts again, in other calls and another order, give the same bits.
	for lo := len(texts); lo > 0; lo -= 100 {
		part := slices.Clone(texts[max(lo-100, 0):lo])
		slices.Reverse(part)
		again, err := learned.Embed(ctx, part)
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range again {
			i := lo - 1 - k
			if !slices.Equal(v, lv[i]) {
				t.Fatalf("text %d embedded again in another call differs: %q", i, texts[i])
			}
		}
	}
	var got strings.Builder
	fmt.Fprintf(&got, "model %s\n", m.ID())
	for i, text := range texts {
		q, err := learned.EmbedQuery(ctx, text)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&got, "%d %s %s %s\n", i, vectorDigest(hashed[i]), vectorDigest(lv[i]), vectorDigest(q))
	}
	const path = "testdata/embed_golden.txt"
	if *updateEmbedGolden {
		if err := os.WriteFile(path, []byte(got.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	g, w := strings.Split(got.String(), "\n"), strings.Split(string(want), "\n")
	if len(g) != len(w) {
		t.Fatalf("%d lines, the golden has %d", len(g), len(w))
	}
	bad := 0
	for i := range g {
		if g[i] != w[i] {
			if bad++; bad <= 5 {
				t.Errorf("line %d: %q, want %q (text %q)", i, g[i], w[i], texts[max(i-1, 0)])
			}
		}
	}
	if bad > 0 {
		t.Fatalf("%d of %d lines differ", bad, len(g))
	}
}
