package bolt

import (
	"slices"

	"mnemo/contract"
	"mnemo/engine/bolt/internal/strtab"
)

// rowFilter is a MetaFilter compiled against the table's dictionaries: every
// string comparison is done once per distinct value, so matching a row is a
// handful of array lookups. It gives exactly contract.MetaFilter.Matches plus
// the statuses rule, because each per-value decision calls the contract's own
// predicates (AdmittedBy, PathMatch, SameID).
type rowFilter struct {
	none   bool
	checks []func(r *row) bool
	// statusOK, when some status is refused, is which the filter admits by
	// code; matchOrd checks it against table.stat before reading the row.
	statusOK *[3]bool
}

// matchOrd is match for ordinal ord of t: false for a record no longer in
// the table, and a row of a refused status is refused without being read
// (table.stat).
func (t *table) matchOrd(p *rowFilter, ord uint32) bool {
	if int(ord) >= len(t.alive) || !t.alive[ord] {
		return false
	}
	if p.statusOK != nil && !p.statusOK[t.stat[ord]] {
		return false
	}
	return p.match(&t.rows[ord])
}

func (p *rowFilter) match(r *row) bool {
	if p.none {
		return false
	}
	for _, c := range p.checks {
		if !c(r) {
			return false
		}
	}
	return true
}

// valueSet decides each interned value of a dictionary once.
func valueSet(d *strtab.Table, admit func(v string) bool) []bool {
	ok := make([]bool, d.Len())
	for i := 1; i < d.Len(); i++ {
		ok[i] = admit(d.Val(uint32(i)))
	}
	return ok
}

// compileFilter compiles f; ranked applies fetch's default of active records
// only when the filter names no status.
func (t *table) compileFilter(f contract.MetaFilter, ranked bool) rowFilter {
	var p rowFilter
	add := func(c func(r *row) bool) { p.checks = append(p.checks, c) }

	exact := func(col int, want *string) {
		if want == nil {
			return
		}
		id, ok := t.str[col].Lookup(*want)
		if !ok {
			p.none = true
			return
		}
		add(func(r *row) bool { return r.str[col] == id })
	}
	set := func(col int, admit func(v string) bool) {
		ok := valueSet(t.str[col], admit)
		add(func(r *row) bool { return ok[r.str[col]] })
	}
	exact(colWorkspace, f.Workspace)
	exact(colLanguage, f.Language)
	exact(colRepo, f.Repo)
	exact(colCommit, f.Commit)
	exact(colURL, f.URL)
	exact(colToolCall, f.ToolCall)
	if f.Turns != nil {
		exact(colTurns, contract.Ptr(turnsKey(*f.Turns)))
	}
	if f.Folder != nil {
		want := *f.Folder
		set(colFolder, func(v string) bool { return contract.PathMatch(want, &v) })
	}
	if f.FilePath != nil {
		want := *f.FilePath
		set(colFilePath, func(v string) bool { return contract.PathMatch(want, &v) })
	}
	for col, want := range map[int]*string{colThread: f.ThreadID, colAgent: f.AgentID, colSourceID: f.SourceID} {
		if want != nil {
			w := *want
			set(col, func(v string) bool { return contract.SameID(&v, w) })
		}
	}
	if len(f.Kinds) > 0 {
		var ok [3]bool
		for _, k := range f.Kinds {
			ok[kindCode(k)] = true
		}
		add(func(r *row) bool { return ok[r.kind] })
	}
	if len(f.Sources) > 0 {
		ok := make([]bool, len(sourceKinds))
		for _, s := range f.Sources {
			if i := slices.Index(sourceKinds, s); i >= 0 {
				ok[i] = true
			}
		}
		add(func(r *row) bool { return ok[r.source()] })
	}
	if len(f.TagsAny) > 0 {
		ok := valueSet(t.tags, func(v string) bool { return slices.Contains(f.TagsAny, v) })
		add(func(r *row) bool {
			for _, tg := range t.rowTags(r) {
				if ok[tg] {
					return true
				}
			}
			return false
		})
	}
	if f.ObservedAfter != nil || f.ObservedBefore != nil {
		var afterMs, afterSub, beforeMs, beforeSub int64
		hasAfter, hasBefore := f.ObservedAfter != nil, f.ObservedBefore != nil
		if hasAfter {
			afterMs, afterSub = splitMs(*f.ObservedAfter)
		}
		if hasBefore {
			beforeMs, beforeSub = splitMs(*f.ObservedBefore)
		}
		add(func(r *row) bool {
			if r.observed == noTime || hasAfter && r.observedBefore(afterMs, afterSub) {
				return false
			}
			return !hasBefore || r.observedBefore(beforeMs, beforeSub)
		})
	}
	var statusOK [3]bool
	for i, s := range statusByCode {
		statusOK[i] = f.AdmitsStatus(s, ranked)
	}
	if !(statusOK[0] && statusOK[1] && statusOK[2]) {
		p.statusOK = &statusOK
		add(func(r *row) bool { return statusOK[r.status] })
	}
	// The reach comes last: it admits most rows under the default reach,
	// and a row that a clause above refuses then costs one check, not two
	// (a scan for one commit among a million rows: about a third less).
	nsOK := t.nsAdmitted(f.Reach)
	add(func(r *row) bool { return nsOK[r.ns] })
	return p
}

// onlyReach tells whether the filter sets nothing but (possibly) a reach: the
// root of explore, answered from the counters.
func onlyReach(f contract.MetaFilter) bool {
	g := f
	g.Reach = nil
	return g.IsEmpty()
}
