package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"mnemo/contract"
)

// Browse answers the browse query of contract.md section 4 in SQL: the
// total (count) and the page (ordered, keyset after the cursor, offset,
// limit) come from two statements of one REPEATABLE READ transaction, so
// they see one snapshot. Every rule is the contract's (browse_eval.go):
// missing values sort last in either direction, ties by id in byte order,
// times at millisecond precision, confidence as an f32, content filters on
// the Unicode case-folded text (the trigram index serves them).
func (e *Engine) Browse(ctx context.Context, bq contract.BrowseQuery) (contract.BrowsePage, error) {
	if err := bq.Validate(); err != nil {
		return contract.BrowsePage{}, err
	}
	pos, err := bq.DecodeCursor()
	if err != nil {
		return contract.BrowsePage{}, err
	}
	var q query
	browseWhere(&q, &bq)
	where := q.clause()
	countArgs := len(q.args)
	order := bq.Order()
	if pos != nil {
		q.add(afterClause(&q, order, pos))
	}
	limit := bq.EffectiveLimit()
	sql := "SELECT " + rowColumns + " FROM records WHERE " + q.clause() + " ORDER BY " + orderClause(order) +
		" LIMIT " + q.arg(limit) + " OFFSET " + q.arg(bq.Offset)
	page := contract.BrowsePage{Records: []contract.Record{}}
	err = e.inTx(ctx, pgx.RepeatableRead, func(tx pgx.Tx) error {
		total, counted, err := countedTotal(ctx, tx, &bq)
		if err != nil {
			return err
		}
		page.Total = total
		if !counted {
			if err := tx.QueryRow(ctx, "SELECT count(*) FROM records WHERE "+where, q.args[:countArgs]...).Scan(&page.Total); err != nil {
				return err
			}
		}
		rs, err := tx.Query(ctx, sql, q.args...)
		if err != nil {
			return err
		}
		rows, err := scanRows(rs)
		if err != nil {
			return err
		}
		for _, r := range rows {
			page.Records = append(page.Records, r.record(false))
		}
		return nil
	})
	if err != nil {
		return contract.BrowsePage{}, err
	}
	if len(page.Records) == limit {
		page.Continuation = contract.Ptr(contract.EncodeCursor(bq, &page.Records[len(page.Records)-1]))
	}
	return page, nil
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
