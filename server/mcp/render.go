package mcp

import (
	"encoding/json"
	"math"

	"mnemo/contract"
)

// The results a model reads carry what it can act on and nothing else: a hit
// is its id, kind, text, score, a learning's confidence and a metadata subset.
// The namespace is never rendered (it is the host's), absent fields are left
// out rather than written as null, scores and confidences are rounded to four
// places so float noise does not reach the model, and observed_at is written
// to the second.

// renderedHit is one hit as a model reads it.
type renderedHit struct {
	ID         string       `json:"id"`
	Kind       string       `json:"kind"`
	Text       string       `json:"text"`
	Score      float64      `json:"score"`
	Confidence *float64     `json:"confidence,omitempty"`
	Meta       renderedMeta `json:"meta"`
}

// renderedMeta is the metadata subset a model reads.
type renderedMeta struct {
	Source     renderedSource `json:"source"`
	FilePath   *string        `json:"file_path,omitempty"`
	URL        *string        `json:"url,omitempty"`
	ThreadID   *string        `json:"thread_id,omitempty"`
	Tags       []string       `json:"tags,omitempty"`
	ObservedAt string         `json:"observed_at,omitempty"`
}

type renderedSource struct {
	Kind string  `json:"kind"`
	ID   *string `json:"id,omitempty"`
}

type renderedCitation struct {
	ID      string       `json:"id"`
	Kind    string       `json:"kind"`
	Snippet string       `json:"snippet"`
	Score   *float64     `json:"score,omitempty"`
	Meta    renderedMeta `json:"meta"`
}

// recallResult omits the answer's model: which model answered is the host's
// business, not something a model acts on.
type recallResult struct {
	Answer    string             `json:"answer"`
	Citations []renderedCitation `json:"citations"`
}

type getResult struct {
	Items   []renderedHit `json:"items"`
	Missing []string      `json:"missing"`
}

type exploreResult struct {
	Facet       string                 `json:"facet"`
	Buckets     []contract.FacetBucket `json:"buckets"`
	Total       uint64                 `json:"total"`
	Missing     uint64                 `json:"missing"`
	MoreBuckets uint64                 `json:"more_buckets"`
	Truncated   bool                   `json:"truncated"`
}

type storeResult struct {
	ID       string `json:"id"`
	Replayed bool   `json:"replayed"`
}

type forgetResult struct {
	Forgotten int      `json:"forgotten"`
	Skipped   []string `json:"skipped"`
}

// round4 rounds to four decimal places in float64, as the reference does
// (0.1 rather than 0.10000000149011612).
// A non-finite score, which JSON cannot carry, reads as 0.
func round4(f float32) float64 {
	x := float64(f)
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return 0
	}
	return math.Round(x*10000) / 10000
}

func renderMeta(m contract.MemoryMeta) renderedMeta {
	out := renderedMeta{
		Source:   renderedSource{Kind: string(m.SourceKindOf()), ID: m.Source.ID},
		FilePath: m.FilePath,
		URL:      m.URL,
		ThreadID: m.ThreadID,
	}
	if len(m.Tags) > 0 {
		out.Tags = m.Tags
	}
	if m.ObservedAt != nil {
		out.ObservedAt = m.ObservedAt.UTC().Format("2006-01-02T15:04:05Z")
	}
	return out
}

func renderHit(h contract.Hit) renderedHit {
	out := renderedHit{ID: h.ID, Kind: string(h.Kind), Text: h.Text, Score: round4(float32(h.Score)), Meta: renderMeta(h.Meta)}
	if h.Confidence != nil {
		c := round4(float32(*h.Confidence))
		out.Confidence = &c
	}
	return out
}

func renderHits(hits []contract.Hit) []renderedHit {
	out := make([]renderedHit, len(hits))
	for i, h := range hits {
		out[i] = renderHit(h)
	}
	return out
}

// renderPage is {key: [hits], next_cursor?}.
func renderPage(key string, hits []contract.Hit, next *string) map[string]any {
	out := map[string]any{key: renderHits(hits)}
	if next != nil {
		out["next_cursor"] = *next
	}
	return out
}

func renderRecall(a contract.RecallAnswer) recallResult {
	out := recallResult{Answer: a.Answer, Citations: make([]renderedCitation, len(a.Citations))}
	for i, c := range a.Citations {
		rc := renderedCitation{ID: c.ID, Kind: string(c.Kind), Snippet: c.Snippet, Meta: renderMeta(c.Meta)}
		if c.Score != nil {
			s := round4(float32(*c.Score))
			rc.Score = &s
		}
		out.Citations[i] = rc
	}
	return out
}

func renderExplore(p contract.ExplorePage) exploreResult {
	return exploreResult{Facet: string(p.Facet), Buckets: contract.EmptyIfNil(p.Buckets), Total: p.Total, Missing: p.Missing,
		MoreBuckets: p.MoreBuckets, Truncated: p.Truncated}
}

// encode writes v as compact JSON, leaving <, > and & as they are (a model
// reads them as text).
func encode(v any) (json.RawMessage, error) {
	b, err := contract.MarshalWire(v)
	if err != nil {
		return nil, contract.EngineErr("cannot encode the tool result: %w", err)
	}
	return b, nil
}
