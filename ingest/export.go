package ingest

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"sort"
	"time"

	"mnemo/contract"
)

// exportLine is mnemo's export line: {"id", "item", "status", "superseded_by", "expires_at"}.
type exportLine struct {
	ID           string             `json:"id"`
	Item         contract.StoreItem `json:"item"`
	Status       string             `json:"status,omitempty"`
	SupersededBy string             `json:"superseded_by,omitempty"`
	ExpiresAt    string             `json:"expires_at,omitempty"`
}

// Written is what WriteJSONL wrote: the location of each line (Locations[n-1]
// is line n's) and the entries it skipped.
type Written struct {
	Locations []string
	Skipped   []Skip
}

// WriteJSONL reads path with src and writes every record as a line of mnemo's
// export format to w, under place, so mnemo import stores it with its own
// batching. An entry that cannot be imported is skipped and listed, not written.
func WriteJSONL(ctx context.Context, src Source, path string, place contract.Namespace, w io.Writer) (*Written, error) {
	bw := bufio.NewWriterSize(w, 64<<10)
	out := &Written{}
	js := &jsonlSink{w: bw, out: out}
	err := src.Read(ctx, path, &Placed{Source: src.Name(), Place: place, Next: js})
	if err == nil {
		err = js.err
	}
	if ferr := bw.Flush(); err == nil {
		err = ferr
	}
	return out, err
}

type jsonlSink struct {
	w   *bufio.Writer
	out *Written
	err error
}

func (s *jsonlSink) Store(item contract.StoreItem, location string, expiresAt *time.Time, by string) error {
	line := exportLine{ID: item.Fingerprint(), Item: item}
	if by != "" {
		line.Status, line.SupersededBy = string(contract.StatusSuperseded), by
	}
	if expiresAt != nil {
		line.ExpiresAt = contract.FormatTime(*expiresAt)
	}
	b, err := json.Marshal(line)
	if err != nil {
		s.out.Skipped = append(s.out.Skipped, Skip{Location: location, Reason: err.Error()})
		return nil
	}
	b = append(b, '\n')
	if _, err := s.w.Write(b); err != nil {
		s.err = err
		return err
	}
	s.out.Locations = append(s.out.Locations, location)
	return nil
}

func (s *jsonlSink) Skip(sk Skip) { s.out.Skipped = append(s.out.Skipped, sk) }

func (s *jsonlSink) Omit(string) {}

// Preview is a dry run's answer: what an import would store, stored nowhere.
type Preview struct {
	Source  string         `json:"source"`
	Records int            `json:"records"`
	Counts  []PreviewCount `json:"counts"`
	First   []PreviewItem  `json:"first"`
	Skipped []Skip         `json:"skipped"`
	// Omitted counts the entries left out by design, by reason.
	Omitted map[string]int `json:"omitted"`
}

// PreviewCount is how many records of a kind land in a namespace.
type PreviewCount struct {
	Kind      contract.ItemKind `json:"kind"`
	Namespace string            `json:"namespace"`
	Count     int               `json:"count"`
}

// PreviewItem is one record as it would be stored.
type PreviewItem struct {
	Location     string             `json:"location"`
	ID           string             `json:"id"`
	Item         contract.StoreItem `json:"item"`
	ExpiresAt    string             `json:"expires_at,omitempty"`
	SupersededBy string             `json:"superseded_by,omitempty"`
}

// DryRun reads path with src as an import would and tells what it would
// store: counts per kind and namespace, the first `first` records and every skip.
func DryRun(ctx context.Context, src Source, path string, place contract.Namespace, first int) (*Preview, error) {
	ps := &previewSink{p: &Preview{Source: src.Name(), Counts: []PreviewCount{}, First: []PreviewItem{}, Skipped: []Skip{}, Omitted: map[string]int{}},
		counts: map[[2]string]int{}, first: first}
	if err := src.Read(ctx, path, &Placed{Source: src.Name(), Place: place, Next: ps}); err != nil {
		return nil, err
	}
	for k, n := range ps.counts {
		ps.p.Counts = append(ps.p.Counts, PreviewCount{Kind: contract.ItemKind(k[0]), Namespace: k[1], Count: n})
	}
	sort.Slice(ps.p.Counts, func(i, j int) bool {
		a, b := ps.p.Counts[i], ps.p.Counts[j]
		if a.Namespace != b.Namespace {
			return a.Namespace < b.Namespace
		}
		return a.Kind < b.Kind
	})
	return ps.p, nil
}

type previewSink struct {
	p      *Preview
	counts map[[2]string]int
	first  int
}

func (s *previewSink) Store(item contract.StoreItem, location string, expiresAt *time.Time, by string) error {
	s.p.Records++
	nsName := item.Meta.Namespace.String()
	if item.Meta.Namespace.IsRoot() {
		nsName = contract.RootLabel
	}
	s.counts[[2]string{string(item.Type), nsName}]++
	if len(s.p.First) < s.first {
		pi := PreviewItem{Location: location, ID: item.Fingerprint(), Item: item, SupersededBy: by}
		if expiresAt != nil {
			pi.ExpiresAt = contract.FormatTime(*expiresAt)
		}
		s.p.First = append(s.p.First, pi)
	}
	return nil
}

func (s *previewSink) Skip(sk Skip) { s.p.Skipped = append(s.p.Skipped, sk) }

func (s *previewSink) Omit(reason string) { s.p.Omitted[reason]++ }
