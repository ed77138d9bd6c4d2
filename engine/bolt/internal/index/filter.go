package index

import (
	"math"

	"github.com/blevesearch/bleve/v2/search/query"

	"mnemo/contract"
)

// NeedsResidual tells whether f constrains a field the index does not hold.
// The index holds the metadata of few distinct values (reach, kind, source,
// workspace, language, repo, agent, tool call, tags, status): their terms
// are shared by many records and cost little. The values nearly every
// record has its own of (folder and file path with their prefixes, commit,
// url, thread, turns, source id, observed_at) took 60% of the index's size
// and are answered from the engine's table instead (Residual).
func NeedsResidual(f contract.MetaFilter) bool {
	return f.Folder != nil || f.FilePath != nil || f.Commit != nil || f.URL != nil || f.ThreadID != nil ||
		f.Turns != nil || f.SourceID != nil || f.ObservedAfter != nil || f.ObservedBefore != nil
}

// Residual is how a search learns which documents the whole filter admits
// when the filter needs it (NeedsResidual), from the engine's table.
type Residual struct {
	// Admit tells whether the filter, with the statuses rule, admits the
	// document.
	Admit func(id string) bool
	// Sample scans for the documents the filter admits and stops at limit
	// of them: it returns those it found, whether they are all there are,
	// and the share of the documents it scanned that the filter admitted.
	Sample func(limit int) (ids []string, complete bool, share float64)
}

// residualListLimit is the most documents a search of a page ending at end
// takes as a list of ids; a filter that admits more is checked in the
// page's pass instead. A list costs a lookup of each id in every segment's
// id dictionary, the check an id read for about (end+1)/share x ln of the
// matches it could keep: they cost about the same near sqrt((end+1) x docs)
// listed ids, kept within [64, 4096]. (A profiled fetch at 100k with a list
// of about 3,000 ids spent 30% of its time in those lookups; what a fetch of
// a common word costs is Bleve scoring its matches either way.)
func residualListLimit(end int, docs uint64) int {
	return int(min(4096, max(64, math.Sqrt(float64(end+1)*float64(docs)))))
}

// filterQuery translates the clauses of a MetaFilter the index holds (and
// the statuses rule) into a Bleve query that admits exactly the documents
// contract.MetaFilter.Matches and contract.MetaFilter.AdmitsStatus admit on
// those clauses; the others are the Residual's. It never returns nil: the
// reach clause is always present, because even the empty filter hides
// service sandboxes.
func filterQuery(f contract.MetaFilter, ranked bool) query.Query {
	var must []query.Query
	add := func(q query.Query) { must = append(must, q) }

	add(reachQuery(f.Reach))
	exact := func(field string, want *string) {
		if want != nil {
			add(term(field, *want))
		}
	}
	exact(fieldWorkspace, f.Workspace)
	exact(fieldLanguage, f.Language)
	exact(fieldRepo, f.Repo)
	exact(fieldToolCall, f.ToolCall)
	sameID := func(field string, want *string) {
		if want != nil {
			add(anyTerm(field, []string{*want, contract.RedactedID(*want)}))
		}
	}
	sameID(fieldAgentID, f.AgentID)
	if len(f.Kinds) > 0 {
		kinds := make([]string, len(f.Kinds))
		for i, k := range f.Kinds {
			kinds[i] = string(k)
		}
		add(anyTerm(fieldKind, kinds))
	}
	if len(f.Sources) > 0 {
		sources := make([]string, len(f.Sources))
		for i, s := range f.Sources {
			sources[i] = string(s)
		}
		add(anyTerm(fieldSource, sources))
	}
	if len(f.TagsAny) > 0 {
		add(anyTerm(fieldTag, f.TagsAny))
	}
	switch {
	case len(f.Statuses) > 0:
		statuses := make([]string, len(f.Statuses))
		for i, s := range f.Statuses {
			statuses[i] = string(s)
		}
		add(anyTerm(fieldStatus, statuses))
	case ranked:
		add(term(fieldStatus, string(contract.StatusActive)))
	}
	if len(must) == 1 {
		return must[0]
	}
	return query.NewConjunctionQuery(must)
}

// term looks up one value of a logical metadata name.
func term(name, value string) query.Query {
	q := query.NewTermQuery(metaTerm(name, value))
	q.SetField(physicalField(name))
	return q
}

// anyTerm is a disjunction of exact terms in one field (duplicates dropped).
func anyTerm(field string, values []string) query.Query {
	values = distinct(values)
	if len(values) == 1 {
		return term(field, values[0])
	}
	qs := make([]query.Query, len(values))
	for i, v := range values {
		qs[i] = term(field, v)
	}
	return query.NewDisjunctionQuery(qs)
}

// reachQuery: with descendants, every namespace listing `at` among its
// subtree anchors (`at` included), else `at` itself; with inherit, also the
// ancestors of `at` down from the reach's floor. No reach is the subtree of the root: one term.
func reachQuery(r *contract.Reach) query.Query {
	if r == nil {
		sub := contract.ReachSubtree(contract.Root())
		r = &sub
	}
	var qs []query.Query
	if r.Descendants {
		qs = append(qs, term(fieldNSSub, r.At.String()))
	} else {
		qs = append(qs, term(fieldNS, r.At.String()))
	}
	if r.Inherit {
		// Nodes ends with `at` itself, already asked for above; it starts at
		// the reach's floor.
		nodes := r.Nodes()
		for _, a := range nodes[:len(nodes)-1] {
			qs = append(qs, term(fieldNS, a.String()))
		}
	}
	if len(qs) == 1 {
		return qs[0]
	}
	return query.NewDisjunctionQuery(qs)
}
