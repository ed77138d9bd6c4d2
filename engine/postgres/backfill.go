package postgres

import (
	"context"
	"encoding/json"
	"sync"

	"mnemo/contract"
)

// backfillBatch is how many rows one backfill transaction fills in.
const backfillBatch = 500

// backfill fills the hit column of rows written before it existed (by an
// older mnemo, before migration 5 or while it ran elsewhere), and the
// tsvector's repeat markers of rows written before migration 8, in the
// background after open, a batch at a time, until none is left or the engine
// closes. Such rows read correctly meanwhile (from their item), only slower.
// It changes no record's meaning, so it logs no change; it locks rows in id
// order and skips any another transaction holds, so it never deadlocks with
// a write, and several processes may run it at once.
type backfill struct {
	stop context.CancelFunc
	done sync.WaitGroup
}

func (e *Engine) startBackfill() {
	ctx, cancel := context.WithCancel(context.Background())
	e.fill.stop = cancel
	e.fill.done.Go(func() {
		for ctx.Err() == nil {
			n, err := e.backfillOnce(ctx)
			if err != nil {
				if ctx.Err() == nil {
					e.log.Warn("filling in the hit column and keyword markers", "err", e.dbErr(ctx, err).Message)
				}
				return
			}
			if n == 0 {
				return
			}
		}
	})
}

func (e *Engine) stopBackfill() {
	if e.fill.stop != nil {
		e.fill.stop()
		e.fill.done.Wait()
	}
}

// backfillOnce fills in one batch and returns how many rows it found.
func (e *Engine) backfillOnce(ctx context.Context) (int, error) {
	rs, err := e.pool.Query(ctx, `SELECT id, item FROM records WHERE hit IS NULL OR kw IS NULL ORDER BY id LIMIT $1`, backfillBatch)
	if err != nil {
		return 0, err
	}
	var ids []string
	var hits [][]byte
	var tsvs []string
	for rs.Next() {
		var id, js string
		if err := rs.Scan(&id, &js); err != nil {
			rs.Close()
			return 0, err
		}
		var it contract.StoreItem
		if err := json.Unmarshal([]byte(js), &it); err != nil {
			rs.Close()
			return 0, contract.EngineErr("record %s: %w", id, err)
		}
		ids = append(ids, id)
		text := it.RenderText()
		hits = append(hits, encodeHit(text, &it.Meta))
		tsvs = append(tsvs, tsvectorLiteral(id, text))
	}
	rs.Close()
	if err := rs.Err(); err != nil || len(ids) == 0 {
		return 0, err
	}
	_, err = e.pool.Exec(ctx, `UPDATE records SET hit = u.hit, tsv = u.tsv::tsvector, kw = true
		FROM unnest($1::text[], $2::bytea[], $3::text[]) AS u(id, hit, tsv)
		WHERE records.id = u.id AND records.id IN (
			SELECT id FROM records WHERE id = ANY($1) AND (hit IS NULL OR kw IS NULL) ORDER BY id FOR UPDATE SKIP LOCKED)`, ids, hits, tsvs)
	return len(ids), err
}
