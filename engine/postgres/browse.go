package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"

	"mnemo/contract"
)

// Browse answers the browse query from one REPEATABLE READ snapshot. SQL
// selects a superset of the matches (the meta filter exactly, the status and
// kind sets, and every positive content filter through the trigram index on
// the folded text); contract.BrowseSlice then decides every rule of
// contract.md section 4 (matching, expiry, order, cursor, total) exactly.
func (e *Engine) Browse(ctx context.Context, bq contract.BrowseQuery) (contract.BrowsePage, error) {
	if err := bq.Validate(); err != nil {
		return contract.BrowsePage{}, err
	}
	if _, err := bq.DecodeCursor(); err != nil {
		return contract.BrowsePage{}, err
	}
	var q query
	q.filter(&bq.Filter, false)
	if bq.Status != nil {
		ss := make([]string, len(bq.Status))
		for i, s := range bq.Status {
			ss[i] = string(s)
		}
		q.add("status = ANY(" + q.arg(ss) + ")")
	}
	if bq.Kind != nil {
		ks := make([]string, len(bq.Kind))
		for i, k := range bq.Kind {
			ks[i] = string(k)
		}
		q.add("kind = ANY(" + q.arg(ks) + ")")
	}
	for _, f := range bq.Filters {
		if f.Field != contract.BrowseFieldContent || f.Text == "" {
			continue
		}
		switch f.Op {
		case "contains", "equals", "starts_with", "ends_with":
			q.add("folded LIKE " + q.arg("%"+likeEscape(contract.FoldCase(f.Text))+"%"))
		}
	}
	var records []contract.Record
	err := e.inTx(ctx, pgx.RepeatableRead, func(tx pgx.Tx) error {
		rs, err := tx.Query(ctx, "SELECT "+rowColumns+" FROM records WHERE "+q.clause()+" ORDER BY seq", q.args...)
		if err != nil {
			return err
		}
		rows, err := scanRows(rs)
		if err != nil {
			return err
		}
		records = make([]contract.Record, len(rows))
		for i, r := range rows {
			records[i] = r.record(false)
		}
		return nil
	})
	if err != nil {
		return contract.BrowsePage{}, err
	}
	return contract.BrowseSlice(bq, records)
}
