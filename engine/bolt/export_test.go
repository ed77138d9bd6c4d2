package bolt

import (
	"encoding/binary"
	"errors"
	"math"

	bbolt "go.etcd.io/bbolt"

	"mnemo/contract"
	"mnemo/engine/bolt/internal/contentfile"
	"mnemo/engine/bolt/internal/trigram"
	"mnemo/engine/bolt/internal/vecblock"
)

// WithLoadGate holds a large store's background table load until gate is
// closed, so tests can observe a store before its table has loaded.
func WithLoadGate(o Options, gate <-chan struct{}) Options {
	o.loadGate = gate
	return o
}

// WithColdScanBudget sets how many records a list decodes before the table
// has loaded before it waits for the table.
func WithColdScanBudget(o Options, n int) Options {
	o.coldScanBudget = n
	return o
}

// ContentFileCandidates reads the content index file in dir alone (not the
// process's overlay) and returns how many ordinals it offers for a folded
// needle (folded here), and the change-feed position the file describes.
func ContentFileCandidates(dir, needle string) (n uint64, feedSeq uint64, err error) {
	f, err := contentfile.Open(contentfile.Path(dir))
	if err != nil || f == nil {
		return 0, 0, err
	}
	defer f.Close()
	var acc []uint32
	first := true
	for _, g := range trigram.Grams(contract.FoldCase(needle)) {
		b, err := f.Posting(g)
		if err != nil {
			return 0, 0, err
		}
		if b == nil {
			return 0, f.FeedSeq(), nil
		}
		if first {
			acc, first = b.ToArray(), false
			continue
		}
		keep := acc[:0]
		for _, o := range acc {
			if b.Contains(o) {
				keep = append(keep, o)
			}
		}
		acc = keep
	}
	return uint64(len(acc)), f.FeedSeq(), nil
}

// ContentFileName is the content index file's name in a store directory.
const ContentFileName = contentfile.Name

// RewriteContentFile writes the content index file now, as the background
// rewrite does when one is due.
func (e *Engine) RewriteContentFile() error { return e.rewriteContent() }

// TableFromFile tells whether the engine's table was read from its saved
// file (waiting for the table first).
func (e *Engine) TableFromFile() bool {
	<-e.tables.ready
	e.mu.RLock()
	defer e.mu.RUnlock()
	return e.tables.fromFile
}

// TableFileName is the saved table's name in a store directory.
const TableFileName = tableFileName

// SaveTable saves the table now, as a load from the records does.
func (e *Engine) SaveTable() error {
	<-e.tables.ready
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.saveTable(e.feed.Seq())
}

// PutGhostVector stores a vector row for an ordinal far past the store's
// records, in a block of its own of the store's dimension.
func PutGhostVector(tx *bbolt.Tx) error {
	b := tx.Bucket(bucketVecBlocks)
	_, val := b.Cursor().First()
	blk, ok := vecblock.Parse(val)
	if !ok {
		return errors.New("the store holds no vector block")
	}
	nb := vecblock.New(1, blk.Dim, vecblock.Int8, vecblock.Block{}, false)
	vecblock.SetRow(nb, 1, blk.Dim, 0, vecblock.Row{Tag: 7, Scale: 0.01, Q: make([]int8, blk.Dim)})
	return b.Put(vecblock.Key(1<<20), nb)
}

// SchemaVersion is the schema this build writes.
const SchemaVersion = schemaVer

// StoredVectorRows lists the ordinals whose stored vector rows hold a vector.
func StoredVectorRows(tx *bbolt.Tx) []uint32 { return (&Engine{}).storedVectorRows(tx) }

// StoredVectorRowsOf lists them in an open engine's store.
func StoredVectorRowsOf(e *Engine) []uint32 {
	var out []uint32
	_ = e.db.View(func(tx *bbolt.Tx) error {
		out = StoredVectorRows(tx)
		return nil
	})
	return out
}

// HasPerRecordVectors tells whether the store still has the vectors bucket
// of the layout before blocks.
func HasPerRecordVectors(e *Engine) bool {
	has := false
	_ = e.db.View(func(tx *bbolt.Tx) error {
		has = tx.Bucket(bucketVectors) != nil
		return nil
	})
	return has
}

// DowngradeVectorsToSchema4 rewrites a store's vectors in the layout of
// schema 4 (one value per record keyed by id: the model id, a zero byte, a
// float32 scale, an int8 per dimension), as a release before blocks left
// them, and marks the store schema 4. model is the embedder's model id.
func DowngradeVectorsToSchema4(model string) func(tx *bbolt.Tx) error {
	return func(tx *bbolt.Tx) error {
		idOf := map[uint32]string{}
		var codec recordCodec
		if err := codec.load(tx.Bucket(bucketMeta)); err != nil {
			return err
		}
		rk := recordKeysOf(tx.Bucket(bucketMeta))
		err := tx.Bucket(bucketRecords).ForEach(func(k, v []byte) error {
			s, err := codec.decode(v, partHeader, parseNS)
			idOf[s.ord] = rk.id(k)
			return err
		})
		if err != nil {
			return err
		}
		old, err := tx.CreateBucket(bucketVectors)
		if err != nil {
			return err
		}
		c := tx.Bucket(bucketVecBlocks).Cursor()
		for k, val := c.First(); k != nil; k, val = c.Next() {
			blk, ok := vecblock.Parse(val)
			if !ok {
				return errors.New("a vector block does not parse")
			}
			first := binary.BigEndian.Uint32(k) * vecBlockRows
			cols := blk.Cols()
			for r := range blk.N {
				if blk.Tag(r) == 0 {
					continue
				}
				b := append([]byte(model), 0)
				b = binary.LittleEndian.AppendUint32(b, math.Float32bits(blk.Scale(r)))
				for j := range blk.Dim {
					b = append(b, byte(cols[j*blk.N+r]))
				}
				if err := old.Put([]byte(idOf[first+uint32(r)]), b); err != nil {
					return err
				}
			}
		}
		if err := tx.DeleteBucket(bucketVecBlocks); err != nil {
			return err
		}
		return tx.Bucket(bucketMeta).Put(keySchema, []byte("4"))
	}
}

// DecodeVectorV4 reads a vector of schema 4's layout.
func DecodeVectorV4(b []byte, model string, dim int) ([]float32, bool) {
	return decodeVector(b, model, dim)
}

// VectorRowOf reads the stored block row of a record's vector.
func VectorRowOf(e *Engine, id string) (q []int8, scale float32, ok bool) {
	e.mu.RLock()
	ord, alive := e.t.ordOfID(id)
	e.mu.RUnlock()
	if !alive {
		return nil, 0, false
	}
	_ = e.db.View(func(tx *bbolt.Tx) error {
		blk, found := vecblock.Parse(tx.Bucket(bucketVecBlocks).Get(vecblock.Key(ord / vecBlockRows)))
		r := int(ord % vecBlockRows)
		if !found || r >= blk.N || blk.Tag(r) == 0 {
			return nil
		}
		cols := blk.Cols()
		q = make([]int8, blk.Dim)
		for j := range q {
			q[j] = cols[j*blk.N+r]
		}
		scale, ok = blk.Scale(r), true
		return nil
	})
	return q, scale, ok
}

// RecordKey is the records bucket's key for id in the store tx is of.
func RecordKey(tx *bbolt.Tx, id string) []byte {
	return recordKeysOf(tx.Bucket(bucketMeta)).key(id)
}
