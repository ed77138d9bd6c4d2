package postgres

import (
	"bufio"
	"context"
	"encoding/json"
	"io"

	"github.com/jackc/pgx/v5"

	"mnemo/backup"
	"mnemo/contract"
	"mnemo/server/audit"
)

// Backup writes a logical backup of the whole store to w
// (backup.FormatLogical): every record whole, service sandboxes included,
// then the audit log, read in one REPEATABLE READ, READ ONLY transaction, so
// the backup is one consistent snapshot while writers go on. The change feed
// and the derived search columns are not in it; a store restored from it
// (`mnemo restore`, into a directory or a PostgreSQL schema) starts a new
// feed and derives the rest. pg_dump of the schema is the other way
// (docs/backup.md).
func (e *Engine) Backup(ctx context.Context, w io.Writer) (backup.Info, error) {
	var info backup.Info
	err := pgx.BeginTxFunc(ctx, e.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		bw := backup.NewWriter(w, EngineID, millis(e.stamp()))
		rs, err := tx.Query(ctx, "SELECT "+rowColumns+" FROM records ORDER BY created_ms, id")
		if err != nil {
			return err
		}
		for rs.Next() {
			r := &row{}
			var status string
			if err := rs.Scan(&r.id, &r.itemJSON, &status, &r.created, &r.updated, &r.expires, &r.superBy); err != nil {
				rs.Close()
				return err
			}
			r.status = contract.Status(status)
			if err := json.Unmarshal([]byte(r.itemJSON), &r.item); err != nil {
				rs.Close()
				return contract.EngineErr("record %s: %w", r.id, err)
			}
			if err := bw.Record(r.record(true)); err != nil {
				rs.Close()
				return err
			}
		}
		rs.Close()
		if err := rs.Err(); err != nil {
			return err
		}
		as, err := tx.Query(ctx, "SELECT event FROM audit ORDER BY at_ns, seq")
		if err != nil {
			return err
		}
		defer as.Close()
		for as.Next() {
			var raw string
			if err := as.Scan(&raw); err != nil {
				return err
			}
			var ev audit.Event
			if err := json.Unmarshal([]byte(raw), &ev); err != nil {
				return contract.EngineErr("audit event: %w", err)
			}
			if err := bw.Audit(ev); err != nil {
				return err
			}
		}
		if err := as.Err(); err != nil {
			return err
		}
		info, err = bw.Close()
		return err
	})
	if err != nil {
		return info, e.dbErr(ctx, err)
	}
	return info, nil
}

// RestoreBackup writes a logical backup (Backup's) into this store, which
// must hold no record: every record whole, then the audit events. A bbolt
// copy (a directory store's backup) is refused with the way round it.
func (e *Engine) RestoreBackup(ctx context.Context, r io.Reader) (backup.Info, error) {
	br := bufio.NewReaderSize(r, 1<<16)
	format, err := backup.Sniff(br)
	if err != nil {
		return backup.Info{}, err
	}
	if format != backup.FormatLogical {
		return backup.Info{}, contract.Invalid("this backup is a directory store's bbolt file: restore it into a new directory (mnemo restore FILE --db DIR), then `mnemo copy DIR postgres://...`")
	}
	var held bool
	if err := e.pool.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM records)").Scan(&held); err != nil {
		return backup.Info{}, e.dbErr(ctx, err)
	}
	if held {
		return backup.Info{}, contract.Invalid("cannot restore into %s: the store already holds records; restore into a new schema (?schema=...)", e.host)
	}
	return backup.RestoreLogical(ctx, br, e)
}

// NamespaceCounts counts the records of each namespace, service sandboxes
// included (contract.NamespaceCounter).
func (e *Engine) NamespaceCounts(ctx context.Context) (map[string]int, error) {
	rs, err := e.pool.Query(ctx, "SELECT ns, count(*) FROM records GROUP BY ns")
	if err != nil {
		return nil, e.dbErr(ctx, err)
	}
	defer rs.Close()
	out := map[string]int{}
	for rs.Next() {
		var ns string
		var n int
		if err := rs.Scan(&ns, &n); err != nil {
			return nil, e.dbErr(ctx, err)
		}
		out[ns] = n
	}
	if err := rs.Err(); err != nil {
		return nil, e.dbErr(ctx, err)
	}
	return out, nil
}
