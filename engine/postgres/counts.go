package postgres

import (
	"cmp"
	"slices"

	"github.com/jackc/pgx/v5"

	"mnemo/contract"
)

// countKey is one row of record_counts.
type countKey struct {
	ns      string
	lastSvc int16
	status  string
	kind    string
}

// countDeltas accumulates the changes one transaction makes to record_counts.
type countDeltas map[countKey]int64

func (d countDeltas) add(ns string, lastSvc int16, status, kind string, n int64) {
	d[countKey{ns, lastSvc, status, kind}] += n
}

// queue adds the statement writing the deltas to b, and tells whether
// there was any. The rows are written in key order: every writer locks
// count rows in the same order, in the tail of its transaction (logChanges),
// so writers never deadlock on them.
func (d countDeltas) queue(b *pgx.Batch) bool {
	keys := make([]countKey, 0, len(d))
	for k, n := range d {
		if n != 0 {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return false
	}
	slices.SortFunc(keys, func(a, b countKey) int {
		return cmp.Or(cmp.Compare(a.ns, b.ns), cmp.Compare(a.status, b.status), cmp.Compare(a.kind, b.kind))
	})
	ns := make([]string, len(keys))
	svc := make([]int16, len(keys))
	st := make([]string, len(keys))
	kd := make([]string, len(keys))
	n := make([]int64, len(keys))
	for i, k := range keys {
		ns[i], svc[i], st[i], kd[i], n[i] = k.ns, k.lastSvc, k.status, k.kind, d[k]
	}
	b.Queue(`INSERT INTO record_counts (ns, last_svc, status, kind, n)
		SELECT u.ns, u.s, u.st, u.k, u.n FROM unnest($1::text[], $2::smallint[], $3::text[], $4::text[], $5::bigint[]) WITH ORDINALITY AS u(ns, s, st, k, n, o)
		ORDER BY o
		ON CONFLICT (ns, status, kind) DO UPDATE SET n = record_counts.n + excluded.n`, ns, svc, st, kd, n)
	return true
}

// countable tells whether a meta filter sets nothing but the fields
// record_counts is keyed by (reach, statuses, kinds).
func countable(f *contract.MetaFilter) bool {
	g := *f
	g.Reach, g.Statuses, g.Kinds = nil, nil, nil
	return g.IsEmpty()
}

// countedTotal is the SQL expression of a browse query's total from
// record_counts, when its set is decided by the reach, status and kind alone
// (expired records, with now, are counted from their own index and taken
// off); ok is false otherwise.
func countedTotal(q *query, bq *contract.BrowseQuery) (string, bool) {
	if !countable(&bq.Filter) {
		return "", false
	}
	for _, f := range bq.Filters {
		if f.Field != contract.BrowseFieldStatus && f.Field != contract.BrowseFieldKind {
			return "", false
		}
	}
	q.where = nil
	q.filter(&bq.Filter, false)
	if bq.Status != nil {
		q.add("status = ANY(" + q.arg(strs(bq.Status)) + ")")
	}
	if bq.Kind != nil {
		q.add("kind = ANY(" + q.arg(strs(bq.Kind)) + ")")
	}
	for _, f := range bq.Filters {
		q.add(filterClause(q, f))
	}
	sum := "(SELECT coalesce(sum(n), 0)::bigint FROM record_counts WHERE " + q.clause() + ")"
	if bq.Now != nil {
		q.add("expires_ms IS NOT NULL AND expires_ms <= " + q.arg(bq.Now.UnixMilli()))
		sum += " - (SELECT count(*) FROM records WHERE " + q.clause() + ")"
	}
	return sum, true
}
