package index

import (
	"encoding/binary"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

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
)

// MappingVersion names the field layout below. Change it whenever a field, an
// analyzer or a term encoding changes: an index carrying another version is
// discarded and rebuilt from the record.
const MappingVersion = "mnemo-index-8"

// The index has few physical fields, because Bleve pays per field and per
// document (a token map, a dictionary per segment): `text` (analysed, BM25),
// `meta` (exact terms with doc values, for filters and facets), `lookup`
// (exact derived terms, for filters only) and the observed_at date.
// A metadata value is the term "<name>=<value>" in meta or lookup, where
// <name> is one of the logical names below (letters and `_` only, so a name
// followed by `=` is never a prefix of another name's terms).
const (
	fieldText       = "text"
	fieldMeta       = "meta"
	fieldLookup     = "lookup"
	fieldObservedAt = "observed_at"
)

// Logical metadata names (term prefixes).
const (
	fieldKind      = "kind"
	fieldSource    = "source"
	fieldSourceID  = "source_id"
	fieldWorkspace = "workspace"
	fieldFolder    = "folder"
	fieldFilePath  = "file_path"
	fieldLanguage  = "language"
	fieldRepo      = "repo"
	fieldCommit    = "commit"
	fieldURL       = "url"
	fieldThreadID  = "thread_id"
	fieldAgentID   = "agent_id"
	fieldToolCall  = "tool_call"
	fieldTag       = "tag"
	fieldNS        = "ns"
	fieldStatus    = "status"
	fieldTurns     = "turns"

	// fieldNSSub holds, for a record at namespace N, N itself and every
	// proper ancestor P of N such that no segment of N below P is a service
	// sandbox: a `descendants` reach at P is then the single term P.
	fieldNSSub = "ns_sub"
	// fieldFolderPrefix and fieldFilePathPrefix hold every `/`-boundary
	// prefix of the value (see pathPrefixes).
	fieldFolderPrefix   = "folder_pfx"
	fieldFilePathPrefix = "file_path_pfx"

	// fieldObservedFar holds observed_at as an order-preserving hex term
	// for instants a Bleve date (int64 nanoseconds) cannot represent.
	fieldObservedFar = "observed_far"

	// fieldTextLen holds the analysed length of the record's text, so that
	// Apply can take a replaced or deleted record's length out of the BM25
	// statistics (read back from the meta field's doc values).
	fieldTextLen = "text_len"
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
	case fieldNSSub, fieldFolderPrefix, fieldFilePathPrefix, fieldObservedFar:
		return fieldLookup
	}
	return fieldMeta
}

// metaTerm is the term of one value under a logical name.
func metaTerm(name, value string) string { return name + "=" + value }

// repeatedTagTerm marks the n-th occurrence (n >= 2) of a tag on one record.
func repeatedTagTerm(n int, tag string) string { return fieldTag + strconv.Itoa(n) + "=" + tag }

// facetValue reads a term of a facet's name back into its value: the
// name's own terms, and for tags the repeated-tag terms too.
func facetValue(name, term string) (string, bool) {
	head, value, ok := strings.Cut(term, "=")
	if !ok {
		return "", false
	}
	if head == name {
		return value, true
	}
	if name == fieldTag && strings.HasPrefix(head, fieldTag) {
		digits := head[len(fieldTag):]
		if _, err := strconv.Atoi(digits); err == nil {
			return value, true
		}
	}
	return "", false
}

const (
	textOptions    = bleveindex.IndexField
	keywordOptions = bleveindex.IndexField | bleveindex.DocValues | bleveindex.SkipFreqNorm
	derivedOptions = bleveindex.IndexField | bleveindex.SkipFreqNorm
	dateOptions    = bleveindex.IndexField | bleveindex.SkipFreqNorm
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
	for _, name := range []string{fieldMeta, fieldLookup} {
		fm := mapping.NewKeywordFieldMapping()
		fm.Store = false
		fm.IncludeTermVectors = false
		fm.IncludeInAll = false
		fm.DocValues = name == fieldMeta
		fm.SkipFreqNorm = true
		dm.AddFieldMappingsAt(name, fm)
	}
	observed := mapping.NewDateTimeFieldMapping()
	observed.Store = false
	observed.IncludeInAll = false
	observed.DocValues = false
	dm.AddFieldMappingsAt(fieldObservedAt, observed)

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

// document builds d's Bleve document and returns the analysed length of its
// text (the text is analysed here, once, to know it).
func (b *builder) document(d Doc) (*document.Document, int, error) {
	doc := document.NewDocument(d.ID)
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
	m := &d.Meta
	keyword(fieldKind, string(d.Kind))
	keyword(fieldSource, string(m.SourceKindOf()))
	optional(fieldSourceID, m.Source.ID)
	optional(fieldWorkspace, m.Workspace)
	optional(fieldLanguage, m.Language)
	optional(fieldRepo, m.Repo)
	optional(fieldCommit, m.Commit)
	optional(fieldURL, m.URL)
	optional(fieldThreadID, m.ThreadID)
	optional(fieldAgentID, m.AgentID)
	if m.Folder != nil {
		keyword(fieldFolder, *m.Folder)
		for _, p := range pathPrefixes(*m.Folder) {
			keyword(fieldFolderPrefix, p)
		}
	}
	if m.FilePath != nil {
		keyword(fieldFilePath, *m.FilePath)
		for _, p := range pathPrefixes(*m.FilePath) {
			keyword(fieldFilePathPrefix, p)
		}
	}
	if m.ToolCall != nil {
		keyword(fieldToolCall, m.ToolCall.Name)
	}
	if m.Turns != nil {
		keyword(fieldTurns, turnsTerm(*m.Turns))
	}
	for i, tag := range m.Tags {
		// The contract's explore counts a tag once per occurrence; Bleve
		// keeps one term per document, so a repeat gets its own term
		// ("tag2=x", "tag3=x", ...) which facets count and filters ignore.
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
	keyword(fieldTextLen, strconv.Itoa(length))
	if m.ObservedAt != nil && !representable(*m.ObservedAt) {
		keyword(fieldObservedFar, farTerm(*m.ObservedAt))
	}
	doc.AddField(keywordField(fieldMeta, meta, keywordOptions))
	if len(lookup) > 0 {
		doc.AddField(keywordField(fieldLookup, lookup, derivedOptions))
	}

	if m.ObservedAt != nil && representable(*m.ObservedAt) {
		if err := addDate(doc, fieldObservedAt, *m.ObservedAt); err != nil {
			return nil, 0, err
		}
	}
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

func addDate(doc *document.Document, name string, at time.Time) error {
	f, err := document.NewDateTimeFieldWithIndexingOptions(name, nil, at, time.RFC3339Nano, dateOptions)
	if err != nil {
		return err
	}
	doc.AddField(f)
	return nil
}

// statusOf reads an unset status as active, the record default.
func statusOf(s contract.Status) contract.Status {
	if s == "" {
		return contract.StatusActive
	}
	return s
}

func turnsTerm(t contract.TurnRange) string {
	return strconv.FormatUint(uint64(t.First), 10) + "-" + strconv.FormatUint(uint64(t.Last), 10)
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

// pathPrefixes lists the terms a held folder or file path answers to as a
// base: the value itself and every prefix that ends just before a `/`.
// contract.PathMatch admits a held value for a wanted path when the held
// value equals it, or when it starts with base (the wanted path without
// trailing slashes) followed by `/` or its end, which is exactly "base is one
// of these prefixes". Every term carries a leading marker so the empty
// prefix of an absolute path is a real term.
func pathPrefixes(held string) []string {
	out := []string{prefixTerm(held)}
	for i := 0; i < len(held); i++ {
		if held[i] == '/' {
			p := prefixTerm(held[:i])
			if !slices.Contains(out, p) {
				out = append(out, p)
			}
		}
	}
	return out
}

func prefixTerm(base string) string { return ">" + base }

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

// Bleve dates are int64 nanoseconds since the epoch, and its date range
// queries accept only instants in [dateMin, dateMax]; observed_at outside that
// span goes to fieldObservedFar instead.
var (
	dateMin = time.Date(1677, 12, 1, 0, 0, 0, 0, time.UTC)
	dateMax = time.Date(2262, 4, 11, 11, 59, 59, 0, time.UTC)
)

func representable(t time.Time) bool {
	return !t.Before(dateMin) && !t.After(dateMax)
}

// farTerm encodes an instant so that byte order is time order: the seconds
// since the epoch biased to unsigned, then the nanoseconds, both big-endian hex.
func farTerm(t time.Time) string {
	var buf [12]byte
	binary.BigEndian.PutUint64(buf[:8], uint64(t.Unix())^(1<<63))
	binary.BigEndian.PutUint32(buf[8:], uint32(t.Nanosecond()))
	return fmt.Sprintf("%x", buf[:])
}
