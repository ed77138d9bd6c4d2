package retrieval

import (
	"context"
	"math"
	"testing"
)

func cosine(a, b []float32) float64 {
	var d, na, nb float64
	for i := range a {
		d += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return d / math.Sqrt(na*nb)
}

func embed(t *testing.T, e Embedder, texts ...string) [][]float32 {
	t.Helper()
	vs, err := e.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) != len(texts) {
		t.Fatalf("got %d vectors for %d texts", len(vs), len(texts))
	}
	return vs
}

func TestHashEmbedderIsDeterministicUnitLength(t *testing.T) {
	e := NewHashEmbedder()
	if e.Model() != HashModelID {
		t.Errorf("model = %q, want %q", e.Model(), HashModelID)
	}
	text := "The Raft leader sends heartbeats to every follower; followers that miss them start an election."
	a := embed(t, e, text, text)
	b := embed(t, NewHashEmbedder(), text)
	for i := range a[0] {
		if a[0][i] != a[1][i] || a[0][i] != b[0][i] {
			t.Fatalf("component %d differs between runs: %v %v %v", i, a[0][i], a[1][i], b[0][i])
		}
	}
	if len(a[0]) != e.Dim() {
		t.Errorf("len = %d, want Dim %d", len(a[0]), e.Dim())
	}
	if n := cosine(a[0], a[0]); math.Abs(n-1) > 1e-5 {
		t.Errorf("self cosine = %v, want 1", n)
	}
}

func TestHashEmbedderEmptyTextIsZero(t *testing.T) {
	v := embed(t, NewHashEmbedder(), "", " ... ")
	for _, vec := range v {
		for _, x := range vec {
			if x != 0 {
				t.Fatalf("text without words gave a non-zero vector")
			}
		}
	}
}

func TestHashEmbedderRanksRelatedTextsCloser(t *testing.T) {
	e := NewHashEmbedder()
	cases := []struct{ query, related, unrelated string }{
		{"caching database queries", "We cache the results of expensive queries in Redis.", "Knead the dough for ten minutes, then let it rise."},
		{"bread dough rising", "Let the dough rise until it doubles, about an hour.", "The compiler inlines small functions automatically."},
		{"kubernetes pod restarts", "The pod kept restarting because the liveness probe failed.", "Book the train tickets to Lisbon a month ahead."},
	}
	for _, c := range cases {
		v := embed(t, e, c.query, c.related, c.unrelated)
		rel, unrel := cosine(v[0], v[1]), cosine(v[0], v[2])
		if rel <= unrel {
			t.Errorf("%q: related %.3f <= unrelated %.3f", c.query, rel, unrel)
		}
	}
}

func TestHashEmbedderConfigChangesModelID(t *testing.T) {
	cfg := DefaultHashConfig()
	cfg.Dim = 384
	e := NewHashEmbedderWith(cfg)
	if e.Model() == HashModelID || e.Dim() != 384 {
		t.Errorf("custom config: model %q dim %d, want a distinct model id and dim 384", e.Model(), e.Dim())
	}
	if NewHashEmbedderWith(DefaultHashConfig()).Model() != HashModelID {
		t.Errorf("default config must keep the plain model id")
	}
}

func TestHashEmbedderHonoursCancellation(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := NewHashEmbedder().Embed(ctx, []string{"a text"}); err == nil {
		t.Errorf("Embed on a cancelled context succeeded")
	}
}

// A query of function words only must still find the texts that contain them.
func TestHashEmbedderStopWordOnlyTextStillEmbeds(t *testing.T) {
	e := NewHashEmbedder()
	vs, err := e.Embed(context.Background(), []string{"because", "We moved the job because the disk filled up.", "Tabs over spaces."})
	if err != nil {
		t.Fatal(err)
	}
	var norm float64
	for _, x := range vs[0] {
		norm += float64(x) * float64(x)
	}
	if norm < 0.99 {
		t.Fatalf("a stop-word-only text embedded to a vector of norm %v", norm)
	}
	dot := func(a, b []float32) (s float64) {
		for i := range a {
			s += float64(a[i]) * float64(b[i])
		}
		return s
	}
	if with, without := dot(vs[0], vs[1]), dot(vs[0], vs[2]); with <= without {
		t.Fatalf("\"because\" is no closer to a text holding it (%v) than to one without (%v)", with, without)
	}
}
