package retrieval

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"

	"mnemo/contract"
)

// LearnedModelPrefix starts the model id of the learned embedder; the id
// goes on with the generation and a digest of the model
// ("mnemo-ri-v2-g3-1a2b3c4d"), and is "mnemo-ri-v2-g0" before anything was
// learned (then the vectors are the hashed embedder's). v2 weights the
// hashed part by the model's idf (LearnConfig.HashIDF); v1 did not, and a
// store with v1 vectors re-embeds them.
const LearnedModelPrefix = "mnemo-ri-v2"

// LearnConfig tunes the learned embedder. Start from DefaultLearnConfig.
type LearnConfig struct {
	// Dim is the length of the learned part, added to the hashed part's.
	Dim int
	// Weight is the learned part's length against the hashed part's (both
	// unit before the concatenation).
	Weight float64
	// IndexWeight adds each word's own random index vector to its context
	// vector when a text is embedded.
	IndexWeight float64
	// MaxDocs bounds the texts one generation learns from (a deterministic
	// sample by the text's hash beyond it), MaxVocab the words that get a
	// context vector (the most frequent, with at least MinDF documents),
	// MaxTokens the words read from one text.
	MaxDocs, MaxVocab, MinDF, MaxTokens int
	// Stem applies the hashed embedder's light stemming to words.
	Stem bool
	// QueryDims keeps only that many of a query's learned dimensions (the
	// largest; 0 keeps all): an exact int8 scan costs one pass per non-zero
	// query dimension, and a learned part is dense. Stored vectors keep all,
	// so it is not part of the model.
	QueryDims int
	// HashIDF weights the hashed part's features of each word (its word,
	// its bigrams and its character n-grams) by the word's idf in the model
	// to this power (0: unweighted, as the hashed embedder). The hashed
	// embedder alone knows no document frequencies; with a model the
	// store's own rare words count for more in both parts.
	HashIDF float64
}

// DefaultLearnConfig is what engine/bolt learns with, chosen on the
// evaluation sets in engine/retrieval/eval.
func DefaultLearnConfig() LearnConfig {
	return LearnConfig{Dim: 256, Weight: 0.75, IndexWeight: 1, MaxDocs: 50000, MaxVocab: 50000, MinDF: 1, MaxTokens: 1000, Stem: true, QueryDims: 64, HashIDF: 0.25}
}

// riNonZero is how many signed positions a word's random index vector has.
const riNonZero = 8

// LearnedModel is one generation of vectors learned from a store's text by
// random indexing: every word has a fixed sparse random index vector (from
// its hash, the same in every generation), and a word's context vector is
// the idf-weighted sum of the index vectors of the words it shares texts
// with. Because the index vectors never change, vectors of different
// generations live in the same space and stay roughly comparable while a
// store is re-embedded. A model is immutable.
type LearnedModel struct {
	cfg        LearnConfig
	generation uint64
	docs       int // texts learned from
	words      map[string]int32
	idf        []float32
	rows       []int8    // len(words) x cfg.Dim, the context vectors
	scales     []float32 // per row: value = int8 x scale
	hashW      []float64 // per row: the word's weight in the hashed part (HashIDF)
	hashOOV    float64   // the hashed weight of a word without a row
	id         string
}

// Generation is the model's generation (1 for the first learned).
func (m *LearnedModel) Generation() uint64 { return m.generation }

// Docs is how many texts the model learned from.
func (m *LearnedModel) Docs() int { return m.docs }

// Vocabulary is how many words have a context vector.
func (m *LearnedModel) Vocabulary() int { return len(m.idf) }

// ID is the model id vectors embedded with it carry.
func (m *LearnedModel) ID() string { return m.id }

// Bytes is the model's size in memory, roughly.
func (m *LearnedModel) Bytes() int { return len(m.rows) + 8*len(m.idf) + 48*len(m.words) }

// learnTokens are the words of text the learned model counts: content words
// of three or more characters, stemmed if configured, at most max.
func learnTokens(text string, stemmed bool, max int) []string {
	ws := words(text)
	out := ws[:0]
	for _, w := range ws {
		t, ok := learnTerm(w, stemmed)
		if !ok {
			continue
		}
		out = append(out, t)
		if len(out) == max {
			break
		}
	}
	return out
}

// learnTerm is word w as the learned model counts it, false when it counts
// it not (shorter than three bytes, or a stop word).
func learnTerm(w string, stemmed bool) (string, bool) {
	if len(w) < 3 || isStopWord(w) {
		return "", false
	}
	if stemmed {
		w = stem(w)
	}
	return w, true
}

// riIndex is a word's random index vector: riNonZero positions of dim with
// signs, from the word's hash.
func riIndex(w string, dim int) (idx [riNonZero]int32, neg [riNonZero]bool) {
	x := featureHash('r', w, "")
	for i := range idx {
		x = mix64(x + uint64(i) + 1)
		idx[i] = int32(x % uint64(dim))
		neg[i] = x>>40&1 == 1
	}
	return idx, neg
}

// Learn learns generation gen from texts. The same texts (in any order)
// give the same model: beyond cfg.MaxDocs a sample is kept by the texts'
// sampling keys (sampleKey), and the sums run in the texts' hash order. It costs
// O(docs x distinct words x Dim) time and MaxVocab x Dim x 4 bytes while
// learning (a quarter of that after).
func Learn(ctx context.Context, texts []string, gen uint64, cfg LearnConfig) (*LearnedModel, error) {
	if cfg.Dim <= 0 || cfg.MaxVocab <= 0 {
		return nil, errors.New("learned embedder: Dim and MaxVocab must be positive")
	}
	type doc struct {
		h    uint64
		text string
	}
	docs := make([]doc, 0, len(texts))
	for _, t := range texts {
		docs = append(docs, doc{featureHash('d', t, ""), t})
	}
	byHash := func(a, b doc) int {
		if c := cmp.Compare(a.h, b.h); c != 0 {
			return c
		}
		return strings.Compare(a.text, b.text)
	}
	if cfg.MaxDocs > 0 && len(docs) > cfg.MaxDocs {
		// The lowest sampling keys are a uniform sample of the texts,
		// copies included (LearnSample keeps the same ones from a stream).
		var s sampleCopies
		keyed := make([]sampled, len(docs))
		for i, d := range docs {
			keyed[i] = sampled{s.key(d.h), d.text}
		}
		slices.SortFunc(keyed, func(a, b sampled) int {
			if a.less(b) {
				return -1
			}
			if b.less(a) {
				return 1
			}
			return 0
		})
		docs = docs[:cfg.MaxDocs]
		for i, k := range keyed[:cfg.MaxDocs] {
			docs[i] = doc{featureHash('d', k.text, ""), k.text}
		}
	}
	slices.SortFunc(docs, byHash)
	// Pass 1: document frequencies.
	df := map[string]int32{}
	toks := make([][]string, len(docs))
	for i, d := range docs {
		if i%256 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, contract.Unavailable("learning cancelled: %w", err)
			}
		}
		ts := learnTokens(d.text, cfg.Stem, cfg.MaxTokens)
		slices.Sort(ts)
		ts = slices.Compact(ts)
		toks[i] = ts
		for _, w := range ts {
			df[w]++
		}
	}
	n := float64(len(docs))
	idfOf := func(d int32) float32 { return float32(math.Log(1 + n/float64(d))) }
	vocab := make([]string, 0, len(df))
	for w, d := range df {
		if int(d) >= cfg.MinDF {
			vocab = append(vocab, w)
		}
	}
	slices.SortFunc(vocab, func(a, b string) int {
		if c := cmp.Compare(df[b], df[a]); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	vocab = vocab[:min(len(vocab), cfg.MaxVocab)]
	slices.Sort(vocab)
	m := &LearnedModel{cfg: cfg, generation: gen, docs: len(docs), words: make(map[string]int32, len(vocab)), idf: make([]float32, len(vocab))}
	for i, w := range vocab {
		m.words[w] = int32(i)
		m.idf[i] = idfOf(df[w])
	}
	// Pass 2: every vocabulary word of a text gets the text's sum of index
	// vectors (its own left out).
	dim := cfg.Dim
	acc := make([]float32, len(vocab)*dim)
	sum := make([]float32, dim)
	for i, ts := range toks {
		if i%256 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, contract.Unavailable("learning cancelled: %w", err)
			}
		}
		clear(sum)
		for _, w := range ts {
			wt := idfOf(df[w])
			idx, neg := riIndex(w, dim)
			for k, at := range idx {
				if neg[k] {
					sum[at] -= wt
				} else {
					sum[at] += wt
				}
			}
		}
		for _, w := range ts {
			r, ok := m.words[w]
			if !ok {
				continue
			}
			row := acc[int(r)*dim : int(r+1)*dim]
			for j, v := range sum {
				row[j] += v
			}
			wt := m.idf[r]
			idx, neg := riIndex(w, dim)
			for k, at := range idx {
				if neg[k] {
					row[at] += wt
				} else {
					row[at] -= wt
				}
			}
		}
		toks[i] = nil
	}
	m.rows = make([]int8, len(acc))
	m.scales = make([]float32, len(vocab))
	for r := range vocab {
		row := acc[r*dim : (r+1)*dim]
		var maxAbs float32
		for _, v := range row {
			maxAbs = max(maxAbs, float32(math.Abs(float64(v))))
		}
		if maxAbs == 0 {
			continue
		}
		q := m.rows[r*dim : (r+1)*dim]
		var norm float64
		for j, v := range row {
			x := int8(math.Round(float64(v / maxAbs * 127)))
			q[j] = x
			norm += float64(x) * float64(x)
		}
		m.scales[r] = float32(1 / math.Sqrt(norm))
	}
	m.setHashWeights()
	m.id = m.digestID()
	return m, nil
}

// digestID is the model id: the generation, then a digest of everything
// but the generation (the same text learns the same digest in any
// generation).
func (m *LearnedModel) digestID() string {
	c := *m
	c.generation = 0
	b, _ := c.MarshalBinary()
	sum := sha256.Sum256(b)
	return LearnedModelPrefix + "-g" + strconv.FormatUint(m.generation, 10) + "-" + hex.EncodeToString(sum[:4])
}

// learnedFormat 2 adds HashIDF; a stored format 1 model (mnemo-ri-v1) is
// not read, so the store learns a v2 generation and re-embeds.
const learnedFormat = 2

// ErrOldLearnedModel is UnmarshalLearnedModel's error for a model of an
// earlier format: not damaged, only superseded (learn it again).
var ErrOldLearnedModel = errors.New("learned embedder: the stored model is of an earlier version")

// MarshalBinary encodes the model for storage (UnmarshalLearnedModel reads
// it back): the configuration, the generation, then per word (sorted) the
// word, its idf and its context vector as int8 with a scale.
func (m *LearnedModel) MarshalBinary() ([]byte, error) {
	c := m.cfg
	b := make([]byte, 0, 64+len(m.rows)+len(m.idf)*24)
	b = binary.AppendUvarint(b, learnedFormat)
	for _, v := range []int{c.Dim, c.MaxDocs, c.MaxVocab, c.MinDF, c.MaxTokens} {
		b = binary.AppendUvarint(b, uint64(v))
	}
	b = binary.LittleEndian.AppendUint64(b, math.Float64bits(c.Weight))
	b = binary.LittleEndian.AppendUint64(b, math.Float64bits(c.IndexWeight))
	b = binary.LittleEndian.AppendUint64(b, math.Float64bits(c.HashIDF))
	if c.Stem {
		b = append(b, 1)
	} else {
		b = append(b, 0)
	}
	b = binary.AppendUvarint(b, m.generation)
	b = binary.AppendUvarint(b, uint64(m.docs))
	b = binary.AppendUvarint(b, uint64(len(m.idf)))
	order := make([]string, len(m.idf))
	for w, r := range m.words {
		order[r] = w
	}
	for r, w := range order {
		b = binary.AppendUvarint(b, uint64(len(w)))
		b = append(b, w...)
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(m.idf[r]))
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(m.scales[r]))
		for _, x := range m.rows[r*c.Dim : (r+1)*c.Dim] {
			b = append(b, byte(x))
		}
	}
	return b, nil
}

// UnmarshalLearnedModel decodes what MarshalBinary wrote.
func UnmarshalLearnedModel(b []byte) (*LearnedModel, error) {
	bad := errors.New("learned embedder: damaged model")
	uv := func() uint64 {
		v, n := binary.Uvarint(b)
		if n <= 0 {
			b = nil
			return 0
		}
		b = b[n:]
		return v
	}
	f64 := func() float64 {
		if len(b) < 8 {
			b = nil
			return 0
		}
		v := math.Float64frombits(binary.LittleEndian.Uint64(b))
		b = b[8:]
		return v
	}
	switch v := uv(); {
	case v > 0 && v < learnedFormat:
		return nil, ErrOldLearnedModel
	case v != learnedFormat:
		return nil, fmt.Errorf("learned embedder: unknown model format")
	}
	var c LearnConfig
	for _, p := range []*int{&c.Dim, &c.MaxDocs, &c.MaxVocab, &c.MinDF, &c.MaxTokens} {
		*p = int(uv())
	}
	c.Weight, c.IndexWeight, c.HashIDF = f64(), f64(), f64()
	if len(b) < 1 {
		return nil, bad
	}
	c.Stem = b[0] == 1
	b = b[1:]
	m := &LearnedModel{cfg: c, generation: uv(), docs: int(uv())}
	nw := int(uv())
	if b == nil || c.Dim <= 0 || nw > len(b)/(c.Dim+9) {
		return nil, bad
	}
	m.words = make(map[string]int32, nw)
	m.idf, m.scales, m.rows = make([]float32, nw), make([]float32, nw), make([]int8, nw*c.Dim)
	for r := 0; r < nw; r++ {
		l := int(uv())
		if b == nil || len(b) < l+8+c.Dim {
			return nil, bad
		}
		m.words[string(b[:l])] = int32(r)
		b = b[l:]
		m.idf[r] = math.Float32frombits(binary.LittleEndian.Uint32(b))
		m.scales[r] = math.Float32frombits(binary.LittleEndian.Uint32(b[4:]))
		b = b[8:]
		for j := 0; j < c.Dim; j++ {
			m.rows[r*c.Dim+j] = int8(b[j])
		}
		b = b[c.Dim:]
	}
	if len(b) != 0 {
		return nil, bad
	}
	m.setHashWeights()
	m.id = m.digestID()
	return m, nil
}

// embedTerms adds the learned part of a text's vector to out (length
// cfg.Dim), unit length or zero: ids are the text's words, the indexes of
// their facts in mm (wordsOf), whose model is m. Its first MaxTokens terms
// count, each once with the log of its count, in the terms' order (the
// sums' order is part of the vector's bits).
func (m *LearnedModel) embedTerms(mm *wordMemo, ids []int32, out []float64) {
	clear(out)
	distinct := make([]int32, 0, len(ids))
	n := 0
	for _, id := range ids {
		t := mm.facts[id].learn
		if t < 0 {
			continue
		}
		if tf := &mm.terms[t]; tf.seenIn != mm.text {
			tf.seenIn, tf.count = mm.text, 0
			distinct = append(distinct, t)
		}
		mm.terms[t].count++
		if n++; n == m.cfg.MaxTokens {
			break
		}
	}
	slices.SortFunc(distinct, func(a, b int32) int { return strings.Compare(mm.terms[a].term, mm.terms[b].term) })
	dim := m.cfg.Dim
	gamma := m.cfg.IndexWeight / math.Sqrt(riNonZero)
	for _, t := range distinct {
		tf := &mm.terms[t]
		r := tf.row
		if r < 0 {
			continue
		}
		wt := (1 + math.Log(float64(tf.count))) * float64(m.idf[r])
		s := wt * float64(m.scales[r])
		for k, x := range m.rows[int(r)*dim : int(r+1)*dim] {
			out[k] += float64(s * float64(x))
		}
		if gamma > 0 {
			if !tf.hasRI {
				tf.ri, tf.riNeg = riIndex(tf.term, dim)
				tf.hasRI = true
			}
			g := float64(wt * gamma)
			for k, at := range tf.ri {
				if tf.riNeg[k] {
					out[at] -= g
				} else {
					out[at] += g
				}
			}
		}
	}
	if n := l2(out); n > 0 {
		for k := range out {
			out[k] /= n
		}
	}
}

// LearnedEmbedder is the hashed n-gram embedder with a learned part
// appended: its vectors are the hashed vector (unit) followed by the current
// model's vector (unit, times the model's Weight), normalised. Its model id
// names the generation; before the first generation the learned part is
// zero, so the vectors rank as the hashed embedder's. Use swaps the model:
// the owner re-embeds what it stored when Model changes.
type LearnedEmbedder struct {
	base  *hashEmbedder
	memos memoPool
	cfg   LearnConfig
	cur   atomic.Pointer[LearnedModel]
}

// NewLearnedEmbedder returns a learned embedder with no model yet.
func NewLearnedEmbedder(cfg LearnConfig) *LearnedEmbedder {
	return &LearnedEmbedder{base: NewHashEmbedder().(*hashEmbedder), cfg: cfg}
}

// Config is the configuration new generations learn with.
func (e *LearnedEmbedder) Config() LearnConfig { return e.cfg }

// Current is the model in use (nil before the first).
func (e *LearnedEmbedder) Current() *LearnedModel { return e.cur.Load() }

// Use makes m the model in use (nil: none). Its dimensions must be the
// configuration's.
func (e *LearnedEmbedder) Use(m *LearnedModel) error {
	if m != nil && m.cfg.Dim != e.cfg.Dim {
		return fmt.Errorf("learned embedder: the model has %d dimensions, the embedder %d", m.cfg.Dim, e.cfg.Dim)
	}
	e.cur.Store(m)
	return nil
}

func (e *LearnedEmbedder) Model() string {
	if m := e.cur.Load(); m != nil {
		return m.id
	}
	return LearnedModelPrefix + "-g0"
}

func (e *LearnedEmbedder) Dim() int { return e.base.Dim() + e.cfg.Dim }

func (e *LearnedEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	return e.embed(ctx, texts, 0)
}

// EmbedQuery embeds a search query: Embed, keeping only the configured
// QueryDims largest learned dimensions. Its cosine with a stored vector
// approximates the full query's, and an exact scan over int8 vectors costs
// in proportion to the query's non-zero dimensions.
func (e *LearnedEmbedder) EmbedQuery(ctx context.Context, query string) ([]float32, error) {
	vs, err := e.embed(ctx, []string{query}, e.cfg.QueryDims)
	if err != nil {
		return nil, err
	}
	return vs[0], nil
}

// QueryEmbedder is an Embedder with its own embedding for search queries.
type QueryEmbedder interface {
	Embedder
	EmbedQuery(ctx context.Context, query string) ([]float32, error)
}

func (e *LearnedEmbedder) embed(ctx context.Context, texts []string, keep int) ([][]float32, error) {
	m := e.cur.Load()
	var weight func(string) float64
	if m != nil && m.cfg.HashIDF > 0 {
		weight = m.hashWeight
	}
	// Each text is tokenized once for both parts, and each distinct word
	// of the call looked up once (wordMemo).
	scratch := newHashScratch(e.base.cfg.Dim, e.memos.get(weight, m))
	defer e.memos.put(scratch.memo)
	out := make([][]float32, len(texts))
	learned := make([]float64, e.cfg.Dim)
	for i, t := range texts {
		if i%64 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, contract.Unavailable("embedding cancelled: %w", err)
			}
		}
		ids := scratch.memo.wordsOf(t, e.base)
		hashed := e.base.embedWords(ids, scratch)
		v := make([]float32, e.Dim())
		copy(v, hashed)
		if m != nil {
			m.embedTerms(scratch.memo, ids, learned)
			if keep > 0 && keep < len(learned) {
				sparsify(learned, keep)
			}
			var norm float64 = 1
			for _, x := range learned {
				norm += float64(x*m.cfg.Weight) * float64(x*m.cfg.Weight)
			}
			if l2f(hashed) == 0 {
				norm--
			}
			if norm > 0 {
				scale := 1 / math.Sqrt(norm)
				for k := range v[:e.base.Dim()] {
					v[k] = float32(float64(v[k]) * scale)
				}
				for k, x := range learned {
					v[e.base.Dim()+k] = float32(float64(x*m.cfg.Weight) * scale)
				}
			}
		}
		out[i] = v
	}
	return out, nil
}

func l2f(v []float32) float64 {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	return math.Sqrt(s)
}

// LearnSample keeps the texts Learn would sample from a stream too large to
// hold: the max texts with the lowest sampling keys (all of them up to max),
// so feeding it every text of a store and learning from Texts gives the model
// Learn gives from all the texts at once.
type LearnSample struct {
	max    int
	heap   []sampled // a max-heap on (key, text)
	copies sampleCopies
}

// sampleCopies gives each text its sampling key: its hash for its first
// copy, and for its k-th copy a hash of (hash, k). A sample by lowest key
// then keeps the copies of a repeated text in proportion to how often it is
// repeated, whatever order the texts come in. Keyed by its hash alone, a
// text was kept with all its copies or not at all: past MaxDocs, a line of
// small talk said a thousand times ("Same here, honestly.") was often left
// out whole, its words were missing from the model, and a missing word
// counts as the rarest (Specificity), so small talk ranked with the turns
// that name a place or a pet.
type sampleCopies struct {
	seen map[uint64]uint32
}

// key is the sampling key of the next copy of the text of hash h.
func (s *sampleCopies) key(h uint64) uint64 {
	if s.seen == nil {
		s.seen = map[uint64]uint32{}
	}
	k := s.seen[h]
	s.seen[h] = k + 1
	if k == 0 {
		return h
	}
	return mix64(h ^ mix64(uint64(k)))
}

type sampled struct {
	h    uint64
	text string
}

func (a sampled) less(b sampled) bool {
	return a.h < b.h || a.h == b.h && a.text < b.text
}

// NewLearnSample keeps at most max texts (all of them when max <= 0).
func NewLearnSample(max int) *LearnSample { return &LearnSample{max: max} }

// Add offers a text; it is copied only when kept.
func (s *LearnSample) Add(text string) {
	x := sampled{s.copies.key(featureHash('d', text, "")), text}
	if s.max > 0 && len(s.heap) >= s.max {
		if !x.less(s.heap[0]) {
			return
		}
		x.text = strings.Clone(text)
		s.heap[0] = x
		s.down(0)
		return
	}
	x.text = strings.Clone(text)
	s.heap = append(s.heap, x)
	for i := len(s.heap) - 1; i > 0; {
		p := (i - 1) / 2
		if !s.heap[p].less(s.heap[i]) {
			break
		}
		s.heap[p], s.heap[i] = s.heap[i], s.heap[p]
		i = p
	}
}

func (s *LearnSample) down(i int) {
	for {
		big := i
		for _, c := range []int{2*i + 1, 2*i + 2} {
			if c < len(s.heap) && s.heap[big].less(s.heap[c]) {
				big = c
			}
		}
		if big == i {
			return
		}
		s.heap[big], s.heap[i] = s.heap[i], s.heap[big]
		i = big
	}
}

// Len is how many texts are kept.
func (s *LearnSample) Len() int { return len(s.heap) }

// Texts returns the kept texts.
func (s *LearnSample) Texts() []string {
	out := make([]string, len(s.heap))
	for i, x := range s.heap {
		out[i] = x.text
	}
	return out
}

// sparsify zeroes all but the keep largest magnitudes of v (ties to the
// lower index) and makes it unit length again.
func sparsify(v []float64, keep int) {
	order := make([]int, len(v))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int {
		if c := cmp.Compare(math.Abs(v[b]), math.Abs(v[a])); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	for _, i := range order[keep:] {
		v[i] = 0
	}
	if n := l2(v); n > 0 {
		for i := range v {
			v[i] /= n
		}
	}
}

// setHashWeights computes the words' weights in the hashed part: idf^HashIDF,
// a word without a row counting as the rarest.
func (m *LearnedModel) setHashWeights() {
	if m.cfg.HashIDF == 0 {
		return
	}
	m.hashW = make([]float64, len(m.idf))
	for r, idf := range m.idf {
		m.hashW[r] = math.Pow(float64(idf), m.cfg.HashIDF)
	}
	m.hashOOV = math.Pow(math.Log(1+float64(max(m.docs, 1))), m.cfg.HashIDF)
}

// Specificity is how rare the rarest word of text is in the model: its idf
// over the idf of a word in one learned text, in [0, 1]. A word the model
// lacks counts as rarest. Small talk ("Same here, honestly.") is made of
// words many texts share and scores low; a turn naming a place, a pet or a
// book scores near 1. A text without words scores 0.
func (m *LearnedModel) Specificity(text string) float64 {
	top := math.Log(1 + float64(max(m.docs, 1)))
	best := 0.0
	for _, w := range learnTokens(text, m.cfg.Stem, m.cfg.MaxTokens) {
		v := top
		if r, ok := m.words[w]; ok {
			v = float64(m.idf[r])
		}
		best = max(best, v)
	}
	return min(1, best/top)
}

// DocShare is the share of the learned texts that hold the most common word
// of text (from its idf), false when a word of text is not in the model's
// vocabulary (the store does not hold it among its MaxVocab most common
// words) or text has no word.
func (m *LearnedModel) DocShare(text string) (float64, bool) {
	ws := learnTokens(text, m.cfg.Stem, m.cfg.MaxTokens)
	share := 0.0
	for _, w := range ws {
		r, ok := m.words[w]
		if !ok {
			return 0, false
		}
		// idf = ln(1 + n/df), so df/n = 1 / (e^idf - 1).
		share = max(share, 1/math.Expm1(float64(m.idf[r])))
	}
	return share, len(ws) > 0
}

// hashWeight is a word's weight in the hashed part.
func (m *LearnedModel) hashWeight(w string) float64 {
	if r, ok := m.words[w]; ok {
		return m.hashW[r]
	}
	return m.hashOOV
}
