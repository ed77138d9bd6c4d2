// Package bolt is mnemo's storage engine: bbolt holds the record (the truth),
// a Bleve index derived from it serves keyword search, and an in-memory table
// derived from it serves filters, explore counts and browse.
//
// A store is a directory holding mnemo.db (bbolt) and index/ (Bleve). Every
// write is one bbolt transaction that updates the record, its ordered keys, a
// monotonically increasing sequence number and an outbox entry; the Bleve
// batch for those records then carries the applied sequence, and applied
// outbox entries are pruned by a later write. On open the outbox is replayed;
// a missing, corrupt or outdated index is rebuilt from bbolt in the
// background while list, get, explore and browse keep working. During a
// rebuild, fetch and recall answer Unavailable with the progress (health says
// degraded), rather than serving a partial ranking.
package bolt

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	bbolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"

	"mnemo/contract"
	"mnemo/engine/bolt/internal/contentfile"
	"mnemo/engine/bolt/internal/feed"
	"mnemo/engine/bolt/internal/index"
	"mnemo/engine/bolt/internal/trigram"
	"mnemo/engine/retrieval"
	"mnemo/engine/retrieval/lexicon"
)

// File names inside a store directory, each written here once: the engine
// keeps DBFile, IndexDir and PIDFile; `mnemo serve` (package server) writes
// AddrFile while it serves the store (read back here to name the process
// that holds it), its owner token in TokenFile and its SSH host key in
// HostKeyFile.
const (
	DBFile      = "mnemo.db"
	IndexDir    = "index"
	PIDFile     = "mnemo.pid"
	AddrFile    = "serve.addr"
	TokenFile   = "serve.token"
	HostKeyFile = "ssh_host_ed25519"
)

const schemaVer = "13"

// schemaNumber is schemaVer as a number, to compare versions by (as
// strings "10" sorts before "9").
func schemaNumber() int {
	n, _ := strconv.Atoi(schemaVer)
	return n
}

var (
	bucketMeta    = []byte("meta")
	bucketRecords = []byte("records")
	bucketUpdated = []byte("by_updated")
	bucketCreated = []byte("by_created")
	bucketConf    = []byte("by_confidence")
	bucketOutbox  = []byte("outbox")
	// bucketTotals counts the live records of each namespace (printed
	// namespace -> u64), kept in every write transaction, so the record count
	// and an unfiltered browse total are known at open without the table.
	bucketTotals = []byte("ns_totals")

	allBuckets = [][]byte{bucketMeta, bucketRecords, bucketUpdated, bucketCreated, bucketConf, bucketOutbox, bucketVecBlocks, bucketTotals, feed.Bucket, feed.NSBucket}

	keySchema  = []byte("schema")
	keySeq     = []byte("seq")
	keyNextOrd = []byte("next_ord")
	keyRebuild = []byte("index_rebuild")
	// keyTotalsOK marks bucketTotals as exact; a store written before it
	// existed gets it once its table has loaded.
	keyTotalsOK = []byte("totals_ok")
	// keyFreelist marks a store whose bbolt freelist is persisted.
	keyFreelist = []byte("freelist_synced")
)

// Options configure a store. The zero value is usable.
type Options struct {
	// LockTimeout bounds the wait for another process's lock (default 1 s).
	LockTimeout time.Duration
	// Embedder embeds texts for vector and hybrid fetch (default: the
	// learned embedder, hashed n-grams plus vectors learned from the store's
	// own text in the background; see learned.go).
	Embedder retrieval.Embedder
	// Answerer writes recall answers (default: the extractive answerer).
	Answerer retrieval.Answerer
	// Conversation sets the levers hybrid fetch applies to a ranking of
	// conversation turns (default retrieval.DefaultConvConfig(); a zero
	// config turns them off).
	Conversation *retrieval.ConvConfig
	// FetchModes are the modes the engine declares and serves (default all three).
	FetchModes []contract.FetchMode
	// Logger receives background progress and failures (default: discard).
	Logger *slog.Logger
	// Clock stamps created_at and updated_at (default time.Now).
	Clock func() time.Time
	// RecordCache is how many decoded records browse keeps for repeated pages
	// (default 4096; negative disables the cache).
	RecordCache int
	// SyncRebuildBelow rebuilds a missing index during Open when the store
	// holds fewer records than this (default 2000), so small stores open ready.
	SyncRebuildBelow int
	// RewriteFilledAt is the fewest records a store filled from empty by
	// this engine's bulk loads must hold for Close to rewrite it with full
	// pages (default RewriteFilledAt; tests set fewer).
	RewriteFilledAt int
	// IndexMergeAfter is how many documents catch-ups must have applied
	// before the search index is merged in the background (default
	// mergeAfterDocs; negative: never).
	IndexMergeAfter int
	// ChangeRetention is how long the change feed keeps its changes
	// (default: at least 7 days and at least 1,000,000 changes).
	ChangeRetention contract.ChangeRetention

	// ReadOnly opens the store for reading only (bbolt's shared lock): for
	// a store this user cannot write. Nothing is written, writes answer
	// Unauthorized, and the search index must be usable as it is.
	ReadOnly bool

	// loadGate, when set, holds the background table load until it is
	// closed (tests observe a store before its table has loaded).
	loadGate <-chan struct{}
	// coldScanBudget, when positive, replaces coldScanBudget (tests).
	coldScanBudget int
	// clusterChunk, when positive, replaces clusterChunk (tests).
	clusterChunk int
	// vectorCodesAt, when positive, replaces vectorCodesAt (tests).
	vectorCodesAt int
}

// LockedError says another process holds the store.
type LockedError struct {
	Path string
	PID  int
	Addr string
}

func (e *LockedError) Error() string {
	pid := "unknown"
	if e.PID > 0 {
		pid = strconv.Itoa(e.PID)
	}
	return fmt.Sprintf("store %s is locked by another process (pid %s)", e.Path, pid)
}

// openDB opens the bbolt file. `mnemo compact` renames a new file over the
// old one while it holds the old one's lock: a process that was waiting for
// that lock would get it on the old, unlinked file and write into nothing,
// so an open whose path now names another file than the one it locked
// opens again.
func openDB(path string, lockWait time.Duration, readOnly bool) (*bbolt.DB, error) {
	for {
		before, _ := os.Stat(path)
		db, err := bbolt.Open(path, 0o600, &bbolt.Options{
			// The freelist is synced: without it bbolt rebuilds the freelist at
			// every open by walking every page, which made opening cost time
			// (and resident memory) in proportion to the store's size.
			Timeout: lockWait, FreelistType: bbolt.FreelistMapType, ReadOnly: readOnly,
		})
		if err != nil {
			return nil, err
		}
		after, err := os.Stat(path)
		if before == nil || err == nil && os.SameFile(before, after) {
			return db, nil
		}
		_ = db.Close()
	}
}

// IndexStatus reports the search index's state.
type IndexStatus struct {
	// State is "ready", "catching up" (writes the index has not applied
	// yet: after a bulk load, Behind of them) or "rebuilding" (Done of
	// Total records).
	State      string
	Done       int
	Total      int
	AppliedSeq uint64
	Behind     uint64
}

// tableLife is the table's life in an engine: loaded (in the background for
// a large store), saved to its file, read back from it.
type tableLife struct {
	// ready is closed once the table holds every record (or loading
	// failed, err says why). Until then the cold paths answer from bbolt
	// alone and everything else waits.
	ready  chan struct{}
	wanted chan struct{} // closed (once, by want) when a call waits for the table
	want   sync.Once
	loaded atomic.Bool
	err    atomic.Pointer[string]
	// saved is the feed position the saved table describes, when savedOK
	// (guarded by mu).
	saved   uint64
	savedOK bool
	// savedDropped is the table's dropped count when it was saved.
	savedDropped int
	// saving: a background save of the table is pending or running.
	saving atomic.Bool
	// fromFile: the table was read from the saved file (and replayed).
	fromFile bool
}

// vectorLife is the stored vectors' life in an engine.
type vectorLife struct {
	// store is what is known of the stored vectors (vectors.go; nil
	// without an embedder), guarded by mu.
	store *vectorStore
	ready chan struct{} // closed once the stored vectors are loaded
	// complete is closed once every record has its vector in the index.
	complete chan struct{}
	load     sync.Once
}

// indexLife is the search index's life in an engine.
type indexLife struct {
	// applyMu serialises applying the outbox to the index and the vectors.
	applyMu sync.Mutex
	// mu is the index's lock: searches hold it to read, and replacing or
	// closing the index (ix) holds it to write, after applyMu, so an apply
	// (under applyMu) never sees the index change either.
	mu      sync.RWMutex
	applied atomic.Uint64
	// rebuilding: the index is being rebuilt from the records; done of
	// total so far; err why the index failed.
	rebuilding atomic.Bool
	done       atomic.Int64
	total      atomic.Int64
	err        atomic.Pointer[string]
	// sinceMerge counts the documents catch-ups applied since the index
	// was last merged (maybeMergeIndex); merging is set while one runs.
	sinceMerge atomic.Int64
	merging    atomic.Bool
}

// Engine is a store opened for reading and writing. It is safe for concurrent use.
type Engine struct {
	// kinds is the lexicon's nouns the store holds, for the kind lever of
	// conversation fetch, and the learned model it was made from.
	kinds struct {
		mu    sync.Mutex
		model *retrieval.LearnedModel
		held  *lexicon.Held
	}
	dir string
	db  *bbolt.DB
	// codec encodes and decodes records with the store's record dictionaries.
	codec recordCodec
	// rk is how the store keys its records (reckeys.go).
	rk    recordKeys
	ix    *index.Index
	opts  Options
	desc  contract.Descriptor
	log   *slog.Logger
	clock func() time.Time

	// mu serialises writers and lets readers see the table and a bbolt
	// snapshot of the same state: writers hold it across commit and table update.
	mu      sync.RWMutex
	t       *table
	seq     uint64
	nextOrd uint32
	tri     *trigram.Index
	cache   *recordCache
	// totalsOK: bucketTotals is exact (guarded by mu).
	totalsOK bool
	// matched keeps the rows the last explore filter matched (matched.go).
	matched matchedCache
	// largeStore: the table loads in the background (the store held
	// SyncRebuildBelow records or more at open), so a new process answers
	// the root explore from bucketExplore until it has.
	largeStore bool
	// feed is the change feed's state (changes.go).
	feed feed.Feed

	// tables is the table's life: loaded, saved, read from its file.
	tables tableLife

	// idx is the search index's life: its locks, how far it has applied
	// the outbox, its rebuilds.
	idx       indexLife
	committed atomic.Uint64 // e.seq, readable without mu
	// openedSeq is the seq the store had when this process opened it.
	openedSeq uint64

	embedder retrieval.Embedder
	learn    *learnState // the learned embedder's learner (learned.go), or nil
	// clusters is the store's clustering in this process (clusters.go),
	// nil until KeepClusters.
	clusters atomic.Pointer[clusterState]
	answerer retrieval.Answerer
	// vec is the stored vectors' life.
	vec vectorLife
	// vecScan is how vector search scans a large store.
	vecScan vecScan
	// derivedReady is closed once the open's background work (table,
	// content index) has ended.
	derivedReady chan struct{}

	// scannedSince counts the records background scans read since their
	// pages were last released (see scanned).
	scannedSince atomic.Int64

	// bulk: a bulk load is running (SetBulk); the index worker waits.
	bulk atomic.Bool
	// ordered: the ordered keys a bulk load deferred (ordered.go).
	ordered orderedState
	// bulkUsed: a bulk load ran in this process (its pages are dropped
	// from the page cache at Close).
	bulkUsed atomic.Bool
	// bulkTail is closed when the last bulk write started (StartBulk) has
	// committed: the next one commits after it.
	bulkMu   sync.Mutex
	bulkTail chan struct{}

	// rewriteNext: mnemo.db is rewritten right after Close
	// (RewriteAfterClose), so Close leaves its pages cached.
	rewriteNext atomic.Bool
	// filledInBulk: this engine's first bulk load began on a store that
	// had never held a record, so the store was written in one pass and
	// Close rewrites it with full pages (RewriteFilledAt).
	filledInBulk atomic.Bool
	// rewrote is what Close's rewrite did (RewriteReport), once it has.
	rewrote atomic.Pointer[RewriteReport]

	kick    chan struct{}
	closing chan struct{}
	// hurry ends a bulk load's grace at once (Settle: the loader is done).
	hurry chan struct{}
	// calls counts the calls inside the engine; Close waits for them.
	calls   *callGate
	bg      sync.WaitGroup
	closed  atomic.Bool
	closeMu sync.Mutex
}

var (
	_ contract.Engine        = (*Engine)(nil)
	_ contract.BulkPipeliner = (*Engine)(nil)
)

// Open opens (creating if needed) the store in dir.
func Open(dir string, opts Options) (*Engine, error) {
	if opts.LockTimeout <= 0 {
		opts.LockTimeout = time.Second
	}
	if opts.FetchModes == nil {
		opts.FetchModes = append([]contract.FetchMode(nil), contract.FetchModes()...)
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Clock == nil {
		opts.Clock = time.Now
	}
	if opts.SyncRebuildBelow == 0 {
		opts.SyncRebuildBelow = 2000
	}
	if opts.RewriteFilledAt == 0 {
		opts.RewriteFilledAt = RewriteFilledAt
	}
	needVectors := false
	for _, m := range opts.FetchModes {
		if m == contract.ModeVector || m == contract.ModeHybrid {
			needVectors = true
		}
	}
	if opts.Embedder == nil && needVectors {
		opts.Embedder = retrieval.NewLearnedEmbedder(retrieval.DefaultLearnConfig())
	}
	if opts.Answerer == nil {
		opts.Answerer = retrieval.NewExtractive()
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, contract.ConfigErr("store directory %s: %w", dir, err)
	}
	if opts.ReadOnly {
		if _, err := os.Stat(filepath.Join(abs, DBFile)); err != nil {
			return nil, contract.ConfigErr("open store %s read-only: %w", abs, err)
		}
	} else if err := os.MkdirAll(abs, 0o700); err != nil {
		return nil, contract.ConfigErr("create store directory %s: %w", abs, err)
	}
	lockWait := opts.LockTimeout
	if servedByLiveProcess(abs) {
		// Every command on a served store used to wait the whole timeout
		// (a second) before attaching to the server.
		lockWait = min(lockWait, servedLockWait)
	}
	db, err := openDB(filepath.Join(abs, DBFile), lockWait, opts.ReadOnly)
	if err != nil {
		if errors.Is(err, berrors.ErrTimeout) {
			return nil, lockedError(abs)
		}
		return nil, contract.EngineErr("open store %s: %w", abs, err)
	}
	e := &Engine{
		dir: abs, db: db, opts: opts, log: opts.Logger, clock: opts.Clock, t: newTable(),
		embedder: opts.Embedder, answerer: opts.Answerer,
		kick: make(chan struct{}, 1), closing: make(chan struct{}), hurry: make(chan struct{}, 1), calls: newCallGate(),
		cache: newRecordCache(opts.RecordCache), vec: vectorLife{ready: make(chan struct{}), complete: make(chan struct{})}, tables: tableLife{ready: make(chan struct{}), wanted: make(chan struct{})},
		derivedReady: make(chan struct{}), vecScan: defaultVecScan(),
	}
	e.desc = contract.Descriptor{
		ID: "mnemo", Label: "mnemo (bbolt + Bleve)",
		Description:   "Local memory store: bbolt is the record, Bleve the keyword index, int8 vector search over blocks mapped from the store.",
		FetchModes:    append([]contract.FetchMode(nil), opts.FetchModes...),
		Consolidation: contract.ConsolidationOnDemand,
	}
	if opts.ReadOnly {
		// Nothing is written: no pid file (another user's process may hold
		// the lock of a store this one only reads).
	} else if err := os.WriteFile(filepath.Join(abs, PIDFile), []byte(strconv.Itoa(os.Getpid())+"\n"), 0o600); err != nil {
		_ = db.Close()
		return nil, contract.EngineErr("write %s: %w", PIDFile, err)
	}
	if err := e.init(); err != nil {
		e.abort()
		return nil, err
	}
	return e, nil
}

// servedLockWait is the lock wait on a store a live server holds.
const servedLockWait = 50 * time.Millisecond

// PIDOf is the process the pid file of the store in dir names: the one that
// last opened it for writing (0: none).
func PIDOf(dir string) int {
	b, err := os.ReadFile(filepath.Join(dir, PIDFile))
	if err != nil {
		return 0
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return pid
}

func lockedError(dir string) error {
	le := &LockedError{Path: dir, PID: PIDOf(dir)}
	if b, err := os.ReadFile(filepath.Join(dir, AddrFile)); err == nil {
		le.Addr = strings.TrimSpace(string(b))
	}
	return le
}

// enterWrite is enter for a write: a store opened read-only refuses it.
func (e *Engine) enterWrite(ctx context.Context) error {
	if e.opts.ReadOnly {
		return contract.Unauthorized("store %s is open read-only (this user cannot write it); nothing was written", e.dir)
	}
	return e.enter(ctx)
}

// abort undoes a failed open: background work started so far is stopped first.
func (e *Engine) abort() {
	e.closed.Store(true)
	close(e.closing)
	e.bg.Wait()
	if e.ix != nil {
		_ = e.ix.Close()
	}
	if !e.opts.ReadOnly {
		_ = os.Remove(filepath.Join(e.dir, PIDFile))
	}
	_ = e.db.Close()
}

// init creates the buckets, loads the table and opens the index.
func (e *Engine) init() error {
	ready := false
	_ = e.db.View(func(tx *bbolt.Tx) error {
		ready = true
		for _, b := range allBuckets {
			ready = ready && tx.Bucket(b) != nil
		}
		meta := tx.Bucket(bucketMeta)
		ready = ready && string(meta.Get(keySchema)) == schemaVer && meta.Get(keyFreelist) != nil
		return nil
	})
	// A write transaction (and its fsync) only when the layout needs one.
	var err error
	if !ready && e.opts.ReadOnly {
		return contract.ConfigErr("store %s needs its layout brought up to date, which needs write access: open it once as a user who can write it", e.dir)
	}
	if !ready {
		err = e.db.Update(e.prepareLayout)
	}
	if err != nil {
		return contract.AsError(err)
	}
	return e.load()
}

// prepareLayout creates the buckets and the schema mark, backfilling indexes
// a store written by an earlier layout lacks.
func (e *Engine) prepareLayout(tx *bbolt.Tx) error {
	backfillConf := tx.Bucket(bucketRecords) != nil && tx.Bucket(bucketConf) == nil
	for _, b := range allBuckets {
		if _, err := tx.CreateBucketIfNotExists(b); err != nil {
			return err
		}
	}
	if k, _ := tx.Bucket(bucketRecords).Cursor().First(); k == nil {
		// No record yet: key them by their names (reckeys.go).
		if err := tx.Bucket(bucketMeta).Put(keyRecordNames, []byte{1}); err != nil {
			return err
		}
	}
	if backfillConf {
		// A store written before the confidence index existed.
		if err := backfillConfidence(tx); err != nil {
			return err
		}
	}
	meta := tx.Bucket(bucketMeta)
	// A store written when the freelist was not synced gets it written by
	// this commit, once.
	if err := meta.Put(keyFreelist, []byte{1}); err != nil {
		return err
	}
	switch v := meta.Get(keySchema); {
	case v == nil, string(v) == "1", string(v) == "2", string(v) == "3", string(v) == "4", string(v) == "5", string(v) == "6", string(v) == "7", string(v) == "8":
		// Version 1 lacked the namespace totals (filled in the background
		// once the table has loaded) and the synced freelist; version 2 the
		// change feed (its bucket is created above, empty: the feed starts
		// at the migration); version 3 wrote records uncompressed (read as
		// they are; mnemo compact rewrites them); version 4 kept a vector
		// per record keyed by id (migrated into blocks when vectors first
		// load); version 5 had no record dictionaries (its records are read
		// as they are; the first write that finds the store without one
		// makes it, and mnemo compact rewrites the older records against
		// it); version 6 always had every record's ordered keys; version 7
		// held every vector as int8 (a large store's blocks are coded when
		// its vectors load); version 8 wrote every change feed entry long
		// (read as they are). Older binaries refuse version 9, since they
		// would not keep the totals, the feed or the vector blocks, read a
		// compressed record, know that a bulk load's ordered keys may still
		// be missing (keyOrderedFrom), read a block of codes, or read a
		// compact feed entry; and before version 9 the ordered keys held
		// the ids' digits (put again in the background, rekeyOrdered).
		if err := rekeyOrdered(tx); err != nil {
			return err
		}
		return meta.Put(keySchema, []byte(schemaVer))
	case string(v) == "9", string(v) == "10":
		// Version 9 wrote a large store's vectors as four-bit codes (read
		// as they are; new blocks are five-level codes), and versions 9
		// and 10 a by_updated key for every record, where version 11 keeps
		// only the moved records' and marks them in by_created (ordered.go):
		// the keys are put again in the background (rekeyOrdered). Older
		// binaries refuse version 11: they would take a block of
		// five-level codes for one they cannot read and embed its rows
		// again, and miss every record by_updated no longer names.
		if err := rekeyOrdered(tx); err != nil {
			return err
		}
		return meta.Put(keySchema, []byte(schemaVer))
	case string(v) == "11", string(v) == "12":
		// Version 11 wrote the change feed an entry a key, and version 12
		// in blocks of whole entries (both read as they are; new entries go
		// in blocks of shared prefixes, internal/feed); versions 11 and 12
		// wrote every record's header fixed (record layout 5; read as they
		// are, new records are written in layout 6, codec.go) and keyed
		// records by their digits (kept; a new store keys them by name,
		// reckeys.go). Older binaries refuse version 13: they would take a
		// block for a broken entry, a record of layout 6 for a corrupt one,
		// or find no record under its digits.
		return meta.Put(keySchema, []byte(schemaVer))
	case string(v) != schemaVer:
		return contract.ConfigErr("store %s has schema version %s; this mnemo reads version %s", e.dir, v, schemaVer)
	}
	return nil
}

// load reads the store's counters, opens the index and the vectors, and
// loads the table: during Open for a small store, in the background for a
// large one, so opening costs the same at any size. Nothing proportional to
// the record count runs before Open returns on a large store.
func (e *Engine) load() error {
	rebuildMarked := false
	err := e.db.View(func(tx *bbolt.Tx) error {
		meta := tx.Bucket(bucketMeta)
		e.seq = getU64(meta.Get(keySeq))
		e.committed.Store(e.seq)
		e.openedSeq = e.seq
		e.nextOrd = uint32(getU64(meta.Get(keyNextOrd)))
		rebuildMarked = meta.Get(keyRebuild) != nil
		e.totalsOK = meta.Get(keyTotalsOK) != nil
		e.loadFeed(meta)
		e.loadOrdered(meta)
		e.rk = recordKeysOf(meta)
		return e.codec.load(meta)
	})
	if err != nil {
		return contract.EngineErr("load store %s: %w", e.dir, err)
	}
	e.tri = trigram.New(contentfile.Path(e.dir), e.contentCorrupt)
	if err := e.openIndex(rebuildMarked); err != nil {
		return err
	}
	if e.embedder != nil {
		e.vec.store = newVectorStore(e.embedder.Dim())
		if err := e.openLearned(); err != nil {
			return err
		}
	}
	// Ordinals are never reused, so nextOrd bounds the record count.
	if int(e.nextOrd) < e.opts.SyncRebuildBelow {
		if err := e.loadSmall(); err != nil {
			return err
		}
		e.startFinishingKeys()
		return nil
	}
	e.largeStore = true
	// Advises the mapping (no fault-around) before anything reads it.
	e.releasePages()
	e.goBackground(func() {
		defer close(e.derivedReady)
		if err := e.loadTable(); err != nil {
			if e.closed.Load() {
				// A short command closed the store before its table was
				// needed: the load stopped, nothing failed.
				e.log.Debug("the table's load stopped at close", "err", err)
				return
			}
			e.log.Error("loading the store's tables failed", "err", err)
			return
		}
		if err := e.buildTrigrams(); err != nil {
			e.log.Error("content index build failed", "err", err)
		}
	})
	// A large store's vectors load on the first vector or hybrid search
	// (ensureVectors): a process that only browses never holds them.
	if e.idx.rebuilding.Load() {
		e.goBackground(func() {
			if err := e.rebuildIndex(); err != nil {
				e.setIndexErr(err)
				e.log.Error("index rebuild failed", "err", err)
			}
		})
	}
	e.goBackground(e.indexWorker)
	// Index work left by the last process is applied in the background;
	// fetch applies what it needs itself.
	e.kickIndex()
	e.startFinishingKeys()
	return nil
}

// loadSmall opens a small store ready: table, content index, search index
// and vectors before Open returns.
func (e *Engine) loadSmall() error {
	e.tables.want.Do(func() { close(e.tables.wanted) })
	if err := e.loadTable(); err != nil {
		return err
	}
	if err := e.buildTrigrams(); err != nil {
		return err
	}
	if e.idx.rebuilding.Load() {
		if err := e.rebuildIndex(); err != nil {
			return err
		}
	} else if err := e.flushIndex(context.Background()); err != nil {
		return err
	}
	if e.vec.store != nil {
		e.vec.load.Do(func() {})
		if err := e.loadVectors(); err != nil {
			return err
		}
		close(e.vec.ready)
		if err := e.embedMissing(context.Background()); err != nil {
			return err
		}
		close(e.vec.complete)
	}
	close(e.derivedReady)
	e.goBackground(e.indexWorker)
	return nil
}

func backfillConfidence(tx *bbolt.Tx) error {
	conf := tx.Bucket(bucketConf)
	var codec recordCodec // a store this old has no record dictionary
	return tx.Bucket(bucketRecords).ForEach(func(k, v []byte) error {
		s, err := codec.decode(v, partHeader, parseNS)
		if err != nil {
			return fmt.Errorf("record %s: %w", k, err)
		}
		if s.kind != contract.KindLearning {
			return nil
		}
		return conf.Put(confKey(s.confidence, string(k)), ordValue(s.ord))
	})
}

// untilClosed is parent, ended also when the engine closes.
func (e *Engine) untilClosed(parent context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(parent)
	go func() {
		select {
		case <-e.closing:
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, cancel
}

func (e *Engine) goBackground(f func()) {
	e.bg.Add(1)
	go func() {
		defer e.bg.Done()
		f()
	}()
}

// openIndex opens the Bleve index and decides whether it must be rebuilt.
func (e *Engine) openIndex(rebuildMarked bool) error {
	dir := filepath.Join(e.dir, IndexDir)
	if e.opts.ReadOnly {
		ix, err := index.OpenReadOnly(dir)
		if err != nil {
			return contract.ConfigErr("store %s is read-only for this user and its search index cannot be used as it is (%v): open it once as a user who can write it", e.dir, err)
		}
		e.ix = ix
		applied, err := ix.AppliedSeq()
		if err != nil {
			return contract.EngineErr("read index: %w", err)
		}
		e.idx.applied.Store(applied)
		return nil
	}
	if rebuildMarked {
		// A rebuild was interrupted: whatever the index holds is partial.
		if err := os.RemoveAll(dir); err != nil {
			return contract.EngineErr("remove partial index: %w", err)
		}
	}
	ix, err := index.Open(dir)
	if err != nil {
		return contract.EngineErr("open index: %w", err)
	}
	e.ix = ix
	if ix.NeedsRebuild() {
		e.idx.rebuilding.Store(true)
		return nil
	}
	applied, err := ix.AppliedSeq()
	if err != nil || applied > e.seq {
		// The index describes writes this record never made: it belongs to
		// another copy of the store, so start it over.
		_ = ix.Close()
		if err := os.RemoveAll(dir); err != nil {
			return contract.EngineErr("remove foreign index: %w", err)
		}
		if e.ix, err = index.Open(dir); err != nil {
			return contract.EngineErr("open index: %w", err)
		}
		e.idx.rebuilding.Store(true)
		return nil
	}
	e.idx.applied.Store(applied)
	return nil
}

// RewriteAfterClose tells the engine that its caller rewrites mnemo.db as
// soon as it has closed it (`mnemo import`'s full-page rewrite of a store it
// filled, perhaps in its finisher once the store has settled): Close then
// leaves the file's pages in the page cache, where it would drop them, for
// the copy to read, and does not rewrite the store itself (RewriteFilledAt).
// Dropped, the pages were read back from the disk one page at a time: 2 GB
// at 1M, most of the copy's 36 s. Compact drops the pages of the file it
// writes.
func (e *Engine) RewriteAfterClose() { e.rewriteNext.Store(true) }

// RewriteFilledAt is the fewest records a store filled from empty by bulk
// loads (SetBulk) must hold, by default (Options.RewriteFilledAt), for Close
// to rewrite it with full pages (Compact), unless the caller does
// (RewriteAfterClose). Such a store was
// written in one pass, and a pass leaves the records' pages about two
// thirds full (their ids are random, and bbolt splits a full page in two)
// and the file's freed pages in place: the 1M bench store's mnemo.db took
// 1,790 MB as written, 1,310 rewritten. Below it the rewrite saves little.
const RewriteFilledAt = 10_000

// rewritesAtClose tells whether Close rewrites the store with full pages:
// it was filled from empty by bulk loads in this engine, to
// RewriteFilledAt records or more, no caller took the rewrite on, and the
// work the loads deferred is done (the search index caught up, every
// ordered key put), as `mnemo import`'s finisher rewrites only a store it
// has settled: work left for the next process would write the pages again.
// The caller holds mu.
func (e *Engine) rewritesAtClose() bool {
	return e.filledInBulk.Load() && !e.rewriteNext.Load() && !e.opts.ReadOnly && int(e.nextOrd) >= e.opts.RewriteFilledAt &&
		!e.keysDeferred() && e.idx.applied.Load() >= e.committed.Load()
}

// Close stops background work and closes the store. Acknowledged writes are
// already durable; index work not yet applied is replayed at the next open.
func (e *Engine) Close() error {
	e.closeMu.Lock()
	defer e.closeMu.Unlock()
	if e.closed.Swap(true) {
		return nil
	}
	// Waits (for the table, the vectors, the index) end when closing does;
	// then the calls inside finish before the files close under them.
	close(e.closing)
	e.calls.shutAndWait()
	e.bg.Wait()
	// A store that grew large in this process (an import into a new store)
	// is saved as a large one: the next process opens it as large, and
	// would otherwise load its table from every record (12–19 s at 1M) and
	// build its content index from every record (a 100k store's next
	// browsing process then peaked at 321 MB). Every background worker has
	// stopped, so the flag changes under no one.
	if e.opts.ReadOnly {
		e.tri.Close()
		e.idx.applyMu.Lock()
		e.idx.mu.Lock()
		ierr := e.ix.Close()
		e.idx.mu.Unlock()
		e.idx.applyMu.Unlock()
		return errors.Join(ierr, e.db.Close())
	}
	e.mu.Lock()
	grown := !e.largeStore && e.tables.loaded.Load() && int(e.nextOrd) >= e.opts.SyncRebuildBelow
	if grown {
		e.largeStore = true
	}
	e.mu.Unlock()
	if grown {
		if err := e.saveGrownContent(); err != nil {
			e.log.Error("saving the content index failed; the next open builds it from the records", "err", err)
		}
	}
	e.tri.Close()
	e.idx.applyMu.Lock()
	e.idx.mu.Lock()
	ierr := e.ix.Close()
	e.idx.mu.Unlock()
	e.idx.applyMu.Unlock()
	// The outbox's entries the index has applied go now, not with a next
	// write: after an import whose last changes the index took one by one,
	// 77 of them (4 MB) were left in the store it rewrote with full pages.
	if err := e.pruneOutbox(); err != nil {
		e.log.Error("pruning the outbox failed; the next write prunes it", "err", err)
	}
	e.mu.Lock()
	rewrite := e.rewritesAtClose()
	var verr error
	if e.vec.store != nil && len(e.vec.store.pending) > 0 {
		verr = e.db.Update(func(tx *bbolt.Tx) error { return e.vec.store.writeBlocks(tx, nil, true) })
	}
	// The next process on this store answers the root explore at once,
	// and reads the table back instead of decoding every record.
	xerr := e.saveExploreEntries()
	if err := e.saveTableIfBehind(); err != nil {
		e.log.Error("saving the table failed; the next open loads it from the records", "err", err)
	}
	e.mu.Unlock()
	if verr != nil {
		e.log.Error("saving vectors failed; they are recomputed at the next open", "err", verr)
	}
	if xerr != nil {
		e.log.Error("saving the root explore failed; the next open waits for its table", "err", xerr)
	}
	_ = os.Remove(filepath.Join(e.dir, PIDFile))
	derr := e.db.Close()
	if grown || e.bulkUsed.Load() {
		// A file written in bulk sits in the page cache in large folios,
		// and a fault on a memory map of it maps the whole folio: the next
		// browsing process of a 100k store freshly imported held 183 MB
		// against 79 once the pages came back one read at a time (as after
		// mnemo compact, which drops them too).
		for _, f := range []string{DBFile, tableFileName, contentfile.Name} {
			if f == DBFile && (e.rewriteNext.Load() || rewrite) {
				continue
			}
			dropCachedPages(filepath.Join(e.dir, f))
		}
	}
	if ierr != nil {
		return contract.EngineErr("close index: %w", ierr)
	}
	if derr != nil {
		return contract.EngineErr("close store: %w", derr)
	}
	if rewrite {
		// The store is let go (its lock, its pid file), so another process
		// may take it first: then it stays as written, whole, and
		// `mnemo compact` rewrites it later.
		started := time.Now()
		rep, err := Compact(e.dir)
		if err != nil {
			e.log.Warn("the store filled in bulk was not rewritten with full pages", "err", err)
		} else {
			took := time.Since(started)
			e.rewrote.Store(&RewriteReport{CompactReport: rep, Took: took})
			e.log.Info("rewrote the store filled in bulk with full pages", "before", rep.Before, "after", rep.After,
				"seconds", took.Seconds())
		}
	}
	return nil
}

// RewriteReport is what Close's rewrite of a store filled in bulk did.
type RewriteReport struct {
	CompactReport
	Took time.Duration
}

// Rewrote answers what Close's rewrite of a store filled in bulk did
// (RewriteFilledAt), and false when Close has not rewritten the store.
func (e *Engine) Rewrote() (RewriteReport, bool) {
	if r := e.rewrote.Load(); r != nil {
		return *r, true
	}
	return RewriteReport{}, false
}

// Dir is the store directory.
func (e *Engine) Dir() string { return e.dir }

// Descriptor describes the engine.
func (e *Engine) Descriptor() contract.Descriptor {
	d := e.desc
	d.FetchModes = append([]contract.FetchMode(nil), e.desc.FetchModes...)
	return d
}

// Health is ok, degraded while the index is rebuilt or failing, down when closed.
func (e *Engine) Health(ctx context.Context) contract.Health {
	if e.closed.Load() {
		return contract.Health{State: contract.HealthDown, Reason: "the store is closed"}
	}
	if e.idx.rebuilding.Load() {
		return contract.Health{State: contract.HealthDegraded, Reason: e.rebuildMessage()}
	}
	if p := e.idx.err.Load(); p != nil {
		return contract.Health{State: contract.HealthDegraded, Reason: *p}
	}
	return contract.Health{State: contract.HealthOK}
}

// Len counts every record the store holds, service sandboxes included (the
// contract's reads leave sandboxes out unless a reach names them; `mnemo info`
// reports this count).
func (e *Engine) Len() int {
	if !e.tables.loaded.Load() {
		n, ok := 0, false
		e.mu.RLock()
		_ = e.db.View(func(tx *bbolt.Tx) error {
			n, ok = e.coldTotals(tx, nil, true)
			return nil
		})
		e.mu.RUnlock()
		if ok {
			return n
		}
		_ = e.waitTable(context.Background())
	}
	e.mu.RLock()
	defer e.mu.RUnlock()
	return e.t.live
}

// IndexStatus reports whether the search index is ready, how far behind
// the writes a catch-up is, and how far a rebuild got.
func (e *Engine) IndexStatus() IndexStatus {
	applied := e.idx.applied.Load()
	st := IndexStatus{State: "ready", AppliedSeq: applied}
	switch committed := e.committed.Load(); {
	case e.idx.rebuilding.Load():
		st.State = "rebuilding"
		st.Done = int(e.idx.done.Load())
		st.Total = int(e.idx.total.Load())
	case committed > applied+gatherWrites:
		// A few writes behind is the index worker's usual gathering; a
		// backlog (a bulk load's) is worth saying.
		st.State, st.Behind = "catching up", committed-applied
	}
	return st
}

// IndexSegments is how many segments the search index answers from (tests,
// mnemo check).
func (e *Engine) IndexSegments() int {
	e.idx.mu.RLock()
	defer e.idx.mu.RUnlock()
	if e.ix == nil {
		return 0
	}
	return e.ix.SegmentCount()
}

// WaitIndex waits until every derived structure is ready (the table, the
// ordered keys a bulk load deferred, the content index, the vectors) and the search index has applied every write
// made before the call, and merged its segments if the catch-up called for it.
func (e *Engine) WaitIndex(ctx context.Context) error {
	if err := e.enter(ctx); err != nil {
		return err
	}
	defer e.leave()
	if err := e.waitTable(ctx); err != nil {
		return err
	}
	for e.idx.rebuilding.Load() || e.bulk.Load() || !e.tri.Ready() {
		if e.closed.Load() {
			return contract.Unavailable("the store is closed")
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(5 * time.Millisecond):
		}
	}
	if err := e.finishOrdered(ctx); err != nil {
		return err
	}
	if err := e.flushIndex(ctx); err != nil {
		return err
	}
	// A merge the catch-up started (maybeMergeIndex) is part of it.
	for e.idx.merging.Load() {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-e.closing:
			return contract.Unavailable("the store is closed")
		case <-time.After(5 * time.Millisecond):
		}
	}
	select {
	case <-e.derivedReady:
		return nil
	case <-e.closing:
		return contract.Unavailable("the store is closed")
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (e *Engine) rebuildMessage() string {
	total := e.idx.total.Load()
	if total == 0 {
		// The rebuild has not counted the records yet ("0 of 0" said
		// nothing a user could use).
		return "the search index is being rebuilt (starting)"
	}
	return fmt.Sprintf("the search index is being rebuilt (%d of %d)", e.idx.done.Load(), total)
}

func (e *Engine) setIndexErr(err error) {
	if err == nil {
		e.idx.err.Store(nil)
		return
	}
	msg := "the search index failed to update: " + err.Error()
	e.idx.err.Store(&msg)
}

func getU64(b []byte) uint64 {
	if len(b) != 8 {
		return 0
	}
	var v uint64
	for _, c := range b {
		v = v<<8 | uint64(c)
	}
	return v
}

func putU64(v uint64) []byte { return seqKey(v) }
