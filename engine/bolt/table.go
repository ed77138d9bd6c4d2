package bolt

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"time"
	"unsafe"

	"mnemo/contract"
	"mnemo/engine/bolt/internal/fileio"
	"mnemo/engine/bolt/internal/idkey"
	"mnemo/engine/bolt/internal/strtab"
	"mnemo/engine/internal/metacodec"
)

// The string columns of the table: every metadata field a filter or a facet
// reads as one dictionary-encoded value per record.
const (
	colWorkspace = iota
	colFolder
	colFilePath
	colLanguage
	colRepo
	colCommit
	colURL
	colThread
	colAgent
	colToolCall
	colSourceID
	colTurns
	numStrCols
)

func strColValues(m *contract.MemoryMeta) [numStrCols]*string {
	var v [numStrCols]*string
	v[colWorkspace], v[colFolder], v[colFilePath], v[colLanguage] = m.Workspace, m.Folder, m.FilePath, m.Language
	v[colRepo], v[colCommit], v[colURL], v[colThread], v[colAgent] = m.Repo, m.Commit, m.URL, m.ThreadID, m.AgentID
	if m.ToolCall != nil {
		v[colToolCall] = &m.ToolCall.Name
	}
	v[colSourceID] = m.Source.ID
	if m.Turns != nil {
		v[colTurns] = contract.Ptr(turnsKey(*m.Turns))
	}
	return v
}

func turnsKey(t contract.TurnRange) string { return fmt.Sprintf("%d-%d", t.First, t.Last) }

// row is what the table holds for one record: everything a filter, a facet,
// a sort or a browse predicate reads, without the text or the item.
//
// It holds no pointer (the id and the tags are references into the table's
// own arrays), so a million rows are one block the collector never scans.
//
// The fields are ordered widest first, so the row has no padding inside:
// 104 bytes (table file version 3; 2 held observed_at twice, in ns and in
// ms, in 112, and 1 took 120 with its padding).
type row struct {
	created  int64 // unix ms
	updated  int64 // unix ms
	observed int64 // observed_at in unix ms (browse precision), noTime when unset
	expires  int64 // unix ms (browse precision), noTime when unset
	ns       uint32
	idv      uint32 // the id's name (idkey) in table.ids
	tagOff   uint32 // the tags are tagArena[tagOff:tagOff+tagN]
	// subSource holds observed_at's nanoseconds past its millisecond (below
	// 1e6: the low 20 bits) and, in the top byte, the source kind's code:
	// one word, so the row stays 104 bytes.
	subSource uint32
	str       [numStrCols]uint32
	conf      float32
	tagN      uint16
	kind      uint8
	status    uint8
}

const subMsMask = 1<<20 - 1

// source is the row's source kind's code (sourceKinds).
func (r *row) source() uint8 { return uint8(r.subSource >> 24) }

// observedBefore tells whether the row was observed before ms and sub, the
// instant's unix ms and its nanoseconds past that millisecond (an instant
// split as splitMs does). A row without observed_at is before nothing.
func (r *row) observedBefore(ms, sub int64) bool {
	return r.observed != noTime && (r.observed < ms || r.observed == ms && int64(r.subSource&subMsMask) < sub)
}

// splitMs is t as unix ms and its nanoseconds past that millisecond, exact
// for every year the contract takes (unix ns would not reach past 2262).
func splitMs(t time.Time) (ms, sub int64) {
	return t.UnixMilli(), int64(t.Nanosecond() % 1e6)
}

// table is the in-memory, derived image of the records: a row per ordinal,
// interned values, and per-namespace facet counters so the root explore never
// scans. It is rebuilt from bbolt at open and changed under the engine's write
// lock in the same critical section as the bbolt commit, so a reader holding
// the read lock sees the table and a bbolt snapshot describing the same state.
type table struct {
	rows  []row
	alive []bool
	// stat[ord] is live row ord's status code, beside the rows so a status
	// check by ordinal reads a byte instead of a row: a browse for active
	// records walks past every newer record of another status (at 1M, the
	// 20,000 superseded at the head of updated_at), each a cache miss and,
	// after a release of the mapped table, a page fault. Derived, never
	// saved.
	stat []uint8
	live int
	// expiring counts live rows with an expires_at, so a browse `now` can be
	// skipped when nothing expires.
	expiring int
	// ids interns the records' ids; ordOf[v] is 1 + the ordinal of the
	// live record with id value v, 0 when none is.
	ids      *strtab.Table
	ordOf    []uint32
	ns       *strtab.Table
	nsVals   []contract.Namespace // parsed namespaces by ns id
	str      [numStrCols]*strtab.Table
	tags     *strtab.Table
	tagArena []uint32

	// counters[facet][ns][value] is the number of live records at namespace
	// ns holding the value, global[facet][value] the same over every
	// namespace, and dflt[facet][value] over the namespaces the default
	// reach admits (the TUI's and most callers' root explore, read in place
	// with nothing to subtract); missing[facet] and nsTotal count by
	// namespace.
	counters [numFacets]map[uint32]map[uint32]uint64
	// counterBase[facet] holds the saved table's counters as (ns, value,
	// count) triples sorted by ns, made into maps on first use (nsCounters);
	// counterDone marks the namespaces already made.
	counterBase [numFacets][]uint32
	counterDone [numFacets]map[uint32]bool
	global      [numFacets][]uint32
	dflt        [numFacets][]uint32
	// nsDefault[ns] tells whether the default reach admits namespace ns.
	nsDefault []bool
	// facets is contract.Facets(), read once: count runs per row.
	facets  []contract.Facet
	missing [numFacets]map[uint32]uint64
	nsTotal map[uint32]uint64
	// dropped counts rows removed since the table was built: while it is
	// not zero the table still holds values only those rows referred to.
	dropped int
}

const numFacets = 15

func (t *table) facetIndex(f contract.Facet) int { return slices.Index(t.facets, f) }

func newTable() *table {
	t := &table{ids: strtab.New(), ordOf: []uint32{0, 0}, ns: strtab.New(), tags: strtab.New(), nsTotal: map[uint32]uint64{}}
	t.nsVals = []contract.Namespace{contract.Root()}
	t.nsDefault = []bool{false}
	t.facets = contract.Facets()
	for i := range t.str {
		t.str[i] = strtab.New()
	}
	for i := range t.counters {
		t.counters[i] = map[uint32]map[uint32]uint64{}
		t.counterDone[i] = map[uint32]bool{}
		t.missing[i] = map[uint32]uint64{}
	}
	return t
}

func (t *table) internNS(ns contract.Namespace) uint32 {
	s := ns.String()
	if id, ok := t.ns.Lookup(s); ok {
		return id
	}
	id := t.ns.Intern(s)
	t.nsVals = append(t.nsVals, ns)
	t.nsDefault = append(t.nsDefault, contract.AdmittedBy(nil, ns))
	return id
}

// namespaceOf returns the parsed namespace for its printed form, reusing the
// table's values so decoding a page does not parse namespaces again.
func (t *table) namespaceOf(s string) contract.Namespace {
	if id, ok := t.ns.Lookup(s); ok {
		return t.nsVals[id]
	}
	ns, err := contract.ParseNamespace(s)
	if err != nil {
		return contract.Root()
	}
	return ns
}

// hashDictionaries makes the hash of each dictionary a saved table was read
// back without (strtab.Table.Hash), the largest, the ids', last. Making it
// reads every value, bringing the file's pages of them back into this
// process's resident set after the read released them (about 28 MB at 1M):
// they are given back again, since a value is only read once in a while.
func (t *table) hashDictionaries() {
	ds := append([]*strtab.Table{t.ns, t.tags}, t.str[:]...)
	for _, d := range append(ds, t.ids) {
		d.Hash()
		fileio.ReleaseReadPages(d.ReadBytes())
	}
}

// ordOfID is the ordinal of the live record with this id.
func (t *table) ordOfID(id string) (uint32, bool) {
	var buf [idkey.Len + 2]byte
	name := idkey.Append(buf[:0], id)
	v, ok := t.ids.Lookup(unsafe.String(unsafe.SliceData(name), len(name)))
	if !ok || t.ordOf[v] == 0 {
		return 0, false
	}
	return t.ordOf[v] - 1, true
}

// idOf is the id of the record at ord (live or not yet overwritten). The
// table keeps ids as their 20 bytes (package idkey), 20 bytes a record
// fewer in table.snap; this spells it out.
func (t *table) idOf(ord uint32) string { return idkey.ID(t.idName(ord)) }

// idName is the name (idkey) of the record at ord's id, as the table holds
// it: names sort as their ids do.
func (t *table) idName(ord uint32) string { return t.ids.Val(t.rows[ord].idv) }

// rowTags are a row's tag ids.
func (t *table) rowTags(r *row) []uint32 { return t.tagArena[r.tagOff : r.tagOff+uint32(r.tagN)] }

func (t *table) rowOf(id string, s *storedRecord) row {
	r := row{idv: t.ids.Intern(idkey.Name(id)), kind: kindCode(s.kind), status: statusCode(s.status),
		ns: t.internNS(s.meta.Namespace), created: s.created, updated: s.updated, observed: noTime,
		conf: s.confidence, expires: noTime}
	r.subSource = uint32(metacodec.SourceCode(s.meta.SourceKindOf())) << 24
	if s.expires != noTime {
		r.expires = time.Unix(0, s.expires).UnixMilli()
	}
	for i, v := range strColValues(&s.meta) {
		if v != nil {
			r.str[i] = t.str[i].Intern(*v)
		}
	}
	if len(s.meta.Tags) > 0 {
		r.tagOff, r.tagN = uint32(len(t.tagArena)), uint16(len(s.meta.Tags))
		for _, tag := range s.meta.Tags {
			t.tagArena = append(t.tagArena, t.tags.Intern(tag))
		}
	}
	if s.meta.ObservedAt != nil {
		ms, sub := splitMs(*s.meta.ObservedAt)
		r.observed = ms
		r.subSource |= uint32(sub)
	}
	return r
}

// reserve makes room for n ordinals up front, so a load does not copy the
// rows as they grow.
func (t *table) reserve(n int) {
	if n > cap(t.rows) {
		t.rows = append(make([]row, 0, n), t.rows...)
		t.alive = append(make([]bool, 0, n), t.alive...)
		t.stat = append(make([]uint8, 0, n), t.stat...)
	}
}

// put adds or replaces the row at its ordinal.
func (t *table) put(id string, s *storedRecord) {
	ord := s.ord
	for int(ord) >= len(t.rows) {
		t.rows = append(t.rows, row{})
		t.alive = append(t.alive, false)
		t.stat = append(t.stat, 0)
	}
	if t.alive[ord] {
		t.remove(ord)
	}
	t.rows[ord] = t.rowOf(id, s)
	t.alive[ord] = true
	t.stat[ord] = t.rows[ord].status
	t.live++
	if t.rows[ord].expires != noTime {
		t.expiring++
	}
	for int(t.rows[ord].idv) >= len(t.ordOf) {
		t.ordOf = append(t.ordOf, 0)
	}
	t.ordOf[t.rows[ord].idv] = ord + 1
	t.count(ord, +1)
}

// remove drops the row at ord.
func (t *table) remove(ord uint32) {
	if int(ord) >= len(t.alive) || !t.alive[ord] {
		return
	}
	t.count(ord, -1)
	if t.rows[ord].expires != noTime {
		t.expiring--
	}
	if v := t.rows[ord].idv; t.ordOf[v] == ord+1 {
		t.ordOf[v] = 0
	}
	t.alive[ord] = false
	t.rows[ord] = row{}
	t.live--
	t.dropped++
}

// setStatus changes a live row's status and updated_at.
func (t *table) setStatus(ord uint32, status contract.Status, updated int64) {
	if int(ord) >= len(t.alive) || !t.alive[ord] {
		return // not loaded yet: the loader reads the record as it now is
	}
	t.count(ord, -1)
	t.rows[ord].status = statusCode(status)
	t.stat[ord] = t.rows[ord].status
	t.rows[ord].updated = updated
	t.count(ord, +1)
}

func (t *table) count(ord uint32, delta int) {
	r := &t.rows[ord]
	bump := func(m map[uint32]uint64, k uint32) {
		if delta > 0 {
			m[k]++
		} else if m[k] <= 1 {
			delete(m, k)
		} else {
			m[k]--
		}
	}
	bump(t.nsTotal, r.ns)
	inDefault := t.nsDefault[r.ns]
	for fi, f := range t.facets {
		vals := t.facetValueIDs(r, f)
		if len(vals) == 0 {
			bump(t.missing[fi], r.ns)
			continue
		}
		m := t.nsCounters(fi, r.ns)
		for _, v := range vals {
			bump(m, v)
			for int(v) >= len(t.global[fi]) {
				t.global[fi] = append(t.global[fi], 0)
				t.dflt[fi] = append(t.dflt[fi], 0)
			}
			if delta > 0 {
				t.global[fi][v]++
			} else {
				t.global[fi][v]--
			}
			if inDefault {
				if delta > 0 {
					t.dflt[fi][v]++
				} else {
					t.dflt[fi][v]--
				}
			}
		}
		if len(m) == 0 {
			delete(t.counters[fi], r.ns)
		}
	}
}

// nsCounters is the counters of facet fi at namespace ns, made from the
// saved table's triples the first time they are needed: a table read back
// from its file builds only the maps its writes and reaches touch (building
// all of them took most of the load).
func (t *table) nsCounters(fi int, ns uint32) map[uint32]uint64 {
	if m := t.counters[fi][ns]; m != nil {
		return m
	}
	lo, hi := t.counterGroup(fi, ns)
	m := make(map[uint32]uint64, (hi-lo)/3)
	for i := lo; i < hi; i += 3 {
		m[t.counterBase[fi][i+1]] = uint64(t.counterBase[fi][i+2])
	}
	t.counters[fi][ns] = m
	if lo < hi {
		t.counterDone[fi][ns] = true
	}
	return m
}

// counterGroup is where namespace ns's triples lie in counterBase[fi]
// (sorted by namespace, then value); empty once made into a map.
func (t *table) counterGroup(fi int, ns uint32) (int, int) {
	base := t.counterBase[fi]
	if len(base) == 0 || t.counterDone[fi][ns] {
		return 0, 0
	}
	n := len(base) / 3
	lo := sort.Search(n, func(i int) bool { return base[3*i] >= ns })
	hi := sort.Search(n, func(i int) bool { return base[3*i] > ns })
	return 3 * lo, 3 * hi
}

// counterLen is how many values namespace ns counts for facet fi.
func (t *table) counterLen(fi int, ns uint32) int {
	if m := t.counters[fi][ns]; m != nil {
		return len(m)
	}
	lo, hi := t.counterGroup(fi, ns)
	return (hi - lo) / 3
}

// allCounters makes every namespace's counters of facet fi.
func (t *table) allCounters(fi int) {
	base := t.counterBase[fi]
	for i := 0; i < len(base); i += 3 {
		if ns := base[i]; t.counters[fi][ns] == nil && !t.counterDone[fi][ns] {
			t.nsCounters(fi, ns)
		}
	}
}

// rootCounts gives a facet's counters summed over the namespaces a reach
// admits, read in place: the global counts less those of the namespaces
// left out (the service sandboxes, for the default reach), or the sum of the
// admitted ones, whichever touches fewer entries. Nothing proportional to
// the facet's values is copied: a facet with a value per record has a
// million. It returns the counts, the total and the missing.
func (t *table) rootCounts(fi int, reach *contract.Reach) (facetCounts, uint64, uint64) {
	nsOK := t.nsAdmitted(reach)
	var total, missing uint64
	inCost, outCost := 0, 0
	for ns, c := range t.nsTotal {
		if nsOK[ns] {
			total += c
			missing += t.missing[fi][ns]
			inCost += t.counterLen(fi, ns)
		} else {
			outCost += t.counterLen(fi, ns)
		}
	}
	fc := facetCounts{adjust: map[uint32]uint64{}}
	if reach == nil {
		fc.global = t.dflt[fi]
		return fc, total, missing
	}
	t.allCounters(fi)
	if outCost <= inCost {
		fc.global = t.global[fi]
		for ns, m := range t.counters[fi] {
			if !nsOK[ns] {
				for v, c := range m {
					fc.adjust[v] += c
				}
			}
		}
	} else {
		for ns, m := range t.counters[fi] {
			if nsOK[ns] {
				for v, c := range m {
					fc.adjust[v] += c
				}
			}
		}
	}
	return fc, total, missing
}

// facetCounts are a facet's counts by value id under a reach: global less
// adjust when global is set, else adjust alone.
type facetCounts struct {
	global []uint32
	adjust map[uint32]uint64
}

func (c facetCounts) at(v uint32) uint64 {
	if c.global == nil {
		return c.adjust[v]
	}
	if int(v) >= len(c.global) {
		return 0
	}
	return uint64(c.global[v]) - c.adjust[v]
}

// each yields the values with a non-zero count.
func (c facetCounts) each(yield func(v uint32, n uint64) bool) {
	if c.global == nil {
		for v, n := range c.adjust {
			if n > 0 && !yield(v, n) {
				return
			}
		}
		return
	}
	if len(c.adjust) == 0 {
		for v, n := range c.global {
			if n > 0 && !yield(uint32(v), uint64(n)) {
				return
			}
		}
		return
	}
	// A merge walk with the adjusted values in order: no map lookup per value.
	adjusted := slices.Sorted(maps.Keys(c.adjust))
	next := 0
	for v, g := range c.global {
		n := uint64(g)
		if next < len(adjusted) && adjusted[next] == uint32(v) {
			n -= c.adjust[uint32(v)]
			next++
		}
		if n > 0 && !yield(uint32(v), n) {
			return
		}
	}
}

// valueSpace is the number of value ids a facet can hold.
func (t *table) valueSpace(f contract.Facet) int {
	switch f {
	case contract.FacetKind, contract.FacetStatus:
		return 3
	case contract.FacetSource:
		return len(sourceKinds)
	case contract.FacetNamespace:
		return len(t.nsVals)
	case contract.FacetTag:
		return t.tags.Len()
	}
	c, _ := facetColumn(f)
	return t.str[c].Len()
}

// facetValueIDs returns the row's value ids for a facet (dictionary ids, or
// enum codes for kind, source and status, or the ns id for namespace).
func (t *table) facetValueIDs(r *row, f contract.Facet) []uint32 {
	one := func(v uint32) []uint32 {
		if v == 0 {
			return nil
		}
		return []uint32{v}
	}
	switch f {
	case contract.FacetKind:
		return []uint32{uint32(r.kind)}
	case contract.FacetSource:
		return []uint32{uint32(r.source())}
	case contract.FacetStatus:
		return []uint32{uint32(r.status)}
	case contract.FacetNamespace:
		return []uint32{r.ns}
	case contract.FacetTag:
		return t.rowTags(r)
	}
	if c, ok := facetColumn(f); ok {
		return one(r.str[c])
	}
	return nil
}

func facetColumn(f contract.Facet) (int, bool) {
	switch f {
	case contract.FacetSourceID:
		return colSourceID, true
	case contract.FacetWorkspace:
		return colWorkspace, true
	case contract.FacetFolder:
		return colFolder, true
	case contract.FacetFilePath:
		return colFilePath, true
	case contract.FacetLanguage:
		return colLanguage, true
	case contract.FacetRepo:
		return colRepo, true
	case contract.FacetURL:
		return colURL, true
	case contract.FacetThread:
		return colThread, true
	case contract.FacetAgent:
		return colAgent, true
	case contract.FacetToolCall:
		return colToolCall, true
	}
	return 0, false
}

// facetValueName prints a facet value id.
func (t *table) facetValueName(f contract.Facet, v uint32) string {
	switch f {
	case contract.FacetKind:
		return string(kindByCode[v])
	case contract.FacetSource:
		return string(sourceKinds[v])
	case contract.FacetStatus:
		return string(statusByCode[v])
	case contract.FacetNamespace:
		return t.ns.Val(v)
	case contract.FacetTag:
		return t.tags.Val(v)
	}
	c, _ := facetColumn(f)
	return t.str[c].Val(v)
}

// nsAdmitted evaluates a reach once per interned namespace (id 0 is the
// dictionary's "no value" slot and never admitted).
func (t *table) nsAdmitted(reach *contract.Reach) []bool {
	ok := make([]bool, len(t.nsVals))
	for i := 1; i < len(t.nsVals); i++ {
		ok[i] = contract.AdmittedBy(reach, t.nsVals[i])
	}
	return ok
}
