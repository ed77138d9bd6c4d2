package bolt

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	bbolt "go.etcd.io/bbolt"

	"mnemo/contract"
)

// The change feed (contract.Engine.Changes). Every mutation's transaction
// appends one entry per changed record to bucketChanges, keyed by the feed's
// sequence number (meta feed_seq, one per change), in the same bbolt
// transaction as the mutation itself: a crash can neither lose a change whose
// write was acknowledged nor invent one whose write was not. Entries hold no
// content (op, status, time, id, namespace); a read attaches the record as it
// is now when it still exists. Later write transactions prune what the
// retention lets go (a bounded number per transaction) and remember the newest
// seq pruned (meta feed_pruned), so a since older than that is refused.
// Readers wait on an in-process signal broadcast after every commit; they
// never hold a lock while waiting, so a slow or idle reader never blocks a
// writer. A read holds no engine lock at all (only its bbolt read
// transaction), and the changes it attaches records to are kept in a small
// cache shared by every reader (feedCache), so twenty watchers waiting at
// the head cost one record decode and one JSON encoding per change, not
// twenty.

var (
	// bucketChanges is the change feed: seq (u64 big-endian) -> entry.
	bucketChanges = []byte("changes")
	keyFeedSeq    = []byte("feed_seq")
	keyFeedPruned = []byte("feed_pruned")
)

// pruneBatch bounds the entries one write transaction prunes.
const pruneBatch = 1024

// feedState is the engine's view of the feed. seq is guarded by mu (writers);
// head and pruned are readable without it.
type feedState struct {
	retention contract.ChangeRetention
	seq       uint64
	head      atomic.Uint64
	pruned    atomic.Uint64
	signal    contract.ChangeSignal
	// pending are the ids the transaction being written changes (logChanges);
	// feedCommitted retires their cached changes. Guarded by mu.
	pending []string
	cache   feedCache
	names   nsNames
	// wake says a head was published under mu that readers were not woken
	// for yet (feedWake).
	wake atomic.Bool
}

// change is one entry about to be logged.
type change struct {
	op     contract.ChangeOp
	id     string
	ns     contract.Namespace
	status contract.Status
}

func encodeChange(c *change, at int64) []byte {
	b := make([]byte, 0, 11+len(c.id)+32)
	b = append(b, c.op.Code(), statusCode(c.status))
	b = binary.BigEndian.AppendUint64(b, uint64(at))
	b = append(b, byte(len(c.id)))
	b = append(b, c.id...)
	return append(b, c.ns.String()...)
}

// feedEntry is a decoded entry.
type feedEntry struct {
	change
	at int64
}

func decodeChange(v []byte, nsOf func(string) contract.Namespace) (feedEntry, error) {
	if len(v) < 11 {
		return feedEntry{}, fmt.Errorf("change entry of %d bytes is too short", len(v))
	}
	op, ok := contract.ChangeOpOfCode(v[0])
	if !ok || int(v[1]) >= len(statusByCode) {
		return feedEntry{}, fmt.Errorf("change entry has op %d, status %d", v[0], v[1])
	}
	n := int(v[10])
	if len(v) < 11+n {
		return feedEntry{}, fmt.Errorf("change entry's id runs past its end")
	}
	return feedEntry{change: change{op: op, status: statusByCode[v[1]], id: string(v[11 : 11+n]), ns: nsOf(string(v[11+n:]))},
		at: int64(binary.BigEndian.Uint64(v[2:10]))}, nil
}

// loadFeed reads the feed's counters at open.
func (e *Engine) loadFeed(meta *bbolt.Bucket) {
	e.feed.retention = e.opts.ChangeRetention.OrDefault()
	e.feed.seq = getU64(meta.Get(keyFeedSeq))
	e.feed.head.Store(e.feed.seq)
	e.feed.pruned.Store(getU64(meta.Get(keyFeedPruned)))
}

// logChanges appends cs to the feed in tx and prunes what retention lets go;
// it returns the new head, which the caller publishes with feedCommitted once
// tx has committed. The caller holds mu.
func (e *Engine) logChanges(tx *bbolt.Tx, at int64, cs []change) (uint64, error) {
	b := tx.Bucket(bucketChanges)
	// The feed only ever appends: its pages are written full (bbolt's
	// default half would leave every page of it half empty).
	b.FillPercent = 1.0
	seq := e.feed.seq
	for i := range cs {
		seq++
		if err := b.Put(seqKey(seq), encodeChange(&cs[i], at)); err != nil {
			return 0, err
		}
	}
	for i := range cs {
		e.feed.pending = append(e.feed.pending, cs[i].id)
	}
	meta := tx.Bucket(bucketMeta)
	if err := meta.Put(keyFeedSeq, putU64(seq)); err != nil {
		return 0, err
	}
	now := time.UnixMilli(at)
	var stale [][]byte
	cur := b.Cursor()
	for k, v := cur.First(); k != nil && len(stale) < pruneBatch; k, v = cur.Next() {
		if len(v) < 10 || !e.feed.retention.Prunable(getU64(k), time.UnixMilli(int64(binary.BigEndian.Uint64(v[2:10]))), now, seq) {
			break
		}
		stale = append(stale, bytes.Clone(k))
	}
	if len(stale) > 0 {
		for _, k := range stale {
			if err := b.Delete(k); err != nil {
				return 0, err
			}
		}
		if err := meta.Put(keyFeedPruned, stale[len(stale)-1]); err != nil {
			return 0, err
		}
	}
	return seq, nil
}

// feedCommitted publishes a committed head; the caller holds mu, and the
// write call that took it wakes the waiting readers when it lets it go
// (feedWake). The changed records' cached changes are retired before a
// reader can see the new head (ids of a transaction that failed are retired
// with the next one: a needless miss, never a stale hit).
func (e *Engine) feedCommitted(seq uint64) {
	if seq == e.feed.seq {
		return
	}
	e.feed.cache.publish(seq, e.feed.pending)
	e.feed.pending = e.feed.pending[:0]
	e.feed.seq = seq
	e.feed.head.Store(seq)
	e.feed.wake.Store(true)
}

// feedWake wakes the feed's readers when a head was published since they
// were last woken. Every write call that may publish one defers it before
// taking mu, so it runs after the Unlock: twenty readers woken at a commit
// then compete with the next writer's transaction, not with the rest of
// this one's work under mu (the in-memory table, the content index) while
// every other writer waits for mu. A wake that finds the flag set by
// another writer's later commit wakes for it too: that head was published
// before the flag was cleared.
func (e *Engine) feedWake() {
	if e.feed.wake.Swap(false) {
		e.feed.signal.Notify()
	}
}

// Changes reads the change feed (contract.ChangesRequest).
func (e *Engine) Changes(ctx context.Context, req contract.ChangesRequest) (contract.ChangesPage, error) {
	if err := req.Validate(); err != nil {
		return contract.ChangesPage{}, err
	}
	if err := e.enter(ctx); err != nil {
		return contract.ChangesPage{}, err
	}
	defer e.leave()
	if req.Wait > 0 {
		// A waiting read ends when the store closes.
		var cancel context.CancelFunc
		ctx, cancel = context.WithCancel(ctx)
		defer cancel()
		go func() {
			select {
			case <-e.closing:
				cancel()
			case <-ctx.Done():
			}
		}()
	}
	return contract.ServeChanges(ctx, req, e.feed.signal.C, 0, e.readChanges)
}

func (e *Engine) readChanges(_ context.Context, since uint64, limit int, reach *contract.Reach, fromNow bool) (contract.ChangesPage, error) {
	if e.closed.Load() {
		return contract.ChangesPage{}, errClosed()
	}
	var page contract.ChangesPage
	err := e.readView(func(tx *bbolt.Tx, recs *recordReader) error {
		meta := tx.Bucket(bucketMeta)
		head, pruned := getU64(meta.Get(keyFeedSeq)), getU64(meta.Get(keyFeedPruned))
		page = contract.ChangesPage{Changes: []contract.Change{}, Next: since, Head: head, Floor: pruned}
		if fromNow {
			page.Next = head
			return nil
		}
		if err := contract.CheckSince(since, pruned, head); err != nil {
			return err
		}
		cur := tx.Bucket(bucketChanges).Cursor()
		scanned := 0
		for k, v := cur.Seek(seqKey(since + 1)); k != nil && scanned < contract.MaxChangesScan && len(page.Changes) < limit; k, v = cur.Next() {
			scanned++
			seq := getU64(k)
			page.Next = seq
			f, err := decodeChange(v, e.feed.names.of)
			if err != nil {
				return contract.EngineErr("change %d: %v", seq, err)
			}
			if !contract.AdmittedBy(reach, f.ns) {
				continue
			}
			page.Changes = append(page.Changes, contract.Change{Seq: seq, At: time.UnixMilli(f.at).UTC(), Op: f.op, ID: f.id, Namespace: f.ns, Status: f.status})
		}
		// The changes the cache holds as of this snapshot; the others get
		// their records here and are offered to the cache.
		missing := e.feed.cache.fill(page.Changes, head)
		if len(missing) == 0 {
			return nil
		}
		for _, i := range missing {
			c := &page.Changes[i]
			if !c.Op.Removes() {
				if rv := recs.Get([]byte(c.ID)); rv != nil {
					s, err := decodeRecord(rv, partHit, e.feed.names.of)
					if err != nil {
						return contract.EngineErr("record %s: %v", c.ID, err)
					}
					r, err := s.record(c.ID, false)
					if err != nil {
						return err
					}
					c.Record = &r
				}
			}
			*c = c.Shared()
		}
		e.feed.cache.offer(page.Changes, missing, head)
		return nil
	})
	if err != nil {
		return contract.ChangesPage{}, contract.AsError(err)
	}
	return page, nil
}

// feedCache keeps the changes near the feed's head as readers built them
// (each with its record as of a snapshot, Shared so its JSON is encoded
// once), in a ring indexed by seq. An entry built at a snapshot whose head
// was asOf is exact for a reader whose snapshot head h is at least asOf and
// at most the published head: every commit published after the entry was
// offered retired the entries of the ids it changed, and a commit not yet
// published is not in h. A reader whose snapshot is newer than the published
// head (it began between a commit and its publication) or older than an
// entry reads the records itself.
type feedCache struct {
	mu        sync.Mutex
	published uint64
	ring      []cachedChange
	// byID lists, per id, the seqs the ring holds for it.
	byID map[string][]uint64
}

// feedCacheSize is how many changes the cache holds: a few pages behind the
// head, where waiting watchers read.
const feedCacheSize = 4 * contract.MaxChangesLimit

type cachedChange struct {
	seq  uint64 // 0: empty
	asOf uint64
	c    contract.Change
}

// publish retires the cached changes of ids and makes head the published head.
func (fc *feedCache) publish(head uint64, ids []string) {
	fc.mu.Lock()
	defer fc.mu.Unlock()
	fc.published = head
	for _, id := range ids {
		for _, seq := range fc.byID[id] {
			if slot := &fc.ring[seq%feedCacheSize]; slot.seq == seq {
				*slot = cachedChange{}
			}
		}
		delete(fc.byID, id)
	}
}

// fill sets the changes in cs the cache holds exactly for a snapshot whose
// head is h and returns the indexes of the others.
func (fc *feedCache) fill(cs []contract.Change, h uint64) []int {
	var missing []int
	fc.mu.Lock()
	defer fc.mu.Unlock()
	usable := fc.ring != nil && h <= fc.published
	for i := range cs {
		if usable {
			if slot := &fc.ring[cs[i].Seq%feedCacheSize]; slot.seq == cs[i].Seq && slot.asOf <= h {
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
func (fc *feedCache) offer(cs []contract.Change, which []int, h uint64) {
	fc.mu.Lock()
	defer fc.mu.Unlock()
	if h != fc.published {
		return
	}
	if fc.ring == nil {
		fc.ring = make([]cachedChange, feedCacheSize)
		fc.byID = map[string][]uint64{}
	}
	for _, i := range which {
		c := cs[i]
		if c.Seq+feedCacheSize <= h {
			continue
		}
		slot := &fc.ring[c.Seq%feedCacheSize]
		if slot.seq != 0 {
			fc.forget(slot.c.ID, slot.seq)
		}
		*slot = cachedChange{seq: c.Seq, asOf: h, c: c}
		fc.byID[c.ID] = append(fc.byID[c.ID], c.Seq)
	}
}

// forget drops seq from id's list.
func (fc *feedCache) forget(id string, seq uint64) {
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

// FeedHead is the feed's newest seq (tests, info).
func (e *Engine) FeedHead() uint64 { return e.feed.head.Load() }

// checkFeed verifies the feed against the records: its seqs run without a
// gap from the oldest kept to the head, every entry decodes, and the last
// change kept for each id agrees with the records (a removal: no record; any
// other: the record is there, in the namespace the change names).
func (e *Engine) checkFeed(tx *bbolt.Tx, recs map[string]checkedRecord) CheckEntry {
	c := CheckEntry{Name: checkFeed}
	meta := tx.Bucket(bucketMeta)
	head, pruned := getU64(meta.Get(keyFeedSeq)), getU64(meta.Get(keyFeedPruned))
	type last struct {
		removed bool
		ns      string
		seq     uint64
	}
	lastOf := map[string]last{}
	want := pruned + 1
	_ = tx.Bucket(bucketChanges).ForEach(func(k, v []byte) error {
		c.Checked++
		seq := getU64(k)
		if seq != want {
			c.disagree("the feed runs from seq %d to seq %d; want no gap", want-1, seq)
		}
		want = seq + 1
		f, err := decodeChange(v, e.t.namespaceOf)
		if err != nil {
			c.disagree("change %d does not decode: %v", seq, err)
			return nil
		}
		lastOf[f.id] = last{removed: f.op.Removes(), ns: f.ns.String(), seq: seq}
		return nil
	})
	if want-1 != head && !(c.Checked == 0 && head == pruned) {
		c.disagree("the feed ends at seq %d, its head is %d", want-1, head)
	}
	for id, l := range lastOf {
		r, exists := recs[id]
		switch {
		case l.removed && exists:
			c.disagree("record %s exists, but its last change (seq %d) removed it", id, l.seq)
		case !l.removed && !exists:
			c.disagree("record %s is gone, but the feed has no removal of it after seq %d", id, l.seq)
		case !l.removed && r.ns != l.ns:
			c.disagree("record %s lives in %s, its change %d names %s", id, r.ns, l.seq, l.ns)
		}
	}
	return c
}
