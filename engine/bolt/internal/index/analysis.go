package index

import (
	"unicode"
	"unicode/utf8"

	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/analysis/char/asciifolding"
	"github.com/blevesearch/bleve/v2/analysis/lang/en"
	"github.com/blevesearch/bleve/v2/analysis/token/lowercase"
	unitok "github.com/blevesearch/bleve/v2/analysis/tokenizer/unicode"
)

// textAnalysis is how the text field and keyword queries are analysed:
// ASCII folding, Unicode word segmentation (UAX #29), English possessives
// dropped ("go's" -> "go"), lower case, identifier parts added beside the
// whole token ("aiohttp.web" also as "aiohttp" and "web", see partsFilter),
// then the Snowball English stemmer. Stop words stay in the index, so a
// query of stop words alone ("the who") still finds its records; queries
// drop them otherwise (queryTerms).
type textAnalysis struct {
	fold      analysis.CharFilter
	tokenizer analysis.Tokenizer
	before    []analysis.TokenFilter // up to the stop word check
	stem      shortStem
	stop      analysis.TokenMap
}

func newTextAnalysis() (*textAnalysis, error) {
	stop := analysis.NewTokenMap()
	if err := stop.LoadBytes(en.EnglishStopWords); err != nil {
		return nil, err
	}
	return &textAnalysis{
		fold:      asciifolding.New(),
		tokenizer: unitok.NewUnicodeTokenizer(),
		before:    []analysis.TokenFilter{en.NewPossessiveFilter(), lowercase.NewLowerCaseFilter(), partsFilter{}},
		stem:      shortStem{inner: en.NewEnglishStemmerFilter()},
		stop:      stop,
	}, nil
}

// Analyze is the index side: every token, stemmed.
func (a *textAnalysis) Analyze(input []byte) analysis.TokenStream {
	return a.stem.Filter(a.unstemmed(input))
}

func (a *textAnalysis) unstemmed(input []byte) analysis.TokenStream {
	ts := a.tokenizer.Tokenize(a.fold.Filter(input))
	for _, f := range a.before {
		ts = f.Filter(ts)
	}
	return ts
}

// queryTerm is one distinct term of a query and how often it occurs.
type queryTerm struct {
	term  string
	count int
}

// queryTerms analyses a keyword query like the text, without its stop words
// unless it has nothing else, and returns its distinct terms in order of
// first occurrence.
func (a *textAnalysis) queryTerms(q string) []queryTerm {
	ts := a.unstemmed([]byte(q))
	kept := ts[:0:0]
	for _, t := range ts {
		if _, stop := a.stop[string(t.Term)]; !stop {
			kept = append(kept, t)
		}
	}
	if len(kept) > 0 {
		ts = kept
	}
	ts = a.stem.Filter(ts)
	var out []queryTerm
	at := map[string]int{}
	for _, t := range ts {
		s := string(t.Term)
		if i, ok := at[s]; ok {
			out[i].count++
			continue
		}
		at[s] = len(out)
		out = append(out, queryTerm{term: s, count: 1})
	}
	return out
}

// partsFilter adds, after a token that joins runs of letters and digits by
// punctuation the segmenter keeps inside a word ("aiohttp.web",
// "http.request.clone", "snake_case", "3.14"), each run as a token of its
// own at the same position, so a query for one part finds the whole and a
// query for the whole still prefers it. Apostrophes are not split ("don't").
type partsFilter struct{}

func (partsFilter) Filter(input analysis.TokenStream) analysis.TokenStream {
	var out analysis.TokenStream
	for i, tok := range input {
		if !splittable(tok.Term) {
			if out != nil {
				out = append(out, tok)
			}
			continue
		}
		if out == nil {
			out = make(analysis.TokenStream, i, len(input)+4)
			copy(out, input[:i])
		}
		out = append(out, tok)
		term := tok.Term
		start := -1
		for j := 0; j <= len(term); {
			r, size := utf8.RuneError, 1
			if j < len(term) {
				r, size = utf8.DecodeRune(term[j:])
			}
			word := j < len(term) && (unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r))
			switch {
			case word && start < 0:
				start = j
			case !word && start >= 0:
				out = append(out, &analysis.Token{
					Term: term[start:j:j], Start: tok.Start + start, End: tok.Start + j,
					Position: tok.Position, Type: tok.Type,
				})
				start = -1
			}
			j += size
		}
	}
	if out == nil {
		return input
	}
	return out
}

// splittable: the term holds a separator other than an apostrophe between
// two word characters.
func splittable(term []byte) bool {
	sep := false
	for _, r := range string(term) {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r):
		case r == '\'' || r == '\u2019':
		default:
			sep = true
		}
	}
	return sep && len(term) > 0
}

// maxStemBytes bounds the tokens the stemmer sees: the Snowball stemmer's
// time grows faster than a token's length, and a 1 MB item of one long
// token (a base64 blob, a minified file) kept the indexer busy for minutes.
// No English word is near this long; longer tokens are indexed as they are.
const maxStemBytes = 64

// shortStem stems the tokens of at most maxStemBytes, in place. With stems
// (a batch's own analysis, forBatch) each distinct term is stemmed once and
// its stem remembered: the documents of a batch repeat most of their words,
// and the Snowball stemmer was the largest part of indexing a catch-up
// batch (7.7 of its 32 s of CPU at 100k records).
type shortStem struct {
	inner analysis.TokenFilter
	// stems maps a term to its stem; nil: nothing is remembered. It is not
	// safe for concurrent use, so only one Apply's documents share one.
	stems map[string]string
}

func (s shortStem) Filter(ts analysis.TokenStream) analysis.TokenStream {
	short := make(analysis.TokenStream, 0, len(ts))
	var terms []string
	for _, t := range ts {
		if len(t.Term) > maxStemBytes {
			continue
		}
		if s.stems != nil {
			if stem, ok := s.stems[string(t.Term)]; ok {
				t.Term = []byte(stem)
				continue
			}
			terms = append(terms, string(t.Term))
		}
		short = append(short, t)
	}
	s.inner.Filter(short)
	for i, term := range terms {
		if len(s.stems) < maxBatchStems {
			s.stems[term] = string(short[i].Term)
		}
	}
	return ts
}

// maxBatchStems bounds the terms one batch remembers the stems of (a few
// MB): a batch of documents that are all rare words stems the rest as
// before.
const maxBatchStems = 1 << 17

// forBatch is the analysis for one Apply's documents: the same, with a stem
// cache of its own (shortStem), dropped with the batch.
func (a *textAnalysis) forBatch() *textAnalysis {
	b := *a
	b.stem.stems = map[string]string{}
	return &b
}
