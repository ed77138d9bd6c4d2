package bolt

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"

	bbolt "go.etcd.io/bbolt"

	"mnemo/contract"
	"mnemo/server/audit"
)

// bucketAudit holds the audit log of serve mode: one JSON event per key, keys
// ordered by time (8-byte big-endian Unix nanoseconds, then an 8-byte sequence
// so events of the same instant keep their order).
var bucketAudit = []byte("audit")

var _ audit.Log = (*Engine)(nil)
var _ audit.Reader = (*Engine)(nil)

// AppendAudit appends one event to the store's audit log. Concurrent appends
// share bbolt's batched commits, so a burst of requests costs few syncs.
func (e *Engine) AppendAudit(ctx context.Context, ev audit.Event) error {
	if err := e.enter(ctx); err != nil {
		return err
	}
	defer e.leave()
	if ev.At.IsZero() {
		ev.At = e.clock()
	}
	val, err := json.Marshal(ev)
	if err != nil {
		return contract.AsError(err)
	}
	err = e.db.Batch(func(tx *bbolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists(bucketAudit)
		if err != nil {
			return err
		}
		seq, err := b.NextSequence()
		if err != nil {
			return err
		}
		return b.Put(auditKey(ev.At.UnixNano(), seq), val)
	})
	if err != nil {
		return contract.AsError(err)
	}
	return nil
}

func auditKey(nanos int64, seq uint64) []byte {
	k := make([]byte, 16)
	binary.BigEndian.PutUint64(k[:8], uint64(max(nanos, 0)))
	binary.BigEndian.PutUint64(k[8:], seq)
	return k
}

// ReadAudit returns the events at or after q.Since that q.Visible admits,
// oldest first, at most q.Limit of them (all when 0).
func (e *Engine) ReadAudit(ctx context.Context, q audit.Query) ([]audit.Event, error) {
	if err := e.enter(ctx); err != nil {
		return nil, err
	}
	defer e.leave()
	var out []audit.Event
	err := e.db.View(func(tx *bbolt.Tx) error {
		b := tx.Bucket(bucketAudit)
		if b == nil {
			return nil
		}
		c := b.Cursor()
		var k, v []byte
		if q.Since.IsZero() {
			k, v = c.First()
		} else {
			k, v = c.Seek(auditKey(q.Since.UnixNano(), 0))
		}
		for ; k != nil; k, v = c.Next() {
			if err := ctx.Err(); err != nil {
				return err
			}
			if q.Limit > 0 && len(out) >= q.Limit {
				break
			}
			var ev audit.Event
			if err := json.NewDecoder(bytes.NewReader(v)).Decode(&ev); err != nil {
				return err
			}
			if q.Visible != nil && !q.Visible(ev) {
				continue
			}
			out = append(out, ev)
		}
		return nil
	})
	if err != nil {
		return nil, contract.AsError(err)
	}
	return out, nil
}
