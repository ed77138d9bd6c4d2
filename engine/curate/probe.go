package curate

import (
	"context"
	"math"
	"strings"

	"mnemo/contract"
)

// Probe relates one record to others, for a store that finds the candidates
// itself rather than holding every record's words in an Index: engine/bolt
// keeps a whole store's clusters this way, finding candidates with its
// content index (docs/curation.md). A Probe answers what Index.Add would
// link the record to, given every record its Keys lead to.
type Probe struct {
	ix *Index
	id string
}

// NewProbe reads a record's words.
func NewProbe(r contract.Record, cfg Config) *Probe {
	ix := NewIndex(cfg)
	ix.lean = true
	ix.enter(r)
	return &Probe{ix: ix, id: r.ID}
}

// Clusterable tells whether the record says enough to be clustered: at
// least cfg.MinWords content words.
func (p *Probe) Clusterable() bool { return len(p.ix.entries[0].words) >= p.ix.cfg.MinWords }

// Keys answers, for each of the record's content words, a lower-case
// substring that every text holding that word contains. Words are stems,
// and a stem is a prefix of what the text says ("wrap" of "wrapped"),
// except that "policies" is read as "policy": a stem ending in y is searched
// without it.
func (p *Probe) Keys() []string {
	words := p.ix.entries[0].words
	out := make([]string, len(words))
	for i, w := range words {
		k := p.ix.word[w]
		if strings.HasSuffix(k, "y") && len(k) > 3 {
			k = k[:len(k)-1]
		}
		out[i] = k
	}
	return out
}

// AnyOf answers how many of the record's words suffice to find every record
// it can relate to: a record it relates to holds at least one of any AnyOf
// of them (its words overlap at cfg.MinOverlap, so it shares all but
// AnyOf-1 of them). Searching by the rarest AnyOf keys finds them all.
func (p *Probe) AnyOf() int {
	n := len(p.ix.entries[0].words)
	need := int(math.Ceil(p.ix.cfg.MinOverlap * float64(n)))
	return min(n, n-need+1)
}

// Relate answers how another record relates to the probe's (None for itself,
// another kind, or a record too short to cluster), and what the two
// disagree on.
func (p *Probe) Relate(o contract.Record) (Relation, string) {
	a := &p.ix.entries[0]
	if o.ID == p.id || o.Kind != a.kind || len(a.words) < p.ix.cfg.MinWords {
		return None, ""
	}
	b := p.ix.read(o)
	if len(b.words) < p.ix.cfg.MinWords {
		return None, ""
	}
	return p.ix.relate(a, &b, p.ix.cfg)
}

// Edge is a relation between two records, as a store keeps it.
type Edge struct {
	A, B string
	Rel  Relation
	Diff string
}

// Assemble answers the clusters that edges make among members (records read
// whole; an edge naming a record not among them is left out): what Find
// answers over the same records, when the edges are every relation among
// them. Conflicts' sides are decided as hydrate decides them.
func Assemble(members []contract.Record, edges []Edge, cfg Config) []Cluster {
	ix := NewIndex(cfg)
	ix.entries = make([]entry, len(members))
	for i := range members {
		ix.entries[i] = entry{rec: &members[i], kind: members[i].Kind}
		ix.slots[members[i].ID] = int32(i)
	}
	for _, e := range edges {
		a, okA := ix.slots[e.A]
		b, okB := ix.slots[e.B]
		if okA && okB && a != b {
			ix.link(a, b, edge{e.Rel, e.Diff})
		}
	}
	return ix.Clusters()
}

// Kept is what an engine answers that keeps a whole store's clusters up to
// date (engine/bolt, in the process that holds the store): the clusters of
// a scope as FindIn answers them, and how many records the scope holds. It
// answers false, and nothing else, when it cannot answer for cfg yet (the
// store is still being clustered, or with other thresholds).
type Kept interface {
	KeptClusters(ctx context.Context, filter contract.MetaFilter, cfg Config) ([]Cluster, int, bool, error)
}
