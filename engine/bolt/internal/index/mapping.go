package index

import (
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"sync"

	_ "github.com/blevesearch/bleve/v2/analysis/analyzer/custom"  // registers the custom analyzer type
	_ "github.com/blevesearch/bleve/v2/analysis/analyzer/keyword" // the keyword field mapping's analyzer
	"github.com/blevesearch/bleve/v2/analysis/char/asciifolding"
	"github.com/blevesearch/bleve/v2/analysis/lang/en"
	"github.com/blevesearch/bleve/v2/analysis/token/lowercase"
	"github.com/blevesearch/bleve/v2/analysis/tokenizer/unicode"
	"github.com/blevesearch/bleve/v2/document"
	"github.com/blevesearch/bleve/v2/mapping"
	bleveindex "github.com/blevesearch/bleve_index_api"

	"mnemo/contract"
	"mnemo/engine/bolt/internal/idkey"
)

// MappingVersion names the field layout below. Change it whenever a field, an
// analyzer or a term encoding changes: an index carrying another version is
// discarded and rebuilt from the record.
const MappingVersion = "mnemo-index-11"

// The index has few physical fields, because Bleve pays per field and per
// document (a token map, a dictionary per segment): `text` (analysed, BM25),
// `meta` (exact terms, for filters), `lookup` (exact derived terms, for
// filters only) and `len` (the analysed length of the text as one term,
// the only field with doc values: they give a replaced or deleted record's
// length back to the BM25 statistics). A metadata value is the term
// "<name>=<value>" in meta or lookup, where <name> is one of the logical
// names below (letters and `_` only, so a name followed by `=` is never a
// prefix of another name's terms).
//
// Until mnemo-index-10 the length was a meta term and meta kept doc values:
// every metadata term of every record was stored twice, 30 bytes a record
// of the bench corpus's index (373 against 342 at 100k, merged). Until
// mnemo-index-11 a document was named by its id's 40 digits, not its 20 bytes
// (package idkey): 25 bytes a document more (415 against 390 at 50,000
// documents of this package's benchmark corpus, merged).
const (
	fieldText   = "text"
	fieldMeta   = "meta"
	fieldLookup = "lookup"
	fieldLen    = "len"
)

// Logical metadata names (term prefixes).
const (
	fieldKind      = "kind"
	fieldSource    = "source"
	fieldWorkspace = "workspace"
	fieldLanguage  = "language"
	fieldRepo      = "repo"
	fieldAgentID   = "agent_id"
	fieldToolCall  = "tool_call"
	fieldTag       = "tag"
	fieldNS        = "ns"
	fieldStatus    = "status"

	// fieldNSSub holds, for a record at namespace N, N itself and every
	// proper ancestor P of N such that no segment of N below P is a service
	// sandbox: a `descendants` reach at P is then the single term P.
	fieldNSSub = "ns_sub"
)

// Internal keys stored beside the documents.
const (
	keyAppliedSeq     = "applied_seq"
	keyMappingVersion = "mapping_version"
	// keyBM25Stats holds the document count and the total analysed length
	// of the text field (two big-endian uint64), maintained by Apply.
	keyBM25Stats = "bm25_stats"
)

// textAnalyzer names, for the mapping, the registered chain closest to
// textAnalysis (which the builder and keyword queries use; it also adds
// identifier parts, which no registered filter does).
const textAnalyzer = "mnemo_text"

// physicalField tells where a logical name's terms live.
func physicalField(name string) string {
	switch name {
	case fieldNSSub:
		return fieldLookup
	}
	return fieldMeta
}

// metaTerm is the term of one value under a logical name.
func metaTerm(name, value string) string { return name + "=" + value }

// repeatedTagTerm marks the n-th occurrence (n >= 2) of a tag on one record.
func repeatedTagTerm(n int, tag string) string { return fieldTag + strconv.Itoa(n) + "=" + tag }

const (
	textOptions    = bleveindex.IndexField
	keywordOptions = bleveindex.IndexField | bleveindex.SkipFreqNorm
	// Scorch keeps the doc values of indexed fields only.
	lengthOptions = bleveindex.IndexField | bleveindex.DocValues | bleveindex.SkipFreqNorm
)

// newMapping builds the explicit mapping: dynamic mapping is off, so a field
// not listed here is never indexed, and BM25 scores the text field.
func newMapping() (*mapping.IndexMappingImpl, error) {
	im := mapping.NewIndexMapping()
	im.ScoringModel = bleveindex.BM25Scoring
	im.IndexDynamic = false
	im.StoreDynamic = false
	im.DocValuesDynamic = false
	err := im.AddCustomAnalyzer(textAnalyzer, map[string]interface{}{
		"type":          "custom",
		"char_filters":  []string{asciifolding.Name},
		"tokenizer":     unicode.Name,
		"token_filters": []string{en.PossessiveName, lowercase.Name, en.SnowballStemmerName},
	})
	if err != nil {
		return nil, err
	}
	im.DefaultAnalyzer = textAnalyzer
	im.DefaultField = fieldText

	dm := mapping.NewDocumentStaticMapping()
	text := mapping.NewTextFieldMapping()
	text.Analyzer = textAnalyzer
	text.Store = false
	text.IncludeTermVectors = false
	text.IncludeInAll = false
	text.DocValues = false
	dm.AddFieldMappingsAt(fieldText, text)
	for _, name := range []string{fieldMeta, fieldLookup, fieldLen} {
		fm := mapping.NewKeywordFieldMapping()
		fm.Store = false
		fm.IncludeTermVectors = false
		fm.IncludeInAll = false
		fm.DocValues = name == fieldLen
		fm.SkipFreqNorm = true
		dm.AddFieldMappingsAt(name, fm)
	}

	im.DefaultMapping = dm
	im.TypeMapping = map[string]*mapping.DocumentMapping{}
	if err := im.Validate(); err != nil {
		return nil, err
	}
	return im, nil
}

// builder turns Docs into Bleve documents directly, skipping the mapping's
// reflection walk (the field table above is the mapping's single source).
type builder struct {
	text *textAnalysis
}

func newBuilder() (*builder, error) {
	a, err := newTextAnalysis()
	if err != nil {
		return nil, fmt.Errorf("text analysis: %w", err)
	}
	return &builder{text: a}, nil
}

// builtDoc is a Doc's Bleve document and the analysed length of its text.
type builtDoc struct {
	doc    *document.Document
	length int
}

// documents builds the documents of one Apply, in order. A large batch (a
// catch-up's) is split between the cores, each part with a builder of its
// own (forBatch): analysing the text was half of a catch-up batch's time,
// on one core while the other often had little to do.
func (b *builder) documents(docs []Doc) ([]builtDoc, error) {
	out := make([]builtDoc, len(docs))
	errs := make([]error, len(docs))
	parts := max(1, min(runtime.GOMAXPROCS(0), len(docs)/minDocsPerPart))
	var wg sync.WaitGroup
	for p := range parts {
		lo, hi := p*len(docs)/parts, (p+1)*len(docs)/parts
		wg.Go(func() {
			part := b.forBatch()
			for i := lo; i < hi; i++ {
				doc, length, err := part.document(docs[i])
				if err != nil {
					errs[i] = fmt.Errorf("index record %s: %w", docs[i].ID, err)
					return
				}
				out[i] = builtDoc{doc, length}
			}
		})
	}
	wg.Wait()
	// The first failure in the batch's order, where one builder would have
	// stopped.
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// minDocsPerPart: a batch is split only into parts of at least this many
// documents (a trickle's few are built where they are).
const minDocsPerPart = 512

// forBatch is the builder of one Apply's documents: its analysis remembers
// the stems of the batch's words (textAnalysis.forBatch).
func (b *builder) forBatch() *builder { return &builder{text: b.text.forBatch()} }

// document builds d's Bleve document and returns the analysed length of its
// text (the text is analysed here, once, to know it).
func (b *builder) document(d Doc) (*document.Document, int, error) {
	doc := document.NewDocument(idkey.Name(d.ID))
	text := &analysedText{TextField: document.NewTextFieldCustom(fieldText, nil, []byte(d.Text), textOptions, b.text)}
	text.Analyze()
	length := text.AnalyzedLength()
	doc.AddField(text)
	var meta, lookup []string
	keyword := func(name, value string) {
		t := metaTerm(name, value)
		if physicalField(name) == fieldLookup {
			lookup = append(lookup, t)
		} else {
			meta = append(meta, t)
		}
	}
	optional := func(name string, value *string) {
		if value != nil {
			keyword(name, *value)
		}
	}
	// Fields of values nearly every record has its own of are not indexed:
	// the engine's table answers them (filter.go, NeedsResidual).
	m := &d.Meta
	keyword(fieldKind, string(d.Kind))
	keyword(fieldSource, string(m.SourceKindOf()))
	optional(fieldWorkspace, m.Workspace)
	optional(fieldLanguage, m.Language)
	optional(fieldRepo, m.Repo)
	optional(fieldAgentID, m.AgentID)
	if m.ToolCall != nil {
		keyword(fieldToolCall, m.ToolCall.Name)
	}
	for i, tag := range m.Tags {
		// The contract's explore counts a tag once per occurrence; Bleve
		// keeps one term per document, so a repeat gets its own term
		// ("tag2=x", "tag3=x", ...) which filters ignore.
		n := 1
		for _, earlier := range m.Tags[:i] {
			if earlier == tag {
				n++
			}
		}
		if n == 1 {
			keyword(fieldTag, tag)
		} else {
			meta = append(meta, repeatedTagTerm(n, tag))
		}
	}
	keyword(fieldNS, m.Namespace.String())
	for _, p := range subtreeAnchors(m.Namespace) {
		keyword(fieldNSSub, p)
	}
	keyword(fieldStatus, string(statusOf(d.Status)))
	doc.AddField(keywordField(fieldMeta, meta, keywordOptions))
	if len(lookup) > 0 {
		doc.AddField(keywordField(fieldLookup, lookup, keywordOptions))
	}
	doc.AddField(keywordField(fieldLen, []string{strconv.Itoa(length)}, lengthOptions))
	return doc, length, nil
}

// analysedText is a text field analysed once: the builder analyses it to
// learn its length, and scorch's own Analyze call then keeps that result.
type analysedText struct {
	*document.TextField
	done bool
}

func (t *analysedText) Analyze() {
	if !t.done {
		t.TextField.Analyze()
		t.done = true
	}
}

// keywordField is one field holding several exact terms, built without an
// analyzer pass: each term is one token at its own position.
func keywordField(name string, terms []string, options bleveindex.FieldIndexingOptions) document.Field {
	return newMultiTermField(name, terms, options)
}

// statusOf reads an unset status as active, the record default.
func statusOf(s contract.Status) contract.Status {
	if s == "" {
		return contract.StatusActive
	}
	return s
}

func distinct(values []string) []string {
	if len(values) < 2 {
		return values
	}
	out := make([]string, 0, len(values))
	for _, v := range values {
		if !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out
}

// subtreeAnchors lists the namespaces P from which a descendants reach
// admits ns: ns itself, and every proper ancestor P such that no segment of
// ns below P is a service sandbox.
func subtreeAnchors(ns contract.Namespace) []string {
	segs := ns.Segments()
	out := []string{ns.String()}
	for depth := len(segs) - 1; depth >= 0; depth-- {
		if segs[depth].Kind == contract.SegService {
			break
		}
		anchor, err := contract.NewNamespace(segs[:depth]...)
		if err != nil {
			break
		}
		out = append(out, anchor.String())
	}
	return out
}
