package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// A bulk load (`mnemo import`, `mnemo bench`, SetBulk) into a store that is
// empty or small next to the load drops the two GIN indexes that cost most of
// a record's insert (the trigram index of the folded text, ~320 entries a
// record, and the tsvector index) and the secondary indexes no write needs
// (bulkSecondary), suspends the facet counts, and builds them all once at
// the end: an index built over every row at once costs a fraction of the
// same entries inserted row by row, and the counts come from one grouping of
// record_facets instead of ~270 upserts a batch.
//
// The state lives in the database, so it holds across processes and
// crashes: mnemo_meta's row bulkKey exists from the drop until the
// transaction that builds the indexes, takes the counts and deletes it
// (0009_bulk_load.sql). Meanwhile every read stays exact: contains and
// keyword fetch scan the table (no index to use), and explore at the root
// groups record_facets (exploreCounted). The owner of a load holds a session
// advisory lock on a connection of its own for the whole load; a process
// that opens the store and finds the row while nobody holds the lock (the
// loader died) finishes the load in the background.

// bulkKey is mnemo_meta's key of the bulk-load row.
const bulkKey = "bulk_load"

// bulkIndexesKey is mnemo_meta's key of the definitions of the secondary
// indexes a load dropped (bulkSecondary), kept from the drop to the finish
// that builds them again.
const bulkIndexesKey = "bulk_load_indexes"

// bulkSecondary are the indexes a bulk load drops besides the two GIN
// indexes of the text: the browse orders' b-trees, the filters' and the tags'
// of records and of record_facets. Each costs an insert per record (together
// about 3 of the 23-27 CPU-seconds the machine spent on a 100k import's
// load), no write needs one (writes find records by id, the primary key),
// reads stay exact without them (a browse sorts what it scans), and built
// over every row at once they take a fraction of the trigram index's build,
// beside it on the other core.
var bulkSecondary = []string{
	"records_created", "records_updated", "records_confidence", "records_observed",
	"records_ns", "records_workspace", "records_tags", "record_facets_ns", "record_facets_tags",
}

// bulkMinRecords is how many records a load writes before it drops the
// indexes (and at least as many as the store held when it began): a small
// import into a large store keeps its indexes, since building them again
// would cost more than it saves.
const bulkMinRecords = 1_000

// bulkRecheck is how often an open engine looks for a load that another
// process left unfinished.
const bulkRecheck = time.Minute

// bulkBuildMemory is maintenance_work_mem for the index builds: a GIN build
// sorts its entries in memory and merges less often with more.
const bulkBuildMemory = "256MB"

// bulk is the engine's part in bulk loads.
type bulk struct {
	mu sync.Mutex
	// want: SetBulk(true) is in force.
	want bool
	// tried: this load has tried to begin (at most once a load).
	tried bool
	// held is the store's record count when the load began; written what
	// this engine has stored since.
	held, written int64
	// owner holds the advisory lock while this engine owns a load.
	owner *pgxpool.Conn
	// leave: the load's end lets its lock go with the bulk row kept, for
	// another process to finish (LeaveBulkFinish); left: it did.
	leave, left bool
	// done is closed when the running finish ends (nil: none running).
	done chan struct{}
	err  error
	// stop ends the background recheck.
	stop context.CancelFunc
	wg   sync.WaitGroup
}

// bulkLockSQL is the advisory lock key of a store's bulk load (one per schema).
const bulkLockSQL = "hashtext('mnemo.bulk.' || current_schema())"

// SetBulk marks the start and end of a bulk load. From the start, once the
// load has stored bulkMinRecords records and as many as the store held, the
// indexes are dropped and the counts suspended (for every process writing
// the store); at the end they are built again in the background (WaitIndex
// waits for it, Close too).
func (e *Engine) SetBulk(on bool) {
	b := &e.bulk
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.want == on {
		return
	}
	b.want = on
	if on {
		b.tried, b.written = false, 0
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := e.pool.QueryRow(ctx, "SELECT coalesce(sum(n), 0)::bigint FROM record_counts").Scan(&b.held); err != nil {
			// Unknown: never drop the indexes of a store that may be large.
			b.tried = true
		}
		return
	}
	if b.owner != nil {
		owner := b.owner
		b.owner = nil
		if b.leave {
			// The row stays: whoever opens the store next, or looks again
			// (adoptBulk), finishes the load.
			e.unlockBulk(owner)
			b.left = true
			return
		}
		e.finishBulkLocked(owner)
	}
}

// LeaveBulkFinish has this engine's loads end without their finish: at the
// load's end (SetBulk(false), or Close) the bulk lock is let go and the bulk
// row kept, so the indexes and counts are built by another process, the one
// `mnemo import` starts to finish (FinishLeftLoad), or any that opens the
// store. The records are durable and every read exact meanwhile, only
// slower (contains and keyword fetch scan).
func (e *Engine) LeaveBulkFinish() {
	e.bulk.mu.Lock()
	e.bulk.leave = true
	e.bulk.mu.Unlock()
}

// BulkLeft tells whether a load of this engine ended without its finish
// (LeaveBulkFinish): the indexes are still to be built.
func (e *Engine) BulkLeft() bool {
	e.bulk.mu.Lock()
	defer e.bulk.mu.Unlock()
	return e.bulk.left
}

// FinishLeftLoad finishes a load that ended without building its indexes
// (its owner left it, or died) and waits for the finish; nothing when there
// is none, or when another process is finishing it.
func (e *Engine) FinishLeftLoad(ctx context.Context) error {
	e.adoptBulk(ctx, true)
	return e.WaitIndex(ctx)
}

// bulkWrote counts records this engine stored; during a load it begins the
// bulk state once enough are in. It runs after the write committed, outside
// any transaction of this engine's.
func (e *Engine) bulkWrote(ctx context.Context, n int) {
	b := &e.bulk
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.want || b.tried {
		return
	}
	b.written += int64(n)
	if b.written < max(bulkMinRecords, b.held) {
		return
	}
	b.tried = true
	owner, err := e.beginBulk(ctx)
	if err != nil {
		e.log.Warn("bulk load: keeping the indexes", "err", e.dbErr(ctx, err).Message)
		return
	}
	b.owner = owner
}

// beginBulk takes the store's bulk lock on a connection of its own, then
// drops the indexes and writes the bulk row in one transaction; it returns
// the connection, which holds the lock until the load's end. A store whose
// lock another process holds (its own load, or its finish) is left as it is.
func (e *Engine) beginBulk(ctx context.Context) (*pgxpool.Conn, error) {
	conn, err := e.pool.Acquire(ctx)
	if err != nil {
		return nil, err
	}
	var got bool
	if err := conn.QueryRow(ctx, "SELECT pg_try_advisory_lock("+bulkLockSQL+")").Scan(&got); err != nil {
		conn.Release()
		return nil, err
	}
	if !got {
		conn.Release()
		return nil, errors.New("another process is loading or finishing a load")
	}
	err = pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		// Readers and writers wait while the drop waits for its lock; a
		// busy store keeps its indexes rather than stall them long.
		if _, err := tx.Exec(ctx, "SET LOCAL lock_timeout = '2s'"); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, "LOCK TABLE records IN ACCESS EXCLUSIVE MODE"); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `INSERT INTO mnemo_meta (key, value) VALUES ($1, $2)
			ON CONFLICT (key) DO NOTHING`, bulkKey, time.Now().UTC().Format(time.RFC3339)); err != nil {
			return err
		}
		// The secondary indexes as they are defined now, kept until the
		// finish builds them again (a load cut short keeps what the first
		// drop saved).
		var defs []string
		rows, err := tx.Query(ctx, `SELECT indexdef FROM pg_indexes
			WHERE schemaname = current_schema() AND indexname = ANY($1) ORDER BY indexname`, bulkSecondary)
		if err != nil {
			return err
		}
		if defs, err = pgx.CollectRows(rows, pgx.RowTo[string]); err != nil {
			return err
		}
		if len(defs) > 0 {
			saved, err := json.Marshal(defs)
			if err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, `INSERT INTO mnemo_meta (key, value) VALUES ($1, $2)
				ON CONFLICT (key) DO NOTHING`, bulkIndexesKey, string(saved)); err != nil {
				return err
			}
		}
		drop := []string{"records_folded", "records_tsv"}
		for _, name := range bulkSecondary {
			drop = append(drop, pgx.Identifier{name}.Sanitize())
		}
		_, err = tx.Exec(ctx, "DROP INDEX IF EXISTS "+strings.Join(drop, ", "))
		return err
	})
	if err != nil {
		e.unlockBulk(conn)
		return nil, err
	}
	return conn, nil
}

// unlockBulk releases the bulk lock and the connection holding it.
func (e *Engine) unlockBulk(conn *pgxpool.Conn) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_unlock("+bulkLockSQL+")"); err != nil {
		// The lock dies with the session: close it rather than pool it.
		_ = conn.Conn().Close(ctx)
	}
	conn.Release()
}

// finishBulkLocked starts the load's finish on owner (which holds the bulk
// lock) in the background; b.mu is held.
func (e *Engine) finishBulkLocked(owner *pgxpool.Conn) {
	b := &e.bulk
	done := make(chan struct{})
	b.done, b.err = done, nil
	go func() {
		defer close(done)
		defer e.unlockBulk(owner)
		// Not the caller's context: the indexes must come back even when
		// the command that loaded is ending (Close waits for this).
		err := e.finishBulk(context.Background(), owner)
		if err != nil {
			e.log.Error("bulk load: building the indexes", "err", e.dbErr(context.Background(), err).Message)
		}
		b.mu.Lock()
		b.err = err
		b.mu.Unlock()
	}()
}

// finishBulk builds the indexes, takes the facet counts from record_facets
// and deletes the bulk row, on a connection holding the bulk lock. The two
// indexes are built at once, each in a transaction of its own on a
// connection of its own (a GIN build uses one core; this machine has two);
// then one transaction takes the counts and deletes the row. Writers wait
// while it runs (each step holds the table's SHARE lock: the counts are
// taken from a set nobody changes); readers do not. A finish cut short
// leaves the row, and perhaps one index: the next finish builds what is
// missing (an index rolled back with its transaction leaves nothing behind).
func (e *Engine) finishBulk(ctx context.Context, conn *pgxpool.Conn) error {
	trgm, err := trigramSchema(ctx, conn)
	if err != nil {
		return err
	}
	builds := []string{
		"CREATE INDEX IF NOT EXISTS records_folded ON records USING gin (folded " + pgx.Identifier{trgm}.Sanitize() + ".gin_trgm_ops)",
		"CREATE INDEX IF NOT EXISTS records_tsv ON records USING gin (tsv)",
	}
	secondary, err := savedSecondary(ctx, conn)
	if err != nil {
		return err
	}
	build := func(db interface {
		Begin(context.Context) (pgx.Tx, error)
	}, sql string) error {
		return pgx.BeginFunc(ctx, db, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, "SET LOCAL maintenance_work_mem = '"+bulkBuildMemory+"'"); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, sql)
			return err
		})
	}
	// The trigram index on this connection; the rest, one after the
	// other, on another: they take together about what it takes alone.
	errs := make([]error, 2)
	var wg sync.WaitGroup
	wg.Go(func() {
		for _, sql := range append(builds[1:], secondary...) {
			if errs[1] = build(e.pool, sql); errs[1] != nil {
				return
			}
		}
	})
	errs[0] = build(conn, builds[0])
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	err = pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "LOCK TABLE records IN SHARE MODE"); err != nil {
			return err
		}
		var one int
		switch err := tx.QueryRow(ctx, "SELECT 1 FROM mnemo_meta WHERE key = $1", bulkKey).Scan(&one); err {
		case nil:
		case pgx.ErrNoRows:
			return nil // another process finished it
		default:
			return err
		}
		for _, sql := range append(append(builds, secondary...),
			"DELETE FROM facet_values",
			recountFacetsSQL,
			`INSERT INTO facet_values (facet, value, n)
				SELECT -facet, 'values', count(*) FROM facet_values WHERE facet > 0 GROUP BY facet`,
		) {
			if _, err := tx.Exec(ctx, sql); err != nil {
				return err
			}
		}
		_, err := tx.Exec(ctx, "DELETE FROM mnemo_meta WHERE key IN ($1, $2)", bulkKey, bulkIndexesKey)
		return err
	})
	if err != nil {
		return err
	}
	// The planner's statistics of a freshly loaded table are those of the
	// empty one; the counts' table was rewritten. Neither matters for what
	// a read answers, only for how fast.
	_, err = conn.Exec(ctx, "ANALYZE records, record_facets, facet_values")
	return err
}

// savedSecondary answers the statements that build the secondary indexes a
// load dropped, as their definitions were saved at the drop (none when the
// load began before they were dropped too).
func savedSecondary(ctx context.Context, conn *pgxpool.Conn) ([]string, error) {
	var saved string
	switch err := conn.QueryRow(ctx, "SELECT value FROM mnemo_meta WHERE key = $1", bulkIndexesKey).Scan(&saved); err {
	case nil:
	case pgx.ErrNoRows:
		return nil, nil
	default:
		return nil, err
	}
	var defs []string
	if err := json.Unmarshal([]byte(saved), &defs); err != nil {
		return nil, fmt.Errorf("the saved definitions of the indexes a load dropped: %w", err)
	}
	out := make([]string, 0, len(defs))
	for _, d := range defs {
		// pg_indexes writes "CREATE [UNIQUE] INDEX name ON ...".
		rest, ok := strings.CutPrefix(d, "CREATE INDEX ")
		if !ok {
			return nil, fmt.Errorf("a saved index definition is not a CREATE INDEX: %q", d)
		}
		out = append(out, "CREATE INDEX IF NOT EXISTS "+rest)
	}
	return out, nil
}

// recountFacetsSQL takes every facet's value counts and its missing count
// (facet -f, value 'missing') at the root reach from record_facets, as
// facet_pairs pairs them.
const recountFacetsSQL = `INSERT INTO facet_values (facet, value, n)
	SELECT CASE WHEN p.v IS NULL THEN -p.f ELSE p.f END, coalesce(p.v, 'missing'), count(*) FROM record_facets r CROSS JOIN LATERAL (
		SELECT x.f, x.v FROM (VALUES
			(1::smallint, r.source_kind), (2::smallint, r.source_id), (3::smallint, r.workspace),
			(4::smallint, r.folder), (5::smallint, r.file_path), (6::smallint, r.language),
			(7::smallint, r.repo), (8::smallint, r.url), (9::smallint, r.thread_id),
			(10::smallint, r.agent_id), (11::smallint, r.tool_call)) AS x(f, v)
		UNION ALL
		SELECT 12::smallint, t FROM unnest(CASE WHEN cardinality(r.tags) = 0 THEN ARRAY[NULL]::text[] ELSE r.tags END) AS t
	) p WHERE r.last_svc < 0
	GROUP BY 1, 2`

// WaitIndex waits until a bulk load's finish (its indexes and counts) has
// ended, and returns its error.
func (e *Engine) WaitIndex(ctx context.Context) error {
	b := &e.bulk
	b.mu.Lock()
	done := b.done
	b.mu.Unlock()
	if done == nil {
		return nil
	}
	select {
	case <-done:
	case <-ctx.Done():
		return e.dbErr(ctx, ctx.Err())
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.err != nil {
		return e.dbErr(ctx, b.err)
	}
	return nil
}

// startBulkRecheck finishes, in the background, a load another process left
// unfinished: at open and every bulkRecheck while the engine is open.
func (e *Engine) startBulkRecheck() {
	ctx, cancel := context.WithCancel(context.Background())
	e.bulk.stop = cancel
	e.bulk.wg.Go(func() {
		t := time.NewTicker(bulkRecheck)
		defer t.Stop()
		for {
			e.adoptBulk(ctx, false)
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	})
}

// adoptBulk finishes a load whose owner is gone: the bulk row exists and the
// bulk lock is free. A load this engine left for another process is not
// finished here unless evenLeft.
func (e *Engine) adoptBulk(ctx context.Context, evenLeft bool) {
	var one int
	if err := e.pool.QueryRow(ctx, "SELECT 1 FROM mnemo_meta WHERE key = $1", bulkKey).Scan(&one); err != nil {
		return // none (or the database is away: the next look will tell)
	}
	b := &e.bulk
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.owner != nil || b.done != nil && !closed(b.done) {
		return // this engine's own load
	}
	if b.left && !evenLeft {
		return // the process it was left to finishes it
	}
	conn, err := e.pool.Acquire(ctx)
	if err != nil {
		return
	}
	var got bool
	if err := conn.QueryRow(ctx, "SELECT pg_try_advisory_lock("+bulkLockSQL+")").Scan(&got); err != nil || !got {
		conn.Release()
		return
	}
	e.log.Info("bulk load: finishing a load that ended without building its indexes")
	e.finishBulkLocked(conn)
}

func closed(c chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// stopBulk ends the recheck, finishes this engine's own load if it is still
// on, and waits for a running finish: the indexes come back before the
// engine closes.
func (e *Engine) stopBulk() {
	if e.bulk.stop != nil {
		e.bulk.stop()
		e.bulk.wg.Wait()
	}
	e.SetBulk(false)
	_ = e.WaitIndex(context.Background())
}
