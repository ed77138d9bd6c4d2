package postgres

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"mnemo/contract"
	"mnemo/engine/internal/parallel"
)

// row is one record as the records table holds it.
type row struct {
	id       string
	item     contract.StoreItem
	itemJSON string
	status   contract.Status
	created  int64
	updated  int64
	expires  *int64
	superBy  *string
}

// insertSQL writes a batch of records (one array per column, in id order),
// each unless its id is held, in one statement: the facet trigger then runs
// once for the batch. RETURNING tells new records from replays.
const insertSQL = `INSERT INTO records (id, kind, status, created_ms, updated_ms, expires_ms, superseded_by,
	ns, last_svc, workspace, folder, file_path, language, repo, commit_id, url, thread_id, agent_id, source_id,
	source_kind, tool_call, turn_first, turn_last, tags, observed_at, observed_ns, observed_ms, confidence,
	item, folded, tsv, hit, kw)
SELECT u.id, u.kind, u.status, u.created_ms, u.updated_ms, u.expires_ms, u.superseded_by,
	u.ns, u.last_svc, u.workspace, u.folder, u.file_path, u.language, u.repo, u.commit_id, u.url, u.thread_id, u.agent_id, u.source_id,
	u.source_kind, u.tool_call, u.turn_first, u.turn_last, u.tags::text[], u.observed_at, u.observed_ns, u.observed_ms, u.confidence,
	u.item, u.folded, u.tsv::tsvector, u.hit, true
FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[], $5::bigint[], $6::bigint[], $7::text[],
	$8::text[], $9::smallint[], $10::text[], $11::text[], $12::text[], $13::text[], $14::text[], $15::text[], $16::text[], $17::text[], $18::text[], $19::text[],
	$20::text[], $21::text[], $22::bigint[], $23::bigint[], $24::text[], $25::timestamptz[], $26::integer[], $27::bigint[], $28::real[],
	$29::text[], $30::text[], $31::text[], $32::bytea[])
	WITH ORDINALITY AS u(id, kind, status, created_ms, updated_ms, expires_ms, superseded_by,
	ns, last_svc, workspace, folder, file_path, language, repo, commit_id, url, thread_id, agent_id, source_id,
	source_kind, tool_call, turn_first, turn_last, tags, observed_at, observed_ns, observed_ms, confidence,
	item, folded, tsv, hit, o)
ORDER BY u.o
ON CONFLICT (id) DO NOTHING RETURNING id`

// insertColumns are insertSQL's arguments: one slice per column.
type insertColumns struct {
	id, kind, status                                                 []string
	created, updated                                                 []int64
	expires                                                          []*int64
	superBy                                                          []*string
	ns                                                               []string
	lastSvc                                                          []int16
	workspace, folder, filePath, language, repo, commit, url, thread []*string
	agent, sourceID                                                  []*string
	sourceKind                                                       []string
	tool                                                             []*string
	turnFirst, turnLast                                              []*int64
	tags                                                             []string
	observed                                                         []*time.Time
	observedNS                                                       []*int32
	observedMS                                                       []*int64
	conf                                                             []*float32
	item, folded, tsv                                                []string
	hit                                                              [][]byte
}

// add appends r's columns; d is derive(r).
func (c *insertColumns) add(r *row, d *derived) {
	m := &r.item.Meta
	var tool *string
	if m.ToolCall != nil {
		tool = &m.ToolCall.Name
	}
	var tf, tl *int64
	if m.Turns != nil {
		a, b := int64(m.Turns.First), int64(m.Turns.Last)
		tf, tl = &a, &b
	}
	var obs *time.Time
	var obsNS *int32
	var obsMS *int64
	if m.ObservedAt != nil {
		at, ns := splitTime(*m.ObservedAt)
		ms := m.ObservedAt.UnixMilli()
		obs, obsNS, obsMS = &at, &ns, &ms
	}
	var conf *float32
	if r.item.Type == contract.KindLearning {
		c := r.item.Confidence
		conf = &c
	}
	c.id = append(c.id, r.id)
	c.kind = append(c.kind, string(r.item.Type))
	c.status = append(c.status, string(r.status))
	c.created = append(c.created, r.created)
	c.updated = append(c.updated, r.updated)
	c.expires = append(c.expires, r.expires)
	c.superBy = append(c.superBy, r.superBy)
	c.ns = append(c.ns, m.Namespace.String())
	c.lastSvc = append(c.lastSvc, lastService(m.Namespace))
	c.workspace = append(c.workspace, m.Workspace)
	c.folder = append(c.folder, m.Folder)
	c.filePath = append(c.filePath, m.FilePath)
	c.language = append(c.language, m.Language)
	c.repo = append(c.repo, m.Repo)
	c.commit = append(c.commit, m.Commit)
	c.url = append(c.url, m.URL)
	c.thread = append(c.thread, m.ThreadID)
	c.agent = append(c.agent, m.AgentID)
	c.sourceID = append(c.sourceID, m.Source.ID)
	c.sourceKind = append(c.sourceKind, string(m.SourceKindOf()))
	c.tool = append(c.tool, tool)
	c.turnFirst = append(c.turnFirst, tf)
	c.turnLast = append(c.turnLast, tl)
	c.tags = append(c.tags, textArrayLiteral(m.Tags))
	c.observed = append(c.observed, obs)
	c.observedNS = append(c.observedNS, obsNS)
	c.observedMS = append(c.observedMS, obsMS)
	c.conf = append(c.conf, conf)
	c.item = append(c.item, r.itemJSON)
	c.folded = append(c.folded, d.folded)
	c.tsv = append(c.tsv, d.tsv)
	c.hit = append(c.hit, d.hit)
}

// args are insertSQL's arguments.
func (c *insertColumns) args() []any {
	return []any{c.id, c.kind, c.status, c.created, c.updated, c.expires, c.superBy,
		c.ns, c.lastSvc, c.workspace, c.folder, c.filePath, c.language, c.repo, c.commit, c.url, c.thread, c.agent, c.sourceID,
		c.sourceKind, c.tool, c.turnFirst, c.turnLast, c.tags, c.observed, c.observedNS, c.observedMS, c.conf,
		c.item, c.folded, c.tsv, c.hit}
}

// textArrayLiteral is a text[] input literal of the strings, every element
// quoted.
func textArrayLiteral(vs []string) string {
	var b strings.Builder
	b.WriteByte('{')
	for i, v := range vs {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('"')
		for _, r := range v {
			if r == '"' || r == '\\' {
				b.WriteByte('\\')
			}
			b.WriteRune(r)
		}
		b.WriteByte('"')
	}
	b.WriteByte('}')
	return b.String()
}

// lastService is the index of ns's last service segment, -1 without one.
func lastService(ns contract.Namespace) int16 {
	last := int16(-1)
	for i, s := range ns.Segments() {
		if s.Kind == contract.SegService {
			last = int16(i)
		}
	}
	return last
}

// StoreWith writes one item with a status and an expiry; a held fingerprint is
// a replay and leaves the held record as it was.
func (e *Engine) StoreWith(ctx context.Context, item contract.StoreItem, opts contract.WriteOptions) (contract.StoreReceipt, error) {
	if err := opts.Validate(); err != nil {
		return contract.StoreReceipt{}, err
	}
	if err := item.Validate(); err != nil {
		return contract.StoreReceipt{}, err
	}
	out, err := e.write(ctx, []contract.StoreItem{item}, opts)
	if err != nil {
		return contract.StoreReceipt{}, err
	}
	return out[0], nil
}

// StoreManyWith validates the whole batch, then writes it in one transaction;
// a repeat inside the batch is a replay of its first copy.
func (e *Engine) StoreManyWith(ctx context.Context, items []contract.StoreItem, opts contract.WriteOptions) ([]contract.StoreReceipt, error) {
	if err := contract.ValidateMany(items); err != nil {
		return nil, err
	}
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	return e.write(ctx, items, opts)
}

// MaxBulkItems is the most items StoreBulk writes in one transaction.
const MaxBulkItems = contract.MaxStoreBulk

// BulkItems is how many items StoreBulk takes at once.
func (e *Engine) BulkItems() int { return MaxBulkItems }

// StoreBulk is StoreManyWith for a bulk load (`mnemo import`): up to
// MaxBulkItems items in one transaction, one INSERT and one commit for
// ten store_many calls.
func (e *Engine) StoreBulk(ctx context.Context, items []contract.StoreItem, opts contract.WriteOptions) ([]contract.StoreReceipt, error) {
	if err := contract.ValidateBulk(items, opts); err != nil {
		return nil, err
	}
	return e.write(ctx, items, opts)
}

// StartBulk is StoreBulk in two steps (contract.BulkPipeliner): the items
// are prepared now, on the caller's time (fingerprints, JSON, the folded
// text, the tsvector), and their transaction runs once the transactions of
// the StartBulk calls before it have ended, so a loader parses and prepares
// its next batch while the database inserts this one. A batch whose
// predecessor failed is not written: the load stops at its first error.
func (e *Engine) StartBulk(ctx context.Context, items []contract.StoreItem, opts contract.WriteOptions) func() ([]contract.StoreReceipt, error) {
	w := &pipedWrite{done: make(chan struct{})}
	if err := contract.ValidateBulk(items, opts); err != nil {
		w.err = err
		close(w.done)
		return w.wait
	}
	p := e.prepareWrite(items, opts)
	e.piped.Lock()
	prev := e.piped.last
	e.piped.last = w
	e.piped.Unlock()
	go func() {
		defer close(w.done)
		if prev != nil {
			<-prev.done
			if prev.err != nil {
				w.err = contract.Unavailable("not written: the bulk store before it failed")
				return
			}
		}
		w.out, w.err = e.commitWrite(ctx, p)
	}()
	return w.wait
}

// pipedWrite is one StartBulk's transaction.
type pipedWrite struct {
	done chan struct{}
	out  []contract.StoreReceipt
	err  error
}

func (w *pipedWrite) wait() ([]contract.StoreReceipt, error) {
	<-w.done
	return w.out, w.err
}

// write stores validated items in one transaction. Rows are inserted in id
// order, so two writers with overlapping batches lock in the same order and
// never deadlock; of two writers storing one item at once, the second waits
// on the first's key and then sees a replay.
func (e *Engine) write(ctx context.Context, items []contract.StoreItem, opts contract.WriteOptions) ([]contract.StoreReceipt, error) {
	return e.commitWrite(ctx, e.prepareWrite(items, opts))
}

// preparedWrite is a write worked out before its transaction: the receipts
// (ids, replays within the batch), the rows and their columns.
type preparedWrite struct {
	out   []contract.StoreReceipt
	first map[string]int
	rows  []*row
	ins   *preparedInsert
	err   error
}

// prepareWrite does a write's work that needs no database: fingerprints,
// JSON, the derived columns (on every core).
func (e *Engine) prepareWrite(items []contract.StoreItem, opts contract.WriteOptions) *preparedWrite {
	status := opts.Status
	if status == "" {
		status = contract.StatusActive
	}
	var expires *int64
	if opts.ExpiresAt != nil {
		ms := opts.ExpiresAt.UTC().UnixMilli()
		expires = &ms
	}
	now := e.stamp()
	p := &preparedWrite{out: make([]contract.StoreReceipt, len(items)), first: map[string]int{}}
	ids := make([]string, len(items))
	jsons := make([][]byte, len(items))
	errs := make([]error, len(items))
	parallel.Each(len(items), prepareRun, func(i int) {
		ids[i] = items[i].Fingerprint()
		jsons[i], errs[i] = json.Marshal(items[i])
	})
	for i := range items {
		id := ids[i]
		p.out[i].ID = id
		if _, dup := p.first[id]; dup {
			p.out[i].Replayed = true
			continue
		}
		p.first[id] = i
		if errs[i] != nil {
			p.err = contract.EngineErr("encode item %s: %w", id, errs[i])
			return p
		}
		p.rows = append(p.rows, &row{id: id, item: items[i], itemJSON: string(jsons[i]), status: status,
			created: now, updated: now, expires: expires})
	}
	p.ins = prepareInsert(p.rows)
	return p
}

// commitWrite runs a prepared write's transaction and answers its receipts.
func (e *Engine) commitWrite(ctx context.Context, p *preparedWrite) ([]contract.StoreReceipt, error) {
	if p.err != nil {
		return nil, p.err
	}
	inserted, err := e.insertPrepared(ctx, p.ins, contract.OpStore)
	if err != nil {
		return nil, err
	}
	for _, r := range p.rows {
		if !inserted[r.id] {
			p.out[p.first[r.id]].Replayed = true
		}
	}
	return p.out, nil
}

// insertRows inserts rows in one transaction and returns the ids it created;
// the feed logs each as op (store, or restore for whole records).
func (e *Engine) insertRows(ctx context.Context, rows []*row, op contract.ChangeOp) (map[string]bool, error) {
	return e.insertPrepared(ctx, prepareInsert(rows), op)
}

// preparedInsert is rows ready for insertSQL: in id order, their columns
// derived, and the batch's own order for the feed.
type preparedInsert struct {
	order []*row
	cols  insertColumns
	byID  map[string]*row
}

func prepareInsert(rows []*row) *preparedInsert {
	p := &preparedInsert{order: rows, byID: make(map[string]*row, len(rows))}
	rows = slices.Clone(rows)
	slices.SortFunc(rows, func(a, b *row) int { return strings.Compare(a.id, b.id) })
	ds := make([]derived, len(rows))
	parallel.Each(len(rows), prepareRun, func(i int) { ds[i] = derive(rows[i]) })
	for i, r := range rows {
		p.cols.add(r, &ds[i])
		p.byID[r.id] = r
	}
	return p
}

// insertPrepared inserts prepared rows in one transaction and returns the
// ids it created.
func (e *Engine) insertPrepared(ctx context.Context, p *preparedInsert, op contract.ChangeOp) (map[string]bool, error) {
	order, cols, byID := p.order, &p.cols, p.byID
	inserted := make(map[string]bool, len(order))
	err := e.inTx(ctx, pgx.ReadCommitted, func(tx pgx.Tx) error {
		rs, err := tx.Query(ctx, insertSQL, cols.args()...)
		if err != nil {
			return err
		}
		deltas := countDeltas{}
		for rs.Next() {
			var id string
			if err := rs.Scan(&id); err != nil {
				rs.Close()
				return err
			}
			inserted[id] = true
			ns := byID[id].item.Meta.Namespace
			deltas.add(ns.String(), lastService(ns), string(byID[id].status), string(byID[id].item.Type), 1)
		}
		rs.Close()
		if err := rs.Err(); err != nil {
			return err
		}
		// The feed lists a batch's stores in the batch's order.
		var cs []change
		for _, r := range order {
			if inserted[r.id] {
				cs = append(cs, change{op: op, id: r.id, ns: r.item.Meta.Namespace.String(), status: r.status})
			}
		}
		return e.logChanges(ctx, tx, e.stamp(), cs, deltas)
	})
	if err != nil {
		return nil, err
	}
	if len(inserted) > 0 {
		e.committed()
		e.bulkWrote(ctx, len(inserted))
	}
	return inserted, nil
}

// Forget removes records by id (anywhere, sandboxes included) or by filter.
func (e *Engine) Forget(ctx context.Context, target contract.ForgetTarget) (contract.ForgetReport, error) {
	if err := target.Validate(); err != nil {
		return contract.ForgetReport{}, err
	}
	var q query
	if target.Filter != nil {
		q.filter(target.Filter, false)
	} else {
		q.add("id = ANY(" + q.arg(target.IDs) + ")")
	}
	n := 0
	err := e.inTx(ctx, pgx.ReadCommitted, func(tx pgx.Tx) error {
		var err error
		n, err = e.deleteWhere(ctx, tx, contract.OpForget, q.clause(), q.args...)
		return err
	})
	if err != nil {
		return contract.ForgetReport{}, err
	}
	if n > 0 {
		e.committed()
	}
	return contract.ForgetReport{Forgotten: n}, nil
}

// deleteWhere deletes the records a clause selects, takes them off
// record_counts and logs each removal as op, in tx; it returns how many it
// deleted. It ends the transaction's statements (the feed's lock is last).
func (e *Engine) deleteWhere(ctx context.Context, tx pgx.Tx, op contract.ChangeOp, where string, args ...any) (int, error) {
	rs, err := tx.Query(ctx, "DELETE FROM records WHERE "+where+" RETURNING id, ns, last_svc, status, kind", args...)
	if err != nil {
		return 0, err
	}
	defer rs.Close()
	deltas := countDeltas{}
	var gone []change
	for rs.Next() {
		var k countKey
		var id string
		if err := rs.Scan(&id, &k.ns, &k.lastSvc, &k.status, &k.kind); err != nil {
			return 0, err
		}
		deltas[k]--
		gone = append(gone, change{id: id, ns: k.ns, status: contract.Status(k.status)})
	}
	if err := rs.Err(); err != nil {
		return 0, err
	}
	rs.Close()
	return len(gone), e.logChanges(ctx, tx, e.stamp(), removals(op, gone), deltas)
}

// restatus is the record_counts deltas of one record moving between statuses.
func restatus(r *row, from, to contract.Status) countDeltas {
	ns := r.item.Meta.Namespace
	d := countDeltas{}
	d.add(ns.String(), lastService(ns), string(from), string(r.item.Type), -1)
	d.add(ns.String(), lastService(ns), string(to), string(r.item.Type), 1)
	return d
}

// Review approves a candidate (it becomes active, updated now) or rejects it
// (it is forgotten). The row is locked, so two reviewers of one candidate see
// one success and one conflict or not found.
func (e *Engine) Review(ctx context.Context, req contract.ReviewRequest) (contract.ReviewResult, error) {
	if err := req.Validate(); err != nil {
		return contract.ReviewResult{}, err
	}
	var res contract.ReviewResult
	err := e.inTx(ctx, pgx.ReadCommitted, func(tx pgx.Tx) error {
		r, err := lockRow(ctx, tx, req.ID)
		if err != nil {
			return err
		}
		if r.status != contract.StatusCandidate {
			return contract.Conflict("record %s is '%s', not a candidate", req.ID, r.status)
		}
		if req.Action == contract.ReviewReject {
			var err error
			res.Forgotten, err = e.deleteWhere(ctx, tx, contract.OpReject, "id = $1", req.ID)
			return err
		}
		r.status, r.updated = contract.StatusActive, e.stamp()
		if _, err := tx.Exec(ctx, "UPDATE records SET status = $2, updated_ms = $3 WHERE id = $1", req.ID, string(r.status), r.updated); err != nil {
			return err
		}
		rec := r.record(false)
		res.Record = &rec
		return e.logChanges(ctx, tx, r.updated, []change{{op: contract.OpApprove, id: r.id, ns: r.item.Meta.Namespace.String(), status: r.status}},
			restatus(r, contract.StatusCandidate, contract.StatusActive))
	})
	if err == nil {
		e.committed()
	}
	return res, err
}

// Supersede marks a record as superseded by another; both must exist.
func (e *Engine) Supersede(ctx context.Context, req contract.SupersedeRequest) (contract.Record, error) {
	if err := req.Validate(); err != nil {
		return contract.Record{}, err
	}
	var rec contract.Record
	err := e.inTx(ctx, pgx.ReadCommitted, func(tx pgx.Tx) error {
		r, err := lockRow(ctx, tx, req.ID)
		if err != nil {
			return err
		}
		if req.Undo {
			if r.status != contract.StatusSuperseded || r.superBy == nil || *r.superBy != req.By {
				return contract.NotSupersededBy(req.ID, req.By)
			}
			r.status, r.superBy, r.updated = req.UndoStatus(), nil, e.stamp()
			if _, err := tx.Exec(ctx, "UPDATE records SET status = $2, superseded_by = NULL, updated_ms = $3 WHERE id = $1",
				req.ID, string(r.status), r.updated); err != nil {
				return err
			}
			rec = r.record(false)
			return e.logChanges(ctx, tx, r.updated, []change{{op: req.UndoOp(), id: r.id, ns: r.item.Meta.Namespace.String(), status: r.status}},
				restatus(r, contract.StatusSuperseded, r.status))
		}
		var one int
		switch err := tx.QueryRow(ctx, "SELECT 1 FROM records WHERE id = $1 FOR SHARE", req.By).Scan(&one); err {
		case nil:
		case pgx.ErrNoRows:
			return missingRecord(req.By)
		default:
			return err
		}
		by := req.By
		from := r.status
		r.status, r.superBy, r.updated = contract.StatusSuperseded, &by, e.stamp()
		if _, err := tx.Exec(ctx, "UPDATE records SET status = $2, superseded_by = $3, updated_ms = $4 WHERE id = $1",
			req.ID, string(r.status), by, r.updated); err != nil {
			return err
		}
		rec = r.record(false)
		return e.logChanges(ctx, tx, r.updated, []change{{op: contract.OpSupersede, id: r.id, ns: r.item.Meta.Namespace.String(), status: r.status}},
			restatus(r, from, contract.StatusSuperseded))
	})
	if err == nil {
		e.committed()
	}
	return rec, err
}

func missingRecord(id string) error { return contract.NotFound("record %s does not exist", id) }

// lockRow reads one record FOR UPDATE, or answers not found.
func lockRow(ctx context.Context, tx pgx.Tx, id string) (*row, error) {
	rs, err := tx.Query(ctx, "SELECT "+rowColumns+" FROM records WHERE id = $1 FOR UPDATE", id)
	if err != nil {
		return nil, err
	}
	got, err := scanRows(rs)
	if err != nil {
		return nil, err
	}
	if len(got) == 0 {
		return nil, missingRecord(id)
	}
	return got[0], nil
}
