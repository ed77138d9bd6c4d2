package postgres

import (
	"context"
	"fmt"
	"hash/fnv"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"mnemo/contract"
)

// The change feed (contract.Engine.Changes): each mutating transaction
// appends its changes to the changes table and bumps change_head as its last
// statement (0004_changes.sql), in the same transaction as the mutation, so a
// change exists exactly when its write committed. Readers in this process
// wake on a local signal after each commit; readers in other processes on
// the store's NOTIFY channel (sent by the writing transaction, delivered at
// commit), with a poll every feedPoll as the safety net while the listening
// connection is down.

// feedPoll is how often a waiting read looks again without a notification.
const feedPoll = 2 * time.Second

// feed is the engine's change-feed state.
type feed struct {
	retention contract.ChangeRetention
	channel   string
	signal    contract.ChangeSignal
	listen    sync.Once
	stop      context.CancelFunc
	stopped   context.Context
}

// change is one change about to be logged.
type change struct {
	op     contract.ChangeOp
	id     string
	ns     string
	status contract.Status
}

// feedChannel is the NOTIFY channel of a schema (identifiers are at most 63 bytes).
func feedChannel(schema string) string {
	h := fnv.New64a()
	_, _ = h.Write([]byte(schema))
	return fmt.Sprintf("mnemo_changes_%x", h.Sum64())
}

// initFeed sets the feed up once the schema is known.
func (e *Engine) initFeed(ctx context.Context, retention contract.ChangeRetention) error {
	var schema string
	if err := e.pool.QueryRow(ctx, "SELECT current_schema()").Scan(&schema); err != nil {
		return err
	}
	e.feed.retention = retention.OrDefault()
	e.feed.channel = feedChannel(schema)
	e.feed.stopped, e.feed.stop = context.WithCancel(context.Background())
	return nil
}

// logChangesSQL bumps change_head by the changes' count and appends them
// with the seqs it hands out, in one statement; it returns the new head.
const logChangesSQL = `WITH h AS (UPDATE change_head SET seq = seq + $1 RETURNING seq),
	ins AS (INSERT INTO changes (seq, at_ms, op, id, ns, status)
		SELECT h.seq - $1 + u.o, $2, u.op, u.id, u.ns, u.st
		FROM h, unnest($3::text[], $4::text[], $5::text[], $6::text[]) WITH ORDINALITY AS u(op, id, ns, st, o))
	SELECT seq FROM h`

// logChanges applies the count deltas d, appends cs, notifies other
// processes at commit and prunes what the retention lets go, in tx. It must
// be the transaction's last statement but the commit: it takes
// change_head's row lock, after the count rows' (a writer's tail holds the
// rows every writer needs, so it is one round trip: the statements go in
// one batch).
func (e *Engine) logChanges(ctx context.Context, tx pgx.Tx, at int64, cs []change, d countDeltas) error {
	var b pgx.Batch
	counted := d.queue(&b)
	if len(cs) > 0 {
		ops, ids, nss, sts := make([]string, len(cs)), make([]string, len(cs)), make([]string, len(cs)), make([]string, len(cs))
		for i, c := range cs {
			ops[i], ids[i], nss[i], sts[i] = string(c.op), c.id, c.ns, string(c.status)
		}
		b.Queue(logChangesSQL, int64(len(cs)), at, ops, ids, nss, sts)
		b.Queue("SELECT pg_notify($1, '')", e.feed.channel)
	}
	if b.Len() == 0 {
		return nil
	}
	br := tx.SendBatch(ctx, &b)
	if counted {
		if _, err := br.Exec(); err != nil {
			_ = br.Close()
			return err
		}
	}
	var head int64
	if len(cs) > 0 {
		if err := br.QueryRow().Scan(&head); err != nil {
			_ = br.Close()
			return err
		}
	}
	if err := br.Close(); err != nil {
		return err
	}
	if len(cs) == 0 {
		return nil
	}
	return e.pruneChanges(ctx, tx, uint64(head), at)
}

// pruneChanges drops the oldest changes the retention lets go, at most 1,024
// per transaction, always a prefix of the feed. The caller holds
// change_head's row lock, so prunes never race.
func (e *Engine) pruneChanges(ctx context.Context, tx pgx.Tx, head uint64, at int64) error {
	r := e.feed.retention
	if head <= r.MaxChanges {
		return nil
	}
	now := time.UnixMilli(at)
	var seq, atMS int64
	switch err := tx.QueryRow(ctx, "SELECT seq, at_ms FROM changes ORDER BY seq LIMIT 1").Scan(&seq, &atMS); err {
	case nil:
	case pgx.ErrNoRows:
		return nil
	default:
		return err
	}
	if !r.Prunable(uint64(seq), time.UnixMilli(atMS), now, head) {
		return nil
	}
	rs, err := tx.Query(ctx, "SELECT seq, at_ms FROM changes WHERE seq <= $1 ORDER BY seq LIMIT 1024", int64(head-r.MaxChanges))
	if err != nil {
		return err
	}
	last := int64(0)
	for rs.Next() {
		if err := rs.Scan(&seq, &atMS); err != nil {
			rs.Close()
			return err
		}
		if !r.Prunable(uint64(seq), time.UnixMilli(atMS), now, head) {
			break
		}
		last = seq
	}
	rs.Close()
	if err := rs.Err(); err != nil {
		return err
	}
	if last == 0 {
		return nil
	}
	if _, err := tx.Exec(ctx, "DELETE FROM changes WHERE seq <= $1", last); err != nil {
		return err
	}
	_, err = tx.Exec(ctx, "UPDATE change_head SET pruned = $1", last)
	return err
}

// committed wakes this process's waiting readers after a write committed.
func (e *Engine) committed() { e.feed.signal.Notify() }

// Changes reads the change feed (contract.ChangesRequest).
func (e *Engine) Changes(ctx context.Context, req contract.ChangesRequest) (contract.ChangesPage, error) {
	if err := req.Validate(); err != nil {
		return contract.ChangesPage{}, err
	}
	poll := time.Duration(0)
	if req.Wait > 0 {
		e.feed.listen.Do(func() { go e.listen() })
		poll = feedPoll
	}
	return contract.ServeChanges(ctx, req, e.feed.signal.C, poll, e.readChanges)
}

// listen holds a connection LISTENing on the store's channel and wakes the
// waiting readers on each notification, reconnecting after a failure (the
// poll covers the gap), until the engine closes.
func (e *Engine) listen() {
	ctx := e.feed.stopped
	for ctx.Err() == nil {
		conn, err := pgx.ConnectConfig(ctx, e.pool.Config().ConnConfig.Copy())
		if err == nil {
			if _, err = conn.Exec(ctx, "LISTEN "+pgx.Identifier{e.feed.channel}.Sanitize()); err == nil {
				// A read that found nothing before the LISTEN took (the
				// first waiting read starts it) would miss a NOTIFY sent
				// meanwhile and wait for the poll, up to 2 s: it reads
				// again now, and from here on every commit notifies.
				e.feed.signal.Notify()
				for {
					if _, err = conn.WaitForNotification(ctx); err != nil {
						break
					}
					e.feed.signal.Notify()
				}
			}
			_ = conn.Close(context.WithoutCancel(ctx))
		}
		if ctx.Err() != nil {
			return
		}
		e.log.Warn("listening for changes failed; waiting reads poll meanwhile", "host", e.host, "err", pgMessage(err))
		e.feed.signal.Notify()
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
	}
}

func (e *Engine) readChanges(ctx context.Context, since uint64, limit int, reach *contract.Reach, fromNow bool) (contract.ChangesPage, error) {
	var page contract.ChangesPage
	err := pgx.BeginTxFunc(ctx, e.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		var head, pruned int64
		if err := tx.QueryRow(ctx, "SELECT seq, pruned FROM change_head").Scan(&head, &pruned); err != nil {
			return err
		}
		page = contract.ChangesPage{Changes: []contract.Change{}, Next: since, Head: uint64(head), Floor: uint64(pruned)}
		if fromNow {
			page.Next = page.Head
			return nil
		}
		if err := contract.CheckSince(since, uint64(pruned), uint64(head)); err != nil {
			return err
		}
		chunk := min(max(2*limit, 64), contract.MaxChangesLimit)
		for scanned := 0; scanned < contract.MaxChangesScan && len(page.Changes) < limit && page.Next < page.Head; {
			rs, err := tx.Query(ctx, "SELECT seq, at_ms, op, id, ns, status FROM changes WHERE seq > $1 ORDER BY seq LIMIT $2", int64(page.Next), chunk)
			if err != nil {
				return err
			}
			n := 0
			for rs.Next() && len(page.Changes) < limit {
				var seq, at int64
				var op, id, ns, status string
				if err := rs.Scan(&seq, &at, &op, &id, &ns, &status); err != nil {
					rs.Close()
					return err
				}
				n++
				page.Next = uint64(seq)
				nsv, err := contract.ParseNamespace(ns)
				if err != nil {
					rs.Close()
					return contract.EngineErr("change %d names namespace %q: %v", seq, ns, err)
				}
				if !contract.AdmittedBy(reach, nsv) {
					continue
				}
				page.Changes = append(page.Changes, contract.Change{Seq: uint64(seq), At: millis(at), Op: contract.ChangeOp(op),
					ID: id, Namespace: nsv, Status: contract.Status(status)})
			}
			rs.Close()
			if err := rs.Err(); err != nil {
				return err
			}
			scanned += n
			if n == 0 {
				break
			}
		}
		return e.attachRecords(ctx, tx, page.Changes)
	})
	if err != nil {
		return contract.ChangesPage{}, e.dbErr(ctx, err)
	}
	return page, nil
}

// attachRecords sets the record, as it is now, on the changes whose record
// still exists, from the same snapshot as the changes.
func (e *Engine) attachRecords(ctx context.Context, tx pgx.Tx, cs []contract.Change) error {
	var ids []string
	for _, c := range cs {
		if !c.Op.Removes() {
			ids = append(ids, c.ID)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	slices.Sort(ids)
	ids = slices.Compact(ids)
	rs, err := tx.Query(ctx, "SELECT "+hitColumns+" FROM records WHERE id = ANY($1)", ids)
	if err != nil {
		return err
	}
	recs, err := scanRecords(rs)
	if err != nil {
		return err
	}
	byID := make(map[string]*contract.Record, len(recs))
	for i := range recs {
		byID[recs[i].ID] = &recs[i]
	}
	for i := range cs {
		if r, ok := byID[cs[i].ID]; ok && !cs[i].Op.Removes() {
			rec := *r
			cs[i].Record = &rec
		}
	}
	return nil
}

// closeFeed stops the listening connection.
func (e *Engine) closeFeed() {
	if e.feed.stop != nil {
		e.feed.stop()
	}
}

// removals are the changes of deleted rows, in id order.
func removals(op contract.ChangeOp, gone []change) []change {
	for i := range gone {
		gone[i].op = op
	}
	slices.SortFunc(gone, func(a, b change) int { return strings.Compare(a.id, b.id) })
	return gone
}
