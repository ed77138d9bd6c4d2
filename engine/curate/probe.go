package curate

import (
	"context"
	"math"
	"slices"

	"mnemo/contract"
)

// Probe relates one record to others, for a store that keeps its records'
// words in Postings rather than every record in an Index: engine/bolt keeps
// a whole store's clusters this way (docs/curation.md). A Probe answers what
// Index.Add would link the record to, given the candidates Postings answers.
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

// anyOf answers how many of the record's words suffice to find every record
// it can relate to: a record it relates to holds at least one of any anyOf
// of them (its words overlap at cfg.MinOverlap, so it shares all but
// anyOf-1 of them). Searching by the rarest anyOf words finds them all.
func (p *Probe) anyOf() int {
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

// Postings are the content words of a set of records, by kind: for each
// word, the records (by a number the caller gives each, an ordinal) that say
// it, and for each record its words. It is what an Index keeps to find
// candidates, without the records' other features: a store's clusterer
// keeps it for every record, at about 8 bytes a word said. It is not safe
// for concurrent use.
type Postings struct {
	cfg   Config
	vocab map[string]int32
	post  map[contract.ItemKind][][]uint32
	df    []int32
	// words[off[n]:off[n]+int(count[n])] are record n's word ids, sorted.
	words []int32
	off   []uint32
	count []uint16
	// seen[n] == probe marks a record Candidates has answered already.
	seen  []uint32
	probe uint32
}

// NewPostings answers empty postings for the given thresholds.
func NewPostings(cfg Config) *Postings {
	return &Postings{cfg: cfg, vocab: map[string]int32{}, post: map[contract.ItemKind][][]uint32{}}
}

// Add posts a probe's record under number n (again: the record's words are
// replaced). A record too short to cluster is not posted.
func (ps *Postings) Add(p *Probe, n uint32) {
	if !p.Clusterable() {
		return
	}
	e := &p.ix.entries[0]
	post := ps.post[e.kind]
	ids := make([]int32, 0, len(e.words))
	for _, w := range e.words {
		text := p.ix.word[w]
		id, ok := ps.vocab[text]
		if !ok {
			id = int32(len(ps.df))
			ps.vocab[text] = id
			ps.df = append(ps.df, 0)
		}
		if int(id) >= len(post) {
			post = append(post, make([][]uint32, len(ps.df)-len(post))...)
		}
		ps.df[id]++
		post[id] = append(post[id], n)
		ids = append(ids, id)
	}
	ps.post[e.kind] = post
	slices.Sort(ids)
	if int(n) >= len(ps.off) {
		grow := int(n) + 1 - len(ps.off)
		ps.off = append(ps.off, make([]uint32, grow)...)
		ps.count = append(ps.count, make([]uint16, grow)...)
	}
	ps.off[n], ps.count[n] = uint32(len(ps.words)), uint16(min(len(ids), math.MaxUint16))
	ps.words = append(ps.words, ids[:ps.count[n]]...)
}

// Candidates answers the numbers of the posted records of the probe's kind
// whose words overlap the probe's at cfg.MinOverlap (each once, in no
// order): every posted record it can relate to is among them, found by the
// probe's rarest words and kept by counting the words the two share.
func (ps *Postings) Candidates(p *Probe) []uint32 {
	if !p.Clusterable() {
		return nil
	}
	e := &p.ix.entries[0]
	post := ps.post[e.kind]
	n := len(e.words)
	var mine, known []int32
	for _, w := range e.words {
		if id, ok := ps.vocab[p.ix.word[w]]; ok && int(id) < len(post) {
			known = append(known, id)
			mine = append(mine, id)
		} else {
			// A word no posted record says: searching by it finds
			// nothing, so it is the rarest there is.
			mine = append(mine, -1)
		}
	}
	slices.Sort(known)
	slices.SortFunc(mine, func(a, b int32) int { return int(ps.dfOf(a)) - int(ps.dfOf(b)) })
	if len(ps.seen) < len(ps.off) {
		ps.seen = append(ps.seen, make([]uint32, len(ps.off)-len(ps.seen))...)
	}
	ps.probe++
	if ps.probe == 0 {
		clear(ps.seen)
		ps.probe = 1
	}
	t := ps.cfg.MinOverlap
	lo, hi := t*float64(n), float64(n)/t
	var out []uint32
	for _, id := range mine[:p.anyOf()] {
		if id < 0 {
			continue
		}
		for _, c := range post[id] {
			if ps.seen[c] == ps.probe {
				continue
			}
			ps.seen[c] = ps.probe
			m := int(ps.count[c])
			if float64(m) < lo || float64(m) > hi {
				continue
			}
			theirs := ps.words[ps.off[c] : ps.off[c]+uint32(m)]
			shared := 0
			for i, j := 0, 0; i < len(known) && j < len(theirs); {
				switch {
				case known[i] < theirs[j]:
					i++
				case known[i] > theirs[j]:
					j++
				default:
					shared++
					i++
					j++
				}
			}
			if float64(shared) >= t*float64(n+m-shared) {
				out = append(out, c)
			}
		}
	}
	return out
}

func (ps *Postings) dfOf(id int32) int32 {
	if id < 0 {
		return 0
	}
	return ps.df[id]
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

// Clusters answers the clusters of a scope, how many records it holds, and
// whether they were read from what the engine keeps (Kept: engine/bolt in
// the process holding the store, or that process through its socket or a
// server) rather than found by a pass over the scope (FindIn).
func Clusters(ctx context.Context, e contract.Engine, filter contract.MetaFilter, cfg Config) ([]Cluster, int, bool, error) {
	if k, ok := e.(Kept); ok {
		cs, n, kept, err := k.KeptClusters(ctx, filter, cfg)
		if err != nil || kept {
			return cs, n, kept, err
		}
	}
	cs, n, err := FindIn(ctx, e, filter, cfg)
	return cs, n, false, err
}
