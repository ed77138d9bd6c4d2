package conformance

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"mnemo/contract"
)

// maxPages bounds every paging loop so a cursor that never ends fails the check
// instead of hanging the suite.
const maxPages = 10000

func (r *run) meta() contract.MemoryMeta {
	ws := r.workspace
	return contract.MemoryMeta{Workspace: &ws, Source: contract.SourceRef{Kind: contract.SourceAgent}}
}

func (r *run) filter() contract.MetaFilter {
	ws := r.workspace
	return contract.MetaFilter{Workspace: &ws}
}

func (r *run) probeFilter() contract.MetaFilter {
	ws := r.probeWorkspace
	return contract.MetaFilter{Workspace: &ws}
}

// tagFilter is the run filter narrowed to one tag.
func (r *run) tagFilter(tag string) contract.MetaFilter {
	f := r.filter()
	f.TagsAny = []string{tag}
	return f
}

// document is a text document "{marker} {label} note".
func (r *run) document(label string, meta contract.MemoryMeta) contract.StoreItem {
	return contract.Document(fmt.Sprintf("%s %s note", r.marker, label), meta)
}

// taggedMeta is the run meta with tags.
func (r *run) taggedMeta(tags ...string) contract.MemoryMeta {
	m := r.meta()
	m.Tags = tags
	return m
}

func (r *run) ns(path string) contract.Namespace {
	return contract.MustNamespace(path)
}

func (r *run) remember(ids ...string) { r.stored = append(r.stored, ids...) }

// store writes one item and remembers its id for cleanup.
func (r *run) store(it contract.StoreItem) (contract.StoreReceipt, error) {
	// The fingerprint, not the receipt, is remembered: cleanup must never forget
	// an id a faulty engine made up, which could name someone else's item.
	r.remember(it.Fingerprint())
	rec, err := contract.Store(r.ctx, r.e, it)
	if err != nil {
		return rec, engineErr(err)
	}
	return rec, nil
}

func (r *run) storeWith(it contract.StoreItem, opts contract.WriteOptions) (contract.StoreReceipt, error) {
	r.remember(it.Fingerprint())
	rec, err := r.e.StoreWith(r.ctx, it, opts)
	if err != nil {
		return rec, engineErr(err)
	}
	return rec, nil
}

func (r *run) storeMany(items []contract.StoreItem) ([]contract.StoreReceipt, error) {
	for _, it := range items {
		r.remember(it.Fingerprint())
	}
	recs, err := contract.StoreMany(r.ctx, r.e, items)
	if err != nil {
		return recs, engineErr(err)
	}
	return recs, nil
}

// storeNew stores items that must all be new and returns their ids.
func (r *run) storeNew(items ...contract.StoreItem) ([]string, error) {
	ids := make([]string, len(items))
	for i, it := range items {
		rec, err := r.store(it)
		if err != nil {
			return nil, err
		}
		if rec.Replayed {
			return nil, fail("storing a new item reported a replay")
		}
		ids[i] = rec.ID
	}
	return ids, nil
}

// listAll pages through a listing two items at a time, as the reference does.
func (r *run) listAll(f contract.MetaFilter) ([]contract.Hit, error) {
	var out []contract.Hit
	var cursor *string
	seen := map[string]bool{}
	for range maxPages {
		page, err := r.e.List(r.ctx, contract.ListRequest{Filter: f, Limit: 2, Cursor: cursor})
		if err != nil {
			return nil, engineErr(err)
		}
		for _, h := range page.Items {
			if h.Score != 0 {
				return nil, fail("a listing returned a hit with a non-zero score")
			}
		}
		out = append(out, page.Items...)
		if page.NextCursor == nil {
			return out, nil
		}
		if seen[*page.NextCursor] {
			return nil, fail("the listing cursor `%s` repeated; paging never ends", *page.NextCursor)
		}
		seen[*page.NextCursor] = true
		cursor = page.NextCursor
	}
	return nil, fail("listing did not end within 10000 pages")
}

// exportAll pages through an export two items at a time. An Unsupported answer
// on the first page is returned as is, so callers can skip.
func (r *run) exportAll(f contract.MetaFilter) ([]contract.Exported, error) {
	var out []contract.Exported
	var cursor *string
	seen := map[string]bool{}
	for page := 0; page < maxPages; page++ {
		p, err := r.e.Export(r.ctx, contract.ListRequest{Filter: f, Limit: 2, Cursor: cursor})
		if err != nil {
			if page == 0 && errors.Is(err, contract.ErrUnsupported) {
				return nil, err
			}
			return nil, engineErr(err)
		}
		if len(p.Incomplete) > 0 {
			return nil, fail("export named incomplete items %v", p.Incomplete)
		}
		out = append(out, p.Items...)
		if p.NextCursor == nil {
			return out, nil
		}
		if seen[*p.NextCursor] {
			return nil, fail("the export cursor `%s` repeated; paging never ends", *p.NextCursor)
		}
		seen[*p.NextCursor] = true
		cursor = p.NextCursor
	}
	return nil, fail("export did not end within 10000 pages")
}

// fetchAll follows fetch cursors to the end and returns every hit.
func (r *run) fetchAll(req contract.FetchRequest) ([]contract.Hit, error) {
	var out []contract.Hit
	seen := map[string]bool{}
	for range maxPages {
		p, err := r.e.Fetch(r.ctx, req)
		if err != nil {
			return nil, engineErr(err)
		}
		out = append(out, p.Hits...)
		if p.NextCursor == nil {
			return out, nil
		}
		if seen[*p.NextCursor] {
			return nil, fail("the %s fetch cursor `%s` repeated; paging never ends", req.Mode, *p.NextCursor)
		}
		seen[*p.NextCursor] = true
		req.Cursor = p.NextCursor
	}
	return nil, fail("%s fetch did not end within 10000 pages", req.Mode)
}

// getRecords reads whole records by id in chunks of the get limit.
func (r *run) getRecords(ids []string, reach *contract.Reach) ([]contract.Record, error) {
	out, err := contract.GetRecordsInChunks(r.ctx, r.e, ids, reach)
	if err != nil {
		return nil, engineErr(err)
	}
	return out, nil
}

func hitIDs(hits []contract.Hit) []string {
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = h.ID
	}
	return out
}

func recordIDs(recs []contract.Record) []string {
	out := make([]string, len(recs))
	for i, h := range recs {
		out[i] = h.ID
	}
	return out
}

// sameSet tells whether got holds exactly the ids of want, each once.
func sameSet(got, want []string) bool {
	a := slices.Clone(got)
	b := slices.Clone(want)
	sort.Strings(a)
	sort.Strings(b)
	return slices.Equal(a, b)
}

func setString(ids []string) string {
	s := slices.Clone(ids)
	sort.Strings(s)
	return "{" + strings.Join(s, ", ") + "}"
}

func count(ids []string, id string) int {
	n := 0
	for _, x := range ids {
		if x == id {
			n++
		}
	}
	return n
}

// wireJSON is a value's wire JSON, used to compare items and metadata the way
// every boundary sees them (so pointer identity and time zones never matter).
func wireJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return "<unencodable: " + err.Error() + ">"
	}
	return string(b)
}

// wantKind checks err is a contract error of kind.
func wantKind(err error, kind contract.ErrorKind, what string) error {
	if err == nil {
		return fail("%s was accepted; want a %s error", what, kind)
	}
	if !errors.Is(err, &contract.Error{Kind: kind}) {
		return fail("%s answered `%v`; want a %s error", what, err, kind)
	}
	return nil
}

// wantCode checks err is an invalid-request error with a browse code.
func wantCode(err error, code, what string) error {
	if err == nil {
		return fail("%s was accepted; want a %s error", what, code)
	}
	if !errors.Is(err, &contract.Error{Kind: contract.KindInvalidRequest, Code: code}) {
		return fail("%s answered `%v`; want an invalid request with code %s", what, err, code)
	}
	return nil
}

func confEqual(a *contract.F32, b *float32) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return float32(*a) == *b
}

func trimmed(s string) string { return strings.TrimSpace(s) }
