package curate

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"mnemo/contract"
)

// maxDifferences is the most differences a cluster names.
const maxDifferences = 5

// Relation is how two records of a cluster relate.
type Relation int

// Relations between two records.
const (
	None Relation = iota
	// Repeat: the same fact again (reworded, reordered, other metadata).
	Repeat
	// Conflict: the same subject with another value.
	Conflict
)

func (r Relation) String() string {
	switch r {
	case Repeat:
		return "repeat"
	case Conflict:
		return "conflict"
	}
	return "none"
}

// Cluster is a group of records of one kind that say the same thing. Members
// come suggested keeper first (the newest), then newest first.
type Cluster struct {
	// Key names the cluster by its members (the same members, the same key).
	Key      string            `json:"key"`
	Kind     contract.ItemKind `json:"kind"`
	Members  []contract.Record `json:"members"`
	Conflict bool              `json:"conflict"`
	// Differences are what the conflicting members disagree on, such as
	// "20 | 39" (the first few, sorted).
	Differences []string `json:"differences,omitempty"`
	// Latest is the newest member's time (observed_at, else created_at).
	Latest time.Time `json:"latest"`
	// Side maps a conflicting cluster's members to the side they take
	// (sidesOf): 0 is the suggested keeper's, and members on one side say
	// the same thing. Nil when every member agrees.
	Side map[string]int `json:"side,omitempty"`
}

// SideOf answers the side a member takes: 0 when it agrees with the
// suggested keeper, 1, 2, … for each other value.
func (c Cluster) SideOf(id string) int { return c.Side[id] }

// IDs answers the members' ids in order.
func (c Cluster) IDs() []string {
	out := make([]string, len(c.Members))
	for i, m := range c.Members {
		out[i] = m.ID
	}
	return out
}

// When answers when a record's memory was observed: observed_at, else created_at.
func When(r contract.Record) time.Time {
	if r.Meta.ObservedAt != nil {
		return *r.Meta.ObservedAt
	}
	return r.CreatedAt
}

type entry struct {
	// rec is the record whole; a lean index keeps only what clustering
	// reads of it, in kept (a Record is 328 bytes before its strings, and a
	// whole store's pass holds an entry for each of a million records).
	rec   *contract.Record
	kept  leanRecord
	kind  contract.ItemKind
	f     features
	words []int32 // interned content words, sorted
	names []int32 // the name words, sorted
	// subject is the first name the text says (-1: none).
	subject int32
	topics  []int32 // the words said twice or more, sorted
	gone    bool
}

// leanRecord is what a lean index keeps of a record: its id, status,
// confidence and times (Unix nanoseconds).
type leanRecord struct {
	id                         string
	status                     contract.Status
	confidence                 *contract.F32
	created, updated, observed int64
	hasObserved                bool
}

// record answers the entry's record: whole, or as much as a lean index keeps.
func (e *entry) record() contract.Record {
	if e.rec != nil {
		return *e.rec
	}
	k := e.kept
	r := contract.Record{ID: k.id, Kind: e.kind, Status: k.status, Confidence: k.confidence,
		CreatedAt: time.Unix(0, k.created).UTC(), UpdatedAt: time.Unix(0, k.updated).UTC()}
	if k.hasObserved {
		r.Meta.ObservedAt = contract.Ptr(time.Unix(0, k.observed).UTC())
	}
	return r
}

type edge struct {
	rel  Relation
	diff string
}

// Index keeps the clusters of a set of records up to date as records are
// added and removed. A new record is compared with the records it could
// relate to (those sharing one of its rarer words, found exactly by prefix
// filtering on the MinOverlap floor) and joins a cluster or starts one.
// Clusters answers the same clusters as Find over the same records,
// whatever the order they came in. An Index is not safe for concurrent use.
type Index struct {
	cfg      Config
	slots    map[string]int32
	entries  []entry
	vocab    map[string]int32
	word     []string // each interned word's text, by id
	df       []int32
	postings map[contract.ItemKind][][]int32 // by kind, then word id
	adj      map[int32]map[int32]edge
	// seen[slot] == probe marks a slot candidates has answered already in
	// this probe: a set without a map per record added.
	seen  []uint32
	probe uint32
	// lean keeps of each record only what clustering reads (FindIn): its
	// id, kind, times, status and confidence, beside its words. Clusters
	// then holds members without their text, and no sides.
	lean bool
}

// NewIndex answers an empty index with the given thresholds.
func NewIndex(cfg Config) *Index {
	return &Index{cfg: cfg, slots: map[string]int32{}, vocab: map[string]int32{},
		postings: map[contract.ItemKind][][]int32{}, adj: map[int32]map[int32]edge{}}
}

// Find answers the clusters of records, largest first, then most recent.
//
// It is the classic all-pairs prefix filter: with the whole set at hand,
// every record's words are ordered by how few records hold them, and only
// each record's prefix (its len-ceil(t*len)+1 rarest words) is indexed and
// probed; two records whose overlap reaches t share a prefix word. It finds
// the same pairs as Index, which probes its full postings instead.
func Find(records []contract.Record, cfg Config) []Cluster {
	ix := NewIndex(cfg)
	for _, r := range records {
		ix.enter(r)
	}
	return ix.join()
}

// FindIn answers Find's clusters of the records a filter's scope holds (as
// Scope reads them) and how many records that is, reading them a browse page
// at a time and keeping only what clustering needs of each: its words and
// values, id, kind, times, status and confidence. Only the members of the
// clusters found are then read whole (GetRecords). A whole store is clustered
// with its index in memory, not every record's text at once.
func FindIn(ctx context.Context, e contract.Engine, filter contract.MetaFilter, cfg Config) ([]Cluster, int, error) {
	ix := NewIndex(cfg)
	ix.lean = true
	n := 0
	err := eachInScope(ctx, e, filter, func(page []contract.Record, total int) {
		if n == 0 {
			// Room for the whole scope at once: a million entries grown
			// by appending held the old array and the new one together.
			ix.reserve(total)
		}
		for _, r := range page {
			ix.enter(r)
		}
		n += len(page)
	})
	if err != nil {
		return nil, n, err
	}
	clusters, err := hydrate(ctx, e, filter.Reach, ix.join(), cfg)
	return clusters, n, err
}

// hydrate reads the members of lean clusters whole, in their order, and
// decides the sides of the conflicting ones. A member gone or superseded
// since the scope was read leaves its cluster (renamed by its members left), and a cluster
// left with one member goes.
func hydrate(ctx context.Context, e contract.Engine, reach *contract.Reach, clusters []Cluster, cfg Config) ([]Cluster, error) {
	var ids []string
	for _, c := range clusters {
		ids = append(ids, c.IDs()...)
	}
	whole := make(map[string]contract.Record, len(ids))
	for lo := 0; lo < len(ids); lo += contract.MaxGetIDs {
		recs, err := e.GetRecords(ctx, contract.GetRequest{IDs: ids[lo:min(lo+contract.MaxGetIDs, len(ids))], Reach: reach})
		if err != nil {
			return nil, err
		}
		for _, r := range recs {
			r.Item = nil // as browse reads them (Scope, Find)
			whole[r.ID] = r
		}
	}
	kept := clusters[:0]
	for _, c := range clusters {
		members := c.Members[:0]
		for _, m := range c.Members {
			// Scope reads active and candidate records: one superseded
			// since is resolved already.
			if r, ok := whole[m.ID]; ok && r.Status != contract.StatusSuperseded {
				members = append(members, r)
			}
		}
		if len(members) < 2 {
			continue
		}
		if len(members) < len(c.Members) {
			c.Key = KeyOf(Cluster{Members: members}.IDs())
			c.Latest = When(members[0])
		}
		c.Members = members
		if c.Conflict {
			c.Side = map[string]int{}
			for i, side := range sidesOf(members, cfg) {
				c.Side[members[i].ID] = side
			}
		}
		kept = append(kept, c)
	}
	clear(clusters[len(kept):])
	SortClusters(kept)
	return kept, nil
}

// join finds the clusters of the records entered (Find).
func (ix *Index) join() []Cluster {
	cfg := ix.cfg
	df := make([]int32, len(ix.vocab))
	for i := range ix.entries {
		if e := &ix.entries[i]; !e.gone && len(e.words) >= cfg.MinWords {
			for _, w := range e.words {
				df[w]++
			}
		}
	}
	// Records are processed shortest first, so every earlier record is no
	// longer than the current one; postings keep each word's position in its
	// record's order for the positional filter (PPJoin).
	type posting struct{ slot, pos int32 }
	order := make([]int32, 0, len(ix.entries))
	for i := range ix.entries {
		if e := &ix.entries[i]; !e.gone && len(e.words) >= cfg.MinWords {
			order = append(order, int32(i))
		}
	}
	sort.SliceStable(order, func(i, j int) bool { return len(ix.entries[order[i]].words) < len(ix.entries[order[j]].words) })
	post := map[contract.ItemKind][][]posting{}
	overlap := make([]int32, len(ix.entries))
	var touched []int32
	var prefix []int32
	t := cfg.MinOverlap
	for _, x := range order {
		e := &ix.entries[x]
		n := len(e.words)
		prefix = append(prefix[:0], e.words...)
		sort.Slice(prefix, func(i, j int) bool {
			a, b := prefix[i], prefix[j]
			if df[a] != df[b] {
				return df[a] < df[b]
			}
			return a < b
		})
		prefix = prefix[:n-int(math.Ceil(t*float64(n)))+1]
		p := post[e.kind]
		if p == nil {
			p = make([][]posting, len(ix.vocab))
			post[e.kind] = p
		}
		lo := t * float64(n)
		touched = touched[:0]
		for i, w := range prefix {
			for _, y := range p[w] {
				m := len(ix.entries[y.slot].words)
				if float64(m) < lo || overlap[y.slot] < 0 {
					continue
				}
				need := int32(math.Ceil(t / (1 + t) * float64(n+m)))
				bound := 1 + int32(min(n-i-1, m-int(y.pos)-1))
				if overlap[y.slot] == 0 {
					touched = append(touched, y.slot)
				}
				if overlap[y.slot]+bound >= need {
					overlap[y.slot]++
				} else {
					overlap[y.slot] = -1
				}
			}
		}
		for _, y := range touched {
			if overlap[y] > 0 {
				if rel, diff := ix.relate(e, &ix.entries[y], cfg); rel != None {
					ix.link(x, y, edge{rel, diff})
				}
			}
			overlap[y] = 0
		}
		for i, w := range prefix {
			p[w] = append(p[w], posting{x, int32(i)})
		}
	}
	return ix.Clusters()
}

// reserve makes room for n more records.
func (ix *Index) reserve(n int) {
	ix.entries = slices.Grow(ix.entries, n)
	if len(ix.slots) == 0 {
		ix.slots = make(map[string]int32, n)
	}
}

// Len answers how many records the index holds.
func (ix *Index) Len() int { return len(ix.slots) }

// Add puts a record in the index (a record already there is replaced).
func (ix *Index) Add(r contract.Record) {
	slot := ix.enter(r)
	e := &ix.entries[slot]
	if len(e.words) < ix.cfg.MinWords {
		return
	}
	for _, other := range ix.candidates(e) {
		o := &ix.entries[other]
		if rel, diff := ix.relate(e, o, ix.cfg); rel != None {
			ix.link(slot, other, edge{rel, diff})
		}
	}
	post := ix.postings[r.Kind]
	if len(post) < len(ix.df) {
		post = append(post, make([][]int32, len(ix.df)-len(post))...)
	}
	for _, w := range e.words {
		ix.df[w]++
		post[w] = append(post[w], slot)
	}
	ix.postings[r.Kind] = post
}

// enter reads a record's words into a new entry (replacing one with its id)
// and answers its slot.
func (ix *Index) enter(r contract.Record) int32 {
	if _, ok := ix.slots[r.ID]; ok {
		ix.Remove(r.ID)
	}
	slot := int32(len(ix.entries))
	ix.entries = append(ix.entries, ix.read(r))
	ix.slots[r.ID] = slot
	return slot
}

// read reads a record's words into an entry, interning them.
func (ix *Index) read(r contract.Record) entry {
	e := entry{kind: r.Kind, f: extract(r.Text)}
	if !ix.lean {
		e.rec = &r
	} else {
		// Clones, so that nothing kept points into the record's text.
		e.kept = leanRecord{id: strings.Clone(r.ID), status: r.Status, confidence: r.Confidence,
			created: r.CreatedAt.UnixNano(), updated: r.UpdatedAt.UnixNano()}
		if r.Meta.ObservedAt != nil {
			e.kept.observed, e.kept.hasObserved = r.Meta.ObservedAt.UnixNano(), true
		}
		for i, v := range e.f.values {
			e.f.values[i] = strings.Clone(v)
		}
		e.f.subject = strings.Clone(e.f.subject)
	}
	e.words = make([]int32, len(e.f.words))
	for i, w := range e.f.words {
		id, ok := ix.vocab[w]
		if !ok {
			if ix.lean {
				w = strings.Clone(w)
			}
			id = int32(len(ix.df))
			ix.vocab[w] = id
			ix.word = append(ix.word, w)
			ix.df = append(ix.df, 0)
		}
		e.words[i] = id
	}
	slices.Sort(e.words)
	for _, id := range e.words {
		if e.f.names[ix.word[id]] {
			e.names = append(e.names, id)
		}
		if e.f.topics[ix.word[id]] {
			e.topics = append(e.topics, id)
		}
	}
	e.subject = -1
	if e.f.subject != "" {
		e.subject = ix.vocab[e.f.subject]
	}
	e.f.words, e.f.names, e.f.topics = nil, nil, nil
	return e
}

// candidates answers the live records of the same kind sharing a word with
// e's prefix: its len-ceil(t*len)+1 rarest words. A record whose overlap
// reaches t shares at least ceil(t*len) words with e, so it holds one of them.
func (ix *Index) candidates(e *entry) []int32 {
	n := len(e.words)
	need := int(math.Ceil(ix.cfg.MinOverlap * float64(n)))
	prefix := slices.Clone(e.words)
	sort.Slice(prefix, func(i, j int) bool {
		a, b := prefix[i], prefix[j]
		if ix.df[a] != ix.df[b] {
			return ix.df[a] < ix.df[b]
		}
		return a < b
	})
	prefix = prefix[:min(n, n-need+1)]
	var out []int32
	if len(ix.seen) < len(ix.entries) {
		ix.seen = append(ix.seen, make([]uint32, len(ix.entries)-len(ix.seen))...)
	}
	ix.probe++
	if ix.probe == 0 { // wrapped: old marks would read as this probe's
		clear(ix.seen)
		ix.probe = 1
	}
	lo, hi := ix.cfg.MinOverlap*float64(n), float64(n)/ix.cfg.MinOverlap
	post := ix.postings[e.kind]
	for _, w := range prefix {
		if int(w) >= len(post) {
			continue
		}
		for _, s := range post[w] {
			if ix.seen[s] == ix.probe {
				continue
			}
			ix.seen[s] = ix.probe
			o := &ix.entries[s]
			if m := float64(len(o.words)); !o.gone && m >= lo && m <= hi {
				out = append(out, s)
			}
		}
	}
	return out
}

func (ix *Index) link(a, b int32, e edge) {
	for _, p := range [][2]int32{{a, b}, {b, a}} {
		m := ix.adj[p[0]]
		if m == nil {
			m = map[int32]edge{}
			ix.adj[p[0]] = m
		}
		m[p[1]] = e
	}
}

// Remove takes a record out (forgotten or superseded); its cluster splits
// if it held it together.
func (ix *Index) Remove(id string) {
	slot, ok := ix.slots[id]
	if !ok {
		return
	}
	delete(ix.slots, id)
	ix.entries[slot].gone = true
	for other := range ix.adj[slot] {
		delete(ix.adj[other], slot)
		if len(ix.adj[other]) == 0 {
			delete(ix.adj, other)
		}
	}
	delete(ix.adj, slot)
}

// Relate answers how two records relate, and what they disagree on.
func Relate(a, b contract.Record, cfg Config) (Relation, string) {
	ix := NewIndex(cfg)
	ix.Add(a)
	ix.Add(b)
	if a.Kind != b.Kind {
		return None, ""
	}
	ea, eb := &ix.entries[0], &ix.entries[1]
	if len(ea.words) < cfg.MinWords || len(eb.words) < cfg.MinWords {
		return None, ""
	}
	return ix.relate(ea, eb, cfg)
}

// relate decides a pair: overlap of content words below the floor is no
// relation; a difference in values, negation or a name is a conflict at
// cfg.Conflict; otherwise a repeat at cfg.Repeat.
func (ix *Index) relate(a, b *entry, cfg Config) (Relation, string) {
	// Cheap rejections first: the sizes alone, then the shared count without
	// allocating; most candidates stop here.
	na, nb := float64(len(a.words)), float64(len(b.words))
	if min(na, nb) < cfg.MinOverlap*max(na, nb) {
		return None, ""
	}
	// Jaccard >= t means shared >= t/(1+t) * (na+nb): the count stops as
	// soon as what is left of the shorter list cannot reach it.
	need := int(math.Ceil(cfg.MinOverlap/(1+cfg.MinOverlap)*(na+nb) - 1e-9))
	shared := 0
	for i, j := 0, 0; i < len(a.words) && j < len(b.words); {
		if shared+min(len(a.words)-i, len(b.words)-j) < need {
			return None, ""
		}
		switch {
		case a.words[i] < b.words[j]:
			i++
		case a.words[i] > b.words[j]:
			j++
		default:
			shared++
			i++
			j++
		}
	}
	if float64(shared) < cfg.MinOverlap*float64(len(a.words)+len(b.words)-shared) {
		return None, ""
	}
	onlyA, onlyB, sim := compare(a.words, b.words)
	if sim < cfg.MinOverlap {
		return None, ""
	}
	if otherTopic(a, onlyA) || otherTopic(b, onlyB) {
		// Each says twice what the other never says: the same template
		// about two subjects (the user keyring, the process keyring).
		return None, ""
	}
	if ix.anotherSubject(a, onlyA, b, onlyB) {
		return None, ""
	}
	diff := ix.difference(a, b, onlyA, onlyB, sim, cfg)
	switch {
	case diff != "" && sim >= cfg.Conflict:
		return Conflict, diff
	case diff == "" && sim >= cfg.Repeat:
		return Repeat, ""
	}
	return None, ""
}

// compare answers the words only a has, those only b has (both sorted
// lists of word ids), and their Jaccard similarity (0 when both are empty).
func compare(a, b []int32) (onlyA, onlyB []int32, sim float64) {
	inter := 0
	for i, j := 0, 0; i < len(a) || j < len(b); {
		switch {
		case j == len(b) || (i < len(a) && a[i] < b[j]):
			onlyA = append(onlyA, a[i])
			i++
		case i == len(a) || b[j] < a[i]:
			onlyB = append(onlyB, b[j])
			j++
		default:
			inter++
			i++
			j++
		}
	}
	if u := inter + len(onlyA) + len(onlyB); u > 0 {
		sim = float64(inter) / float64(u)
	}
	return onlyA, onlyB, sim
}

// otherTopic tells whether one of e's words that the other record lacks is
// one e says twice or more: a subject of its own.
func otherTopic(e *entry, only []int32) bool {
	for _, w := range only {
		if _, ok := slices.BinarySearch(e.topics, w); ok {
			return true
		}
	}
	return false
}

// anotherSubject tells whether one record is about something the other never
// names: its subject (its first name) is among its own words, and the other
// has no name of its own to swap for it ("The memcpy() function copies …"
// beside "The memmove() function copies …", which memcpy's page also
// names). Each naming one the other lacks is a swap: difference's business.
func (ix *Index) anotherSubject(a *entry, onlyA []int32, b *entry, onlyB []int32) bool {
	ha, hb := ix.nameOf(a, onlyA) != "", ix.nameOf(b, onlyB) != ""
	switch {
	case ha && !hb:
		return slices.Contains(onlyA, a.subject)
	case hb && !ha:
		return slices.Contains(onlyB, b.subject)
	}
	return false
}

// difference names what two records disagree on: a value each has that the
// other lacks, a negation one has, or a name each has that the other lacks.
// A pure addition (one side says more) is no disagreement: rewordings add and
// drop detail. One ordinary word swapped for another (transaction | session,
// first | last) is a disagreement only at cfg.Swap similarity: below it, most
// such swaps on the labelled set were rewordings (real | proper).
func (ix *Index) difference(a, b *entry, onlyA, onlyB []int32, sim float64, cfg Config) string {
	va, vb := minus(a.f.values, b.f.values), minus(b.f.values, a.f.values)
	if len(va) > 0 && len(vb) > 0 {
		return strings.Join(va, " ") + " | " + strings.Join(vb, " ")
	}
	if a.f.neg != b.f.neg {
		return "negation"
	}
	if na, nb := ix.nameOf(a, onlyA), ix.nameOf(b, onlyB); na != "" && nb != "" {
		return na + " | " + nb
	}
	if sim >= cfg.Swap && len(onlyA) == 1 && len(onlyB) == 1 && len(va) == 0 && len(vb) == 0 {
		return ix.word[onlyA[0]] + " | " + ix.word[onlyB[0]]
	}
	if sim >= cfg.Swap && len(onlyA)+len(va) == 1 && len(onlyB)+len(vb) == 1 {
		return strings.Join(append(ix.wordsOf(onlyA), va...), "") + " | " + strings.Join(append(ix.wordsOf(onlyB), vb...), "")
	}
	return ""
}

// wordsOf answers the text of interned words.
func (ix *Index) wordsOf(ws []int32) []string {
	out := make([]string, 0, len(ws))
	for _, w := range ws {
		out = append(out, ix.word[w])
	}
	return out
}

// nameOf answers the first of ws that is one of e's names ("": none).
func (ix *Index) nameOf(e *entry, ws []int32) string {
	for _, w := range ws {
		if _, ok := slices.BinarySearch(e.names, w); ok {
			return ix.word[w]
		}
	}
	return ""
}

// minus answers the values of a (with repeats) that b lacks.
func minus(a, b []string) []string {
	var out []string
	i, j := 0, 0
	for i < len(a) {
		switch {
		case j == len(b) || a[i] < b[j]:
			out = append(out, a[i])
			i++
		case a[i] > b[j]:
			j++
		default:
			i++
			j++
		}
	}
	return out
}

// Clusters answers the clusters of the live records, largest first, then
// most recent, then by key.
func (ix *Index) Clusters() []Cluster {
	seen := map[int32]bool{}
	var out []Cluster
	for start := range ix.adj {
		if seen[start] {
			continue
		}
		var slots []int32
		conflict := false
		diffs := map[string]bool{}
		queue := []int32{start}
		seen[start] = true
		for len(queue) > 0 {
			s := queue[0]
			queue = queue[1:]
			slots = append(slots, s)
			for o, e := range ix.adj[s] {
				if e.rel == Conflict {
					conflict = true
					diffs[canonicalDiff(e.diff)] = true
				}
				if !seen[o] {
					seen[o] = true
					queue = append(queue, o)
				}
			}
		}
		out = append(out, ix.cluster(slots, conflict, diffs))
	}
	SortClusters(out)
	return out
}

func (ix *Index) cluster(slots []int32, conflict bool, diffs map[string]bool) Cluster {
	members := make([]contract.Record, len(slots))
	for i, s := range slots {
		members[i] = ix.entries[s].record()
	}
	sort.Slice(members, func(i, j int) bool { return newer(members[i], members[j]) })
	ids := make([]string, len(members))
	for i, m := range members {
		ids[i] = m.ID
	}
	c := Cluster{Key: KeyOf(ids), Kind: members[0].Kind, Members: members, Conflict: conflict, Latest: When(members[0])}
	if conflict && !ix.lean {
		c.Side = map[string]int{}
		for i, side := range sidesOf(members, ix.cfg) {
			c.Side[members[i].ID] = side
		}
	}
	for d := range diffs {
		c.Differences = append(c.Differences, d)
	}
	sort.Strings(c.Differences)
	if len(c.Differences) > maxDifferences {
		c.Differences = c.Differences[:maxDifferences]
	}
	return c
}

// canonicalDiff writes a difference with its two sides in order ("20 |
// 39", never "39 | 20"): which side a pair's difference names first is the
// order the two were compared in, which Find, Index and a store's kept
// edges (Assemble) each meet in their own order.
func canonicalDiff(d string) string {
	if a, b, ok := strings.Cut(d, " | "); ok && b < a {
		return b + " | " + a
	}
	return d
}

// newer orders records newest first (observed_at, else created_at), then by id.
func newer(a, b contract.Record) bool {
	ta, tb := When(a), When(b)
	if !ta.Equal(tb) {
		return ta.After(tb)
	}
	return a.ID < b.ID
}

// SortClusters orders clusters largest first, then most recent, then by key.
func SortClusters(cs []Cluster) {
	sort.SliceStable(cs, func(i, j int) bool {
		a, b := cs[i], cs[j]
		if len(a.Members) != len(b.Members) {
			return len(a.Members) > len(b.Members)
		}
		if !a.Latest.Equal(b.Latest) {
			return a.Latest.After(b.Latest)
		}
		return a.Key < b.Key
	})
}

// KeyOf names a set of records by their ids (in any order).
func KeyOf(ids []string) string {
	sorted := slices.Clone(ids)
	slices.Sort(sorted)
	h := sha256.Sum256([]byte(strings.Join(sorted, "\n")))
	return hex.EncodeToString(h[:8])
}

// memberIndex reads records' words into an index that links nothing, one
// entry per record in order: the entries sidesOf compares.
func memberIndex(records []contract.Record) *Index {
	ix := NewIndex(Config{})
	for _, r := range records {
		ix.entries = append(ix.entries, ix.read(r))
	}
	return ix
}

// within answers how two members of one cluster relate, whatever their
// similarity, and that similarity: a conflict when they disagree on a
// value, a negation or a name, else a repeat.
func (ix *Index) within(a, b *entry, cfg Config) (Relation, string, float64) {
	onlyA, onlyB, sim := compare(a.words, b.words)
	if d := ix.difference(a, b, onlyA, onlyB, sim, cfg); d != "" {
		return Conflict, d, sim
	}
	return Repeat, "", sim
}

// maxSided is the largest cluster whose sides are drawn from every pair;
// a larger one is split by each member's relation to the first alone.
const maxSided = 200

// sidesOf answers which side each member of a cluster takes (members in the
// order given; the first is on side 0, and sides are numbered in order of
// their first member). Members on one side say the same thing; members on
// two sides disagree. A pair's own words can miss a disagreement that a
// third member shows: when A repeats B (a rewording) and A conflicts with C
// (one word changed), B conflicts with C too, though B and C differ in
// more words than a swap. So repeats join sides, closest pairs first,
// unless the two sides hold a conflicting pair.
func sidesOf(members []contract.Record, cfg Config) []int {
	n := len(members)
	ix := memberIndex(members)
	if n > maxSided {
		out := make([]int, n)
		for i := 1; i < n; i++ {
			if rel, _, _ := ix.within(&ix.entries[0], &ix.entries[i], cfg); rel != Repeat {
				out[i] = 1
			}
		}
		return out
	}
	type pair struct {
		i, j int
		sim  float64
	}
	conflict := make([][]bool, n)
	for i := range conflict {
		conflict[i] = make([]bool, n)
	}
	var repeats []pair
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			rel, _, sim := ix.within(&ix.entries[i], &ix.entries[j], cfg)
			if members[i].Kind != members[j].Kind {
				rel = Conflict
			}
			if rel == Conflict {
				conflict[i][j], conflict[j][i] = true, true
			} else {
				repeats = append(repeats, pair{i, j, sim})
			}
		}
	}
	sort.SliceStable(repeats, func(a, b int) bool { return repeats[a].sim > repeats[b].sim })
	side := make([]int, n) // each member's side, named by a member
	held := make([][]int, n)
	for i := range side {
		side[i] = i
		held[i] = []int{i}
	}
	for _, p := range repeats {
		a, b := side[p.i], side[p.j]
		if a == b || opposed(held[a], held[b], conflict) {
			continue
		}
		if a > b {
			a, b = b, a
		}
		for _, m := range held[b] {
			side[m] = a
		}
		held[a], held[b] = append(held[a], held[b]...), nil
	}
	number := map[int]int{}
	out := make([]int, n)
	for i, s := range side {
		if _, ok := number[s]; !ok {
			number[s] = len(number)
		}
		out[i] = number[s]
	}
	return out
}

// opposed tells whether any member of a conflicts with any member of b.
func opposed(a, b []int, conflict [][]bool) bool {
	for _, x := range a {
		for _, y := range b {
			if conflict[x][y] {
				return true
			}
		}
	}
	return false
}
