package retrieval

import (
	"math"
	"sync"
)

// wordFacts is what embedding needs to know of one distinct word (as words
// gives it) of an Embed call's texts, worked out at its first occurrence:
// a store's texts repeat their words, and stemming, hashing and looking the
// word up in the model at every occurrence were most of embedding's time
// (a re-embedding of the bench corpus: 92 µs a text).
type wordFacts struct {
	stop bool
	// term is the word as the hashed part counts it (stemmed when its
	// configuration stems), termKey its feature, weight its weight there.
	term    string
	termKey uint64
	weight  float64
	// gramLo:gramHi are its character n-grams' features in wordMemo.grams,
	// in the order charGrams counts them.
	gramLo, gramHi int32
	// learn is its term in the learned model (wordMemo.terms), -1 when the
	// model counts it not (no model, shorter than three bytes, a stop word).
	learn int32
}

// termFacts is a term of the learned model: a stemmed word, its row (-1:
// none), its random index, and how often the text being embedded has it.
type termFacts struct {
	term   string
	row    int32
	hasRI  bool
	ri     [riNonZero]int32
	riNeg  [riNonZero]bool
	seenIn int32 // the text it was last counted in
	count  int32
}

// wordMemo holds the facts of the words of one Embed call's texts. Its
// weight (the hashed part's word weights, nil: all 1) and model (nil: no
// learned part) are fixed for its life, so what it remembers stays true.
type wordMemo struct {
	weight func(string) float64
	model  *LearnedModel
	at     map[string]int32
	facts  []wordFacts
	grams  []uint64
	termAt map[string]int32
	terms  []termFacts
	text   int32   // the texts seen, for termFacts.seenIn
	ids    []int32 // the current text's words
	runes  []rune
}

// maxMemoWords bounds a memo (about 20 MB): past it, it starts over.
const maxMemoWords = 1 << 16

// memoPool keeps the memos of an embedder's calls for the next calls: a
// store's vocabulary is met again and again, and a memo of one call of 256
// bench corpus records alone left a fifth of embedding's time to working
// out the facts of words met once in it. The garbage collector may drop
// them; a call then starts a new one.
type memoPool struct{ pool sync.Pool }

// get answers a memo for weight and model: a kept one made for model, or a
// new one. weight must be the same for every call with the same model.
func (p *memoPool) get(weight func(string) float64, model *LearnedModel) *wordMemo {
	if mm, ok := p.pool.Get().(*wordMemo); ok && mm.model == model {
		return mm
	}
	return newWordMemo(weight, model)
}

func (p *memoPool) put(mm *wordMemo) { p.pool.Put(mm) }

func newWordMemo(weight func(string) float64, model *LearnedModel) *wordMemo {
	return &wordMemo{weight: weight, model: model, at: map[string]int32{}, termAt: map[string]int32{}}
}

// wordsOf tokenizes text (words) and answers its words' facts' indexes, in
// order; the slice is the memo's, valid until the next call.
func (mm *wordMemo) wordsOf(text string, h *hashEmbedder) []int32 {
	if len(mm.facts) > maxMemoWords || mm.text == math.MaxInt32 {
		*mm = *newWordMemo(mm.weight, mm.model)
	}
	mm.text++
	mm.ids = mm.ids[:0]
	for _, w := range words(text) {
		id, ok := mm.at[w]
		if !ok {
			id = mm.add(w, h)
		}
		mm.ids = append(mm.ids, id)
	}
	return mm.ids
}

func (mm *wordMemo) add(w string, h *hashEmbedder) int32 {
	f := wordFacts{stop: isStopWord(w), term: w, weight: 1, learn: -1}
	if h.cfg.Stem {
		f.term = stem(w)
	}
	f.termKey = featureHash('w', f.term, "")
	if mm.weight != nil {
		f.weight = mm.weight(f.term)
	}
	f.gramLo = int32(len(mm.grams))
	if h.cfg.CharWeight > 0 {
		mm.grams = h.appendCharGrams(mm.grams, w, &mm.runes)
	}
	f.gramHi = int32(len(mm.grams))
	if mm.model != nil {
		if t, ok := learnTerm(w, mm.model.cfg.Stem); ok {
			f.learn = mm.term(t)
		}
	}
	id := int32(len(mm.facts))
	mm.facts = append(mm.facts, f)
	mm.at[w] = id
	return id
}

func (mm *wordMemo) term(t string) int32 {
	if id, ok := mm.termAt[t]; ok {
		return id
	}
	tf := termFacts{term: t, row: -1}
	if r, ok := mm.model.words[t]; ok {
		tf.row = r
	}
	id := int32(len(mm.terms))
	mm.terms = append(mm.terms, tf)
	mm.termAt[t] = id
	return id
}
