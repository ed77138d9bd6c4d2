package postgres

import (
	"context"

	"mnemo/contract"
	"mnemo/engine/retrieval"
)

// rankKeyword returns hits [offset, offset+want) of the keyword ranking: the
// filter and the statuses rule in the same statement, ts_rank descending,
// then id. A query without a searchable term matches nothing.
//
// ts_rank (no weights, no length normalization) of a record is the sum over
// the query terms it holds of a function of each term's position count,
// divided by the number of terms: every record holding one term once scores
// the same, below every other match. So the ranking takes the records above
// that score first (repeat markers and pairs of terms: a few percent of the
// matches) and, only when they are fewer than the page needs, the records
// holding one term once in id order, without ranking them: first those of
// the first id bucket (ids starting with 0, a sixteenth of them: ids are
// fingerprints in lower-case hex), and only when they are too few the rest.
// ts_rank is computed for the page alone. The one statement answers from one snapshot.
// While rows written before the markers remain (kw IS NULL: the backfill
// marks them after open), and for queries of many terms, every match is
// ranked.
func (e *Engine) rankKeyword(ctx context.Context, text string, f *contract.MetaFilter, offset, want int) ([]contract.Hit, error) {
	ts := queryTerms(text)
	if len(ts) == 0 {
		return nil, nil
	}
	var q query
	// Each tsquery is an InitPlan's value rather than a constant: the
	// planner then estimates its matches without reading the tsvector
	// statistics for each of the statement's clauses (half of planning it).
	qa := "(SELECT " + q.arg(tsqueryLiteral(ts)) + "::tsquery)"
	q.filter(f, true)
	where := q.clause()
	var sql string
	if len(ts) > maxStagedTerms {
		sql = "SELECT " + hitColumns + ", ts_rank(tsv, " + qa + ") AS score FROM records WHERE tsv @@ " + qa + " AND " + where +
			" ORDER BY score DESC, id LIMIT " + q.arg(want) + " OFFSET " + q.arg(offset)
	} else {
		aa := "(SELECT " + q.arg(aboveOnceLiteral(ts)) + "::tsquery)"
		b0 := "(SELECT " + q.arg(quotedLexeme(idBucket("0"))) + "::tsquery)"
		lim := q.arg(int64(offset+want)) + "::bigint"
		rank := "SELECT id, ts_rank(tsv, " + qa + ") AS score FROM records WHERE "
		once := "SELECT id FROM records WHERE NOT (SELECT v FROM legacy) AND tsv @@ " + qa + " AND NOT (tsv @@ " + aa + ") AND " + where
		sql = "WITH legacy AS MATERIALIZED (SELECT EXISTS (SELECT 1 FROM records WHERE kw IS NULL) AS v)," +
			" every AS (" + rank + "(SELECT v FROM legacy) AND tsv @@ " + qa + " AND " + where + " ORDER BY score DESC, id LIMIT " + lim + ")," +
			" above AS MATERIALIZED (" + rank + "NOT (SELECT v FROM legacy) AND tsv @@ " + aa + " AND " + where + " ORDER BY score DESC, id LIMIT " + lim + ")," +
			" once0 AS MATERIALIZED (" + once + " AND tsv @@ " + b0 + " AND (SELECT count(*) FROM above) < " + lim +
			" ORDER BY id LIMIT " + lim + " - (SELECT count(*) FROM above))," +
			" once AS (" + once + " AND NOT (tsv @@ " + b0 + ") AND (SELECT count(*) FROM above) + (SELECT count(*) FROM once0) < " + lim +
			" ORDER BY id LIMIT " + lim + " - (SELECT count(*) FROM above) - (SELECT count(*) FROM once0))," +
			" top AS (SELECT * FROM every UNION ALL SELECT * FROM above UNION ALL SELECT id, -1::real FROM once0 UNION ALL SELECT id, -1::real FROM once" +
			" ORDER BY score DESC, id LIMIT " + q.arg(want) + " OFFSET " + q.arg(offset) + ")" +
			" SELECT " + hitColumnsOf("r.") + ", ts_rank(r.tsv, " + qa + ") FROM top JOIN records r ON r.id = top.id ORDER BY top.score DESC, top.id"
	}
	rs, err := e.pool.Query(ctx, sql, q.args...)
	if err != nil {
		return nil, e.dbErr(ctx, err)
	}
	defer rs.Close()
	var hits []contract.Hit
	s := newRecordScan()
	var score float32
	dest := append(s.dest(), &score)
	for rs.Next() {
		if err := rs.Scan(dest...); err != nil {
			return nil, e.dbErr(ctx, err)
		}
		rec, err := s.record()
		if err != nil {
			return nil, e.dbErr(ctx, err)
		}
		h := rec.Hit()
		h.Score = contract.F32(score)
		hits = append(hits, h)
	}
	if err := rs.Err(); err != nil {
		return nil, e.dbErr(ctx, err)
	}
	return hits, nil
}

// Fetch ranks records for a query (keyword only) and pages the ranking with a
// cursor bound to the query, mode and filter.
func (e *Engine) Fetch(ctx context.Context, req contract.FetchRequest) (contract.FetchPage, error) {
	if err := e.desc.EnsureMode(req.Mode); err != nil {
		return contract.FetchPage{}, err
	}
	if err := req.Validate(); err != nil {
		return contract.FetchPage{}, err
	}
	binding := contract.FetchBinding(req)
	offset, err := contract.DecodeFetchCursor(req.Cursor, binding)
	if err != nil {
		return contract.FetchPage{}, err
	}
	var hits []contract.Hit
	if req.RefersTo != nil {
		// The hint reorders a fixed head of the ranking, so pages stay disjoint.
		all, err := e.rankKeyword(ctx, req.Query, &req.Filter, 0, max(offset+req.Limit+1, contract.HintWindow))
		if err != nil {
			return contract.FetchPage{}, err
		}
		head := min(len(all), contract.HintWindow)
		all = append(req.RefersTo.RankByHint(all[:head]), all[head:]...)
		hits = all[min(offset, len(all)):]
	} else if hits, err = e.rankKeyword(ctx, req.Query, &req.Filter, offset, req.Limit+1); err != nil {
		return contract.FetchPage{}, err
	}
	page := contract.FetchPage{Hits: hits[:min(len(hits), req.Limit)]}
	page.Hits = contract.EmptyIfNil(page.Hits)
	if len(hits) > req.Limit {
		page.NextCursor = contract.EncodeFetchCursor(offset+req.Limit, binding)
	}
	return page, nil
}

// Recall gathers up to limit citations from the keyword ranking and asks the
// answerer.
func (e *Engine) Recall(ctx context.Context, req contract.RecallRequest) (contract.RecallAnswer, error) {
	if err := req.Validate(); err != nil {
		return contract.RecallAnswer{}, err
	}
	want := req.Limit
	if req.RefersTo != nil {
		want = max(want, contract.HintWindow)
	}
	hits, err := e.rankKeyword(ctx, req.Question, &req.Filter, 0, want)
	if err != nil {
		return contract.RecallAnswer{}, err
	}
	if req.RefersTo != nil {
		hits = req.RefersTo.RankByHint(hits)
	}
	hits = hits[:min(len(hits), req.Limit)]
	cites := make([]contract.Citation, len(hits))
	for i, h := range hits {
		score := h.Score
		cites[i] = contract.Citation{ID: h.ID, Kind: h.Kind, Snippet: h.Text, Meta: h.Meta, Score: &score}
	}
	answer, err := e.answerer.Answer(ctx, retrieval.AnswerRequest{
		Question: req.Question, Instructions: contract.Deref(req.Instructions), Citations: cites,
	})
	if err != nil {
		return contract.RecallAnswer{}, contract.AsError(err)
	}
	return contract.RecallAnswer{Answer: answer, Citations: cites, Model: contract.Ptr(e.answerer.Model())}, nil
}
