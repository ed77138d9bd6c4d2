package bolt

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"

	bbolt "go.etcd.io/bbolt"

	"mnemo/contract"
	"mnemo/engine/bolt/internal/feed"
	"mnemo/engine/bolt/internal/index"
)

// CheckReport is what Check found: one entry per derived structure.
type CheckReport struct {
	Records    int          `json:"records"`
	Consistent bool         `json:"consistent"`
	Repaired   bool         `json:"repaired,omitempty"`
	Checks     []CheckEntry `json:"checks"`
}

// CheckEntry is one structure's verdict: how many entries were compared and
// how many disagree with the records, with a few examples.
type CheckEntry struct {
	Name          string   `json:"name"`
	Checked       int      `json:"checked"`
	Disagreements int      `json:"disagreements"`
	Examples      []string `json:"examples,omitempty"`
	Note          string   `json:"note,omitempty"`
}

const maxExamples = 5

// The names of the checks, as reported (repair keys on them too).
const (
	checkBrowseKeys = "browse keys (updated_at, created_at, confidence)"
	checkTotals     = "namespace totals"
	checkTable      = "table"
	checkVectors    = "vectors"
	checkContent    = "content index"
	checkSearch     = "search index"
	checkFeed       = "change feed"
	checkClusters   = "kept clusters"
)

func (c *CheckEntry) disagree(format string, args ...any) {
	c.Disagreements++
	if len(c.Examples) < maxExamples {
		c.Examples = append(c.Examples, fmt.Sprintf(format, args...))
	}
}

// Check verifies every structure derived from the records (the ordered
// browse keys, the per-namespace totals, the in-memory table, the vectors,
// the content index and the search index) against the records, from one
// snapshot taken under the write lock. With repair it then rebuilds what
// disagrees: the bbolt structures in one transaction, the search index in
// the background (health says degraded with its progress meanwhile).
// progress, when set, is told how many records have been read.
func (e *Engine) Check(ctx context.Context, repair bool, progress func(done, total int)) (CheckReport, error) {
	if err := e.enter(ctx); err != nil {
		return CheckReport{}, err
	}
	defer e.leave()
	if err := e.waitTable(ctx); err != nil {
		return CheckReport{}, err
	}
	if err := e.WaitIndex(ctx); err != nil {
		return CheckReport{}, contract.AsError(err)
	}
	if err := e.waitVectors(ctx); err != nil {
		return CheckReport{}, err
	}
	rep, err := e.check(ctx, progress)
	if err != nil || !repair || rep.Consistent {
		return rep, err
	}
	if err := e.repair(ctx, rep); err != nil {
		return rep, err
	}
	if err := e.WaitIndex(ctx); err != nil {
		return rep, contract.AsError(err)
	}
	after, err := e.check(ctx, progress)
	after.Repaired = true
	return after, err
}

type checkedRecord struct {
	ord        uint32
	ns         string
	status     contract.Status
	kind       contract.ItemKind
	updated    int64
	created    int64
	confidence float32
	text       string
}

func (e *Engine) check(ctx context.Context, progress func(done, total int)) (CheckReport, error) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	rep := CheckReport{}
	records := CheckEntry{Name: "records"}
	orderKeys := CheckEntry{Name: checkBrowseKeys}
	totals := CheckEntry{Name: checkTotals}
	tbl := CheckEntry{Name: checkTable}
	vectors := CheckEntry{Name: checkVectors}
	content := CheckEntry{Name: checkContent}
	search := CheckEntry{Name: checkSearch}
	meta := CheckEntry{Name: "sequence and ordinals"}
	feed := CheckEntry{Name: checkFeed}
	clusters := CheckEntry{Name: checkClusters}
	err := e.db.View(func(tx *bbolt.Tx) error {
		total := tx.Bucket(bucketRecords).Stats().KeyN
		recs := map[string]checkedRecord{}
		nsCount := map[string]uint64{}
		var maxOrd uint32
		n := 0
		rb := e.records(tx)
		err := rb.b.ForEach(func(k, v []byte) error {
			n++
			if n%4096 == 0 {
				if progress != nil {
					progress(n, total)
				}
				if err := ctx.Err(); err != nil {
					return contract.Unavailable("%w", err)
				}
			}
			records.Checked++
			s, err := e.codec.decode(v, partHit, e.t.namespaceOf)
			if err != nil {
				records.disagree("record %s does not decode: %v", rb.id(k), err)
				return nil
			}
			ns := s.meta.Namespace.String()
			recs[rb.id(k)] = checkedRecord{ord: s.ord, ns: ns, status: s.status, kind: s.kind,
				updated: s.updated, created: s.created, confidence: s.confidence, text: s.text}
			nsCount[ns]++
			maxOrd = max(maxOrd, s.ord)
			return nil
		})
		if err != nil {
			return err
		}
		rep.Records = len(recs)
		feed = e.checkFeed(tx, recs)

		// Ordered keys: each record has exactly its own, pointing at its
		// ordinal (by_created's marking it moved when it has), and no key
		// names a record that is not there: by_created's, by_updated's when
		// its updated_at is not its created_at, by_confidence's for a
		// learning.
		want := func(r checkedRecord) int {
			n := 1
			if r.updated != r.created {
				n++
			}
			if r.kind == contract.KindLearning {
				n++
			}
			return n
		}
		seen := map[string]int{}
		walk := func(bucket []byte, keyOf func(id string, r checkedRecord) ([]byte, []byte), split func(k []byte) (string, bool)) {
			_ = tx.Bucket(bucket).ForEach(func(k, v []byte) error {
				orderKeys.Checked++
				id, ok := split(k)
				r, exists := recs[id]
				var wantK, wantV []byte
				if exists {
					wantK, wantV = keyOf(id, r)
				}
				switch {
				case !ok:
					orderKeys.disagree("%s key %x is malformed", bucket, k)
				case !exists:
					orderKeys.disagree("%s key names %s, which is not a record", bucket, id)
				case wantK == nil:
					orderKeys.disagree("%s holds a key of %s, whose updated_at is its created_at", bucket, id)
				case !bytes.Equal(k, wantK) || !bytes.Equal(v, wantV):
					orderKeys.disagree("%s key of %s is stale", bucket, id)
				default:
					seen[id]++
				}
				return nil
			})
		}
		splitMillis := func(k []byte) (string, bool) { _, id, ok := splitDescMillisKey(k); return id, ok }
		walk(bucketUpdated, func(id string, r checkedRecord) ([]byte, []byte) {
			if r.updated == r.created {
				return nil, nil
			}
			return descMillisKey(r.updated, id), ordValue(r.ord)
		}, splitMillis)
		walk(bucketCreated, func(id string, r checkedRecord) ([]byte, []byte) {
			return descMillisKey(r.created, id), createdValue(r.ord, r.created, r.updated)
		}, splitMillis)
		walk(bucketConf, func(id string, r checkedRecord) ([]byte, []byte) {
			return confKey(r.confidence, id), ordValue(r.ord)
		}, splitConfKey)
		// A bulk load's deferred keys (ordered.go) are put newest first
		// after it ends; till then the records its mark covers may lack
		// theirs.
		mark, marked := parseMark(tx.Bucket(bucketMeta).Get(keyOrderedFrom))
		for id, r := range recs {
			if marked && r.ord >= mark.from && r.ord < mark.upto {
				continue
			}
			if seen[id] != want(r) {
				orderKeys.disagree("record %s has %d of its %d browse keys", id, seen[id], want(r))
			}
		}

		if !e.totalsOK {
			totals.Note = "not yet written (a store from schema 1 before its table loaded)"
		} else {
			stored := map[string]uint64{}
			_ = tx.Bucket(bucketTotals).ForEach(func(k, v []byte) error {
				stored[string(k)] = getU64(v)
				return nil
			})
			for ns, c := range nsCount {
				totals.Checked++
				if stored[ns] != c {
					totals.disagree("namespace %s: total %d, records %d", ns, stored[ns], c)
				}
			}
			for ns, c := range stored {
				if _, ok := nsCount[ns]; !ok {
					totals.Checked++
					totals.disagree("namespace %s: total %d, no records", ns, c)
				}
			}
		}

		if e.t.live != len(recs) {
			tbl.disagree("table holds %d live rows, the store %d records", e.t.live, len(recs))
		}
		for id, r := range recs {
			tbl.Checked++
			ord, ok := e.t.ordOfID(id)
			switch {
			case !ok:
				tbl.disagree("record %s is missing from the table", id)
			case ord != r.ord || !e.t.alive[ord]:
				tbl.disagree("record %s has ordinal %d in the table, %d in the store", id, ord, r.ord)
			case statusByCode[e.t.rows[ord].status] != r.status || e.t.ns.Val(e.t.rows[ord].ns) != r.ns ||
				e.t.rows[ord].updated != r.updated:
				tbl.disagree("record %s: the table's status, namespace or updated_at differ", id)
			}
		}
		for _, f := range currentExploreEntries(tx, e.seq) {
			if !e.exploreEntryMatches(tx, f) {
				tbl.disagree("the stored root explore of %s differs from the table's", f)
			}
		}

		if e.vec.store != nil {
			v := e.vec.store
			// While a new generation of the learned embedder re-embeds the
			// store, records still hold the previous generation's vector (and
			// vector search still answers them with it): work under way, not
			// damage. Once no re-embedding runs, such a record disagrees.
			reembedding := e.learn != nil && e.learn.busy.Load()
			recOrds := make(map[uint32]bool, len(recs))
			previous := 0
			for id, r := range recs {
				recOrds[r.ord] = true
				switch {
				case v.has(r.ord):
				case reembedding && v.holds(r.ord, v.prev):
					previous++
				default:
					vectors.disagree("record %s has no vector", id)
				}
			}
			if previous > 0 {
				vectors.Note = fmt.Sprintf("%d records still hold the previous generation's vector: the store is being re-embedded", previous)
			}
			for _, ord := range e.storedVectorRows(tx) {
				vectors.Checked++
				if !recOrds[ord] {
					vectors.disagree("a vector is stored for ordinal %d, which is not a record", ord)
				}
			}
		}

		// The content index is a superset: every record's ordinal must be a
		// candidate for a needle taken from its own text.
		for id, r := range recs {
			folded := contract.FoldCase(r.text)
			if len(folded) < 3 {
				continue
			}
			content.Checked++
			needle := folded[:min(len(folded), 12)]
			cand, ok := e.tri.Candidates(needle)
			if !ok {
				content.Note = "not built yet"
				break
			}
			if !cand.Contains(r.ord) {
				content.disagree("record %s is not a candidate for a needle from its own text", id)
			}
			if content.Checked >= 2000 {
				content.Note = "checked on a sample of 2,000 records"
				break
			}
		}

		if nextOrd := e.nextOrd; len(recs) > 0 && maxOrd >= nextOrd {
			meta.disagree("a record has ordinal %d, but the next ordinal is %d", maxOrd, nextOrd)
		}
		meta.Checked = 1
		if stored := getU64(tx.Bucket(bucketMeta).Get(keySeq)); stored != e.seq {
			meta.disagree("the stored sequence is %d, the engine's %d", stored, e.seq)
		}

		e.checkClusters(tx, recs, &clusters)

		search.Checked = 1
		applied := e.idx.applied.Load()
		if applied != e.seq {
			search.Note = fmt.Sprintf("the index has applied sequence %d of %d", applied, e.seq)
		} else if docs, err := e.indexDocCount(); err != nil {
			search.disagree("the index cannot count its documents: %v", err)
		} else if int(docs) != len(recs) {
			search.disagree("the index holds %d documents, the store %d records", docs, len(recs))
		}
		return nil
	})
	if err != nil {
		return CheckReport{}, contract.AsError(err)
	}
	e.releasePages()
	rep.Checks = []CheckEntry{records, meta, orderKeys, totals, tbl, vectors, content, search, feed, clusters}
	rep.Consistent = true
	for _, c := range rep.Checks {
		rep.Consistent = rep.Consistent && c.Disagreements == 0
	}
	return rep, nil
}

// checkClusters verifies the kept clusters (clusters.go): every edge is kept
// on both of its records alike, and names records the store holds, or ones
// removed after the position the clusters have reached (their removal is
// still to be applied).
func (e *Engine) checkClusters(tx *bbolt.Tx, recs map[string]checkedRecord, c *CheckEntry) {
	b := tx.Bucket(bucketClusters)
	if b == nil {
		c.Note = "not kept: no process has held the store long enough to cluster it"
		return
	}
	pos, ok := getU64OK(b.Get(keyClustersPos))
	if p := b.Get(keyClustersPass); !ok && len(p) == 16 {
		pos = binary.BigEndian.Uint64(p[8:])
		c.Note = "the first pass is under way"
	}
	removedSince := map[string]bool{}
	_ = e.feed.Scan(tx, pos, parseNS, func(_ uint64, en feed.Entry) (bool, error) {
		if en.Op.Removes() {
			removedSince[en.ID] = true
		}
		return true, nil
	})
	adj := map[string]map[string]keptEdge{}
	cur := b.Cursor()
	for k, v := cur.Seek(edgePrefix); k != nil && bytes.HasPrefix(k, edgePrefix); k, v = cur.Next() {
		id := string(k[len(edgePrefix):])
		edges, err := decodeEdges(v)
		if err != nil {
			c.disagree("the edges of record %s do not decode", id)
			continue
		}
		adj[id] = edges
	}
	for id, edges := range adj {
		c.Checked++
		if _, ok := recs[id]; !ok && !removedSince[id] {
			c.disagree("record %s has kept edges but is not in the store", id)
		}
		for other, ed := range edges {
			if back, ok := adj[other][id]; !ok || back != ed {
				c.disagree("the edge from %s to %s is not kept on %s alike", id, other, other)
			}
		}
	}
}

// repair rebuilds what the report found wrong. Records that do not decode
// are left alone (they are the truth; nothing derived can restore them).
func (e *Engine) repair(ctx context.Context, rep CheckReport) error {
	bad := map[string]bool{}
	for _, c := range rep.Checks {
		if c.Disagreements > 0 {
			bad[c.Name] = true
		}
	}
	e.mu.Lock()
	err := e.db.Update(func(tx *bbolt.Tx) error {
		if bad[checkClusters] {
			// The clusters are derived: the holder clusters the store again.
			if err := tx.DeleteBucket(bucketClusters); err != nil {
				return err
			}
		}
		for _, b := range [][]byte{bucketUpdated, bucketCreated, bucketConf} {
			if !bad[checkBrowseKeys] {
				break
			}
			if err := tx.DeleteBucket(b); err != nil {
				return err
			}
			if _, err := tx.CreateBucket(b); err != nil {
				return err
			}
		}
		if bad[checkBrowseKeys] {
			// Every record's keys are put below, deferred ones too.
			if err := tx.Bucket(bucketMeta).Delete(keyOrderedFrom); err != nil {
				return err
			}
			tx.OnCommit(func() { e.ordered.deferred.Store(false) })
		}
		recs := e.records(tx)
		c := recs.Cursor()
		for k, v := c.First(); k != nil; k, v = c.Next() {
			s, err := e.codec.decode(v, partHeader, e.t.namespaceOf)
			if err != nil {
				continue
			}
			id := recs.id(k)
			if bad[checkBrowseKeys] {
				if err := putTimeKeys(tx, id, s.ord, s.created, s.updated); err != nil {
					return err
				}
				if s.kind == contract.KindLearning {
					if err := tx.Bucket(bucketConf).Put(confKey(s.confidence, id), ordValue(s.ord)); err != nil {
						return err
					}
				}
			}
			if bad[checkTable] {
				e.t.put(id, &s)
			}
		}
		if bad[checkTable] {
			for ord, alive := range e.t.alive {
				if alive && recs.Get(e.t.idOf(uint32(ord))) == nil {
					e.cache.drop(uint32(ord))
					e.t.remove(uint32(ord))
				}
			}
		}
		if bad[checkVectors] {
			var ghosts []uint32
			for _, ord := range e.storedVectorRows(tx) {
				if int(ord) >= len(e.t.alive) || !e.t.alive[ord] {
					ghosts = append(ghosts, ord)
				}
			}
			if err := e.vec.store.writeBlocks(tx, ghosts, false); err != nil {
				return err
			}
		}
		if bad[checkTotals] || bad[checkTable] {
			if err := e.writeTotals(tx); err != nil {
				return err
			}
		}
		if bad[checkTable] {
			// The saved table was read with the disagreement: the next
			// process must not read it back (Close saves the repaired one).
			_ = os.Remove(tablePath(e.dir))
			e.tables.savedOK = false
			e.forgetMatched()
			if err := e.writeExploreEntries(tx); err != nil {
				return err
			}
		}
		return nil
	})
	e.mu.Unlock()
	if err != nil {
		return contract.AsError(err)
	}
	if cs := e.clusters.Load(); bad[checkClusters] && cs != nil {
		// Not ready until this holder has clustered the store again: a
		// wait or a read right after the repair must not answer from the
		// edges it dropped (the clusterer notices the bucket gone at its
		// next step).
		cs.mu.Lock()
		cs.ready = false
		cs.mu.Unlock()
		e.kickClusters()
	}
	if bad[checkVectors] && e.vec.store != nil {
		if err := e.embedMissing(ctx); err != nil {
			return err
		}
	}
	if bad[checkContent] {
		// The file said what check found wrong: build from the records.
		e.tri.Discard()
		if err := e.buildTrigrams(); err != nil {
			return err
		}
	}
	if bad[checkSearch] {
		return e.rebuildSearchIndex()
	}
	return nil
}

// rebuildSearchIndex starts the search index over from the records.
func (e *Engine) rebuildSearchIndex() error {
	e.idx.applyMu.Lock()
	if err := e.replaceIndex(); err != nil {
		e.idx.applyMu.Unlock()
		return err
	}
	e.idx.rebuilding.Store(true)
	e.idx.applyMu.Unlock()
	return e.rebuildIndex()
}

// replaceIndex swaps in an empty index; the caller holds idx.applyMu.
func (e *Engine) replaceIndex() error {
	e.idx.mu.Lock()
	defer e.idx.mu.Unlock()
	_ = e.ix.Close()
	dir := filepath.Join(e.dir, IndexDir)
	if err := os.RemoveAll(dir); err != nil {
		return contract.EngineErr("remove the search index: %w", err)
	}
	ix, err := openIndexDir(dir)
	if err != nil {
		return err
	}
	e.ix = ix
	return nil
}

// indexDocCount counts the index's documents under its lock.
func (e *Engine) indexDocCount() (uint64, error) {
	e.idx.mu.RLock()
	defer e.idx.mu.RUnlock()
	return e.ix.DocCount()
}

func openIndexDir(dir string) (*index.Index, error) {
	ix, err := index.Open(dir)
	if err != nil {
		return nil, contract.EngineErr("open index: %w", err)
	}
	return ix, nil
}
