package postgres

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"

	"mnemo/contract"
	"mnemo/server/audit"
)

var (
	_ audit.Log    = (*Engine)(nil)
	_ audit.Reader = (*Engine)(nil)
)

// AppendAudit appends one event to the store's audit log, shared by every
// server of the store.
func (e *Engine) AppendAudit(ctx context.Context, ev audit.Event) error {
	if ev.At.IsZero() {
		ev.At = e.clock()
	}
	val, err := json.Marshal(ev)
	if err != nil {
		return contract.EngineErr("encode audit event: %w", err)
	}
	if _, err := e.pool.Exec(ctx, "INSERT INTO audit (at_ns, event) VALUES ($1, $2)", ev.At.UnixNano(), string(val)); err != nil {
		return e.dbErr(ctx, err)
	}
	return nil
}

// ReadAudit returns the events at or after q.Since, oldest first, at most
// q.Limit of them (all when 0).
func (e *Engine) ReadAudit(ctx context.Context, q audit.Query) ([]audit.Event, error) {
	var qq query
	if !q.Since.IsZero() {
		qq.add("at_ns >= " + qq.arg(q.Since.UnixNano()))
	}
	sql := "SELECT event FROM audit WHERE " + qq.clause() + " ORDER BY at_ns, seq"
	if q.Limit > 0 {
		sql += " LIMIT " + qq.arg(q.Limit)
	}
	rs, err := e.pool.Query(ctx, sql, qq.args...)
	if err != nil {
		return nil, e.dbErr(ctx, err)
	}
	defer rs.Close()
	var out []audit.Event
	for rs.Next() {
		var raw string
		if err := rs.Scan(&raw); err != nil {
			return nil, e.dbErr(ctx, err)
		}
		var ev audit.Event
		if err := json.Unmarshal([]byte(raw), &ev); err != nil {
			return nil, contract.EngineErr("audit event: %w", err)
		}
		out = append(out, ev)
	}
	if err := rs.Err(); err != nil {
		return nil, e.dbErr(ctx, err)
	}
	return out, nil
}

// OwnerToken is the store's owner token for serve mode, made on first use
// and kept in the database, so every server of the store takes the same one.
func (e *Engine) OwnerToken(ctx context.Context) (string, error) {
	var raw [32]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return "", contract.EngineErr("cannot make an owner token: %w", err)
	}
	if _, err := e.pool.Exec(ctx, "INSERT INTO mnemo_meta (key, value) VALUES ('owner_token', $1) ON CONFLICT (key) DO NOTHING",
		hex.EncodeToString(raw[:])); err != nil {
		return "", e.dbErr(ctx, err)
	}
	var tok string
	if err := e.pool.QueryRow(ctx, "SELECT value FROM mnemo_meta WHERE key = 'owner_token'").Scan(&tok); err != nil {
		return "", e.dbErr(ctx, err)
	}
	return tok, nil
}
