package contract

import (
	"context"
	"strings"
	"time"
)

// RecordCounts is what a scope holds, in the words every surface uses (mnemo
// info, the demo, the TUI's header, browse): each record counted once, the
// expired ones apart whatever their status, so the parts add up to Total.
// Browse without expired records lists Total() - Expired; a browse of every
// status with no now lists Total().
type RecordCounts struct {
	Active     int `json:"active"`
	ToReview   int `json:"to_review"` // candidates
	Superseded int `json:"superseded"`
	Expired    int `json:"expired"`
	// InSandboxes counts the records in service sandboxes, which a scope
	// without a reach naming one never enters; only known for such a scope
	// on an engine that counts its namespaces (NamespaceCounter).
	InSandboxes int `json:"in_sandboxes,omitempty"`
}

// Total is every record of the scope, expired ones included, sandboxes not.
func (c RecordCounts) Total() int { return c.Active + c.ToReview + c.Superseded + c.Expired }

// Words says the counts for a person, each number formatted by n (the
// caller's thousands grouping): "1,431 active · 74 to review · 6 expired";
// parts that are zero are left out, but for active.
func (c RecordCounts) Words(n func(int) string) string {
	parts := []string{n(c.Active) + " active"}
	if c.ToReview > 0 {
		parts = append(parts, n(c.ToReview)+" to review")
	}
	if c.Superseded > 0 {
		parts = append(parts, n(c.Superseded)+" superseded")
	}
	if c.Expired > 0 {
		parts = append(parts, n(c.Expired)+" expired")
	}
	if c.InSandboxes > 0 {
		parts = append(parts, n(c.InSandboxes)+" in service sandboxes")
	}
	return strings.Join(parts, " · ")
}

// CountRecords counts what f's scope holds at now (RecordCounts): three
// exact browse totals (each status, expired records left out) and one of
// every record, plus the sandboxes when f names no reach. The one rule every
// surface counts by.
func CountRecords(ctx context.Context, e Engine, f MetaFilter, now time.Time) (RecordCounts, error) {
	var c RecordCounts
	now = now.UTC().Truncate(time.Millisecond)
	total := func(status []Status, at *time.Time) (int, error) {
		p, err := e.Browse(ctx, BrowseQuery{Filter: f, Status: status, Now: at, Limit: 1})
		return p.Total, err
	}
	var err error
	if c.Active, err = total([]Status{StatusActive}, &now); err != nil {
		return c, err
	}
	if c.ToReview, err = total([]Status{StatusCandidate}, &now); err != nil {
		return c, err
	}
	if c.Superseded, err = total([]Status{StatusSuperseded}, &now); err != nil {
		return c, err
	}
	all, err := total(nil, nil)
	if err != nil {
		return c, err
	}
	c.Expired = max(all-c.Active-c.ToReview-c.Superseded, 0)
	if f.Reach == nil {
		if nc, ok := e.(NamespaceCounter); ok {
			counts, err := nc.NamespaceCounts(ctx)
			if err != nil {
				return c, err
			}
			for _, sb := range Sandboxes(counts) {
				c.InSandboxes += sb.Records
			}
		}
	}
	return c, nil
}
