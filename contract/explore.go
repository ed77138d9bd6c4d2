package contract

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Facet is a dimension explore groups items by.
type Facet string

// The 14 reference facets and mnemo's status facet.
const (
	FacetKind      Facet = "kind"
	FacetSource    Facet = "source"
	FacetSourceID  Facet = "source_id"
	FacetWorkspace Facet = "workspace"
	FacetFolder    Facet = "folder"
	FacetFilePath  Facet = "file_path"
	FacetLanguage  Facet = "language"
	FacetRepo      Facet = "repo"
	FacetURL       Facet = "url"
	FacetThread    Facet = "thread"
	FacetAgent     Facet = "agent"
	FacetToolCall  Facet = "tool_call"
	FacetTag       Facet = "tag"
	FacetNamespace Facet = "namespace"
	FacetStatus    Facet = "status"
)

// Facets lists every facet, the reference's 14 then status.
var allFacets = [...]Facet{FacetKind, FacetSource, FacetSourceID, FacetWorkspace, FacetFolder, FacetFilePath,
	FacetLanguage, FacetRepo, FacetURL, FacetThread, FacetAgent, FacetToolCall, FacetTag, FacetNamespace, FacetStatus}

// Facets returns every value, a fresh slice the caller may change.
func Facets() []Facet { return slices.Clone(allFacets[:]) }

// ParseFacet parses a wire facet.
func ParseFacet(s string) (Facet, bool) {
	for _, f := range allFacets {
		if string(f) == s {
			return f, true
		}
	}
	return "", false
}

// UnmarshalJSON refuses unknown facets.
func (f *Facet) UnmarshalJSON(data []byte) error {
	var s string
	if err := json.Unmarshal(data, &s); err != nil {
		return fmt.Errorf("facet must be a string")
	}
	fc, ok := ParseFacet(s)
	if !ok {
		return fmt.Errorf("`%s` is not a facet", s)
	}
	*f = fc
	return nil
}

// Values returns the facet's values for one record (empty when it has none).
func (f Facet) Values(kind ItemKind, m *MemoryMeta, status Status) []string {
	opt := func(p *string) []string {
		if p == nil {
			return nil
		}
		return []string{*p}
	}
	switch f {
	case FacetKind:
		return []string{string(kind)}
	case FacetSource:
		return []string{string(m.SourceKindOf())}
	case FacetSourceID:
		return opt(m.Source.ID)
	case FacetWorkspace:
		return opt(m.Workspace)
	case FacetFolder:
		return opt(m.Folder)
	case FacetFilePath:
		return opt(m.FilePath)
	case FacetLanguage:
		return opt(m.Language)
	case FacetRepo:
		return opt(m.Repo)
	case FacetURL:
		return opt(m.URL)
	case FacetThread:
		return opt(m.ThreadID)
	case FacetAgent:
		return opt(m.AgentID)
	case FacetToolCall:
		if m.ToolCall == nil {
			return nil
		}
		return []string{m.ToolCall.Name}
	case FacetTag:
		return m.Tags
	case FacetNamespace:
		return []string{m.Namespace.String()}
	case FacetStatus:
		if status == "" {
			status = StatusActive
		}
		return []string{string(status)}
	}
	return nil
}

// Narrow returns the filter with this facet's field set to value; only that field changes.
func (f Facet) Narrow(filter MetaFilter, value string) (MetaFilter, error) {
	if strings.TrimSpace(value) == "" {
		return MetaFilter{}, Invalid("a `%s` value must not be blank", f)
	}
	out := filter.Clone()
	v := value
	switch f {
	case FacetKind:
		k, ok := ParseItemKind(value)
		if !ok {
			return MetaFilter{}, Invalid("`%s` is not an item kind", value)
		}
		out.Kinds = []ItemKind{k}
	case FacetSource:
		k, ok := ParseSourceKind(value)
		if !ok {
			return MetaFilter{}, Invalid("`%s` is not a source kind", value)
		}
		out.Sources = []SourceKind{k}
	case FacetSourceID:
		out.SourceID = &v
	case FacetWorkspace:
		out.Workspace = &v
	case FacetFolder:
		out.Folder = &v
	case FacetFilePath:
		out.FilePath = &v
	case FacetLanguage:
		out.Language = &v
	case FacetRepo:
		out.Repo = &v
	case FacetURL:
		out.URL = &v
	case FacetThread:
		out.ThreadID = &v
	case FacetAgent:
		out.AgentID = &v
	case FacetToolCall:
		out.ToolCall = &v
	case FacetTag:
		out.TagsAny = []string{value}
	case FacetNamespace:
		ns, err := ParseNamespace(value)
		if err != nil {
			return MetaFilter{}, err
		}
		r := ReachExact(ns)
		out.Reach = &r
	case FacetStatus:
		s, ok := ParseStatus(value)
		if !ok {
			return MetaFilter{}, Invalid("`%s` is not a status", value)
		}
		out.Statuses = []Status{s}
	default:
		return MetaFilter{}, Invalid("`%s` is not a facet", f)
	}
	return out, nil
}

// ExploreRequest groups the items a filter selects by one facet.
type ExploreRequest struct {
	Facet     Facet      `json:"facet"`
	Filter    MetaFilter `json:"filter"`
	Limit     int        `json:"limit"`
	ScanLimit *int       `json:"scan_limit,omitempty"`
}

// ScanLimitOr returns the scan limit, defaulting to 5000.
func (r ExploreRequest) ScanLimitOr() int {
	if r.ScanLimit == nil {
		return DefaultScanLimit
	}
	return *r.ScanLimit
}

// Validate checks the limits.
func (r ExploreRequest) Validate() error {
	if _, ok := ParseFacet(string(r.Facet)); !ok {
		return Invalid("`%s` is not a facet", r.Facet)
	}
	if r.Limit < 1 || r.Limit > MaxBuckets {
		return Invalid("explore limit must be between 1 and 500")
	}
	if s := r.ScanLimitOr(); s < 1 || s > MaxScanLimit {
		return Invalid("explore scan_limit must be between 1 and 50000")
	}
	return nil
}

// FacetBucket is one value and how many items hold it.
type FacetBucket struct {
	Value string `json:"value"`
	Count uint64 `json:"count"`
}

// ExplorePage is the buckets of one facet.
type ExplorePage struct {
	Facet       Facet         `json:"facet"`
	Buckets     []FacetBucket `json:"buckets"`
	Total       uint64        `json:"total"`
	Missing     uint64        `json:"missing"`
	MoreBuckets uint64        `json:"more_buckets"`
	Truncated   bool          `json:"truncated"`
}

// ExplorePageOf orders counts (count desc, value asc by bytes), cuts them to limit
// and reports how many distinct values were left out.
func ExplorePageOf(facet Facet, counts map[string]uint64, limit int, total, missing uint64, truncated bool) ExplorePage {
	buckets := make([]FacetBucket, 0, len(counts))
	for v, c := range counts {
		buckets = append(buckets, FacetBucket{Value: v, Count: c})
	}
	SortBuckets(buckets)
	more := uint64(0)
	if len(buckets) > limit {
		more = uint64(len(buckets) - limit)
		buckets = buckets[:limit]
	}
	return ExplorePage{Facet: facet, Buckets: buckets, Total: total, Missing: missing, MoreBuckets: more, Truncated: truncated}
}

// SortBuckets orders buckets by count descending, then value ascending (byte order).
func SortBuckets(b []FacetBucket) {
	sort.Slice(b, func(i, j int) bool {
		if b[i].Count != b[j].Count {
			return b[i].Count > b[j].Count
		}
		return b[i].Value < b[j].Value
	})
}

// ExploreByListing is the reference's default explore: page through list and count.
// Listings carry no status, so the status facet counts every record as active;
// engines that keep statuses override explore.
func ExploreByListing(ctx context.Context, e Engine, req ExploreRequest) (ExplorePage, error) {
	if err := req.Validate(); err != nil {
		return ExplorePage{}, err
	}
	scan := req.ScanLimitOr()
	counts := map[string]uint64{}
	var total, missing uint64
	read := 0
	var cursor *string
	for {
		page, err := e.List(ctx, ListRequest{Filter: req.Filter, Limit: min(ScanPage, scan-read), Cursor: cursor})
		if err != nil {
			return ExplorePage{}, err
		}
		for i := range page.Items {
			h := &page.Items[i]
			total++
			vals := req.Facet.Values(h.Kind, &h.Meta, StatusActive)
			if len(vals) == 0 {
				missing++
			}
			for _, v := range vals {
				counts[v]++
			}
		}
		read += len(page.Items)
		if page.NextCursor == nil {
			return ExplorePageOf(req.Facet, counts, req.Limit, total, missing, false), nil
		}
		if read >= scan {
			return ExplorePageOf(req.Facet, counts, req.Limit, total, missing, true), nil
		}
		cursor = page.NextCursor
	}
}

// GetByListing is the reference's default get: page the reach's listing and pick the ids.
func GetByListing(ctx context.Context, e Engine, req GetRequest) ([]Hit, error) {
	if err := req.Validate(); err != nil {
		return nil, err
	}
	want := make(map[string]bool, len(req.IDs))
	for _, id := range req.IDs {
		want[id] = true
	}
	found := map[string]Hit{}
	var cursor *string
	for {
		page, err := e.List(ctx, ListRequest{Filter: MetaFilter{Reach: req.Reach}, Limit: ScanPage, Cursor: cursor})
		if err != nil {
			return nil, err
		}
		for _, h := range page.Items {
			if want[h.ID] {
				found[h.ID] = h
			}
		}
		if len(found) == len(want) || page.NextCursor == nil {
			break
		}
		cursor = page.NextCursor
	}
	return InRequestOrder(req.IDs, found), nil
}

// ForgetWithinByGet is the reference's default forget_within: read the ids back
// under the reach in chunks of 200 and forget only those found.
func ForgetWithinByGet(ctx context.Context, e Engine, ids []string, reach Reach) (ForgetReport, error) {
	ids, err := ForgetWithinIDs(ids)
	if err != nil {
		return ForgetReport{}, err
	}
	hits, err := GetInChunks(ctx, e, ids, &reach)
	if err != nil {
		return ForgetReport{}, err
	}
	var found []string
	for _, h := range hits {
		found = append(found, h.ID)
	}
	if len(found) == 0 {
		return ForgetReport{}, nil
	}
	return e.Forget(ctx, ForgetIDs(found...))
}
