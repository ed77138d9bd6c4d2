package common

import (
	"mnemo/contract"
	"mnemo/engine/curate"
)

// Clusters is what the shell's background clustering found in the session's
// base scope (engine/curate): repeats and conflicts for a person to resolve.
// A value is never changed once handed out; the shell replaces it.
type Clusters struct {
	// List holds the visible clusters (dismissed ones left out), largest
	// first, then most recent.
	List []curate.Cluster
	// Of maps each clustered record's id to its cluster's index in List.
	Of map[string]int
	// Records is how many records were clustered (the base scope's active
	// and candidate records).
	Records int
	// Dismissed is how many clusters a dismissal hides.
	Dismissed int
	// TooMany, when above 0, is the record count of the scope the session
	// tried, over the most it clusters (List is then empty): drill into a
	// narrower scope, or run `mnemo clusters --filter`.
	TooMany int
	// Pending says the store is being clustered in the background (the
	// process holding it clusters all of it): its phase ("reading" the
	// records' words, "clustering" them) and Done of Total records. The
	// shell asks again until the store's clusters answer.
	Pending      string
	PendingDone  int64
	PendingTotal int64
	// Scoped says the base scope was too large, so these are the clusters
	// of the drill-down scope the session had (ScopeGen) when it ran: a new
	// scope clusters again.
	Scoped   bool
	ScopeGen int
	// Err is why clustering failed, nil when it did not.
	Err error
}

// In tells whether the record is in a cluster (nil-safe: no clusters yet).
func (c *Clusters) In(id string) bool {
	if c == nil {
		return false
	}
	_, ok := c.Of[id]
	return ok
}

// Len is how many clusters there are (0 while unknown).
func (c *Clusters) Len() int {
	if c == nil {
		return 0
	}
	return len(c.List)
}

// Count is how many clustered records q admits (a view's "N in clusters").
func (c *Clusters) Count(q contract.BrowseQuery) int {
	if c == nil {
		return 0
	}
	q.Limit, q.Cursor = 0, ""
	n := 0
	for _, cl := range c.List {
		for i := range cl.Members {
			if q.Matches(&cl.Members[i]) {
				n++
			}
		}
	}
	return n
}

// ClustersMsg tells the views that Common.Clusters changed: the rows that
// mark clustered records draw again.
type ClustersMsg struct{}

// ResolveMsg asks the shell to resolve clusters: each step keeps one member
// and supersedes the rest by it (curate.Apply), undoable with u.
type ResolveMsg struct {
	Steps []curate.Step
	// What says what was resolved, for the footer ("kept the newest of 3").
	What string
}

// DismissMsg asks the shell to dismiss a cluster ("these are different"),
// undoable with u.
type DismissMsg struct{ Cluster curate.Cluster }

// Supersedes are the contract requests a resolution made, for its undo.
type Supersedes = []contract.SupersedeRequest
