package bolt

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/klauspost/compress/s2"
	bbolt "go.etcd.io/bbolt"

	"mnemo/engine/internal/metacodec"
)

// Record dictionaries. A store's records are compressed against a
// dictionary made from the store's own records (codec.go says what it buys):
// the write that brings a store to dictMinRecords records makes it, in its
// own transaction, from a sample of the records already stored and the ones
// being written. Dictionaries are kept in the meta bucket under
// keyDictPrefix and their id, and never change or go away: every record
// names the one it was written against. One is made per store for now; the
// id leaves room for another when a store's text drifts.
const (
	dictMinRecords = 500
	// dictSample bounds how many stored records the sample reads.
	dictSample = 2000
	// dictSize is the dictionary's length: S2's largest (s2.MaxDictSize).
	dictSize = 64 << 10
)

var keyDictPrefix = []byte("record_dict/")

var errMissingDict = errors.New("stored record names a record dictionary the store does not hold")

// recordCodec encodes and decodes stored records with the store's
// dictionaries. It is safe for concurrent use: the dictionaries are an
// immutable list swapped whole, and only the writer (under the engine's
// write lock) adds one.
type recordCodec struct {
	dicts atomic.Pointer[[]*s2.Dict] // dicts[i] has id i+1
	// scratch holds packScratch buffers: a body is laid out and compressed
	// in buffers used again, and kept in one of its compressed size (the
	// two had been allocated for each record, 3 KB of a 100k import's 30
	// allocated a record).
	scratch sync.Pool
}

// packScratch is packWith's buffers.
type packScratch struct{ body, out []byte }

// current answers the dictionary writers use and its id, or 0 and nil when
// the store has none yet.
func (c *recordCodec) current() (uint64, *s2.Dict) {
	p := c.dicts.Load()
	if p == nil || len(*p) == 0 {
		return 0, nil
	}
	return uint64(len(*p)), (*p)[len(*p)-1]
}

// dict answers the dictionary of id, or nil.
func (c *recordCodec) dict(id uint64) *s2.Dict {
	p := c.dicts.Load()
	if p == nil || id == 0 || id > uint64(len(*p)) {
		return nil
	}
	return (*p)[id-1]
}

// add makes d the dictionary of the next id and answers the id.
func (c *recordCodec) add(d *s2.Dict) uint64 {
	var next []*s2.Dict
	if p := c.dicts.Load(); p != nil {
		next = append(next, *p...)
	}
	next = append(next, d)
	c.dicts.Store(&next)
	return uint64(len(next))
}

// drop forgets the newest dictionary: its transaction did not commit.
func (c *recordCodec) drop() {
	p := c.dicts.Load()
	if p == nil || len(*p) == 0 {
		return
	}
	next := append([]*s2.Dict(nil), (*p)[:len(*p)-1]...)
	c.dicts.Store(&next)
}

// encode writes a record in the current layout: version 3 against the
// newest dictionary, version 2 while the store has none.
func (c *recordCodec) encode(r *storedRecord) []byte { return c.encodePacked(r, packedBody{}) }

// packedBody is a record's body (its text, metadata and item JSON: what no
// transaction changes) compressed against a dictionary, ahead of its write.
type packedBody struct {
	with *s2.Dict
	body []byte
}

// pack compresses r's body against the dictionary current now, outside any
// transaction, so a bulk write compresses its records on every core.
func (c *recordCodec) pack(r *storedRecord) packedBody {
	_, d := c.current()
	if d == nil {
		return packedBody{}
	}
	return c.packWith(d, r)
}

func (c *recordCodec) packWith(d *s2.Dict, r *storedRecord) packedBody {
	sc, _ := c.scratch.Get().(*packScratch)
	if sc == nil {
		sc = &packScratch{}
	}
	body := metacodec.Writer{Buf: sc.body[:0]}
	encodeBody(&body, r)
	sc.body = body.Buf
	sc.out = appendDict(sc.out[:0], d, body.Buf)
	packed := packedBody{with: d, body: append([]byte(nil), sc.out...)}
	c.scratch.Put(sc)
	return packed
}

// encodePacked is encode using pb when it was compressed against the
// dictionary current now. The dictionary is compared by identity: one made
// by a write that then failed is undone, and a later one may take its id.
func (c *recordCodec) encodePacked(r *storedRecord, pb packedBody) []byte {
	id, d := c.current()
	if d == nil {
		return encodeRecord(r)
	}
	if pb.with != d {
		pb = c.packWith(d, r)
	}
	version := byte(recordV3)
	if r.item != nil {
		version = recordV6
	}
	w := encodeHeader(r, version)
	w.Uvarint(id)
	return append(w.Buf, pb.body...)
}

// appendDict appends the S2 block of src compressed against d to dst. It
// is S2's "better" mode: on the bench corpus's bodies it takes 10-12 µs a
// body where the fast mode takes 8, for 462 bytes where the fast mode
// leaves 553, and the same decoder reads either (docs/storage.md, record
// dictionaries).
func appendDict(dst []byte, d *s2.Dict, src []byte) []byte {
	n := len(dst)
	out := append(dst, make([]byte, s2.MaxEncodedLen(len(src)))...)
	return out[:n+len(d.EncodeBetter(out[n:], src))]
}

// load reads the store's dictionaries from its meta bucket.
func (c *recordCodec) load(meta *bbolt.Bucket) error {
	var list []*s2.Dict
	cur := meta.Cursor()
	for k, v := cur.Seek(keyDictPrefix); k != nil && bytes.HasPrefix(k, keyDictPrefix); k, v = cur.Next() {
		suffix := k[len(keyDictPrefix):]
		if len(suffix) != 4 || uint64(binary.BigEndian.Uint32(suffix)) != uint64(len(list))+1 {
			// Ids are written 1, 2, ... big-endian, so key order is id order.
			return fmt.Errorf("record dictionary %q is out of sequence", k)
		}
		id := len(list) + 1
		d := s2.NewDict(append([]byte(nil), v...))
		if d == nil {
			return fmt.Errorf("record dictionary %d is damaged", id)
		}
		list = append(list, d)
	}
	c.dicts.Store(&list)
	return nil
}

// dictKey is the meta key of dictionary id.
func dictKey(id uint64) []byte {
	return binary.BigEndian.AppendUint32(append([]byte(nil), keyDictPrefix...), uint32(id))
}

// wants says whether a write of n records into a store that has held held
// records makes its first dictionary.
func (c *recordCodec) wants(held, n int) bool {
	id, _ := c.current()
	return id == 0 && held+n >= dictMinRecords
}

// makeDict makes the store's first dictionary in tx when wants(held,
// len(adding)): from up to dictSample stored records and the ones adding. The dictionary is in use as soon
// as makeDict returns, so the write's own records are encoded against it; a
// caller whose transaction does not commit must call the undo it answers.
func (c *recordCodec) makeDict(tx *bbolt.Tx, held int, adding []*storedRecord) (undo func(), err error) {
	if !c.wants(held, len(adding)) {
		return func() {}, nil
	}
	d := buildDict(tx.Bucket(bucketRecords), adding)
	if d == nil {
		return func() {}, nil
	}
	id := c.add(d)
	if err := tx.Bucket(bucketMeta).Put(dictKey(id), d.Bytes()); err != nil {
		c.drop()
		return func() {}, err
	}
	return c.drop, nil
}

// makeDictIn makes the store's record dictionary in tx when a write of n
// records (rec(i) each) calls for it (recordCodec.makeDict). The caller
// holds the write lock.
func (e *Engine) makeDictIn(tx *bbolt.Tx, n int, rec func(i int) *storedRecord) (undo func(), err error) {
	if !e.codec.wants(int(e.nextOrd), n) {
		return func() {}, nil
	}
	adding := make([]*storedRecord, n)
	for i := range adding {
		adding[i] = rec(i)
	}
	return e.codec.makeDict(tx, int(e.nextOrd), adding)
}

// buildDict makes a dictionary from up to dictSample of the records in recs
// (if any) and the ones adding, or answers nil when they hold too few bytes for one.
func buildDict(recs *bbolt.Bucket, adding []*storedRecord) *s2.Dict {
	var c recordCodec // reads the versions that need no dictionary
	var bodies [][]byte
	if recs != nil {
		cur := recs.Cursor()
		// Records are keyed by their hashes, so the first ones in key order
		// are a sample of the store in no particular order.
		for k, v := cur.First(); k != nil && len(bodies) < dictSample; k, v = cur.Next() {
			h := recordHeaderLen(v)
			if h < 0 || againstDict(v[0]) {
				continue
			}
			if b, err := c.body(v[0], v[h:]); err == nil {
				bodies = append(bodies, b)
			}
		}
	}
	for _, r := range adding {
		w := metacodec.Writer{}
		encodeBody(&w, r)
		bodies = append(bodies, w.Buf)
	}
	sample := dictSampleOf(bodies, dictSize)
	if len(sample) < s2.MinDictSize {
		return nil
	}
	return s2.MakeDict(sample, nil)
}

// dictSampleOf concatenates one body in every k, k chosen so the sample
// spans all of them and fills size, and keeps its last size bytes (S2 keeps
// a dictionary's tail, where matches are cheapest to reach).
func dictSampleOf(bodies [][]byte, size int) []byte {
	total := 0
	for _, b := range bodies {
		total += len(b)
	}
	k := total/size + 1
	var out []byte
	for i := 0; i < len(bodies); i += k {
		out = append(out, bodies[i]...)
	}
	if len(out) > size {
		out = out[len(out)-size:]
	}
	return out
}
