package curate

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"time"

	"mnemo/contract"
)

// Scope reads the records of a filter that curation looks at: every active
// and candidate record (superseded ones are already resolved), paging browse
// to the end, so counts are exact for the scope.
func Scope(ctx context.Context, e contract.Engine, filter contract.MetaFilter) ([]contract.Record, error) {
	var out []contract.Record
	err := eachInScope(ctx, e, filter, func(page []contract.Record, total int) {
		if out == nil && total > 0 {
			out = make([]contract.Record, 0, total)
		}
		out = append(out, page...)
	})
	return out, err
}

// eachInScope hands the records Scope reads to fn a browse page at a time,
// with how many the scope holds (the browse's exact total).
func eachInScope(ctx context.Context, e contract.Engine, filter contract.MetaFilter, fn func(page []contract.Record, total int)) error {
	q := contract.BrowseQuery{Filter: filter, Status: []contract.Status{contract.StatusActive, contract.StatusCandidate},
		Limit: contract.BrowseMaxLimit}
	for {
		page, err := e.Browse(ctx, q)
		if err != nil {
			return err
		}
		fn(page.Records, page.Total)
		if page.Continuation == nil || len(page.Records) == 0 {
			return nil
		}
		q.Cursor = *page.Continuation
	}
}

// Keep says which member of a cluster a resolution keeps.
type Keep string

// Keepers.
const (
	// KeepNewest keeps the member observed last (observed_at, else created_at).
	KeepNewest Keep = "newest"
	// KeepConfident keeps the most confident member (then the newest).
	KeepConfident Keep = "confident"
)

// ParseKeep reads a keeper name.
func ParseKeep(s string) (Keep, error) {
	switch Keep(s) {
	case KeepNewest, KeepConfident:
		return Keep(s), nil
	}
	return "", contract.Invalid("unknown keeper %q (expected newest or confident)", s)
}

func confidence(r contract.Record) float64 {
	if r.Confidence == nil {
		return -1
	}
	return float64(*r.Confidence)
}

// Keeper answers the member a resolution keeps.
func Keeper(c Cluster, keep Keep) contract.Record {
	best := c.Members[0] // members come newest first
	if keep == KeepConfident {
		for _, m := range c.Members[1:] {
			if confidence(m) > confidence(best) {
				best = m
			}
		}
	}
	return best
}

// Step is the resolution of one cluster: Keep stays, Supersede are superseded by it.
type Step struct {
	Cluster   string   `json:"cluster"`
	Keep      string   `json:"keep"`
	Supersede []string `json:"supersede"`
}

// Plan answers the steps resolving clusters with the given keeper.
func Plan(clusters []Cluster, keep Keep) []Step {
	out := make([]Step, 0, len(clusters))
	for _, c := range clusters {
		out = append(out, StepKeeping(c, Keeper(c, keep).ID))
	}
	return out
}

// StepKeeping answers the step that keeps one member (by id) and supersedes the rest.
func StepKeeping(c Cluster, keep string) Step {
	s := Step{Cluster: c.Key, Keep: keep, Supersede: []string{}}
	for _, m := range c.Members {
		if m.ID != keep {
			s.Supersede = append(s.Supersede, m.ID)
		}
	}
	return s
}

// Done is one supersede a resolution made; Undo takes it back.
type Done struct {
	ID string `json:"id"`
	By string `json:"by"`
	// Was is the record's status before (omitted: active): undo gives a
	// candidate back as a candidate, not approved.
	Was contract.Status `json:"was,omitempty"`
}

// Apply supersedes, step by step, each member by its step's keeper through
// the contract (audited and in the change feed like any supersede). If one
// fails, what this call already did is undone before the error is answered,
// so a resolution is all or nothing. It answers what it did, for Undo.
func Apply(ctx context.Context, e contract.Engine, steps []Step) ([]Done, error) {
	var done []Done
	for _, s := range steps {
		was, err := statuses(ctx, e, s.Supersede)
		if err != nil {
			if uerr := Undo(context.WithoutCancel(ctx), e, done); uerr != nil {
				return nil, fmt.Errorf("reading the members of cluster %s: %w (and undoing the %d supersedes before it: %v)", s.Cluster, err, len(done), uerr)
			}
			return nil, err
		}
		for _, id := range s.Supersede {
			if _, err := e.Supersede(ctx, contract.SupersedeRequest{ID: id, By: s.Keep}); err != nil {
				if uerr := Undo(context.WithoutCancel(ctx), e, done); uerr != nil {
					return nil, fmt.Errorf("superseding %s by %s: %w (and undoing the %d supersedes before it: %v)", id, s.Keep, err, len(done), uerr)
				}
				return nil, err
			}
			d := Done{ID: id, By: s.Keep}
			if was[id] == contract.StatusCandidate {
				d.Was = contract.StatusCandidate
			}
			done = append(done, d)
		}
	}
	return done, nil
}

// statuses reads the status of each record of ids (in batches a get takes).
func statuses(ctx context.Context, e contract.Engine, ids []string) (map[string]contract.Status, error) {
	out := make(map[string]contract.Status, len(ids))
	for lo := 0; lo < len(ids); lo += contract.MaxGetIDs {
		recs, err := e.GetRecords(ctx, contract.GetRequest{IDs: ids[lo:min(lo+contract.MaxGetIDs, len(ids))]})
		if err != nil {
			return nil, err
		}
		for _, r := range recs {
			out[r.ID] = r.Status
		}
	}
	return out, nil
}

// Undo takes supersedes back, last first: each record has its status of
// before again (active, or a candidate).
func Undo(ctx context.Context, e contract.Engine, done []Done) error {
	var errs []error
	for i := len(done) - 1; i >= 0; i-- {
		d := done[i]
		if _, err := e.Supersede(ctx, contract.SupersedeRequest{ID: d.ID, By: d.By, Undo: true, Status: d.Was}); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Beliefs answers the contract's beliefs for the records of a reach: one
// learning per cluster, tagged belief, with the kept statement (the newest
// member's text), a confidence drawn from the members (their mean, each
// without one counting 0.5, times the share that agree with the kept one),
// and the members as evidence. Ranked for the query when one is given (by
// word overlap), else most confident then newest; at most req.Limit.
func Beliefs(ctx context.Context, e contract.Engine, req contract.BeliefsRequest, cfg Config) ([]contract.Hit, error) {
	if err := req.Validate(); err != nil {
		return nil, err
	}
	reach := req.Reach
	clusters, _, _, err := Clusters(ctx, e, contract.MetaFilter{Reach: &reach}, cfg)
	if err != nil {
		return nil, err
	}
	out := make([]contract.Hit, 0, len(clusters))
	var latest []Cluster
	for _, c := range clusters {
		out = append(out, belief(c))
		latest = append(latest, c)
	}
	score := make([]float64, len(out))
	if req.Query != nil {
		q := extract(*req.Query)
		for i, h := range out {
			score[i] = overlap(q.words, extract(h.Text).words)
		}
	}
	idx := make([]int, len(out))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool {
		i, j := idx[a], idx[b]
		if score[i] != score[j] {
			return score[i] > score[j]
		}
		ci, cj := float64(*out[i].Confidence), float64(*out[j].Confidence)
		if ci != cj {
			return ci > cj
		}
		return latest[i].Latest.After(latest[j].Latest)
	})
	ranked := make([]contract.Hit, 0, min(req.Limit, len(out)))
	for _, i := range idx {
		if len(ranked) == req.Limit {
			break
		}
		if req.Query != nil && score[i] == 0 {
			continue
		}
		h := out[i]
		h.Score = contract.F32(score[i])
		ranked = append(ranked, h)
	}
	return ranked, nil
}

func belief(c Cluster) contract.Hit {
	keep := Keeper(c, KeepNewest)
	sum, agree := 0.0, 0
	for _, m := range c.Members {
		conf := confidence(m)
		if conf < 0 {
			conf = 0.5
		}
		sum += conf
		if c.SideOf(m.ID) == c.SideOf(keep.ID) {
			agree++
		}
	}
	n := float64(len(c.Members))
	conf := contract.F32(sum / n * float64(agree) / n)
	meta := keep.Meta
	meta.Tags = append(slices.Clone(meta.Tags), contract.BeliefTag)
	return contract.Hit{ID: "belief:" + c.Key, Kind: contract.KindLearning, Text: keep.Text, Meta: meta,
		Confidence: &conf, Evidence: c.IDs()}
}

func overlap(q, w []string) float64 {
	if len(q) == 0 {
		return 0
	}
	n := 0
	for _, x := range q {
		if _, ok := slices.BinarySearch(w, x); ok {
			n++
		}
	}
	return float64(n) / float64(len(q))
}

// Consolidate answers the contract's consolidate for an engine that derives
// beliefs on read (on_demand): nothing is stored, so it counts the clusters
// of the reach that beliefs would answer now, and completes.
func Consolidate(ctx context.Context, e contract.Engine, req contract.ConsolidateRequest, cfg Config) (contract.ConsolidateReceipt, error) {
	if err := req.Validate(); err != nil {
		return contract.ConsolidateReceipt{}, err
	}
	reach := req.Reach
	filter := contract.MetaFilter{Reach: &reach, Kinds: req.Kinds}
	records, err := Scope(ctx, e, filter)
	if err != nil {
		return contract.ConsolidateReceipt{}, err
	}
	nodes := map[string]bool{}
	for _, r := range records {
		nodes[r.Meta.Namespace.String()] = true
	}
	kinds := len(req.Kinds)
	if kinds == 0 {
		kinds = len(contract.ItemKinds())
	}
	built := len(Find(records, cfg))
	return contract.ConsolidateReceipt{Status: contract.ConsolidateCompleted, Scopes: len(nodes) * kinds, Built: &built}, nil
}

// RecentScope answers the scope of about the n most recently observed
// records (active and candidate): those observed at or after the n-th most
// recent observation (ties may add a few). With fewer records than n it is
// every observed record. Benchmarks use it for a scope of a given size.
func RecentScope(ctx context.Context, e contract.Engine, n int) (contract.MetaFilter, error) {
	q := contract.BrowseQuery{Status: []contract.Status{contract.StatusActive, contract.StatusCandidate},
		OrderBy: []contract.SortKey{{Field: "observed_at", Dir: "desc"}}, Offset: max(0, n-1), Limit: 1}
	page, err := e.Browse(ctx, q)
	if err != nil {
		return contract.MetaFilter{}, err
	}
	at := time.Time{}
	if len(page.Records) == 1 && page.Records[0].Meta.ObservedAt != nil {
		at = *page.Records[0].Meta.ObservedAt
	}
	return contract.MetaFilter{ObservedAfter: &at}, nil
}
