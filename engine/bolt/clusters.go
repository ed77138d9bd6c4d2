package bolt

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	bbolt "go.etcd.io/bbolt"

	"mnemo/contract"
	"mnemo/engine/bolt/internal/feed"
	"mnemo/engine/curate"
)

// The store's clusters (issue 26): the process that holds a store clusters
// all of it in the background and keeps the result up to date from the
// change feed, so a scope's clusters are read, not found again, however
// large the store. What is kept is every relation curate finds between two
// records (an edge), in bucketClusters; a scope's clusters are the connected
// groups its live records make (curate.Assemble). A record's candidates are
// found by the rarest of its words (curate.Postings, which the clusterer
// keeps of every record: a few bytes a word, read again by a process that
// takes the store over), and the edges of the records that have one.
//
// bucketClusters holds:
//   - keyClustersPos: the feed seq through which every change is clustered
//     (absent until the first pass over the records is done);
//   - keyClustersCfg: the thresholds the edges were found with (JSON);
//   - keyClustersPass: while the first pass runs, the next ordinal it reads,
//     the ordinal it stops before and the feed seq it began at;
//   - edgePrefix + id: the record's edges (other id, relation, difference).
var bucketClusters = []byte("clusters")

var (
	keyClustersPos  = []byte("pos")
	keyClustersCfg  = []byte("cfg")
	keyClustersPass = []byte("pass")
	edgePrefix      = []byte("e/")
)

// clusterChunk is how many records one step of the clusterer reads (and
// then writes the edges of, in one transaction).
const clusterChunk = 500

func (e *Engine) clusterChunk() int {
	if e.opts.clusterChunk > 0 {
		return e.opts.clusterChunk
	}
	return clusterChunk
}

// keptEdge is one edge as the engine keeps it in memory.
type keptEdge struct {
	rel  curate.Relation
	diff string
}

// clusterState is the clusterer's state in this process.
type clusterState struct {
	cfg  curate.Config
	kick chan struct{}
	// now is closed by ClusterNow: load the table if nothing else has.
	now     chan struct{}
	nowOnce sync.Once

	mu  sync.RWMutex
	adj map[string]map[string]keptEdge
	// pos is the feed seq through which every change is clustered; ready
	// once the first pass is done.
	pos   uint64
	ready bool

	// post holds every posted record's words (the clusterer's alone): the
	// records below the first pass's position, or once it is done every
	// record, read again by a process that takes over (warm).
	post *curate.Postings
	warm atomic.Bool
	// warmNext is the next ordinal the warm-up reads.
	warmNext uint32

	// done of total records read by the first pass; warmed is how many
	// records the warm-up has posted.
	done, total atomic.Int64
	warmed      atomic.Int64
	err         atomic.Pointer[string]
}

// ClusterStatus says how far the store's clustering is in this process.
type ClusterStatus struct {
	// Kept: this process keeps the store's clusters (KeepClusters).
	Kept bool `json:"kept"`
	// Done of Total records read by the first pass; Ready once it is done
	// (and KeptClusters answers).
	Done  int64 `json:"done"`
	Total int64 `json:"total"`
	Ready bool  `json:"ready"`
	// Clustered is how many records have an edge (live or not).
	Clustered int `json:"clustered"`
	// Warming: the process is reading the records' words before it follows
	// the feed (a store clustered by another process); Warmed of them so far.
	Warming bool  `json:"warming"`
	Warmed  int64 `json:"warmed"`
	// Err is why clustering stopped, if it failed.
	Err string `json:"error,omitempty"`
}

// ClusterStatus says how far the store's clustering is in this process.
func (e *Engine) ClusterStatus() ClusterStatus {
	cs := e.clusters.Load()
	if cs == nil {
		return ClusterStatus{}
	}
	cs.mu.RLock()
	st := ClusterStatus{Kept: true, Ready: cs.ready, Clustered: len(cs.adj), Warming: !cs.warm.Load()}
	cs.mu.RUnlock()
	st.Done, st.Total, st.Warmed = cs.done.Load(), cs.total.Load(), cs.warmed.Load()
	if p := cs.err.Load(); p != nil {
		st.Err = *p
	}
	return st
}

// KeepClusters starts clustering the whole store in the background and
// keeping its clusters up to date, with the given thresholds (server/local's
// holder calls it as it takes the store). The work begins once the store's
// table is loaded, which a short command may never need, or at ClusterNow.
// Later calls do nothing; a read-only store is not clustered.
func (e *Engine) KeepClusters(cfg curate.Config) {
	if e.opts.ReadOnly || e.closed.Load() {
		return
	}
	cs := &clusterState{cfg: cfg, kick: make(chan struct{}, 1), now: make(chan struct{}), adj: map[string]map[string]keptEdge{}, post: curate.NewPostings(cfg)}
	if !e.clusters.CompareAndSwap(nil, cs) {
		return
	}
	e.goBackground(func() { e.clusterWorker(cs) })
}

// ClusterNow has the clustering KeepClusters started begin now, loading the
// table if nothing has (a holder that stays calls it after its first second).
func (e *Engine) ClusterNow() {
	if cs := e.clusters.Load(); cs != nil {
		cs.nowOnce.Do(func() { close(cs.now) })
	}
}

// kickClusters tells the clusterer the feed has moved.
func (e *Engine) kickClusters() {
	if cs := e.clusters.Load(); cs != nil {
		select {
		case cs.kick <- struct{}{}:
		default:
		}
	}
}

// clusterWorker runs the first pass (resuming one an earlier process left)
// and then follows the feed, while the engine is open.
func (e *Engine) clusterWorker(cs *clusterState) {
	ctx, cancel := e.untilClosed(context.Background())
	defer cancel()
	select {
	case <-e.tables.ready:
	case <-cs.now:
	case <-e.closing:
		return
	}
	if err := e.waitTable(ctx); err != nil {
		return
	}
	if err := e.loadClusters(cs); err != nil {
		e.clusterFailed(cs, err)
		return
	}
	for {
		sig := e.feed.Signal()()
		began := time.Now()
		more, err := e.clusterStep(ctx, cs)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			e.clusterFailed(cs, err)
			more = false
		}
		// At most half a core, however fast records arrive: a step is
		// followed by as long a rest.
		select {
		case <-e.closing:
			return
		case <-time.After(time.Since(began)):
		}
		if !more {
			select {
			case <-e.closing:
				return
			case <-sig:
			case <-cs.kick:
			case <-time.After(5 * time.Second):
			}
		}
	}
}

func (e *Engine) clusterFailed(cs *clusterState, err error) {
	msg := err.Error()
	cs.err.Store(&msg)
	e.log.Error("clustering the store failed", "err", err)
}

// loadClusters reads what an earlier process kept: the edges and the
// position, or starts a first pass (none kept, other thresholds, or the
// feed pruned past the position).
func (e *Engine) loadClusters(cs *clusterState) error {
	want, _ := json.Marshal(cs.cfg)
	end, seq := e.passBounds()
	n := int64(e.Len())
	return e.db.Update(func(tx *bbolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists(bucketClusters)
		if err != nil {
			return err
		}
		pos, hasPos := getU64OK(b.Get(keyClustersPos))
		if !bytes.Equal(b.Get(keyClustersCfg), want) || hasPos && pos < e.feed.Pruned() {
			return e.startClusterPass(tx, cs, want, end, seq)
		}
		if !hasPos && b.Get(keyClustersPass) == nil {
			return e.startClusterPass(tx, cs, want, end, seq)
		}
		adj := map[string]map[string]keptEdge{}
		c := b.Cursor()
		for k, v := c.Seek(edgePrefix); k != nil && bytes.HasPrefix(k, edgePrefix); k, v = c.Next() {
			edges, err := decodeEdges(v)
			if err != nil {
				return contract.EngineErr("the clusters of record %s are corrupt: %w", k[len(edgePrefix):], err)
			}
			adj[string(k[len(edgePrefix):])] = edges
		}
		cs.mu.Lock()
		cs.adj, cs.pos, cs.ready = adj, pos, hasPos
		cs.mu.Unlock()
		if p := b.Get(keyClustersPass); p != nil && len(p) == 16 {
			cs.done.Store(int64(binary.BigEndian.Uint32(p)))
			cs.total.Store(int64(binary.BigEndian.Uint32(p[4:])))
		} else {
			cs.done.Store(n)
			cs.total.Store(n)
		}
		return nil
	})
}

// passBounds answers where a first pass begun now ends (the next ordinal)
// and the feed seq it begins at, read together.
func (e *Engine) passBounds() (uint32, uint64) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	return e.nextOrd, e.feed.Seq()
}

// startClusterPass drops what is kept and begins a first pass over the
// records the store holds now.
//
// Its caller reads the pass's bounds (passBounds) before it opens tx: the
// engine's writers take its lock before bbolt's, so nothing may take the
// engine's lock inside a bbolt write transaction.
func (e *Engine) startClusterPass(tx *bbolt.Tx, cs *clusterState, cfg []byte, end uint32, seq uint64) error {
	if err := tx.DeleteBucket(bucketClusters); err != nil && !errors.Is(err, bbolt.ErrBucketNotFound) {
		return err
	}
	b, err := tx.CreateBucket(bucketClusters)
	if err != nil {
		return err
	}
	if err := b.Put(keyClustersCfg, cfg); err != nil {
		return err
	}
	cs.mu.Lock()
	cs.adj = map[string]map[string]keptEdge{}
	cs.mu.Unlock()
	cs.post, cs.warmNext = curate.NewPostings(cs.cfg), 0
	cs.warm.Store(false)
	cs.warmed.Store(0)
	cs.done.Store(0)
	cs.total.Store(int64(end))
	return b.Put(keyClustersPass, passValue(0, end, seq))
}

func passValue(next, end uint32, seq uint64) []byte {
	v := binary.BigEndian.AppendUint32(nil, next)
	v = binary.BigEndian.AppendUint32(v, end)
	return binary.BigEndian.AppendUint64(v, seq)
}

func getU64OK(b []byte) (uint64, bool) {
	if len(b) != 8 {
		return 0, false
	}
	return binary.BigEndian.Uint64(b), true
}

// clusterStep does one step: the next chunk of the first pass, or the next
// changes of the feed. It answers whether more is waiting.
func (e *Engine) clusterStep(ctx context.Context, cs *clusterState) (bool, error) {
	var pass []byte
	var pos uint64
	gone := false
	err := e.db.View(func(tx *bbolt.Tx) error {
		b := tx.Bucket(bucketClusters)
		if b == nil {
			gone = true
			return nil
		}
		pass = bytes.Clone(b.Get(keyClustersPass))
		pos, _ = getU64OK(b.Get(keyClustersPos))
		return nil
	})
	if err != nil {
		return false, err
	}
	if gone {
		// Dropped by a repair (mnemo check --repair): cluster again.
		want, _ := json.Marshal(cs.cfg)
		cs.mu.Lock()
		cs.ready = false
		cs.mu.Unlock()
		end, seq := e.passBounds()
		return true, e.db.Update(func(tx *bbolt.Tx) error { return e.startClusterPass(tx, cs, want, end, seq) })
	}
	if !cs.warm.Load() {
		limit := uint32(math.MaxUint32)
		if len(pass) == 16 {
			limit = binary.BigEndian.Uint32(pass[4:])
		}
		return true, e.warmStep(ctx, cs, limit)
	}
	if len(pass) == 16 {
		return e.clusterPassStep(ctx, cs, pass)
	}
	if pos < e.feed.Pruned() {
		// Changes this process never clustered are gone from the feed.
		want, _ := json.Marshal(cs.cfg)
		cs.mu.Lock()
		cs.ready = false
		cs.mu.Unlock()
		end, seq := e.passBounds()
		return true, e.db.Update(func(tx *bbolt.Tx) error { return e.startClusterPass(tx, cs, want, end, seq) })
	}
	return e.clusterFeedStep(ctx, cs, pos)
}

// pendingEdges are the edges a step found, to be written and kept.
type pendingEdges struct {
	add  []curate.Edge
	drop []string // records whose edges go (forgotten, or clustered again)
}

// clusterPassStep clusters the next chunk of the first pass: each record
// against the records of lower ordinals (each pair once).
func (e *Engine) clusterPassStep(ctx context.Context, cs *clusterState, pass []byte) (bool, error) {
	next, end, seq := binary.BigEndian.Uint32(pass), binary.BigEndian.Uint32(pass[4:]), binary.BigEndian.Uint64(pass[8:])
	var ords []uint32
	for o := next; o < end && len(ords) < e.clusterChunk(); o++ {
		ords = append(ords, o)
	}
	last := next + uint32(len(ords))
	var found pendingEdges
	if err := e.clusterRecords(ctx, cs, ords, true, &found); err != nil {
		return false, err
	}
	done, dropped := last >= end, false
	err := e.db.Update(func(tx *bbolt.Tx) error {
		b := tx.Bucket(bucketClusters)
		if b == nil {
			dropped = true
			return nil // dropped by a repair meanwhile: the next step starts over
		}
		if err := writeEdges(b, cs, &found); err != nil {
			return err
		}
		if done {
			if err := b.Delete(keyClustersPass); err != nil {
				return err
			}
			return b.Put(keyClustersPos, putU64(seq))
		}
		return b.Put(keyClustersPass, passValue(last, end, seq))
	})
	if err != nil {
		return false, err
	}
	if dropped {
		return true, nil // not ready: the pass starts over
	}
	cs.done.Store(int64(last))
	if done {
		cs.mu.Lock()
		cs.pos, cs.ready = seq, true
		cs.mu.Unlock()
	}
	return true, nil
}

// clusterFeedStep clusters the records the feed's next changes stored, and
// drops the edges of those it forgot.
func (e *Engine) clusterFeedStep(ctx context.Context, cs *clusterState, pos uint64) (bool, error) {
	type change struct {
		op contract.ChangeOp
		id string
	}
	var changes []change
	upto := pos
	err := e.db.View(func(tx *bbolt.Tx) error {
		return e.feed.Scan(tx, pos, parseNS, func(seq uint64, en feed.Entry) (bool, error) {
			changes = append(changes, change{en.Op, en.ID})
			upto = seq
			return len(changes) < e.clusterChunk(), nil
		})
	})
	if err != nil || upto == pos {
		return false, err
	}
	var found pendingEdges
	var again []string
	for _, c := range changes {
		switch {
		case c.op.Removes():
			found.drop = append(found.drop, c.id)
		case c.op == contract.OpStore || c.op == contract.OpRestore:
			found.drop = append(found.drop, c.id)
			again = append(again, c.id)
		}
	}
	var ords []uint32
	e.mu.RLock()
	for _, id := range slices.Compact(slices.Sorted(slices.Values(again))) {
		if o, ok := e.t.ordOfID(id); ok {
			ords = append(ords, o)
		}
	}
	e.mu.RUnlock()
	if err := e.clusterRecords(ctx, cs, ords, false, &found); err != nil {
		return false, err
	}
	dropped := false
	err = e.db.Update(func(tx *bbolt.Tx) error {
		b := tx.Bucket(bucketClusters)
		if b == nil {
			dropped = true
			return nil // dropped by a repair meanwhile: the next step starts over
		}
		if err := writeEdges(b, cs, &found); err != nil {
			return err
		}
		return b.Put(keyClustersPos, putU64(upto))
	})
	if err != nil {
		return false, err
	}
	if dropped {
		return true, nil
	}
	cs.mu.Lock()
	cs.pos = upto
	cs.mu.Unlock()
	return len(changes) >= e.clusterChunk(), nil
}

// clusterRecords finds the edges of the records at ords (live ones). In
// the first pass (pass) each is related to the records of lower ordinals
// its words lead to, all of them read and posted already; after it, each is
// read (again), related to every record its words lead to, and posted.
func (e *Engine) clusterRecords(ctx context.Context, cs *clusterState, ords []uint32, pass bool, found *pendingEdges) error {
	for _, o := range ords {
		if err := ctx.Err(); err != nil {
			return err
		}
		var p *curate.Probe
		var rec contract.Record
		if !pass {
			r, ok, err := e.recordAt(o)
			if err != nil {
				return err
			}
			if !ok {
				continue
			}
			rec, p = r, curate.NewProbe(r, cs.cfg)
			cs.post.Read(p, o)
		}
		below := uint32(math.MaxUint32)
		if pass {
			below = o
		}
		cands := cs.post.Candidates(o, below)
		if !pass {
			cs.post.Post(o)
		}
		if len(cands) == 0 {
			continue
		}
		if pass {
			r, ok, err := e.recordAt(o)
			if err != nil {
				return err
			}
			if !ok {
				continue
			}
			rec, p = r, curate.NewProbe(r, cs.cfg)
		}
		var ids []string
		e.mu.RLock()
		for _, c := range cands {
			if int(c) < len(e.t.alive) && e.t.alive[c] {
				ids = append(ids, e.t.idOf(uint32(c)))
			}
		}
		e.mu.RUnlock()
		err := e.lookup(contract.GetRequest{IDs: ids}, partHit, func(id string, s *storedRecord) error {
			other, err := s.record(id, false)
			if err != nil {
				return err
			}
			if rel, diff := p.Relate(other); rel != curate.None {
				found.add = append(found.add, curate.Edge{A: rec.ID, B: id, Rel: rel, Diff: diff})
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// warmStep reads the words of the next chunk of records below limit (the
// first pass's end, or every record), without relating them: what the
// clusterer needs of every record before it clusters one, read again by
// each process that keeps the clusters.
func (e *Engine) warmStep(ctx context.Context, cs *clusterState, limit uint32) error {
	e.mu.RLock()
	end := min(limit, e.nextOrd)
	var ords []uint32
	var ids []string
	for o := cs.warmNext; o < end && len(ords) < e.clusterChunk(); o++ {
		if int(o) < len(e.t.alive) && e.t.alive[o] {
			ords = append(ords, o)
			ids = append(ids, e.t.idOf(uint32(o)))
		}
		cs.warmNext = o + 1
	}
	e.mu.RUnlock()
	last := cs.warmNext >= end
	ordOf := make(map[string]uint32, len(ids))
	for i, id := range ids {
		ordOf[id] = ords[i]
	}
	err := e.lookup(contract.GetRequest{IDs: ids}, partHit, func(id string, s *storedRecord) error {
		r, err := s.record(id, false)
		if err != nil {
			return err
		}
		cs.post.Read(curate.NewProbe(r, cs.cfg), ordOf[id])
		return nil
	})
	cs.warmed.Add(int64(len(ids)))
	if err == nil {
		err = ctx.Err()
	}
	if err == nil && last {
		// Every record is read: the order of words is fixed now, and
		// every record's prefix posted.
		cs.post.Freeze()
		cs.warm.Store(true)
	}
	return err
}

// recordAt reads the live record at an ordinal (false: none lives there).
func (e *Engine) recordAt(o uint32) (contract.Record, bool, error) {
	e.mu.RLock()
	if int(o) >= len(e.t.alive) || !e.t.alive[o] {
		e.mu.RUnlock()
		return contract.Record{}, false, nil
	}
	id := e.t.idOf(uint32(o))
	e.mu.RUnlock()
	var rec contract.Record
	var ok bool
	err := e.lookup(contract.GetRequest{IDs: []string{id}}, partHit, func(id string, s *storedRecord) error {
		r, err := s.record(id, false)
		rec, ok = r, err == nil
		return err
	})
	return rec, ok, err
}

// writeEdges applies a step's edges to the bucket and to what the process
// keeps: drops first, then additions (both directions).
func writeEdges(b *bbolt.Bucket, cs *clusterState, found *pendingEdges) error {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	touched := map[string]bool{}
	for _, id := range found.drop {
		for other := range cs.adj[id] {
			delete(cs.adj[other], id)
			touched[other] = true
		}
		delete(cs.adj, id)
		touched[id] = true
	}
	link := func(a, b string, e keptEdge) {
		m := cs.adj[a]
		if m == nil {
			m = map[string]keptEdge{}
			cs.adj[a] = m
		}
		m[b] = e
		touched[a] = true
	}
	for _, e := range found.add {
		link(e.A, e.B, keptEdge{e.Rel, e.Diff})
		link(e.B, e.A, keptEdge{e.Rel, e.Diff})
	}
	for id := range touched {
		key := append(slices.Clone(edgePrefix), id...)
		m := cs.adj[id]
		if len(m) == 0 {
			delete(cs.adj, id)
			if err := b.Delete(key); err != nil {
				return err
			}
			continue
		}
		if err := b.Put(key, encodeEdges(m)); err != nil {
			return err
		}
	}
	return nil
}

// encodeEdges writes a record's edges: for each, the other's id, the
// relation and the difference, lengths as uvarints, ids sorted.
func encodeEdges(m map[string]keptEdge) []byte {
	var out []byte
	for _, id := range slices.Sorted(mapKeys(m)) {
		e := m[id]
		out = binary.AppendUvarint(out, uint64(len(id)))
		out = append(out, id...)
		out = append(out, byte(e.rel))
		out = binary.AppendUvarint(out, uint64(len(e.diff)))
		out = append(out, e.diff...)
	}
	return out
}

func decodeEdges(v []byte) (map[string]keptEdge, error) {
	m := map[string]keptEdge{}
	for len(v) > 0 {
		n, k := binary.Uvarint(v)
		if k <= 0 || uint64(len(v)-k) < n+1 {
			return nil, errCorruptRecord
		}
		id := string(v[k : k+int(n)])
		v = v[k+int(n):]
		rel := curate.Relation(v[0])
		v = v[1:]
		n, k = binary.Uvarint(v)
		if k <= 0 || uint64(len(v)-k) < n {
			return nil, errCorruptRecord
		}
		m[id] = keptEdge{rel, string(v[k : k+int(n)])}
		v = v[k+int(n):]
	}
	return m, nil
}

func mapKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// KeptClusters answers the clusters of a scope from the store's kept
// edges (curate.Kept): its live active and candidate records that have an
// edge, read whole, narrowed by the filter, and grouped by their edges among
// themselves. It first waits (up to 5 s) for the clusterer to reach the
// writes made before the call, so the answer is exact; false when this
// process does not keep the clusters, with other thresholds, or not yet.
func (e *Engine) KeptClusters(ctx context.Context, filter contract.MetaFilter, cfg curate.Config) (curate.KeptAnswer, error) {
	cs := e.clusters.Load()
	if cs == nil || cs.cfg != cfg {
		return curate.KeptAnswer{}, nil
	}
	head := e.feed.Head()
	deadline := time.Now().Add(5 * time.Second)
	for {
		cs.mu.RLock()
		ready, pos := cs.ready, cs.pos
		cs.mu.RUnlock()
		if !ready {
			st := e.ClusterStatus()
			if st.Warming {
				return curate.KeptAnswer{Phase: "reading", Done: st.Warmed, Total: max(st.Total, st.Warmed)}, nil
			}
			return curate.KeptAnswer{Phase: "clustering", Done: st.Done, Total: st.Total}, nil
		}
		if pos >= head {
			break
		}
		if time.Now().After(deadline) {
			return curate.KeptAnswer{}, nil
		}
		e.kickClusters()
		select {
		case <-ctx.Done():
			return curate.KeptAnswer{}, contract.Unavailable("%w", ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
	q := contract.BrowseQuery{Filter: filter, Status: []contract.Status{contract.StatusActive, contract.StatusCandidate}, Limit: 1}
	page, err := e.Browse(ctx, q)
	if err != nil {
		return curate.KeptAnswer{}, err
	}
	cs.mu.RLock()
	ids := make([]string, 0, len(cs.adj))
	for id := range cs.adj {
		ids = append(ids, id)
	}
	cs.mu.RUnlock()
	slices.Sort(ids)
	var members []contract.Record
	in := map[string]bool{}
	for lo := 0; lo < len(ids); lo += contract.MaxGetIDs {
		recs, err := e.GetRecords(ctx, contract.GetRequest{IDs: ids[lo:min(lo+contract.MaxGetIDs, len(ids))], Reach: filter.Reach})
		if err != nil {
			return curate.KeptAnswer{}, err
		}
		for _, r := range recs {
			r.Item = nil // as browse reads them
			if q.Matches(&r) {
				members = append(members, r)
				in[r.ID] = true
			}
		}
	}
	var edges []curate.Edge
	cs.mu.RLock()
	for _, a := range ids {
		if !in[a] {
			continue
		}
		for b, ed := range cs.adj[a] {
			if a < b && in[b] {
				edges = append(edges, curate.Edge{A: a, B: b, Rel: ed.rel, Diff: ed.diff})
			}
		}
	}
	cs.mu.RUnlock()
	return curate.KeptAnswer{Kept: true, Records: page.Total, Clusters: curate.Assemble(members, edges, cfg)}, nil
}

// WaitClusters waits until the store's clusters are kept up to the writes
// made before the call (the first pass done, the feed followed to its head
// then). It answers at once, with an error, when this process does not keep
// them (KeepClusters) or their clustering failed.
func (e *Engine) WaitClusters(ctx context.Context) error {
	cs := e.clusters.Load()
	if cs == nil {
		return contract.Invalid("this process does not keep the store's clusters")
	}
	head := e.feed.Head()
	for {
		if p := cs.err.Load(); p != nil {
			return contract.EngineErr("clustering the store failed: %s", *p)
		}
		cs.mu.RLock()
		done := cs.ready && cs.pos >= head
		cs.mu.RUnlock()
		if done {
			return nil
		}
		e.kickClusters()
		select {
		case <-ctx.Done():
			return contract.Unavailable("%w", ctx.Err())
		case <-e.closing:
			return contract.Unavailable("the store is closed")
		case <-time.After(20 * time.Millisecond):
		}
	}
}
