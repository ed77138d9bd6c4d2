package postgres

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"mnemo/contract"
)

// rowColumns are the columns scanRows reads, in its order.
const rowColumns = "id, item, status, created_ms, updated_ms, expires_ms, superseded_by"

// scanRows reads every row of rs (rowColumns) and closes it.
func scanRows(rs pgx.Rows) ([]*row, error) {
	defer rs.Close()
	var out []*row
	for rs.Next() {
		r := &row{}
		var status string
		if err := rs.Scan(&r.id, &r.itemJSON, &status, &r.created, &r.updated, &r.expires, &r.superBy); err != nil {
			return nil, err
		}
		r.status = contract.Status(status)
		if err := json.Unmarshal([]byte(r.itemJSON), &r.item); err != nil {
			return nil, contract.EngineErr("record %s: %w", r.id, err)
		}
		out = append(out, r)
	}
	return out, rs.Err()
}

// hitColumns are the columns scanRecords reads, in its order: the system
// fields, the confidence and the hit column, and the item only for a row
// written before the hit column existed.
const hitColumns = "id, kind, status, created_ms, updated_ms, expires_ms, superseded_by, confidence, hit, " +
	"CASE WHEN hit IS NULL THEN item END AS item_json"

// hitColumnsOf is hitColumns of the table or alias t (as "r.").
func hitColumnsOf(t string) string {
	return t + "id, " + t + "kind, " + t + "status, " + t + "created_ms, " + t + "updated_ms, " + t + "expires_ms, " +
		t + "superseded_by, " + t + "confidence, " + t + "hit, CASE WHEN " + t + "hit IS NULL THEN " + t + "item END AS item_json"
}

// recordScan reads hitColumns rows into records, parsing each namespace once.
type recordScan struct {
	nss nsCache
	// the scan targets of one row
	id, kind, status string
	created, updated int64
	expires          *int64
	superBy          *string
	conf             *float32
	hit              pgtype.DriverBytes // the driver's buffer, valid until the next row
	itemJSON         *string
}

func newRecordScan() *recordScan { return &recordScan{nss: nsCache{}} }

// dest are the scan targets of hitColumns, in order.
func (s *recordScan) dest() []any {
	return []any{&s.id, &s.kind, &s.status, &s.created, &s.updated, &s.expires, &s.superBy, &s.conf, &s.hit, &s.itemJSON}
}

// record is the scanned row as a contract record (no stored item).
func (s *recordScan) record() (contract.Record, error) {
	rec := contract.Record{ID: s.id, Kind: contract.ItemKind(s.kind), Status: contract.Status(s.status),
		CreatedAt: millis(s.created), UpdatedAt: millis(s.updated), SupersededBy: s.superBy}
	if s.expires != nil {
		t := millis(*s.expires)
		rec.ExpiresAt = &t
	}
	if s.hit == nil {
		if s.itemJSON == nil {
			return rec, contract.EngineErr("record %s has neither a hit nor an item", s.id)
		}
		var it contract.StoreItem
		if err := json.Unmarshal([]byte(*s.itemJSON), &it); err != nil {
			return rec, contract.EngineErr("record %s: %w", s.id, err)
		}
		r := contract.RecordOf(s.id, &it, rec.Status, rec.CreatedAt, rec.UpdatedAt, rec.ExpiresAt, rec.SupersededBy)
		return r, nil
	}
	text, meta, err := decodeHit(s.hit, s.nss)
	if err != nil {
		return rec, contract.EngineErr("record %s: %w", s.id, err)
	}
	rec.Text, rec.Meta = text, meta
	if rec.Kind == contract.KindLearning && s.conf != nil {
		c := contract.F32(*s.conf)
		rec.Confidence = &c
	}
	return rec, nil
}

// scanRecords reads every row of rs (hitColumns) as records and closes it.
func scanRecords(rs pgx.Rows) ([]contract.Record, error) {
	defer rs.Close()
	s := newRecordScan()
	var out []contract.Record
	for rs.Next() {
		if err := rs.Scan(s.dest()...); err != nil {
			return nil, err
		}
		rec, err := s.record()
		if err != nil {
			return nil, err
		}
		out = append(out, rec)
	}
	return out, rs.Err()
}

func millis(ms int64) time.Time { return time.UnixMilli(ms).UTC() }

// record is the row as a contract record, with the stored item when withItem.
func (r *row) record(withItem bool) contract.Record {
	var exp *time.Time
	if r.expires != nil {
		t := millis(*r.expires)
		exp = &t
	}
	rec := contract.RecordOf(r.id, &r.item, r.status, millis(r.created), millis(r.updated), exp, r.superBy)
	if withItem {
		it := r.item
		rec.Item = &it
	}
	return rec
}

func (r *row) hit() contract.Hit { return contract.HitOf(r.id, &r.item) }

// selectRows runs a query over rowColumns.
func (e *Engine) selectRows(ctx context.Context, sql string, args ...any) ([]*row, error) {
	rs, err := e.pool.Query(ctx, sql, args...)
	if err != nil {
		return nil, e.dbErr(ctx, err)
	}
	out, err := scanRows(rs)
	if err != nil {
		return nil, e.dbErr(ctx, err)
	}
	return out, nil
}

const listCursorPrefix = "p1."

// listPage reads one page of the listing order (newest created first, then
// id), keyset-paged by the last row's (created, id), selecting cols; scan
// reads the rows (one more than the limit, to tell whether more follow) and
// returns the page's last row's key and how many rows it read.
func (e *Engine) listPage(ctx context.Context, req contract.ListRequest, cols string,
	scan func(pgx.Rows) (created int64, id string, n int, err error)) (*string, error) {
	if err := req.Validate(); err != nil {
		return nil, err
	}
	var q query
	q.filter(&req.Filter, false)
	if req.Cursor != nil {
		ms, id, err := decodeListCursor(*req.Cursor)
		if err != nil {
			return nil, err
		}
		c, i := q.arg(ms), q.arg(id)
		q.add("created_ms < " + c + " OR (created_ms = " + c + " AND id > " + i + ")")
	}
	lim := q.arg(req.Limit + 1)
	rs, err := e.pool.Query(ctx, "SELECT "+cols+" FROM records WHERE "+q.clause()+
		" ORDER BY created_ms DESC, id LIMIT "+lim, q.args...)
	if err != nil {
		return nil, e.dbErr(ctx, err)
	}
	created, id, n, err := scan(rs)
	if err != nil {
		return nil, e.dbErr(ctx, err)
	}
	if n > req.Limit {
		return contract.Ptr(listCursorPrefix + base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(created, 10)+"."+id))), nil
	}
	return nil, nil
}

func decodeListCursor(c string) (int64, string, error) {
	if raw, ok := strings.CutPrefix(c, listCursorPrefix); ok {
		if b, err := base64.RawURLEncoding.DecodeString(raw); err == nil {
			ms, id, ok := strings.Cut(string(b), ".")
			if n, err := strconv.ParseInt(ms, 10, 64); ok && err == nil && id != "" {
				return n, id, nil
			}
		}
	}
	return 0, "", contract.Invalid("unknown cursor `%s`", c)
}

// List pages through the records matching the filter, newest created first,
// reading the hit column.
func (e *Engine) List(ctx context.Context, req contract.ListRequest) (contract.ListPage, error) {
	var recs []contract.Record
	next, err := e.listPage(ctx, req, hitColumns, func(rs pgx.Rows) (created int64, id string, n int, err error) {
		recs, err = scanRecords(rs)
		if len(recs) > 0 {
			last := &recs[min(len(recs), req.Limit)-1]
			created, id = last.CreatedAt.UnixMilli(), last.ID
		}
		return created, id, len(recs), err
	})
	if err != nil {
		return contract.ListPage{}, err
	}
	page := contract.ListPage{Items: make([]contract.Hit, 0, len(recs)), NextCursor: next}
	for _, r := range recs[:min(len(recs), req.Limit)] {
		page.Items = append(page.Items, r.Hit())
	}
	return page, nil
}

// Export pages like List and hands back each item exactly as stored.
func (e *Engine) Export(ctx context.Context, req contract.ListRequest) (contract.ExportPage, error) {
	var rows []*row
	next, err := e.listPage(ctx, req, rowColumns, func(rs pgx.Rows) (created int64, id string, n int, err error) {
		rows, err = scanRows(rs)
		if len(rows) > 0 {
			last := rows[min(len(rows), req.Limit)-1]
			created, id = last.created, last.id
		}
		return created, id, len(rows), err
	})
	if err != nil {
		return contract.ExportPage{}, err
	}
	page := contract.ExportPage{Items: make([]contract.Exported, 0, len(rows)), NextCursor: next}
	for _, r := range rows[:min(len(rows), req.Limit)] {
		page.Items = append(page.Items, contract.Exported{ID: r.id, Item: r.item})
	}
	return page, nil
}

// lookup reads the records named, in request order, each once, leaving out
// those outside the reach.
func (e *Engine) lookup(ctx context.Context, req contract.GetRequest) ([]*row, error) {
	if err := req.Validate(); err != nil {
		return nil, err
	}
	rows, err := e.selectRows(ctx, "SELECT "+rowColumns+" FROM records WHERE id = ANY($1)", req.IDs)
	if err != nil {
		return nil, err
	}
	byID := make(map[string]*row, len(rows))
	for _, r := range rows {
		byID[r.id] = r
	}
	out := make([]*row, 0, len(rows))
	for _, id := range req.IDs {
		r, ok := byID[id]
		if !ok {
			continue
		}
		delete(byID, id)
		if contract.AdmittedBy(req.Reach, r.item.Meta.Namespace) {
			out = append(out, r)
		}
	}
	return out, nil
}

// Get reads hits by id, in the order named, leaving out ids outside the reach.
func (e *Engine) Get(ctx context.Context, req contract.GetRequest) ([]contract.Hit, error) {
	rows, err := e.lookup(ctx, req)
	if err != nil {
		return nil, err
	}
	out := make([]contract.Hit, len(rows))
	for i, r := range rows {
		out[i] = r.hit()
	}
	return out, nil
}

// GetRecords reads whole records, stored item included, by id.
func (e *Engine) GetRecords(ctx context.Context, req contract.GetRequest) ([]contract.Record, error) {
	rows, err := e.lookup(ctx, req)
	if err != nil {
		return nil, err
	}
	out := make([]contract.Record, len(rows))
	for i, r := range rows {
		out[i] = r.record(true)
	}
	return out, nil
}

// facetColumn is the SQL column of a single-valued facet.
func facetColumn(f contract.Facet) (string, bool) {
	switch f {
	case contract.FacetKind:
		return "kind", true
	case contract.FacetSource:
		return "source_kind", true
	case contract.FacetSourceID:
		return "source_id", true
	case contract.FacetWorkspace:
		return "workspace", true
	case contract.FacetFolder:
		return "folder", true
	case contract.FacetFilePath:
		return "file_path", true
	case contract.FacetLanguage:
		return "language", true
	case contract.FacetRepo:
		return "repo", true
	case contract.FacetURL:
		return "url", true
	case contract.FacetThread:
		return "thread_id", true
	case contract.FacetAgent:
		return "agent_id", true
	case contract.FacetToolCall:
		return "tool_call", true
	case contract.FacetNamespace:
		return "ns", true
	case contract.FacetStatus:
		return "status", true
	}
	return "", false
}

// facetCode is a facet's code in facet_values (migration 6), 0 for the
// facets record_counts serves.
func facetCode(f contract.Facet) int16 {
	switch f {
	case contract.FacetSource:
		return 1
	case contract.FacetSourceID:
		return 2
	case contract.FacetWorkspace:
		return 3
	case contract.FacetFolder:
		return 4
	case contract.FacetFilePath:
		return 5
	case contract.FacetLanguage:
		return 6
	case contract.FacetRepo:
		return 7
	case contract.FacetURL:
		return 8
	case contract.FacetThread:
		return 9
	case contract.FacetAgent:
		return 10
	case contract.FacetToolCall:
		return 11
	case contract.FacetTag:
		return 12
	}
	return 0
}

// atRoot tells whether a filter selects what facet_values counts: every
// record outside the service sandboxes, of every status and kind.
func atRoot(f *contract.MetaFilter) bool {
	g := *f
	g.Reach = nil
	return g.IsEmpty() && (f.Reach == nil || f.Reach.Descendants && f.Reach.At.IsRoot())
}

// Explore counts a facet's values exactly, in one statement (one snapshot):
// at the root from the kept counts (facet_values, record_counts), otherwise
// grouping every record the filter selects in record_facets (the records'
// filter and facet columns alone, so the scan reads a seventh of the bytes).
// Never truncated.
func (e *Engine) Explore(ctx context.Context, req contract.ExploreRequest) (contract.ExplorePage, error) {
	if err := req.Validate(); err != nil {
		return contract.ExplorePage{}, err
	}
	if code := facetCode(req.Facet); code != 0 && atRoot(&req.Filter) {
		return e.exploreCounted(ctx, req, code)
	}
	return e.exploreGrouped(ctx, req)
}

// exploreGrouped counts a facet by grouping the rows the filter selects.
func (e *Engine) exploreGrouped(ctx context.Context, req contract.ExploreRequest) (contract.ExplorePage, error) {
	var q query
	sql, err := groupingSQL(&q, &req)
	if err != nil {
		return contract.ExplorePage{}, err
	}
	rs, err := e.pool.Query(ctx, sql, q.args...)
	if err != nil {
		return contract.ExplorePage{}, e.dbErr(ctx, err)
	}
	defer rs.Close()
	counts := map[string]uint64{}
	var missing, total uint64
	for rs.Next() {
		var v *string
		var n, records uint64
		var grand int32
		if err := rs.Scan(&v, &n, &records, &grand); err != nil {
			return contract.ExplorePage{}, e.dbErr(ctx, err)
		}
		switch {
		case grand != 0:
			total = records
		case v == nil:
			missing = records
		case n > 0:
			counts[*v] = n
		}
	}
	if err := rs.Err(); err != nil {
		return contract.ExplorePage{}, e.dbErr(ctx, err)
	}
	return contract.ExplorePageOf(req.Facet, counts, req.Limit, total, missing, false), nil
}

// groupingSQL is the statement counting req's facet by grouping the rows its
// filter selects, its arguments added to q. Each row is (value, count,
// records, is-total); the grand-total row counts records, and a NULL value
// counts the records that have none.
func groupingSQL(q *query, req *contract.ExploreRequest) (string, error) {
	q.filter(&req.Filter, false)
	if countable(&req.Filter) && (req.Facet == contract.FacetKind || req.Facet == contract.FacetStatus || req.Facet == contract.FacetNamespace) {
		col, _ := facetColumn(req.Facet)
		return "SELECT " + col + ", sum(n)::bigint, sum(n)::bigint, GROUPING(" + col + ") FROM record_counts WHERE " + q.clause() +
			" GROUP BY GROUPING SETS ((" + col + "), ())", nil
	}
	if req.Facet == contract.FacetTag {
		return "SELECT v, count(*), count(DISTINCT id), GROUPING(v) FROM (SELECT id, unnest(CASE WHEN cardinality(tags) = 0 THEN ARRAY[NULL]::text[] ELSE tags END) AS v FROM record_facets WHERE " +
			q.clause() + ") t GROUP BY GROUPING SETS ((v), ())", nil
	}
	col, ok := facetColumn(req.Facet)
	if !ok {
		return "", contract.Invalid("`%s` is not a facet", req.Facet)
	}
	return "SELECT " + col + ", count(*), count(*), GROUPING(" + col + ") FROM record_facets WHERE " + q.clause() + " GROUP BY GROUPING SETS ((" + col + "), ())", nil
}

// exploreCounted reads a facet's top buckets at the root from the
// facet_values index, with its head (missing, how many values) and the total
// from record_counts. While a bulk load has the counts suspended (bulk.go)
// the same statement says so, from the bulk row in its own snapshot, and
// the answer comes from grouping record_facets instead (exact whenever it
// runs); otherwise the counts it read are exact for that snapshot.
func (e *Engine) exploreCounted(ctx context.Context, req contract.ExploreRequest, code int16) (contract.ExplorePage, error) {
	const sql = `SELECT 0, t.value, t.n FROM (SELECT value, n FROM facet_values WHERE facet = $1 AND n > 0
		ORDER BY n DESC, value LIMIT $2) t
	UNION ALL SELECT 1, value, n FROM facet_values WHERE facet = -$1::smallint
	UNION ALL SELECT 2, NULL, coalesce(sum(n), 0)::bigint FROM record_counts WHERE last_svc < 0
	UNION ALL SELECT 3, NULL, 0 FROM mnemo_meta WHERE key = $3`
	rs, err := e.pool.Query(ctx, sql, code, req.Limit, bulkKey)
	if err != nil {
		return contract.ExplorePage{}, e.dbErr(ctx, err)
	}
	defer rs.Close()
	page := contract.ExplorePage{Facet: req.Facet, Buckets: make([]contract.FacetBucket, 0, req.Limit)}
	var values uint64
	bulk := false
	for rs.Next() {
		var part int32
		var v *string
		var n int64
		if err := rs.Scan(&part, &v, &n); err != nil {
			return contract.ExplorePage{}, e.dbErr(ctx, err)
		}
		switch {
		case part == 0 && v != nil:
			page.Buckets = append(page.Buckets, contract.FacetBucket{Value: *v, Count: uint64(n)})
		case part == 1 && v != nil && *v == "missing":
			page.Missing = uint64(max(n, 0))
		case part == 1 && v != nil && *v == "values":
			values = uint64(max(n, 0))
		case part == 2:
			page.Total = uint64(max(n, 0))
		case part == 3:
			bulk = true
		}
	}
	if err := rs.Err(); err != nil {
		return contract.ExplorePage{}, e.dbErr(ctx, err)
	}
	if bulk {
		return e.exploreGrouped(ctx, req)
	}
	contract.SortBuckets(page.Buckets)
	if values > uint64(len(page.Buckets)) {
		page.MoreBuckets = values - uint64(len(page.Buckets))
	}
	return page, nil
}
