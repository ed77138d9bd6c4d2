package index

import (
	"time"

	"github.com/blevesearch/bleve/v2/search/query"

	"mnemo/contract"
)

// filterQuery translates a MetaFilter (and the statuses rule) into a Bleve
// query that admits exactly the documents contract.MetaFilter.Matches and
// contract.MetaFilter.AdmitsStatus admit. It never returns nil: the reach
// clause is always present, because even the empty filter hides service
// sandboxes.
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
	exact(fieldCommit, f.Commit)
	exact(fieldURL, f.URL)
	exact(fieldToolCall, f.ToolCall)
	if f.Turns != nil {
		add(term(fieldTurns, turnsTerm(*f.Turns)))
	}
	if f.Folder != nil {
		add(pathQuery(fieldFolder, fieldFolderPrefix, *f.Folder))
	}
	if f.FilePath != nil {
		add(pathQuery(fieldFilePath, fieldFilePathPrefix, *f.FilePath))
	}
	sameID := func(field string, want *string) {
		if want != nil {
			add(anyTerm(field, []string{*want, contract.RedactedID(*want)}))
		}
	}
	sameID(fieldThreadID, f.ThreadID)
	sameID(fieldAgentID, f.AgentID)
	sameID(fieldSourceID, f.SourceID)
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
	if f.ObservedAfter != nil || f.ObservedBefore != nil {
		add(observedQuery(f.ObservedAfter, f.ObservedBefore))
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

// pathQuery is contract.PathMatch as terms: the held value equals the wanted
// path, or the wanted path without trailing slashes is a `/`-boundary prefix
// of it.
func pathQuery(field, prefixField, want string) query.Query {
	base := want
	for len(base) > 0 && base[len(base)-1] == '/' {
		base = base[:len(base)-1]
	}
	return query.NewDisjunctionQuery([]query.Query{term(field, want), term(prefixField, prefixTerm(base))})
}

// observedQuery: after inclusive, before exclusive; a record without
// observed_at has neither field and so never matches.
func observedQuery(after, before *time.Time) query.Query {
	var qs []query.Query
	if q := observedDateQuery(after, before); q != nil {
		qs = append(qs, q)
	}
	// Far terms share the prefix "observed_far=", so the open ends of the
	// range are that prefix and the prefix's successor.
	lo, hi := metaTerm(fieldObservedFar, ""), fieldObservedFar+string(rune('='+1))
	if after != nil {
		lo = metaTerm(fieldObservedFar, farTerm(*after))
	}
	if before != nil {
		hi = metaTerm(fieldObservedFar, farTerm(*before))
	}
	inclusive, exclusive := true, false
	far := query.NewTermRangeInclusiveQuery(lo, hi, &inclusive, &exclusive)
	far.SetField(physicalField(fieldObservedFar))
	qs = append(qs, far)
	if len(qs) == 1 {
		return qs[0]
	}
	return query.NewDisjunctionQuery(qs)
}

// observedDateQuery covers the documents whose observed_at is a Bleve date.
// Bounds beyond what a date can hold are clamped (or found empty), which
// changes nothing for those documents. It returns nil when no representable
// instant lies in the range.
func observedDateQuery(after, before *time.Time) query.Query {
	start := dateMin
	end := dateMax
	startInclusive, endInclusive := true, true
	if after != nil {
		if after.After(dateMax) {
			return nil
		}
		if after.After(start) {
			start = *after
		}
	}
	if before != nil {
		if !before.After(dateMin) {
			return nil
		}
		if before.Before(end) || before.Equal(end) {
			end = *before
			endInclusive = false
		}
	}
	if !start.Before(end) && !(start.Equal(end) && endInclusive) {
		return nil
	}
	q := query.NewDateRangeInclusiveQuery(start, end, &startInclusive, &endInclusive)
	q.SetField(fieldObservedAt)
	return q
}
