package bolt

import (
	"go.etcd.io/bbolt"

	"mnemo/engine/bolt/internal/idkey"
)

// keyRecordNames in meta marks a store whose records are keyed by their
// ids' names (package idkey: a fingerprint's 20 bytes), not their 40 digits.
// A store gets it when its layout is prepared with no record in it (a new
// store); a store that holds records keeps the digits, since rewriting every
// record would not give the pages back (only mnemo compact does). Names
// sort as the digits do, so a walk of the records keeps its order.
var keyRecordNames = []byte("record_names")

// recordKeys is how a store keys its records.
type recordKeys struct{ names bool }

// recordKeysOf is how the store whose meta bucket is meta keys its records.
func recordKeysOf(meta *bbolt.Bucket) recordKeys {
	return recordKeys{names: meta.Get(keyRecordNames) != nil}
}

// key is the records bucket's key for id.
func (rk recordKeys) key(id string) []byte {
	if rk.names {
		return idkey.Append(make([]byte, 0, idkey.Len), id)
	}
	return []byte(id)
}

// id is the id a records bucket's key names.
func (rk recordKeys) id(k []byte) string {
	if rk.names {
		return idkey.ID(k)
	}
	return string(k)
}

// recordsBucket is the records bucket of one transaction, read and written
// by id.
type recordsBucket struct {
	b  *bbolt.Bucket
	rk recordKeys
}

// records is tx's records bucket.
func (e *Engine) records(tx *bbolt.Tx) recordsBucket {
	return recordsBucket{b: tx.Bucket(bucketRecords), rk: e.rk}
}

func (r recordsBucket) Get(id string) []byte { return r.b.Get(r.rk.key(id)) }

func (r recordsBucket) Put(id string, v []byte) error { return r.b.Put(r.rk.key(id), v) }

func (r recordsBucket) Delete(id string) error { return r.b.Delete(r.rk.key(id)) }

// Cursor walks the records in key order; id turns a key into its id.
func (r recordsBucket) Cursor() *bbolt.Cursor { return r.b.Cursor() }

func (r recordsBucket) id(k []byte) string { return r.rk.id(k) }
