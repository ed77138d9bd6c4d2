package bolt

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/klauspost/compress/s2"
	bbolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"

	"mnemo/contract"
	"mnemo/engine/bolt/internal/fileio"
	"mnemo/engine/bolt/internal/index"
)

// CompactReport is what Compact did.
type CompactReport struct {
	Dir    string `json:"dir"`
	Before int64  `json:"bytes_before"`
	After  int64  `json:"bytes_after"`
	// The search index, merged into one segment: its size before and after.
	IndexBefore int64 `json:"index_bytes_before"`
	IndexAfter  int64 `json:"index_bytes_after"`
}

// Compact rewrites mnemo.db with full pages. bbolt splits a page in two when
// a key lands in the middle of it, and records, vectors and the ordered keys
// are keyed by ids and times that arrive in no order, so a store's pages end
// up about half to two thirds full; bbolt never gives the space back to the
// file system. The copy (every bucket at a fill of 100%) is written beside
// the store, synced and renamed over it, so a crash leaves the old file or
// the new one. Records not yet written against the store's record
// dictionary are rewritten against it (recordCodec.upgrade: the same bytes,
// so the same record; a store of dictMinRecords records or more without one
// gets it here); everything else, the
// sequence numbers and the change feed included, is copied as it is, so the
// index, the saved table and the content index stay valid. The search index
// is then merged into one segment (index.Merge), which it answers from
// faster. It needs the store to itself.
func Compact(dir string) (CompactReport, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return CompactReport{}, contract.ConfigErr("store %s: %v", dir, err)
	}
	path := filepath.Join(abs, DBFile)
	st, err := os.Stat(path)
	if err != nil {
		return CompactReport{}, contract.ConfigErr("no store at %s: %v", abs, err)
	}
	rep := CompactReport{Dir: abs, Before: st.Size()}
	src, err := openDB(path, time.Second, false)
	if err != nil {
		if errors.Is(err, berrors.ErrTimeout) {
			return rep, lockedError(abs)
		}
		return rep, contract.EngineErr("open store %s: %w", abs, err)
	}
	defer src.Close()
	if err := src.View(func(tx *bbolt.Tx) error {
		meta := tx.Bucket(bucketMeta)
		if meta == nil {
			return contract.ConfigErr("%s is not a mnemo store", abs)
		}
		if v := meta.Get(keySchema); string(v) != schemaVer {
			return contract.ConfigErr("store %s has schema version %s; open it with this mnemo first (it migrates), then compact", abs, v)
		}
		return nil
	}); err != nil {
		return rep, err
	}
	tmp := path + ".compact"
	_ = os.Remove(tmp)
	dst, err := bbolt.Open(tmp, 0o600, &bbolt.Options{FreelistType: bbolt.FreelistMapType, NoSync: true})
	if err != nil {
		return rep, contract.EngineErr("compact %s: %w", abs, err)
	}
	// The search index is merged while the file is copied: the two work on
	// files of their own, each on a core (at 1M the merge took 15 s of a
	// 51 s rewrite). The store's lock is held throughout, so no engine has
	// either open. A merged index is the same index, so a copy that fails
	// leaves a store as good as before.
	merged := make(chan error, 1)
	go func() {
		var err error
		rep.IndexBefore, rep.IndexAfter, err = index.Merge(context.Background(), filepath.Join(abs, IndexDir))
		merged <- err
	}()
	fail := func(err error) (CompactReport, error) {
		_ = dst.Close()
		_ = os.Remove(tmp)
		<-merged
		return rep, contract.EngineErr("compact %s: %w", abs, err)
	}
	if err := copyCompacted(dst, src, 64<<20); err != nil {
		return fail(err)
	}
	if err := dst.Sync(); err != nil {
		return fail(err)
	}
	if err := dst.Close(); err != nil {
		return fail(err)
	}
	// The lock on the store is held until the new file is in place.
	if err := os.Rename(tmp, path); err != nil {
		return fail(err)
	}
	if err := fileio.SyncDir(abs); err != nil {
		<-merged
		return rep, contract.EngineErr("compact %s: %w", abs, err)
	}
	dropCachedPages(path)
	if st, err := os.Stat(path); err == nil {
		rep.After = st.Size()
	}
	if err := <-merged; err != nil {
		return rep, contract.EngineErr("compact %s: the store was rewritten, but %w", abs, err)
	}
	return rep, nil
}

// copyCompacted copies every bucket of src into dst at a fill of 100%,
// committing every txMaxSize bytes, with each record in the current layout
// and keyed by its name.
// The store's buckets hold no buckets.
func copyCompacted(dst, src *bbolt.DB, txMaxSize int) error {
	tx, err := dst.Begin(true)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }()
	size := 0
	return src.View(func(stx *bbolt.Tx) error {
		// Records are rewritten against the store's newest dictionary; a
		// store large enough for one that has none gets it here.
		var codec recordCodec
		if err := codec.load(stx.Bucket(bucketMeta)); err != nil {
			return err
		}
		var made *s2.Dict
		if recs := stx.Bucket(bucketRecords); recs != nil && codec.wants(int(getU64(stx.Bucket(bucketMeta).Get(keyNextOrd))), 0) {
			if made = buildDict(recs, nil); made != nil {
				codec.add(made)
			}
		}
		// Records keyed by their digits are keyed by their names here
		// (reckeys.go): the rewrite gives back the pages either way.
		rk := recordKeysOf(stx.Bucket(bucketMeta))
		names := recordKeys{names: true}
		err := stx.ForEach(func(name []byte, sb *bbolt.Bucket) error {
			if _, err := tx.CreateBucket(name); err != nil {
				return err
			}
			if err := tx.Bucket(name).SetSequence(sb.Sequence()); err != nil {
				return err
			}
			records := string(name) == string(bucketRecords)
			return sb.ForEach(func(k, v []byte) error {
				if v == nil {
					return fmt.Errorf("bucket %s holds a bucket at %q", name, k)
				}
				if records {
					var err error
					if v, err = codec.upgrade(v); err != nil {
						return fmt.Errorf("record %s: %w", rk.id(k), err)
					}
					k = names.key(rk.id(k))
				}
				if size += len(k) + len(v); size > txMaxSize {
					if err := tx.Commit(); err != nil {
						return err
					}
					var err error
					if tx, err = dst.Begin(true); err != nil {
						return err
					}
					size = 0
				}
				b := tx.Bucket(name)
				b.FillPercent = 1.0
				return b.Put(k, v)
			})
		})
		if err != nil {
			return err
		}
		if err := tx.Bucket(bucketMeta).Put(keyRecordNames, []byte{1}); err != nil {
			return err
		}
		if made != nil {
			id, _ := codec.current()
			if err := tx.Bucket(bucketMeta).Put(dictKey(id), made.Bytes()); err != nil {
				return err
			}
		}
		return tx.Commit()
	})
}
