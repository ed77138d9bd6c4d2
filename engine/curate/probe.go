package curate

import (
	"context"
	"encoding/binary"
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

// Postings are the content words of a set of records, by kind, for finding
// the records a new one may relate to without holding the records: for each
// record (by a number the caller gives each, an ordinal) its words, and for
// each word the records whose prefix holds it. A record's prefix is its
// len-ceil(t*len)+1 first words in one order fixed for the life of the
// Postings (rarest first, by how many records said the word when Freeze was
// called; later words first of all): two records whose words overlap at t
// share a word of their prefixes, so only prefixes are posted (the all-pairs
// prefix filter Find uses), and a candidate is kept only when the words the
// two share reach t. A store's clusterer keeps it for every record, at
// about 6 bytes a word said. It is not safe for concurrent use.
type Postings struct {
	cfg   Config
	vocab map[string]int32
	df    []int32
	// frozen is each word's df when Freeze was called (words since: 0);
	// nil before, when nothing is posted.
	frozen []int32
	// post[k][w] are the records of kind kinds[k-1] whose prefix holds word w.
	post  [][][]posting
	kinds []contract.ItemKind
	// Record n says count[n] words, of kind kinds[kind[n]-1]; its word ids,
	// sorted, are varints of their gaps at words[off[n]:] (about a byte
	// and a half a word, where int32s took four).
	words []byte
	off   []uint64
	count []uint16
	kind  []uint8
	// scratch holds a candidate's words while they are compared.
	scratch []int32
	// overlap[n] counts the prefix words a candidate shares with the
	// probe so far (-1: it cannot reach the floor); touched lists them.
	overlap []int32
	touched []uint32
}

// posting is a record in a word's postings, and the word's place in the
// record's prefix (for the positional filter).
type posting struct {
	n   uint32
	pos uint32
}

// NewPostings answers empty postings for the given thresholds.
func NewPostings(cfg Config) *Postings {
	return &Postings{cfg: cfg, vocab: map[string]int32{}}
}

// Read keeps a probe's record's words under number n (replacing what n
// had). A record too short to cluster is kept as saying nothing.
func (ps *Postings) Read(p *Probe, n uint32) {
	if int(n) >= len(ps.off) {
		grow := int(n) + 1 - len(ps.off)
		ps.off = append(ps.off, make([]uint64, grow)...)
		ps.count = append(ps.count, make([]uint16, grow)...)
		ps.kind = append(ps.kind, make([]uint8, grow)...)
	}
	ps.count[n] = 0
	if !p.Clusterable() {
		return
	}
	e := &p.ix.entries[0]
	ids := make([]int32, 0, len(e.words))
	for _, w := range e.words {
		text := p.ix.word[w]
		id, ok := ps.vocab[text]
		if !ok {
			id = int32(len(ps.df))
			ps.vocab[text] = id
			ps.df = append(ps.df, 0)
		}
		ps.df[id]++
		ids = append(ids, id)
	}
	slices.Sort(ids)
	k := slices.Index(ps.kinds, e.kind)
	if k < 0 {
		ps.kinds = append(ps.kinds, e.kind)
		ps.post = append(ps.post, nil)
		k = len(ps.kinds) - 1
	}
	ps.off[n], ps.count[n], ps.kind[n] = uint64(len(ps.words)), uint16(min(len(ids), math.MaxUint16)), uint8(k+1)
	prev := int32(0)
	for _, id := range ids[:ps.count[n]] {
		ps.words = binary.AppendUvarint(ps.words, uint64(id-prev))
		prev = id
	}
}

// wordsOf decodes record n's word ids into buf.
func (ps *Postings) wordsOf(n uint32, buf []int32) []int32 {
	buf = buf[:0]
	b := ps.words[ps.off[n]:]
	prev := int32(0)
	for range int(ps.count[n]) {
		d, k := binary.Uvarint(b)
		b = b[k:]
		prev += int32(d)
		buf = append(buf, prev)
	}
	return buf
}

// Freeze fixes the order of words by how many records said each so far,
// and posts every record read.
func (ps *Postings) Freeze() {
	// Not slices.Clone: it answers nil for an empty store's nil df, and
	// nil means not frozen (nothing would ever be posted).
	ps.frozen = make([]int32, len(ps.df))
	copy(ps.frozen, ps.df)
	for n := range ps.off {
		ps.Post(uint32(n))
	}
}

// Frozen tells whether Freeze was called.
func (ps *Postings) Frozen() bool { return ps.frozen != nil }

// before orders word ids rarest first, as frozen.
func (ps *Postings) before(a, b int32) int {
	fa, fb := ps.frozenDf(a), ps.frozenDf(b)
	if fa != fb {
		return int(fa - fb)
	}
	return int(a - b)
}

func (ps *Postings) frozenDf(id int32) int32 {
	if int(id) < len(ps.frozen) {
		return ps.frozen[id]
	}
	return 0
}

// prefix answers record n's prefix words.
func (ps *Postings) prefix(n uint32) []int32 {
	c := int(ps.count[n])
	pre := ps.wordsOf(n, nil)
	slices.SortFunc(pre, ps.before)
	need := int(math.Ceil(ps.cfg.MinOverlap * float64(c)))
	return pre[:min(c, c-need+1)]
}

// Post posts record n's prefix (after Freeze; read first).
func (ps *Postings) Post(n uint32) {
	if ps.frozen == nil || int(n) >= len(ps.count) || ps.count[n] == 0 {
		return
	}
	k := ps.kind[n] - 1
	post := ps.post[k]
	if len(post) < len(ps.df) {
		post = append(post, make([][]posting, len(ps.df)-len(post))...)
	}
	for i, id := range ps.prefix(n) {
		post[id] = append(post[id], posting{n, uint32(i)})
	}
	ps.post[k] = post
}

// Candidates answers the posted records below number below of record n's
// kind (other than n) whose words overlap n's at cfg.MinOverlap, each once,
// in no order: every such record it can relate to is among them (after
// Freeze; n read). As in Find, the prefix words two records share are
// counted while a bound on what the rest could add still reaches the floor,
// and the pairs left are counted in full.
func (ps *Postings) Candidates(n, below uint32) []uint32 {
	if ps.frozen == nil || int(n) >= len(ps.count) || ps.count[n] == 0 {
		return nil
	}
	post := ps.post[ps.kind[n]-1]
	if len(ps.overlap) < len(ps.off) {
		ps.overlap = append(ps.overlap, make([]int32, len(ps.off)-len(ps.overlap))...)
	}
	mine := ps.wordsOf(n, nil)
	size := len(mine)
	t := ps.cfg.MinOverlap
	lo, hi := t*float64(size), float64(size)/t
	ps.touched = ps.touched[:0]
	for i, id := range ps.prefix(n) {
		if int(id) >= len(post) {
			continue
		}
		for _, y := range post[id] {
			c := y.n
			if c >= below || c == n || ps.overlap[c] < 0 {
				continue
			}
			m := int(ps.count[c])
			if float64(m) < lo || float64(m) > hi || ps.kind[c] != ps.kind[n] {
				continue
			}
			need := int32(math.Ceil(t/(1+t)*float64(size+m) - 1e-9))
			bound := 1 + int32(min(size-i-1, m-int(y.pos)-1))
			if ps.overlap[c] == 0 {
				ps.touched = append(ps.touched, c)
			}
			if ps.overlap[c]+bound >= need {
				ps.overlap[c]++
			} else {
				ps.overlap[c] = -1
			}
		}
	}
	var out []uint32
	for _, c := range ps.touched {
		if ps.overlap[c] > 0 {
			m := int(ps.count[c])
			ps.scratch = ps.wordsOf(c, ps.scratch)
			theirs := ps.scratch
			shared := 0
			for i, j := 0, 0; i < len(mine) && j < len(theirs); {
				switch {
				case mine[i] < theirs[j]:
					i++
				case mine[i] > theirs[j]:
					j++
				default:
					shared++
					i++
					j++
				}
			}
			if float64(shared) >= t*float64(size+m-shared) {
				out = append(out, c)
			}
		}
		ps.overlap[c] = 0
	}
	return out
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
// a scope as FindIn answers them.
type Kept interface {
	KeptClusters(ctx context.Context, filter contract.MetaFilter, cfg Config) (KeptAnswer, error)
}

// KeptAnswer is a Kept engine's answer for a scope.
type KeptAnswer struct {
	// Kept: the clusters are answered. False when the engine cannot answer
	// for these thresholds yet: the store is still being clustered (Phase,
	// Done and Total say how far), or with other thresholds, or not at all.
	Kept bool `json:"kept"`
	// Records is how many records the scope holds; Clusters its clusters.
	Records  int       `json:"records"`
	Clusters []Cluster `json:"clusters"`
	// Phase is what the store's clustering does while Kept is false:
	// "reading" its records' words, "clustering" them, "" neither.
	Phase string `json:"phase,omitempty"`
	Done  int64  `json:"done,omitempty"`
	Total int64  `json:"total,omitempty"`
}

// Clusters answers the clusters of a scope, how many records it holds, and
// whether they were read from what the engine keeps (Kept: engine/bolt in
// the process holding the store, or that process through its socket or a
// server) rather than found by a pass over the scope (FindIn).
func Clusters(ctx context.Context, e contract.Engine, filter contract.MetaFilter, cfg Config) ([]Cluster, int, bool, error) {
	if k, ok := e.(Kept); ok {
		a, err := k.KeptClusters(ctx, filter, cfg)
		if err != nil || a.Kept {
			return a.Clusters, a.Records, a.Kept, err
		}
	}
	cs, n, err := FindIn(ctx, e, filter, cfg)
	return cs, n, false, err
}
