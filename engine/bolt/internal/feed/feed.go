package feed

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	bbolt "go.etcd.io/bbolt"

	"mnemo/contract"
	"mnemo/engine/bolt/internal/idkey"
)

// Bucket is the feed: the seq (u64 big-endian) of a block's first entry ->
// the block, entries of consecutive seqs (blocks.go). A store of schema 11
// or earlier holds an entry a key: read as a block of one.
var Bucket = []byte("changes")

// NSBucket names the namespaces of compact entries by code, both ways:
// 'n'+namespace -> code (u64 big-endian) for the writers, 'c'+code ->
// namespace for the readers. A code, once committed, names its namespace
// for good (the bucket's sequence hands them out), so readers cache them.
// Codes are never pruned: namespaces name places, not a record's content,
// and a store holds few.
var NSBucket = []byte("changes_ns")

// An entry is op u8, status u8, at u64 (unix ms), then either
//
//	len(id) u8 (< compactEntry), id, namespace             (a long entry)
//	compactEntry u8, id as its 20 bytes, namespace code uvarint (a compact entry)
//
// A record's id is 40 lowercase hex digits (its fingerprint), so entries are
// compact from schema 9 on: 32 bytes (a namespace code under 128) where a
// long one took 51 plus its namespace (at 1M, with bbolt's own bytes, the
// feed took 100 bytes a change, 58 now). A
// long entry is still read, and written for an id of another form (a
// store's own ids never are) or where the store has no NSBucket.
const (
	compactEntry = 0xFF
	idBytes      = idkey.Len
)

// The meta keys of the feed's counters.
var (
	keySeq    = []byte("feed_seq")
	keyPruned = []byte("feed_pruned")
)

// pruneBatch bounds the entries one write transaction prunes.
const pruneBatch = 1024

// StatusCodes are the one-byte status codes the store's records use, which
// entries use too.
type StatusCodes struct {
	Code   func(contract.Status) uint8
	ByCode []contract.Status
}

// Feed is the engine's view of the feed. The writer's seq is guarded by the
// engine's writers' lock; Head and Pruned are readable without it.
type Feed struct {
	retention contract.ChangeRetention
	codes     StatusCodes
	seq       uint64
	head      atomic.Uint64
	pruned    atomic.Uint64
	signal    contract.ChangeSignal
	// pending are the ids the transaction being written changes (Log);
	// Committed retires their cached changes. Guarded by the writers' lock.
	pending []string
	// prunedTo is the newest seq the transaction being written prunes (0:
	// none); Committed makes it Pruned.
	prunedTo uint64
	cache    cache
	names    nsNames
	// coded caches the namespaces of compact entries' codes.
	coded struct {
		mu sync.Mutex
		m  map[uint64]contract.Namespace
	}
	// wake says a head was published under the writers' lock that readers
	// were not woken for yet (Wake).
	wake atomic.Bool
}

// Change is one entry about to be logged.
type Change struct {
	Op     contract.ChangeOp
	ID     string
	NS     contract.Namespace
	Status contract.Status
}

// Entry is a decoded entry: a change and when it was made (Unix ms).
type Entry struct {
	Change
	At int64
}

// Load reads the feed's counters at open.
func (f *Feed) Load(meta *bbolt.Bucket, retention contract.ChangeRetention, codes StatusCodes) {
	f.retention, f.codes = retention, codes
	f.seq = u64(meta.Get(keySeq))
	f.head.Store(f.seq)
	f.pruned.Store(u64(meta.Get(keyPruned)))
}

// Seq is the newest seq committed, as the writers see it (under their lock).
func (f *Feed) Seq() uint64 { return f.seq }

// Head is the newest seq published to readers.
func (f *Feed) Head() uint64 { return f.head.Load() }

// Pruned is the newest seq pruned.
func (f *Feed) Pruned() uint64 { return f.pruned.Load() }

// Signal is what waiting readers wait on (contract.ServeChanges).
func (f *Feed) Signal() func() <-chan struct{} { return f.signal.C }

// NamespaceOf parses a namespace the feed reads, each once.
func (f *Feed) NamespaceOf(s string) contract.Namespace { return f.names.of(s) }

// encode is c's entry: compact when its id is a fingerprint and nsb (tx's
// NSBucket) is there to name its namespace, long otherwise. codes caches
// the codes of one transaction's namespaces.
func (f *Feed) encode(nsb *bbolt.Bucket, codes map[string]uint64, c *Change, at int64) ([]byte, error) {
	b := make([]byte, 0, 11+len(c.ID)+32)
	b = append(b, c.Op.Code(), f.codes.Code(c.Status))
	b = binary.BigEndian.AppendUint64(b, uint64(at))
	if nsb != nil && contract.IsFingerprint(c.ID) {
		code, err := nsCode(nsb, codes, c.NS)
		if err != nil {
			return nil, err
		}
		b = append(b, compactEntry)
		b = idkey.Append(b, c.ID)
		return binary.AppendUvarint(b, code), nil
	}
	b = append(b, byte(len(c.ID)))
	b = append(b, c.ID...)
	return append(b, c.NS.String()...), nil
}

// nsCode is ns's code in nsb, made in this transaction if ns has none yet;
// the root namespace is 0.
func nsCode(nsb *bbolt.Bucket, codes map[string]uint64, n contract.Namespace) (uint64, error) {
	if n.IsRoot() {
		return 0, nil
	}
	ns := n.String()
	if code, ok := codes[ns]; ok {
		return code, nil
	}
	name := append([]byte{'n'}, ns...)
	code := u64(nsb.Get(name))
	if code == 0 {
		var err error
		if code, err = nsb.NextSequence(); err != nil {
			return 0, err
		}
		if err := nsb.Put(name, key(code)); err != nil {
			return 0, err
		}
		if err := nsb.Put(codeKey(code), []byte(ns)); err != nil {
			return 0, err
		}
	}
	codes[ns] = code
	return code, nil
}

func codeKey(code uint64) []byte { return binary.BigEndian.AppendUint64([]byte{'c'}, code) }

// Decode reads an entry of tx's feed, its namespace through nsOf.
func (f *Feed) Decode(tx *bbolt.Tx, v []byte, nsOf func(string) contract.Namespace) (Entry, error) {
	if len(v) < 11 {
		return Entry{}, fmt.Errorf("change entry of %d bytes is too short", len(v))
	}
	op, ok := contract.ChangeOpOfCode(v[0])
	if !ok || int(v[1]) >= len(f.codes.ByCode) {
		return Entry{}, fmt.Errorf("change entry has op %d, status %d", v[0], v[1])
	}
	en := Entry{Change: Change{Op: op, Status: f.codes.ByCode[v[1]]}, At: int64(binary.BigEndian.Uint64(v[2:10]))}
	if v[10] == compactEntry {
		if len(v) < 11+idBytes+1 {
			return Entry{}, fmt.Errorf("compact change entry of %d bytes is too short", len(v))
		}
		code, n := binary.Uvarint(v[11+idBytes:])
		if n <= 0 || 11+idBytes+n != len(v) {
			return Entry{}, fmt.Errorf("compact change entry's namespace code does not end the entry")
		}
		ns, err := f.nsOfCode(tx, code, nsOf)
		if err != nil {
			return Entry{}, err
		}
		en.ID, en.NS = idkey.ID(v[11:11+idBytes]), ns
		return en, nil
	}
	n := int(v[10])
	if len(v) < 11+n {
		return Entry{}, fmt.Errorf("change entry's id runs past its end")
	}
	en.ID, en.NS = string(v[11:11+n]), nsOf(string(v[11+n:]))
	return en, nil
}

// nsOfCode is the namespace code names in tx's NSBucket, cached: a
// committed code never changes, and a reader sees committed ones only.
func (f *Feed) nsOfCode(tx *bbolt.Tx, code uint64, nsOf func(string) contract.Namespace) (contract.Namespace, error) {
	if code == 0 {
		return contract.Root(), nil
	}
	f.coded.mu.Lock()
	ns, ok := f.coded.m[code]
	f.coded.mu.Unlock()
	if ok {
		return ns, nil
	}
	var name []byte
	if nsb := tx.Bucket(NSBucket); nsb != nil {
		name = nsb.Get(codeKey(code))
	}
	if name == nil {
		return contract.Namespace{}, fmt.Errorf("change entry names namespace code %d, which the store does not hold", code)
	}
	ns = nsOf(string(name))
	f.coded.mu.Lock()
	if f.coded.m == nil {
		f.coded.m = map[uint64]contract.Namespace{}
	}
	f.coded.m[code] = ns
	f.coded.mu.Unlock()
	return ns, nil
}

// Log appends cs to the feed in tx (meta is the store's meta bucket in tx)
// and prunes what retention lets go; it returns the new head, which the
// caller publishes with Committed once tx has committed. The caller holds
// the writers' lock.
func (f *Feed) Log(tx *bbolt.Tx, meta *bbolt.Bucket, at int64, cs []Change) (uint64, error) {
	b := tx.Bucket(Bucket)
	// The feed only ever appends: its pages are written full (bbolt's
	// default half would leave every page of it half empty).
	b.FillPercent = 1.0
	seq := f.seq
	nsb := tx.Bucket(NSBucket)
	codes := map[string]uint64{}
	w := openTail(b.Cursor(), seq)
	for i := range cs {
		seq++
		v, err := f.encode(nsb, codes, &cs[i], at)
		if err != nil {
			return 0, err
		}
		if err := w.add(b, seq, v); err != nil {
			return 0, err
		}
	}
	if err := w.flush(b); err != nil {
		return 0, err
	}
	for i := range cs {
		f.pending = append(f.pending, cs[i].ID)
	}
	if err := meta.Put(keySeq, key(seq)); err != nil {
		return 0, err
	}
	// The entries retention lets go are pruned oldest first: whole blocks,
	// and of the first block it keeps only some of, the entries before
	// those (the rest put again under its first kept seq).
	now := time.UnixMilli(at)
	prunable := func(eseq uint64, e []byte) bool {
		return len(e) >= 10 && f.retention.Prunable(eseq, time.UnixMilli(int64(binary.BigEndian.Uint64(e[2:10]))), now, seq)
	}
	var stale [][]byte
	var last uint64
	var rest []byte // what is kept of the last block pruned, nil when none
	pruned := 0
	cur := b.Cursor()
	for k, v := cur.First(); k != nil && pruned < pruneBatch; k, v = cur.Next() {
		upto, kept, err := prunablePrefix(k, v, prunable)
		if err != nil || upto == 0 {
			break // a damaged block stays for check to report
		}
		stale, last, rest = append(stale, bytes.Clone(k)), upto, kept
		pruned += int(upto - u64(k) + 1)
		if kept != nil {
			break
		}
	}
	if len(stale) > 0 {
		for _, k := range stale {
			if err := b.Delete(k); err != nil {
				return 0, err
			}
		}
		if rest != nil {
			if err := b.Put(key(last+1), rest); err != nil {
				return 0, err
			}
		}
		if err := meta.Put(keyPruned, key(last)); err != nil {
			return 0, err
		}
		f.prunedTo = last
	}
	return seq, nil
}

// Committed publishes a committed head; the caller holds the writers' lock,
// and the write call that took it wakes the waiting readers when it lets it
// go (Wake). The changed records' cached changes are retired before a
// reader can see the new head (ids of a transaction that failed are retired
// with the next one: a needless miss, never a stale hit).
func (f *Feed) Committed(seq uint64) {
	if seq == f.seq {
		return
	}
	f.cache.publish(seq, f.pending)
	f.pending = f.pending[:0]
	if f.prunedTo > 0 {
		f.pruned.Store(f.prunedTo)
		f.prunedTo = 0
	}
	f.seq = seq
	f.head.Store(seq)
	f.wake.Store(true)
}

// Wake wakes the feed's readers when a head was published since they were
// last woken. Every write call that may publish one defers it before taking
// the writers' lock, so it runs after the Unlock: twenty readers woken at a
// commit then compete with the next writer's transaction, not with the rest
// of this one's work under the lock (the in-memory table, the content
// index) while every other writer waits for it. A wake that finds the flag
// set by another writer's later commit wakes for it too: that head was
// published before the flag was cleared.
func (f *Feed) Wake() {
	if f.wake.Swap(false) {
		f.signal.Notify()
	}
}

// Read reads a page of the feed in tx (meta is the store's meta bucket in
// tx): the changes after since that reach admits, at most limit of them,
// each with its record as recordOf reads it now (nil: gone).
func (f *Feed) Read(tx *bbolt.Tx, meta *bbolt.Bucket, since uint64, limit int, reach *contract.Reach, fromNow bool,
	recordOf func(id string) (*contract.Record, error)) (contract.ChangesPage, error) {
	head, pruned := u64(meta.Get(keySeq)), u64(meta.Get(keyPruned))
	page := contract.ChangesPage{Changes: []contract.Change{}, Next: since, Head: head, Floor: pruned}
	if fromNow {
		page.Next = head
		return page, nil
	}
	if err := contract.CheckSince(since, pruned, head); err != nil {
		return page, err
	}
	scanned := 0
	var derr error
	serr := scanFrom(tx.Bucket(Bucket).Cursor(), since, func(seq uint64, e []byte) bool {
		if scanned >= contract.MaxChangesScan || len(page.Changes) >= limit {
			return false
		}
		scanned++
		page.Next = seq
		en, err := f.Decode(tx, e, f.names.of)
		if err != nil {
			derr = contract.EngineErr("change %d: %v", seq, err)
			return false
		}
		if contract.AdmittedBy(reach, en.NS) {
			page.Changes = append(page.Changes, contract.Change{Seq: seq, At: time.UnixMilli(en.At).UTC(), Op: en.Op, ID: en.ID, Namespace: en.NS, Status: en.Status})
		}
		return true
	})
	if derr != nil {
		return page, derr
	}
	if serr != nil {
		return page, contract.EngineErr("%v", serr)
	}
	// The changes the cache holds as of this snapshot; the others get
	// their records here and are offered to the cache.
	missing := f.cache.fill(page.Changes, head)
	if len(missing) == 0 {
		return page, nil
	}
	for _, i := range missing {
		c := &page.Changes[i]
		if !c.Op.Removes() {
			r, err := recordOf(c.ID)
			if err != nil {
				return page, err
			}
			c.Record = r
		}
		*c = c.Shared()
	}
	f.cache.offer(page.Changes, missing, head)
	return page, nil
}

// Scan calls fn with each entry after seq since in tx, in order, its
// namespace read through nsOf, until fn answers false or an error, or the
// feed ends. It answers fn's error, or a decoding error naming the seq.
func (f *Feed) Scan(tx *bbolt.Tx, since uint64, nsOf func(string) contract.Namespace, fn func(seq uint64, en Entry) (bool, error)) error {
	var ferr error
	serr := scanFrom(tx.Bucket(Bucket).Cursor(), since, func(seq uint64, e []byte) bool {
		en, err := f.Decode(tx, e, nsOf)
		if err != nil {
			ferr = fmt.Errorf("change %d: %w", seq, err)
			return false
		}
		more, err := fn(seq, en)
		ferr = err
		return err == nil && more
	})
	if ferr != nil {
		return ferr
	}
	return serr
}

// Last is the last change the feed keeps for an id.
type Last struct {
	Removed bool
	NS      string
	Seq     uint64
}

// Verify reads the whole feed in tx: its seqs must run without a gap from
// the oldest kept to the head, and every entry must decode; each fault goes
// to disagree. It answers how many entries it read and the last change
// kept for each id, for the caller to hold against the records.
func (f *Feed) Verify(tx *bbolt.Tx, meta *bbolt.Bucket, nsOf func(string) contract.Namespace, disagree func(format string, args ...any)) (int, map[string]Last) {
	head, pruned := u64(meta.Get(keySeq)), u64(meta.Get(keyPruned))
	lastOf := map[string]Last{}
	checked := 0
	want := pruned + 1
	_ = tx.Bucket(Bucket).ForEach(func(k, v []byte) error {
		if err := eachEntry(k, v, func(seq uint64, e []byte) bool {
			checked++
			if seq != want {
				disagree("the feed runs from seq %d to seq %d; want no gap", want-1, seq)
			}
			want = seq + 1
			en, err := f.Decode(tx, e, nsOf)
			if err != nil {
				disagree("change %d does not decode: %v", seq, err)
				return true
			}
			lastOf[en.ID] = Last{Removed: en.Op.Removes(), NS: en.NS.String(), Seq: seq}
			return true
		}); err != nil {
			disagree("the block at seq %d: %v", u64(k), err)
		}
		return nil
	})
	if want-1 != head && !(checked == 0 && head == pruned) {
		disagree("the feed ends at seq %d, its head is %d", want-1, head)
	}
	return checked, lastOf
}

// Key is a seq's key in the feed's bucket.
func key(seq uint64) []byte { return binary.BigEndian.AppendUint64(nil, seq) }

// u64 reads a big-endian u64 (0 unless 8 bytes).
func u64(b []byte) uint64 {
	if len(b) != 8 {
		return 0
	}
	return binary.BigEndian.Uint64(b)
}

// cache keeps the changes near the feed's head as readers built them
// (each with its record as of a snapshot, Shared so its JSON is encoded
// once), in a ring indexed by seq. An entry built at a snapshot whose head
// was asOf is exact for a reader whose snapshot head h is at least asOf and
// at most the published head: every commit published after the entry was
// offered retired the entries of the ids it changed, and a commit not yet
// published is not in h. A reader whose snapshot is newer than the published
// head (it began between a commit and its publication) or older than an
// entry reads the records itself.
type cache struct {
	mu        sync.Mutex
	published uint64
	ring      []cachedChange
	// byID lists, per id, the seqs the ring holds for it.
	byID map[string][]uint64
}

// cacheSize is how many changes the cache holds: a few pages behind the
// head, where waiting watchers read.
const cacheSize = 4 * contract.MaxChangesLimit

type cachedChange struct {
	seq  uint64 // 0: empty
	asOf uint64
	c    contract.Change
}

// publish retires the cached changes of ids and makes head the published head.
func (fc *cache) publish(head uint64, ids []string) {
	fc.mu.Lock()
	defer fc.mu.Unlock()
	fc.published = head
	for _, id := range ids {
		for _, seq := range fc.byID[id] {
			if slot := &fc.ring[seq%cacheSize]; slot.seq == seq {
				*slot = cachedChange{}
			}
		}
		delete(fc.byID, id)
	}
}

// fill sets the changes in cs the cache holds exactly for a snapshot whose
// head is h and returns the indexes of the others.
func (fc *cache) fill(cs []contract.Change, h uint64) []int {
	var missing []int
	fc.mu.Lock()
	defer fc.mu.Unlock()
	usable := fc.ring != nil && h <= fc.published
	for i := range cs {
		if usable {
			if slot := &fc.ring[cs[i].Seq%cacheSize]; slot.seq == cs[i].Seq && slot.asOf <= h {
				cs[i] = slot.c
				continue
			}
		}
		missing = append(missing, i)
	}
	return missing
}

// offer keeps cs[i] for each i in which, built at a snapshot whose head is
// h, when h is still the published head (otherwise a commit published since
// may have changed their records) and they lie near it.
func (fc *cache) offer(cs []contract.Change, which []int, h uint64) {
	fc.mu.Lock()
	defer fc.mu.Unlock()
	if h != fc.published {
		return
	}
	if fc.ring == nil {
		fc.ring = make([]cachedChange, cacheSize)
		fc.byID = map[string][]uint64{}
	}
	for _, i := range which {
		c := cs[i]
		if c.Seq+cacheSize <= h {
			continue
		}
		slot := &fc.ring[c.Seq%cacheSize]
		if slot.seq != 0 {
			fc.forget(slot.c.ID, slot.seq)
		}
		*slot = cachedChange{seq: c.Seq, asOf: h, c: c}
		fc.byID[c.ID] = append(fc.byID[c.ID], c.Seq)
	}
}

// forget drops seq from id's list.
func (fc *cache) forget(id string, seq uint64) {
	seqs := fc.byID[id]
	for j, s := range seqs {
		if s == seq {
			seqs = append(seqs[:j], seqs[j+1:]...)
			break
		}
	}
	if len(seqs) == 0 {
		delete(fc.byID, id)
	} else {
		fc.byID[id] = seqs
	}
}

// nsNames parses the namespaces the feed reads, each once, without the
// table (and so without the writers' lock). It keeps at most nsNamesMax.
type nsNames struct {
	mu sync.Mutex
	m  map[string]contract.Namespace
}

const nsNamesMax = 4096

func (n *nsNames) of(s string) contract.Namespace {
	n.mu.Lock()
	ns, ok := n.m[s]
	n.mu.Unlock()
	if ok {
		return ns
	}
	ns, err := contract.ParseNamespace(s)
	if err != nil {
		return contract.Root()
	}
	n.mu.Lock()
	if n.m == nil {
		n.m = map[string]contract.Namespace{}
	}
	if len(n.m) < nsNamesMax {
		n.m[s] = ns
	}
	n.mu.Unlock()
	return ns
}
