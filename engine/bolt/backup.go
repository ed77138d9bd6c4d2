package bolt

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"hash/fnv"
	"io"
	"os"
	"path/filepath"
	"strconv"

	bbolt "go.etcd.io/bbolt"

	"mnemo/backup"
	"mnemo/contract"
)

// Backup writes a consistent copy of the store's bbolt file to w while the
// store is in use (backup.FormatBolt): bbolt's WriteTo from one read
// transaction, which writers do not wait for. The copy holds everything the
// store keeps — every record with its times, status, expiry and successor,
// service sandboxes, the change feed, the audit log, the vectors and the
// learned embedder — but not the files derived from it (the search index,
// table.snap, content.idx), which a store restored from it rebuilds.
func (e *Engine) Backup(ctx context.Context, w io.Writer) (backup.Info, error) {
	if err := e.enter(ctx); err != nil {
		return backup.Info{}, err
	}
	defer e.leave()
	info := backup.Info{Format: backup.FormatBolt, Engine: e.Descriptor().ID, At: e.clock().UTC()}
	err := e.db.View(func(tx *bbolt.Tx) error {
		if err := tx.Bucket(bucketTotals).ForEach(func(_, v []byte) error {
			info.Records += int(getU64(v))
			return nil
		}); err != nil {
			return err
		}
		if b := tx.Bucket(bucketAudit); b != nil {
			info.Audit = b.Stats().KeyN
		}
		n, err := tx.WriteTo(ctxWriter{ctx, w})
		info.Bytes = n
		return err
	})
	if err != nil {
		if ce := contract.ContextErr(ctx); ce != nil {
			return info, ce
		}
		return info, contract.EngineErr("backup of store %s: %w", e.dir, err)
	}
	return info, nil
}

// ctxWriter stops a copy whose context ended.
type ctxWriter struct {
	ctx context.Context
	w   io.Writer
}

func (c ctxWriter) Write(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.w.Write(p)
}

// RestoreReport is what RestoreBackup did: the backup read and the check of
// the store it made.
type RestoreReport struct {
	Dir    string      `json:"dir"`
	Backup backup.Info `json:"backup"`
	Check  CheckReport `json:"check"`
}

// RestoreBackup makes a new store in dir from a backup: a bbolt copy
// (Backup) becomes its mnemo.db as it is; a logical backup (engine/postgres)
// is written into a new store record by record, whole, and its audit events
// after. dir must not exist or be empty. The store is then opened, which
// rebuilds the derived files, and checked (Check): a store that does not
// check out is an error, and the report says what disagrees.
func RestoreBackup(ctx context.Context, r io.Reader, dir string, opts Options) (RestoreReport, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return RestoreReport{}, contract.ConfigErr("store %s: %v", dir, err)
	}
	rep := RestoreReport{Dir: abs}
	if ents, err := os.ReadDir(abs); err == nil && len(ents) > 0 {
		return rep, contract.Invalid("cannot restore into %s: it is not empty (it holds %s); restore into a new directory", abs, ents[0].Name())
	} else if err != nil && !errors.Is(err, os.ErrNotExist) {
		return rep, contract.ConfigErr("cannot restore into %s: %v", abs, err)
	}
	br := bufio.NewReaderSize(r, 1<<16)
	format, err := backup.Sniff(br)
	if err != nil {
		return rep, err
	}
	if err := os.MkdirAll(abs, 0o700); err != nil {
		return rep, contract.ConfigErr("cannot restore into %s: %v", abs, err)
	}
	if format == backup.FormatBolt {
		n, err := restoreFile(br, abs)
		if err != nil {
			return rep, err
		}
		rep.Backup = backup.Info{Format: format, Bytes: n}
	}
	e, err := Open(abs, opts)
	if err != nil {
		return rep, err
	}
	defer func() { _ = e.Close() }()
	if format == backup.FormatLogical {
		info, err := backup.RestoreLogical(ctx, br, e)
		rep.Backup = info
		if err != nil {
			return rep, err
		}
	} else {
		rep.Backup.Engine = e.Descriptor().ID
		rep.Backup.Records = e.Len()
		if err := e.db.View(func(tx *bbolt.Tx) error {
			if b := tx.Bucket(bucketAudit); b != nil {
				rep.Backup.Audit = b.Stats().KeyN
			}
			return nil
		}); err != nil {
			return rep, contract.AsError(err)
		}
	}
	if rep.Check, err = e.Check(ctx, false, nil); err != nil {
		return rep, err
	}
	if !rep.Check.Consistent {
		return rep, contract.EngineErr("the store restored in %s does not check out (see the report; `mnemo check --repair` rebuilds what is derived)", abs)
	}
	return rep, nil
}

// restoreFile writes a bbolt copy as dir's mnemo.db: into a file beside it
// first, synced, checked to be a mnemo store, then renamed into place.
func restoreFile(r io.Reader, dir string) (int64, error) {
	path := filepath.Join(dir, DBFile)
	tmp := path + ".restore"
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return 0, contract.ConfigErr("cannot restore into %s: %v", dir, err)
	}
	fail := func(err error) (int64, error) {
		_ = f.Close()
		_ = os.Remove(tmp)
		return 0, err
	}
	n, err := io.Copy(f, r)
	if err != nil {
		return fail(contract.EngineErr("cannot write %s: %v", tmp, err))
	}
	if err := f.Sync(); err != nil {
		return fail(contract.EngineErr("cannot write %s: %v", tmp, err))
	}
	if err := f.Close(); err != nil {
		return fail(contract.EngineErr("cannot write %s: %v", tmp, err))
	}
	if err := checkBackupFile(tmp); err != nil {
		_ = os.Remove(tmp)
		return 0, err
	}
	if err := os.Rename(tmp, path); err != nil {
		_ = os.Remove(tmp)
		return 0, contract.EngineErr("cannot restore into %s: %v", dir, err)
	}
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		_ = d.Close()
	}
	return n, nil
}

// checkBackupFile opens a restored bbolt file read-only and checks it is a
// whole mnemo store: bbolt's own consistency check, and the buckets.
func checkBackupFile(path string) error {
	if err := checkBoltLength(path); err != nil {
		return err
	}
	db, err := bbolt.Open(path, 0o600, &bbolt.Options{ReadOnly: true})
	if err != nil {
		return contract.Invalid("the backup is not a readable bbolt file (cut short?): %v", err)
	}
	defer db.Close()
	return db.View(func(tx *bbolt.Tx) error {
		var first error
		for err := range tx.Check() {
			if first == nil {
				first = err
			}
		}
		if first != nil {
			return contract.Invalid("the backup's bbolt file is damaged: %v", first)
		}
		meta := tx.Bucket(bucketMeta)
		if meta == nil || tx.Bucket(bucketRecords) == nil {
			return contract.Invalid("the backup is a bbolt file but not a mnemo store")
		}
		if v := meta.Get(keySchema); len(v) == 0 {
			return contract.Invalid("the backup's store names no schema version")
		} else if n, err := strconv.Atoi(string(v)); err != nil || n > schemaNumber() {
			return contract.Invalid("the backup's store has schema version %s; this mnemo reads up to %s", v, schemaVer)
		}
		return nil
	})
}

// checkBoltLength reads a bbolt file's meta pages and checks the file is as
// long as the newest valid one says (bbolt maps the file and would fault on
// a page past its end): a backup cut short is refused before it is opened.
func checkBoltLength(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return contract.EngineErr("cannot read %s: %v", path, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return contract.EngineErr("cannot read %s: %v", path, err)
	}
	const metaEnd = 80 // page header (16), then the meta through its checksum
	head := make([]byte, metaEnd)
	if _, err := f.ReadAt(head, 0); err != nil {
		return contract.Invalid("the backup is not a readable bbolt file (cut short?): %v", err)
	}
	pageSize := int64(binary.LittleEndian.Uint32(head[24:28]))
	if pageSize < 512 || pageSize > 1<<20 {
		return contract.Invalid("the backup is not a readable bbolt file: page size %d", pageSize)
	}
	var best struct {
		ok         bool
		txid, high uint64
	}
	for i := range int64(2) {
		m := make([]byte, metaEnd)
		if _, err := f.ReadAt(m, i*pageSize); err != nil {
			continue
		}
		if binary.LittleEndian.Uint32(m[16:20]) != 0xED0CDAED {
			continue
		}
		h := fnv.New64a()
		_, _ = h.Write(m[16:72])
		if h.Sum64() != binary.LittleEndian.Uint64(m[72:80]) {
			continue
		}
		txid, high := binary.LittleEndian.Uint64(m[64:72]), binary.LittleEndian.Uint64(m[56:64])
		if !best.ok || txid > best.txid {
			best.ok, best.txid, best.high = true, txid, high
		}
	}
	if !best.ok {
		return contract.Invalid("the backup is not a readable bbolt file: neither meta page is valid")
	}
	if want := int64(best.high) * pageSize; st.Size() < want {
		return contract.Invalid("the backup's bbolt file is cut short: %d bytes of %d", st.Size(), want)
	}
	return nil
}

// NamespaceCounts counts the records of each namespace, service sandboxes
// included (contract.NamespaceCounter), from the totals every write keeps.
func (e *Engine) NamespaceCounts(ctx context.Context) (map[string]int, error) {
	if err := e.enter(ctx); err != nil {
		return nil, err
	}
	defer e.leave()
	out := map[string]int{}
	err := e.db.View(func(tx *bbolt.Tx) error {
		return tx.Bucket(bucketTotals).ForEach(func(k, v []byte) error {
			if n := int(getU64(v)); n > 0 {
				out[string(k)] = n
			}
			return nil
		})
	})
	if err != nil {
		return nil, contract.AsError(err)
	}
	return out, nil
}
