package bolt

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sync/atomic"
	"time"
	"unsafe"

	bbolt "go.etcd.io/bbolt"

	"mnemo/contract"
	"mnemo/engine/bolt/internal/feed"
	"mnemo/engine/bolt/internal/fileio"
	"mnemo/engine/bolt/internal/sections"
	"mnemo/engine/bolt/internal/strtab"
)

// The table is saved beside mnemo.db (tableFileName) as the raw arrays it
// is made of, so a new process reads it back in one pass instead of
// decoding every record: at a million records that is the difference
// between the facet counts arriving in about a second and in twelve. The
// file describes the store at one position of the change feed; the load
// replays the changes after it (each changed record read as it now is), so a
// store written by processes that never loaded the table (a `mnemo store`,
// an import) is still read from the file. A file that is missing, of another
// version, damaged (each section carries a crc32c) or further behind than
// the feed keeps is not used: the table is rebuilt from the records, as
// before, and saved.
//
// Version 3 leaves out what is derived from the rest, 36 MB at 1M records:
// the ordinal of each id, made again as the rows are checked, and the
// dictionaries' hashes, made in the background or by the first lookup
// (table.hashDictionaries). Version 2 held them, and a row of 112 bytes
// that held observed_at twice; 1 spelled ids out.
//
// Layout, little-endian: a header page (magic, version, row size, feedSeq,
// nextOrd, header crc), then the table's arrays as the sections of package
// sections (each checksummed, with room to grow in the mapping), the
// dictionaries as package strtab writes them.
const (
	tableFileName    = "table.snap"
	tableMagic       = "MNEMOTBL"
	tableFileVersion = 3
	tableHeaderSize  = 32
)

// tableSaveLag is how many changes a process that has the table lets its
// file fall behind before Close saves it again.
const tableSaveLag = 1000

func tablePath(dir string) string { return filepath.Join(dir, tableFileName) }

// usedValues marks, per dictionary, the values a live row refers to; nil
// when no row has left the table (every value is then used).
func (t *table) usedValues() (ids, tags []bool, str [numStrCols][]bool) {
	if t.dropped == 0 {
		return
	}
	ids, tags = make([]bool, t.ids.Len()), make([]bool, t.tags.Len())
	for c := range str {
		str[c] = make([]bool, t.str[c].Len())
	}
	for ord, alive := range t.alive {
		if !alive {
			continue
		}
		r := &t.rows[ord]
		ids[r.idv] = true
		for c, v := range r.str {
			str[c][v] = true
		}
		for _, tg := range t.rowTags(r) {
			tags[tg] = true
		}
	}
	return
}

// counterTriples flattens a facet's per-namespace counters, sorted by
// namespace then value (counterGroup searches them).
func (t *table) counterTriples(fi int) []uint32 {
	t.allCounters(fi)
	nss := slices.Sorted(maps.Keys(t.counters[fi]))
	var out []uint32
	for _, ns := range nss {
		m := t.counters[fi][ns]
		for _, v := range slices.Sorted(maps.Keys(m)) {
			out = append(out, ns, v, uint32(m[v]))
		}
	}
	return out
}

func pairsOf(m map[uint32]uint64) []uint32 {
	out := make([]uint32, 0, 2*len(m))
	for k, c := range m {
		out = append(out, k, uint32(c))
	}
	return out
}

// saveTable writes the table as of feedSeq. The ids, dictionary values and
// tags that only records no longer in the table referred to are written as
// zeros (usedValues), so a saved table never keeps a forgotten record's
// metadata. The caller holds mu (read suffices) with the table loaded.
func (e *Engine) saveTable(feedSeq uint64) error {
	t := e.t
	usedIDs, usedTags, usedStr := t.usedValues()
	err := fileio.WriteAtomic(tablePath(e.dir), func(f *os.File) error {
		hdr := make([]byte, tableHeaderSize)
		copy(hdr, tableMagic)
		le := binary.LittleEndian
		le.PutUint32(hdr[8:], tableFileVersion)
		le.PutUint32(hdr[12:], uint32(unsafe.Sizeof(row{})))
		le.PutUint64(hdr[16:], feedSeq)
		le.PutUint32(hdr[24:], e.nextOrd)
		le.PutUint32(hdr[28:], crc32.Checksum(hdr[:28], fileio.Castagnoli))
		if _, err := f.WriteAt(hdr, 0); err != nil {
			return err
		}
		s := sections.NewWriter(f)
		sections.Put(s, t.rows)
		sections.Put(s, t.alive)
		sections.Put(s, []int64{int64(t.live), int64(t.expiring)})
		t.ids.Write(s, usedIDs)
		// Namespaces stay: they name places, not a record's content, and
		// each must parse when read back.
		t.ns.Write(s, nil)
		for c, d := range t.str {
			d.Write(s, usedStr[c])
		}
		t.tags.Write(s, usedTags)
		sections.Put(s, t.tagArena)
		for fi := range numFacets {
			sections.Put(s, t.counterTriples(fi))
			sections.Put(s, t.global[fi])
			sections.Put(s, t.dflt[fi])
			sections.Put(s, pairsOf(t.missing[fi]))
		}
		sections.Put(s, pairsOf(t.nsTotal))
		return s.Finish()
	})
	if err == nil {
		e.tables.saved, e.tables.savedOK = feedSeq, true
		e.tables.savedDropped = e.t.dropped
	}
	return err
}

// saveTableIfBehind saves the table when the file lags the feed by
// tableSaveLag changes or more, holds a record that has left the store since
// (a forget must not leave its metadata on disk), or is missing. The caller
// holds mu.
func (e *Engine) saveTableIfBehind() error {
	if !e.largeStore || !e.tables.loaded.Load() {
		return nil
	}
	if e.tables.savedOK && e.feed.Seq()-e.tables.saved < tableSaveLag && e.t.dropped == e.tables.savedDropped {
		return nil
	}
	return e.saveTable(e.feed.Seq())
}

// readTableFile maps a saved table copy-on-write and uses its arrays in
// place; it returns the table and the feed position it describes. The
// mapping is never unmapped: strings handed out by the table (ids, facet
// values) point into it and may outlive the engine, and once its pages are
// released it costs address space, not memory.
func readTableFile(path string, nextOrd uint32) (*table, uint64, error) {
	data, err := fileio.MapPrivate(path)
	if err != nil {
		return nil, 0, err
	}
	t, feedSeq, err := parseTableFile(data, nextOrd)
	// Reading touched every page (the checksums); give them back before
	// any write makes one private.
	fileio.ReleaseMapped(data)
	if err != nil {
		fileio.UnmapPrivate(data)
	}
	return t, feedSeq, err
}

func parseTableFile(data []byte, nextOrd uint32) (*table, uint64, error) {
	if len(data) < sections.Align || string(data[:8]) != tableMagic {
		return nil, 0, errors.New("not a table file")
	}
	hdr := data[:tableHeaderSize]
	le := binary.LittleEndian
	if le.Uint32(hdr[28:]) != crc32.Checksum(hdr[:28], fileio.Castagnoli) {
		return nil, 0, errors.New("the table file's header checksum does not match")
	}
	if v := le.Uint32(hdr[8:]); v != tableFileVersion {
		return nil, 0, fmt.Errorf("table file version %d, this mnemo writes %d", v, tableFileVersion)
	}
	if sz := le.Uint32(hdr[12:]); sz != uint32(unsafe.Sizeof(row{})) {
		return nil, 0, fmt.Errorf("table file rows of %d bytes, this mnemo's are %d", sz, unsafe.Sizeof(row{}))
	}
	feedSeq, fileNext := le.Uint64(hdr[16:]), le.Uint32(hdr[24:])
	if fileNext > nextOrd {
		return nil, 0, fmt.Errorf("table file names ordinal %d, the store's next is %d", fileNext, nextOrd)
	}
	s := sections.NewReader(data)
	t := newTable()
	t.rows = sections.Next[row](s)
	t.alive = sections.Next[bool](s)
	counts := sections.Next[int64](s)
	t.ids = strtab.Read(s)
	t.ns = strtab.Read(s)
	for i := range t.str {
		t.str[i] = strtab.Read(s)
	}
	t.tags = strtab.Read(s)
	t.tagArena = sections.Next[uint32](s)
	var triples [numFacets][]uint32
	var missing [numFacets][]uint32
	for fi := range numFacets {
		triples[fi] = sections.Next[uint32](s)
		t.global[fi] = sections.Next[uint32](s)
		t.dflt[fi] = sections.Next[uint32](s)
		missing[fi] = sections.Next[uint32](s)
	}
	totals := sections.Next[uint32](s)
	if err := s.Err(); err != nil {
		return nil, 0, fmt.Errorf("table file: %w", err)
	}
	sums := make(chan error, 1)
	go func() { sums <- s.Verify() }()
	aerr := t.adopt(counts, triples, missing, totals)
	if err := <-sums; err != nil {
		return nil, 0, fmt.Errorf("table file: %w", err)
	}
	if aerr != nil {
		return nil, 0, fmt.Errorf("table file: %w", aerr)
	}
	return t, feedSeq, nil
}

// adopt checks that the arrays read fit together (every reference in
// range, so nothing can be misread) and rebuilds what was left out.
func (t *table) adopt(counts []int64, triples, missing [numFacets][]uint32, totals []uint32) error {
	if len(t.alive) != len(t.rows) || len(counts) != 2 || len(totals)%2 != 0 {
		return errors.New("its arrays disagree in length")
	}
	t.live, t.expiring = int(counts[0]), int(counts[1])
	for i := 1; i < t.ns.Len(); i++ {
		ns, err := contract.ParseNamespace(t.ns.Val(uint32(i)))
		if err != nil {
			return fmt.Errorf("namespace %d: %w", i, err)
		}
		t.nsVals = append(t.nsVals, ns)
		t.nsDefault = append(t.nsDefault, contract.AdmittedBy(nil, ns))
	}
	t.stat = make([]uint8, len(t.rows))
	n := t.ids.Len()
	t.ordOf = make([]uint32, n, n+n/8)
	for ord := range t.rows {
		r := &t.rows[ord]
		t.stat[ord] = r.status
		if int(r.ns) >= t.ns.Len() || int(r.idv) >= t.ids.Len() || uint64(r.tagOff)+uint64(r.tagN) > uint64(len(t.tagArena)) ||
			int(r.kind) >= len(kindByCode) || int(r.status) >= len(statusByCode) || int(r.source()) >= len(sourceKinds) || r.subSource&subMsMask >= 1e6 {
			return fmt.Errorf("row %d refers out of range", ord)
		}
		for c, v := range r.str {
			if int(v) >= t.str[c].Len() {
				return fmt.Errorf("row %d refers out of range", ord)
			}
		}
		if t.alive[ord] {
			t.ordOf[r.idv] = uint32(ord) + 1
		}
	}
	for _, v := range t.tagArena {
		if int(v) >= t.tags.Len() {
			return errors.New("a tag refers out of range")
		}
	}
	for fi := range numFacets {
		if len(triples[fi])%3 != 0 || len(missing[fi])%2 != 0 || len(t.dflt[fi]) != len(t.global[fi]) {
			return errors.New("the counters disagree in length")
		}
		for i := 3; i < len(triples[fi]); i += 3 {
			if p, q := triples[fi][i-3:i-1], triples[fi][i:i+2]; p[0] > q[0] || p[0] == q[0] && p[1] >= q[1] {
				return errors.New("the counters are out of order")
			}
		}
		for i := 0; i < len(triples[fi]); i += 3 {
			if int(triples[fi][i]) >= t.ns.Len() {
				return errors.New("a counter refers to a namespace out of range")
			}
		}
		t.counterBase[fi] = triples[fi]
		for i := 0; i < len(missing[fi]); i += 2 {
			t.missing[fi][missing[fi][i]] = uint64(missing[fi][i+1])
		}
	}
	for i := 0; i < len(totals); i += 2 {
		t.nsTotal[totals[i]] = uint64(totals[i+1])
	}
	return nil
}

// loadSavedTable installs the saved table and replays the changes after it.
// It reports false when there is no usable file (the caller then loads from
// the records); a file that fails its checks is removed.
func (e *Engine) loadSavedTable() (bool, error) {
	path := tablePath(e.dir)
	e.mu.RLock()
	nextOrd := e.nextOrd
	e.mu.RUnlock()
	t, feedSeq, err := readTableFile(path, nextOrd)
	if err != nil {
		if !errors.Is(err, os.ErrNotExist) {
			e.log.Warn("the saved table is unusable; loading it from the records", "err", err)
			_ = os.Remove(path)
		}
		return false, nil
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if feedSeq > e.feed.Seq() || feedSeq < e.feed.Pruned() || e.feed.Seq()-feedSeq > tableReplayLimit(len(t.rows)) {
		return false, nil
	}
	// The dictionaries' hashes are not in the file: made here beside the
	// calls that need none (a browse by status, the root explore), and by
	// the first lookup that needs one if it comes first (the replay's).
	go t.hashDictionaries()
	err = e.db.View(func(tx *bbolt.Tx) error {
		recs := e.records(tx)
		return e.feed.Scan(tx, feedSeq, t.namespaceOf, func(_ uint64, c feed.Entry) (bool, error) {
			rv := recs.Get(c.ID)
			var s storedRecord
			if rv != nil {
				var err error
				if s, err = e.codec.decode(rv, partHeader, t.namespaceOf); err != nil {
					return false, fmt.Errorf("record %s: %w", c.ID, err)
				}
			}
			if ord, ok := t.ordOfID(c.ID); ok && (rv == nil || s.ord != ord) {
				t.remove(ord)
			}
			if rv != nil {
				t.put(c.ID, &s)
			}
			return true, nil
		})
	})
	if err != nil {
		return false, contract.EngineErr("replay the saved table: %w", err)
	}
	e.t = t
	e.tables.saved, e.tables.savedOK, e.tables.fromFile = feedSeq, true, true
	// The replay's removals are records the file still holds.
	e.tables.savedDropped = 0
	return true, nil
}

// kickTableSave saves the table in the background a moment after a forget
// (a burst of forgets is one save), so a long-running process does not keep
// a forgotten record's metadata in the file until it closes. Called under
// mu's write lock; never waits for closeMu (Close may hold it while waiting
// for the call that got here).
func (e *Engine) kickTableSave() {
	if !e.largeStore || !e.tables.loaded.Load() {
		return
	}
	e.startOnce(&e.tables.saving, func() bool {
		select {
		case <-e.closing:
			return false // Close saves it
		case <-time.After(tableSaveQuiet):
		}
		e.mu.RLock()
		defer e.mu.RUnlock()
		if err := e.saveTableIfBehind(); err != nil {
			e.log.Error("saving the table failed; the next open loads it from the records", "err", err)
		}
		return false
	})
}

// startOnce runs f in the background, again while it reports more is due,
// unless a run flagged by running is under way or the store is closing. It
// never waits for closeMu: a call (a forget, a fetch flushing the index) may
// get here while Close holds it waiting for that call; work left out is
// started by the next kick.
func (e *Engine) startOnce(running *atomic.Bool, f func() (again bool)) bool {
	if running.Swap(true) {
		return false
	}
	if !e.closeMu.TryLock() {
		running.Store(false)
		return false
	}
	defer e.closeMu.Unlock()
	if e.closed.Load() {
		running.Store(false)
		return false
	}
	e.goBackground(func() {
		defer running.Store(false)
		for f() && !e.closed.Load() {
		}
	})
	return true
}

// tableSaveQuiet is how long after a forget the table is saved.
const tableSaveQuiet = time.Second

// tableReplayLimit is how many changes a load replays on top of a saved
// table of n rows before loading from the records is the cheaper way.
func tableReplayLimit(n int) uint64 { return max(100_000, uint64(n)/4) }
