package retrieval

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"slices"

	"mnemo/contract"
)

// Embedder turns texts into vectors. Model names the embedding space: vectors
// from different models are not comparable, so engines tag stored vectors with
// it and re-embed when it changes.
type Embedder interface {
	// Model is the embedding model id.
	Model() string
	// Dim is the length of every vector Embed returns.
	Dim() int
	// Embed returns one vector per text, in order.
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// HashModelID is the model id of the default hashed n-gram embedder.
const HashModelID = "mnemo-hash-ngram-v3"

// HashConfig tunes the hashed n-gram embedder. The zero value is not useful;
// start from DefaultHashConfig.
type HashConfig struct {
	// Dim is the vector length (number of hash buckets).
	Dim int
	// WordWeight, BigramWeight and CharWeight mix the three feature families.
	// Each family is normalised on its own first, so the weights are their
	// shares of the final vector whatever the text's length.
	WordWeight, BigramWeight, CharWeight float64
	// CharMin and CharMax bound the character n-gram sizes (of " word ").
	CharMin, CharMax int
	// Stem applies light English suffix stripping to word features.
	Stem bool
	// KeepStopWords keeps function words as features.
	KeepStopWords bool
}

// DefaultHashConfig is the configuration NewHashEmbedder uses, tuned on the
// evaluation set in engine/retrieval/eval.
func DefaultHashConfig() HashConfig {
	return HashConfig{
		Dim:          512,
		WordWeight:   1.0,
		BigramWeight: 0.3,
		CharWeight:   1.5,
		CharMin:      3,
		CharMax:      4,
		Stem:         true,
	}
}

// hashEmbedder is a deterministic feature-hashing embedder: no model file, no
// network, the same vector for the same text on every run. Products are
// converted explicitly before they are summed so that no platform fuses them
// into multiply-adds, which would round differently.
type hashEmbedder struct {
	cfg   HashConfig
	model string
	memos memoPool
}

// NewHashEmbedder returns the built-in offline embedder (model
// "mnemo-hash-ngram-v3"): word unigrams and bigrams of content words plus
// character 3- and 4-grams, sublinear term weights, signed feature hashing,
// unit length.
func NewHashEmbedder() Embedder { return NewHashEmbedderWith(DefaultHashConfig()) }

// NewHashEmbedderWith returns a hashed n-gram embedder with a custom
// configuration. Its model id is HashModelID followed by a digest of the
// configuration, so vectors of different configurations are never mixed; the
// default configuration keeps the plain id.
func NewHashEmbedderWith(cfg HashConfig) Embedder {
	if cfg.Dim <= 0 {
		cfg.Dim = DefaultHashConfig().Dim
	}
	if cfg.CharMin <= 0 {
		cfg.CharMin = 3
	}
	if cfg.CharMax < cfg.CharMin {
		cfg.CharMax = cfg.CharMin
	}
	model := HashModelID
	if cfg != DefaultHashConfig() {
		sum := sha256.Sum256([]byte(fmt.Sprintf("%+v", cfg)))
		model = HashModelID + "-" + hex.EncodeToString(sum[:4])
	}
	return &hashEmbedder{cfg: cfg, model: model}
}

func (h *hashEmbedder) Model() string { return h.model }
func (h *hashEmbedder) Dim() int      { return h.cfg.Dim }

func (h *hashEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	scratch := newHashScratch(h.cfg.Dim, h.memos.get(nil, nil))
	defer h.memos.put(scratch.memo)
	for i, t := range texts {
		if i%64 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, contract.Unavailable("embedding cancelled: %w", err)
			}
		}
		out[i] = h.embedWords(scratch.memo.wordsOf(t, h), scratch)
	}
	return out, nil
}

// hashScratch holds the per-call buffers of one Embed call, and the facts
// of the words it has met.
type hashScratch struct {
	counts [3]*featureCounts
	part   []float64
	sum    []float64
	fixed  []int64
	memo   *wordMemo
}

func newHashScratch(dim int, memo *wordMemo) *hashScratch {
	s := &hashScratch{part: make([]float64, dim), sum: make([]float64, dim), fixed: make([]int64, dim), memo: memo}
	for i := range s.counts {
		s.counts[i] = newFeatureCounts()
	}
	return s
}

// featureCounts counts hashed features in an open-addressing table. The keys
// are already well-mixed hashes, so the table needs no hashing of its own and
// runs several times faster than a map; resetting touches only used slots.
type featureCounts struct {
	keys   []uint64 // 0 marks an empty slot
	counts []uint32
	wsum   []float64 // with weighted features: the sum of the weights
	used   []int32
}

func newFeatureCounts() *featureCounts {
	return &featureCounts{keys: make([]uint64, 1024), counts: make([]uint32, 1024), wsum: make([]float64, 1024)}
}

func (c *featureCounts) add(key uint64) { c.addW(key, 1) }

func (c *featureCounts) addW(key uint64, w float64) {
	if key == 0 {
		key = 1 // the empty marker; one feature in 2^64 shares a bucket with it
	}
	if 2*(len(c.used)+1) > len(c.keys) {
		c.grow()
	}
	mask := uint64(len(c.keys) - 1)
	for i := key & mask; ; i = (i + 1) & mask {
		switch c.keys[i] {
		case key:
			c.counts[i]++
			c.wsum[i] += w
			return
		case 0:
			c.keys[i] = key
			c.counts[i] = 1
			c.wsum[i] = w
			c.used = append(c.used, int32(i))
			return
		}
	}
}

func (c *featureCounts) grow() {
	keys, counts, wsum, used := c.keys, c.counts, c.wsum, c.used
	c.keys = make([]uint64, 2*len(keys))
	c.counts = make([]uint32, 2*len(keys))
	c.wsum = make([]float64, 2*len(keys))
	c.used = make([]int32, 0, 2*len(used))
	mask := uint64(len(c.keys) - 1)
	for _, at := range used {
		key := keys[at]
		i := key & mask
		for c.keys[i] != 0 {
			i = (i + 1) & mask
		}
		c.keys[i], c.counts[i], c.wsum[i] = key, counts[at], wsum[at]
		c.used = append(c.used, int32(i))
	}
}

func (c *featureCounts) reset() {
	for _, i := range c.used {
		c.keys[i] = 0
	}
	c.used = c.used[:0]
}

// sublinear is 1 + ln(n) for term counts, from a table for the common small
// counts: the tenth mention of a word adds little.
func sublinear(n uint32) float64 {
	if int(n) < len(sublinearTable) {
		return sublinearTable[n]
	}
	return 1 + math.Log(float64(n))
}

var sublinearTable = func() (t [64]float64) {
	for i := 1; i < len(t); i++ {
		t[i] = 1 + math.Log(float64(i))
	}
	return t
}()

// fixedOne is 1.0 in the fixed-point sums of embedWords (2^32: ample precision,
// and no overflow below two billion features in one bucket).
const fixedOne = 1 << 32

const (
	familyWord = iota
	familyBigram
	familyChar
)

// embedWords is the hashed vector of a text whose words are ids, the
// indexes of their facts in s.memo (wordsOf): each content word's stem and
// the bigrams of consecutive ones, and the character n-grams of each word,
// weighted by s.memo's weights (a feature counts sublinear(n) times the mean
// weight of its n occurrences).
func (h *hashEmbedder) embedWords(ids []int32, s *hashScratch) []float32 {
	for _, c := range s.counts {
		c.reset()
	}
	facts, weighted := s.memo.facts, s.memo.weight != nil
	prev, prevWt := "", 1.0
	// A text made only of function words ("because", "what is it") would
	// otherwise embed to nothing and match nothing; its stop words are then
	// all it has, so they count.
	dropStops := !h.cfg.KeepStopWords && slices.ContainsFunc(ids, func(id int32) bool { return !facts[id].stop })
	for _, id := range ids {
		f := &facts[id]
		if dropStops && f.stop {
			prev = ""
			continue
		}
		wt := f.weight
		s.counts[familyWord].addW(f.termKey, wt)
		if prev != "" && h.cfg.BigramWeight > 0 {
			s.counts[familyBigram].addW(featureHash('b', prev, f.term), math.Sqrt(wt*prevWt))
		}
		prev, prevWt = f.term, wt
		for _, g := range s.memo.grams[f.gramLo:f.gramHi] {
			s.counts[familyChar].addW(g, wt)
		}
	}
	clear(s.sum)
	weights := [3]float64{h.cfg.WordWeight, h.cfg.BigramWeight, h.cfg.CharWeight}
	for f, c := range s.counts {
		if weights[f] == 0 || len(c.used) == 0 {
			continue
		}
		// Sum in fixed point: integer addition does not depend on the order
		// features were first seen, so the same text gives the same bits
		// without sorting the features.
		clear(s.fixed)
		for _, at := range c.used {
			key := c.keys[at]
			v := sublinear(c.counts[at])
			if weighted {
				v *= c.wsum[at] / float64(c.counts[at])
			}
			q := int64(v * fixedOne)
			if key&1 == 1 {
				q = -q
			}
			s.fixed[int((key>>1)%uint64(len(s.fixed)))] += q
		}
		for i, q := range s.fixed {
			s.part[i] = float64(q) / fixedOne
		}
		norm := l2(s.part)
		if norm == 0 {
			continue
		}
		scale := weights[f] / norm
		for i, v := range s.part {
			s.sum[i] += float64(v * scale)
		}
	}
	out := make([]float32, len(s.sum))
	norm := l2(s.sum)
	if norm == 0 {
		return out
	}
	for i, v := range s.sum {
		out[i] = float32(v / norm)
	}
	return out
}

// appendCharGrams appends the features of the character n-grams of " w "
// (padded so that word starts and ends are features of their own), shortest
// first, left to right.
func (h *hashEmbedder) appendCharGrams(dst []uint64, w string, runes *[]rune) []uint64 {
	rs := append((*runes)[:0], ' ')
	for _, r := range w {
		rs = append(rs, r)
	}
	rs = append(rs, ' ')
	*runes = rs
	for n := h.cfg.CharMin; n <= h.cfg.CharMax; n++ {
		for i := 0; i+n <= len(rs); i++ {
			dst = append(dst, runeHash(byte('0'+n), rs[i:i+n]))
		}
	}
	return dst
}

const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

// featureHash is FNV-1a over a family tag and one or two strings, finished
// with a mixer so that both the bucket and the sign bit are well spread.
func featureHash(tag byte, a, b string) uint64 {
	h := uint64(fnvOffset)
	h = (h ^ uint64(tag)) * fnvPrime
	for i := 0; i < len(a); i++ {
		h = (h ^ uint64(a[i])) * fnvPrime
	}
	if b != "" {
		h = (h ^ 0) * fnvPrime
		for i := 0; i < len(b); i++ {
			h = (h ^ uint64(b[i])) * fnvPrime
		}
	}
	return mix64(h)
}

func runeHash(tag byte, rs []rune) uint64 {
	h := uint64(fnvOffset)
	h = (h ^ uint64(tag)) * fnvPrime
	for _, r := range rs {
		for v := uint32(r); ; v >>= 8 {
			h = (h ^ uint64(v&0xff)) * fnvPrime
			if v < 0x100 {
				break
			}
		}
	}
	return mix64(h)
}

// mix64 is the splitmix64 finaliser.
func mix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

func l2(v []float64) float64 {
	var s float64
	for _, x := range v {
		s += float64(x * x)
	}
	return math.Sqrt(s)
}
