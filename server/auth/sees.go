package auth

import (
	"mnemo/contract"
	"mnemo/server/audit"
)

// Sees tells whether p may read ev in the audit log: the owner reads every
// entry; any other principal reads an entry when everything it names lies
// inside p's reach (the namespaces of its records, the reach it ran under, its
// filter's reach) and every id it names was placed (none skipped). An entry
// that names no place (a refused authentication, an entry written before
// entries carried their namespaces) is for the owner and principals without
// a reach.
func (p *Principal) Sees(ev audit.Event) bool {
	if p.Unlimited {
		return true
	}
	bound := p.Bound()
	placed := false
	for _, ns := range ev.Where {
		if !contract.AdmittedBy(p.Reach, ns) {
			return false
		}
		placed = true
	}
	if ev.Reach != nil {
		if !ev.Reach.Within(bound) {
			return false
		}
		placed = true
	}
	if ev.Filter != nil {
		r := contract.ReachSubtree(contract.Root())
		if ev.Filter.Reach != nil {
			r = *ev.Filter.Reach
		}
		if !r.Within(bound) {
			return false
		}
		placed = true
	}
	if len(ev.IDs) > 0 && (len(ev.Where) == 0 || ev.Skipped > 0) {
		// Some named id lies nowhere we know: it may be another tenant's.
		return false
	}
	return placed || p.Reach == nil
}
