package postgres

import (
	"context"
	"slices"
	"time"

	"mnemo/contract"
)

// Browse answers the browse query of docs/spec/contract.md section 4 in SQL, in one
// statement (one round trip, one snapshot): the total, from record_counts
// when the reach, status and kind decide the set and by count otherwise, and
// the page (ordered, keyset after the cursor, offset, limit) read from the
// hit column. Every rule is the contract's (browse_eval.go): missing values
// sort last in either direction, ties by id in byte order, times at
// millisecond precision, confidence as an f32, content filters on the
// Unicode case-folded text (the trigram index serves them).
func (e *Engine) Browse(ctx context.Context, bq contract.BrowseQuery) (contract.BrowsePage, error) {
	if err := bq.Validate(); err != nil {
		return contract.BrowsePage{}, err
	}
	pos, err := bq.DecodeCursor()
	if err != nil {
		return contract.BrowsePage{}, err
	}
	var q query
	total := totalExpr(&q, &bq)
	q.where = nil
	browseWhere(&q, &bq)
	order := bq.Order()
	if pos != nil {
		if bound := firstKeyBound(&q, order, pos); bound != "" {
			q.add(bound)
		}
		q.add(afterClause(&q, order, pos))
	}
	limit := bq.EffectiveLimit()
	page := "SELECT " + hitColumns + " FROM records WHERE " + q.clause() + " ORDER BY " + orderClause(order) +
		" LIMIT " + q.arg(limit) + " OFFSET " + q.arg(bq.Offset)
	sql := "SELECT t.total, p.id, p.kind, p.status, p.created_ms, p.updated_ms, p.expires_ms, p.superseded_by, p.confidence, p.hit, p.item_json" +
		" FROM (SELECT " + total + " AS total) t LEFT JOIN LATERAL (" + page + ") p ON true"
	rs, err := e.pool.Query(ctx, sql, q.args...)
	if err != nil {
		return contract.BrowsePage{}, e.dbErr(ctx, err)
	}
	out := contract.BrowsePage{Records: make([]contract.Record, 0, limit)}
	err = func() error {
		defer rs.Close()
		s := newRecordScan()
		dest := append([]any{&out.Total}, s.dest()...)
		for rs.Next() {
			if rs.RawValues()[1] == nil {
				// The empty page's one row: the total alone.
				if err := rs.Scan(append([]any{&out.Total}, make([]any, len(dest)-1)...)...); err != nil {
					return err
				}
				continue
			}
			if err := rs.Scan(dest...); err != nil {
				return err
			}
			rec, err := s.record()
			if err != nil {
				return err
			}
			out.Records = append(out.Records, rec)
		}
		return rs.Err()
	}()
	if err != nil {
		return contract.BrowsePage{}, e.dbErr(ctx, err)
	}
	// The join hands the page on in its order (a second sort of the page
	// would cost a millisecond for 1000 rows); should a plan ever not,
	// the contract's order is restored here.
	cmp := func(a, b contract.Record) int { return contract.CompareRecords(order, &a, &b) }
	if !slices.IsSortedFunc(out.Records, cmp) {
		slices.SortStableFunc(out.Records, cmp)
	}
	if len(out.Records) == limit {
		out.Continuation = contract.Ptr(contract.EncodeCursor(bq, &out.Records[len(out.Records)-1]))
	}
	return out, nil
}

// totalExpr is the SQL expression of the query's exact total: from
// record_counts when the reach, status and kind decide the set (expired
// records, with now, counted from their own index and taken off), else a
// count of the matching records.
func totalExpr(q *query, bq *contract.BrowseQuery) string {
	if sum, ok := countedTotal(q, bq); ok {
		return sum
	}
	q.where = nil
	browseWhere(q, bq)
	return "(SELECT count(*) FROM records WHERE " + q.clause() + ")"
}

// browseWhere adds the query's set: the meta filter with the listing status
// rule, the status and kind shorthands, expiry against now, every filter.
func browseWhere(q *query, bq *contract.BrowseQuery) {
	q.filter(&bq.Filter, false)
	if bq.Status != nil {
		q.add("status = ANY(" + q.arg(strs(bq.Status)) + ")")
	}
	if bq.Kind != nil {
		q.add("kind = ANY(" + q.arg(strs(bq.Kind)) + ")")
	}
	if bq.Now != nil {
		q.add("expires_ms IS NULL OR expires_ms > " + q.arg(bq.Now.UnixMilli()))
	}
	for _, f := range bq.Filters {
		q.add(filterClause(q, f))
	}
}

func strs[T ~string](vs []T) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = string(v)
	}
	return out
}

// column is a browse field's column.
func column(field string) string {
	switch field {
	case contract.BrowseFieldUpdatedAt:
		return "updated_ms"
	case contract.BrowseFieldCreatedAt:
		return "created_ms"
	case contract.BrowseFieldObservedAt:
		return "observed_ms"
	case contract.BrowseFieldConfidence:
		return "confidence"
	case contract.BrowseFieldNamespace:
		return "ns"
	case contract.BrowseFieldKind:
		return "kind"
	case contract.BrowseFieldStatus:
		return "status"
	}
	return "NULL"
}

const dayMillis = 24 * 60 * 60 * 1000

func dayStart(day string) int64 {
	t, _ := time.Parse(time.DateOnly, day)
	return t.UnixMilli()
}

// filterClause is one validated browse filter in SQL (a NULL value fails
// every comparison, as a missing value does in the contract).
func filterClause(q *query, f contract.BrowseFilter) string {
	switch f.Field {
	case contract.BrowseFieldStatus, contract.BrowseFieldKind:
		in := column(f.Field) + " = ANY(" + q.arg(f.Values) + ")"
		if f.Op == "in" {
			return in
		}
		return "NOT (" + in + ")"
	case contract.BrowseFieldContent:
		n := likeEscape(contract.FoldCase(f.Text))
		switch f.Op {
		case "contains":
			return "folded LIKE " + q.arg("%"+n+"%")
		case "not_contains":
			return "folded NOT LIKE " + q.arg("%"+n+"%")
		case "equals":
			return "folded LIKE " + q.arg(n)
		case "not_equals":
			return "folded NOT LIKE " + q.arg(n)
		case "starts_with":
			return "folded LIKE " + q.arg(n+"%")
		case "ends_with":
			return "folded LIKE " + q.arg("%"+n)
		}
	case contract.BrowseFieldNamespace:
		ns, _ := contract.ParseNamespace(f.Text)
		s := ns.String()
		if f.Op == "equals" {
			return "ns = " + q.arg(s)
		}
		if ns.IsRoot() {
			return "TRUE"
		}
		return "ns = " + q.arg(s) + " OR starts_with(ns, " + q.arg(s+"/") + "::text)"
	case contract.BrowseFieldConfidence:
		num := func(v float64) string { return q.arg(float32(v)) + "::real" }
		switch f.Op {
		case "eq":
			return "confidence = " + num(f.Num)
		case "neq":
			return "confidence <> " + num(f.Num)
		case "gt":
			return "confidence > " + num(f.Num)
		case "gte":
			return "confidence >= " + num(f.Num)
		case "lt":
			return "confidence < " + num(f.Num)
		case "lte":
			return "confidence <= " + num(f.Num)
		case "between":
			return "confidence >= " + num(f.Min) + " AND confidence <= " + num(f.Max)
		}
	case contract.BrowseFieldUpdatedAt, contract.BrowseFieldCreatedAt, contract.BrowseFieldObservedAt:
		col := column(f.Field)
		switch f.Op {
		case "on_day":
			lo := dayStart(f.Day)
			return col + " >= " + q.arg(lo) + " AND " + col + " < " + q.arg(lo+dayMillis)
		case "before_day":
			return col + " < " + q.arg(dayStart(f.Day))
		case "after_day":
			return col + " >= " + q.arg(dayStart(f.Day)+dayMillis)
		case "between_days":
			return col + " >= " + q.arg(dayStart(f.FromDay)) + " AND " + col + " < " + q.arg(dayStart(f.UntilDay)+dayMillis)
		}
	}
	return "FALSE"
}

// orderClause is the order: each key with missing values last, then id.
// Only confidence and observed_at can be missing; the other keys are NOT NULL
// and are ordered without a NULLS clause, so their indexes serve the order.
func orderClause(order []contract.SortKey) string {
	s := ""
	for _, k := range order {
		dir := " ASC"
		if k.Dir == contract.SortDesc {
			dir = " DESC"
		}
		if k.Field == contract.BrowseFieldConfidence || k.Field == contract.BrowseFieldObservedAt {
			dir += " NULLS LAST"
		}
		s += column(k.Field) + dir + ", "
	}
	return s + "id"
}

// keyArg is a cursor key entry as a SQL argument of its field's type, or
// nil for no value.
func keyArg(field string, v any) any {
	switch x := v.(type) {
	case string:
		switch field {
		case contract.BrowseFieldUpdatedAt, contract.BrowseFieldCreatedAt, contract.BrowseFieldObservedAt:
			t, err := time.Parse("2006-01-02T15:04:05.000Z", x)
			if err != nil {
				return nil
			}
			return t.UnixMilli()
		case contract.BrowseFieldConfidence:
			return nil
		}
		return x
	case float64:
		if field != contract.BrowseFieldConfidence {
			return nil
		}
		return float32(x)
	}
	return nil
}

// firstKeyBound is a bound on the first sort key implied by the cursor, so
// that the key's index starts the scan at the cursor: rows after it hold the
// cursor's value or one further along. It is "" when the key can be missing
// (confidence, observed_at), whose missing values sort after every value.
func firstKeyBound(q *query, order []contract.SortKey, pos *contract.CursorPos) string {
	k := order[0]
	if k.Field == contract.BrowseFieldConfidence || k.Field == contract.BrowseFieldObservedAt || len(pos.Key) == 0 {
		return ""
	}
	v := keyArg(k.Field, pos.Key[0])
	if v == nil {
		return ""
	}
	if k.Dir == contract.SortDesc {
		return column(k.Field) + " <= " + q.arg(v)
	}
	return column(k.Field) + " >= " + q.arg(v)
}

// afterClause is "sorts strictly after the cursor position": the first key
// that differs decides, missing values sorting after present ones, then id.
func afterClause(q *query, order []contract.SortKey, pos *contract.CursorPos) string {
	var ors []string
	var equal []string
	for i, k := range order {
		col := column(k.Field)
		var v any
		if i < len(pos.Key) {
			v = keyArg(k.Field, pos.Key[i])
		}
		if v == nil {
			// Nothing sorts after a missing value but others missing.
			equal = append(equal, col+" IS NULL")
			continue
		}
		a := q.arg(v)
		if k.Field == contract.BrowseFieldConfidence {
			a += "::real"
		}
		cmp := " > "
		if k.Dir == contract.SortDesc {
			cmp = " < "
		}
		ors = append(ors, and(equal, "("+col+cmp+a+" OR "+col+" IS NULL)"))
		equal = append(equal, col+" = "+a)
	}
	ors = append(ors, and(equal, "id > "+q.arg(pos.ID)))
	out := ""
	for i, o := range ors {
		if i > 0 {
			out += " OR "
		}
		out += "(" + o + ")"
	}
	return out
}

func and(prefix []string, last string) string {
	s := ""
	for _, p := range prefix {
		s += p + " AND "
	}
	return s + last
}
