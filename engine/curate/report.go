package curate

import (
	"mnemo/contract"
)

// Report is the clusters of a scope as `mnemo clusters` prints them: exact
// counts for the scope, and for each cluster its members (suggested keeper
// first) and whether they conflict.
type Report struct {
	// Records is how many records the scope holds (active and candidate).
	Records int `json:"records"`
	// Clustered is how many records the clusters hold (all of them, not only
	// those printed under a limit).
	Clustered int `json:"clustered"`
	// Count is how many clusters the scope has; Conflicts how many of them conflict.
	Count     int `json:"count"`
	Conflicts int `json:"conflicts"`
	// Dismissed is how many clusters a dismissal hides.
	Dismissed int `json:"dismissed"`
	// Kept says the clusters were read from what the store keeps (the
	// process holding it clusters all of it in the background), not found
	// by a pass over the scope; both answer the same clusters.
	Kept     bool            `json:"kept"`
	Clusters []ClusterReport `json:"clusters"`
}

// ClusterReport is one cluster as printed.
type ClusterReport struct {
	Key         string            `json:"key"`
	Kind        contract.ItemKind `json:"kind"`
	Conflict    bool              `json:"conflict"`
	Differences []string          `json:"differences,omitempty"`
	Size        int               `json:"size"`
	Members     []MemberReport    `json:"members"`
}

// MemberReport is one member as printed.
type MemberReport struct {
	ID         string          `json:"id"`
	Text       string          `json:"text"`
	Status     contract.Status `json:"status"`
	When       string          `json:"when"`
	Namespace  string          `json:"namespace"`
	Source     string          `json:"source"`
	Agent      string          `json:"agent,omitempty"`
	Confidence *contract.F32   `json:"confidence,omitempty"`
	// Side is the value the member takes in a conflict: 0 agrees with the
	// suggested keeper (the first member), 1, 2, … each name another.
	Side int `json:"side"`
}

// NewReport builds the report of a scope's records and visible clusters,
// printing at most limit clusters (0: all).
func NewReport(records int, clusters []Cluster, dismissed, limit int) Report {
	r := Report{Records: records, Count: len(clusters), Dismissed: dismissed, Clusters: []ClusterReport{}}
	for i, c := range clusters {
		r.Clustered += len(c.Members)
		if c.Conflict {
			r.Conflicts++
		}
		if limit > 0 && i >= limit {
			continue
		}
		cr := ClusterReport{Key: c.Key, Kind: c.Kind, Conflict: c.Conflict, Differences: c.Differences, Size: len(c.Members)}
		for _, m := range c.Members {
			mr := MemberReport{ID: m.ID, Text: m.Text, Status: m.Status, When: contract.FormatMillis(When(m)),
				Namespace: m.Meta.Namespace.String(), Source: string(m.Meta.SourceKindOf()), Confidence: m.Confidence, Side: c.SideOf(m.ID)}
			if m.Meta.AgentID != nil {
				mr.Agent = *m.Meta.AgentID
			}
			cr.Members = append(cr.Members, mr)
		}
		r.Clusters = append(r.Clusters, cr)
	}
	return r
}
