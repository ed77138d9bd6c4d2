package bolt

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"time"
	"unsafe"

	bbolt "go.etcd.io/bbolt"

	"mnemo/contract"
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
// Layout, little-endian: a header (magic, version, row size, feedSeq,
// nextOrd, header crc), then sections, each u64 length, bytes, u32 crc.
const (
	tableFileName    = "table.snap"
	tableMagic       = "MNEMOTBL"
	tableFileVersion = 1
	tableHeaderSize  = 32
)

// tableSaveLag is how many changes a process that has the table lets its
// file fall behind before Close saves it again.
const tableSaveLag = 1000

func tablePath(dir string) string { return filepath.Join(dir, tableFileName) }

// bytesOf views a slice of a pointer-free type as its bytes.
func bytesOf[T any](s []T) []byte {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), len(s)*int(unsafe.Sizeof(s[0])))
}

type sectionWriter struct {
	w   *bufio.Writer
	err error
}

func (s *sectionWriter) put(b []byte) {
	if s.err != nil {
		return
	}
	var n [8]byte
	binary.LittleEndian.PutUint64(n[:], uint64(len(b)))
	if _, s.err = s.w.Write(n[:]); s.err != nil {
		return
	}
	if _, s.err = s.w.Write(b); s.err != nil {
		return
	}
	var c [4]byte
	binary.LittleEndian.PutUint32(c[:], crc32.Checksum(b, castagnoli))
	_, s.err = s.w.Write(c[:])
}

// sectionReader reads sections straight into the arrays they fill: no
// buffer the size of the file, so loading costs the table's memory once.
type sectionReader struct {
	r   *bufio.Reader
	max uint64
	err error
}

// section reads the next section into a new slice of T.
func section[T any](s *sectionReader) []T {
	if s.err != nil {
		return nil
	}
	var hdr [8]byte
	if _, s.err = io.ReadFull(s.r, hdr[:]); s.err != nil {
		return nil
	}
	n := binary.LittleEndian.Uint64(hdr[:])
	size := uint64(unsafe.Sizeof(*new(T)))
	if n > s.max || n%size != 0 {
		s.err = fmt.Errorf("a section of %d bytes does not fit", n)
		return nil
	}
	// Room to grow: the rows and dictionaries are appended to by the
	// replay and the writes that follow, and a slice read at its exact
	// length would be copied whole on the first append.
	k := int(n / size)
	out := make([]T, k, k+k/16+64)
	b := bytesOf(out)
	if _, s.err = io.ReadFull(s.r, b); s.err != nil {
		return nil
	}
	var c [4]byte
	if _, s.err = io.ReadFull(s.r, c[:]); s.err != nil {
		return nil
	}
	if binary.LittleEndian.Uint32(c[:]) != crc32.Checksum(b, castagnoli) {
		s.err = errors.New("a section's checksum does not match")
		return nil
	}
	return out
}

func one[T any](s *sectionReader) T {
	v := section[T](s)
	if s.err == nil && len(v) != 1 {
		s.err = errors.New("a scalar section holds more than one value")
	}
	if len(v) != 1 {
		var zero T
		return zero
	}
	return v[0]
}

// putMasked writes a dictionary's bytes with the values used does not
// mark as zeros: the offsets, and so every other value, stay as they are.
func (s *sectionWriter) putMasked(d *strtab, used []bool) {
	if used == nil {
		s.put(d.data)
		return
	}
	if s.err != nil {
		return
	}
	var n [8]byte
	binary.LittleEndian.PutUint64(n[:], uint64(len(d.data)))
	if _, s.err = s.w.Write(n[:]); s.err != nil {
		return
	}
	crc := uint32(0)
	zeros := make([]byte, 4096)
	for id := 1; id < d.len(); id++ {
		v := d.data[d.offs[id]:d.offs[id+1]]
		if !used[id] {
			for len(v) > 0 {
				z := zeros[:min(len(v), len(zeros))]
				crc = crc32.Update(crc, castagnoli, z)
				if _, s.err = s.w.Write(z); s.err != nil {
					return
				}
				v = v[len(z):]
			}
			continue
		}
		crc = crc32.Update(crc, castagnoli, v)
		if _, s.err = s.w.Write(v); s.err != nil {
			return
		}
	}
	var c [4]byte
	binary.LittleEndian.PutUint32(c[:], crc)
	_, s.err = s.w.Write(c[:])
}

// usedValues marks, per dictionary, the values a live row refers to; nil
// when no row has left the table (every value is then used).
func (t *table) usedValues() (ids, tags []bool, str [numStrCols][]bool) {
	if t.dropped == 0 {
		return
	}
	ids, tags = make([]bool, t.ids.len()), make([]bool, t.tags.len())
	for c := range str {
		str[c] = make([]bool, t.str[c].len())
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

func (t *table) writeStrtab(s *sectionWriter, d *strtab, used []bool) {
	s.putMasked(d, used)
	s.put(bytesOf(d.offs))
	s.put(bytesOf([]uint32{d.empty}))
	s.put(bytesOf([]uint64{d.key}))
	s.put(bytesOf(d.slots))
}

func readStrtab(s *sectionReader) *strtab {
	d := newStrtab()
	d.data = section[byte](s)
	d.offs = section[uint32](s)
	d.empty = one[uint32](s)
	if s.err != nil {
		return d
	}
	if len(d.offs) < 2 || d.offs[0] != 0 || uint64(d.offs[len(d.offs)-1]) != uint64(len(d.data)) {
		s.err = errors.New("a dictionary's offsets do not fit its bytes")
		return d
	}
	for i := 1; i < len(d.offs); i++ {
		if d.offs[i] < d.offs[i-1] {
			s.err = errors.New("a dictionary's offsets go backwards")
			return d
		}
	}
	d.key = one[uint64](s)
	d.slots = section[uint32](s)
	if s.err != nil {
		return d
	}
	if int(d.empty) >= d.len() {
		s.err = errors.New("a dictionary's empty value is out of range")
		return d
	}
	// The slots must be a power of two, hold every value but "" once and
	// nothing else; a lookup through them then cannot misread.
	if n := len(d.slots); n == 0 || n&(n-1) != 0 || d.len() > n {
		s.err = errors.New("a dictionary's hash does not fit its values")
		return d
	}
	held := 0
	for _, id := range d.slots {
		if id != 0 {
			if int(id) >= d.len() {
				s.err = errors.New("a dictionary's hash refers out of range")
				return d
			}
			held++
		}
	}
	want := d.len() - 1
	if d.empty != 0 {
		want--
	}
	if held != want || held >= len(d.slots) {
		s.err = errors.New("a dictionary's hash does not hold its values")
		return d
	}
	d.slots = d.slots[:len(d.slots):len(d.slots)]
	return d
}

// counterTriples flattens a facet's per-namespace counters.
func counterTriples(m map[uint32]map[uint32]uint64) []uint32 {
	var out []uint32
	for ns, vs := range m {
		for v, c := range vs {
			out = append(out, ns, v, uint32(c))
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
	err := writeFileAtomic(tablePath(e.dir), func(w *bufio.Writer) error {
		hdr := make([]byte, tableHeaderSize)
		copy(hdr, tableMagic)
		le := binary.LittleEndian
		le.PutUint32(hdr[8:], tableFileVersion)
		le.PutUint32(hdr[12:], uint32(unsafe.Sizeof(row{})))
		le.PutUint64(hdr[16:], feedSeq)
		le.PutUint32(hdr[24:], e.nextOrd)
		le.PutUint32(hdr[28:], crc32.Checksum(hdr[:28], castagnoli))
		if _, err := w.Write(hdr); err != nil {
			return err
		}
		s := &sectionWriter{w: w}
		s.put(bytesOf(t.rows))
		s.put(bytesOf(t.alive))
		s.put(bytesOf([]int64{int64(t.live), int64(t.expiring)}))
		t.writeStrtab(s, t.ids, usedIDs)
		s.put(bytesOf(t.ordOf))
		// Namespaces stay: they name places, not a record's content, and
		// each must parse when read back.
		t.writeStrtab(s, t.ns, nil)
		for c, d := range t.str {
			t.writeStrtab(s, d, usedStr[c])
		}
		t.writeStrtab(s, t.tags, usedTags)
		s.put(bytesOf(t.tagArena))
		for fi := range numFacets {
			s.put(bytesOf(counterTriples(t.counters[fi])))
			s.put(bytesOf(t.global[fi]))
			s.put(bytesOf(t.dflt[fi]))
			s.put(bytesOf(pairsOf(t.missing[fi])))
		}
		s.put(bytesOf(pairsOf(t.nsTotal)))
		return s.err
	})
	if err == nil {
		e.tableSaved, e.tableSavedOK = feedSeq, true
		e.tableSavedDropped = e.t.dropped
	}
	return err
}

// saveTableIfBehind saves the table when the file lags the feed by
// tableSaveLag changes or more, holds a record that has left the store since
// (a forget must not leave its metadata on disk), or is missing. The caller
// holds mu.
func (e *Engine) saveTableIfBehind() error {
	if !e.largeStore || !e.tableLoaded.Load() {
		return nil
	}
	if e.tableSavedOK && e.feed.seq-e.tableSaved < tableSaveLag && e.t.dropped == e.tableSavedDropped {
		return nil
	}
	return e.saveTable(e.feed.seq)
}

// readTableFile reads a saved table; it returns the table and the feed
// position it describes.
func readTableFile(path string, nextOrd uint32) (*table, uint64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, 0, err
	}
	r := bufio.NewReaderSize(f, 1<<20)
	hdr := make([]byte, tableHeaderSize)
	if _, err := io.ReadFull(r, hdr); err != nil || string(hdr[:8]) != tableMagic {
		return nil, 0, errors.New("not a table file")
	}
	le := binary.LittleEndian
	if le.Uint32(hdr[28:]) != crc32.Checksum(hdr[:28], castagnoli) {
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
	s := &sectionReader{r: r, max: uint64(st.Size())}
	t := newTable()
	t.rows = section[row](s)
	t.alive = section[bool](s)
	counts := section[int64](s)
	t.ids = readStrtab(s)
	t.ordOf = section[uint32](s)
	t.ns = readStrtab(s)
	for i := range t.str {
		t.str[i] = readStrtab(s)
	}
	t.tags = readStrtab(s)
	t.tagArena = section[uint32](s)
	var triples [numFacets][]uint32
	var missing [numFacets][]uint32
	for fi := range numFacets {
		triples[fi] = section[uint32](s)
		t.global[fi] = section[uint32](s)
		t.dflt[fi] = section[uint32](s)
		missing[fi] = section[uint32](s)
	}
	totals := section[uint32](s)
	if s.err != nil {
		return nil, 0, fmt.Errorf("table file: %w", s.err)
	}
	if err := t.adopt(counts, triples, missing, totals); err != nil {
		return nil, 0, fmt.Errorf("table file: %w", err)
	}
	return t, feedSeq, nil
}

// adopt checks that the arrays read fit together (every reference in
// range, so nothing can be misread) and rebuilds what was left out.
func (t *table) adopt(counts []int64, triples, missing [numFacets][]uint32, totals []uint32) error {
	if len(t.alive) != len(t.rows) || len(counts) != 2 || len(totals)%2 != 0 || len(t.ordOf) < t.ids.len() {
		return errors.New("its arrays disagree in length")
	}
	t.live, t.expiring = int(counts[0]), int(counts[1])
	for i := 1; i < t.ns.len(); i++ {
		ns, err := contract.ParseNamespace(t.ns.val(uint32(i)))
		if err != nil {
			return fmt.Errorf("namespace %d: %w", i, err)
		}
		t.nsVals = append(t.nsVals, ns)
		t.nsDefault = append(t.nsDefault, contract.AdmittedBy(nil, ns))
	}
	for ord := range t.rows {
		r := &t.rows[ord]
		if int(r.ns) >= t.ns.len() || int(r.idv) >= t.ids.len() || uint64(r.tagOff)+uint64(r.tagN) > uint64(len(t.tagArena)) ||
			int(r.kind) >= len(kindByCode) || int(r.status) >= len(statusByCode) || int(r.source) >= len(sourceKinds) {
			return fmt.Errorf("row %d refers out of range", ord)
		}
		for c, v := range r.str {
			if int(v) >= t.str[c].len() {
				return fmt.Errorf("row %d refers out of range", ord)
			}
		}
	}
	for _, v := range t.tagArena {
		if int(v) >= t.tags.len() {
			return errors.New("a tag refers out of range")
		}
	}
	for _, o := range t.ordOf {
		if o > uint32(len(t.rows)) {
			return errors.New("an id refers to an ordinal out of range")
		}
	}
	for fi := range numFacets {
		if len(triples[fi])%3 != 0 || len(missing[fi])%2 != 0 || len(t.dflt[fi]) != len(t.global[fi]) {
			return errors.New("the counters disagree in length")
		}
		// Sized up front: a facet with a value per record has a million
		// entries, and growing to them cost more than filling them.
		sizes := map[uint32]int{}
		for i := 0; i < len(triples[fi]); i += 3 {
			sizes[triples[fi][i]]++
		}
		for ns, n := range sizes {
			t.counters[fi][ns] = make(map[uint32]uint64, n)
		}
		for i := 0; i < len(triples[fi]); i += 3 {
			t.counters[fi][triples[fi][i]][triples[fi][i+1]] = uint64(triples[fi][i+2])
		}
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
	if feedSeq > e.feed.seq || feedSeq < e.feed.pruned.Load() || e.feed.seq-feedSeq > tableReplayLimit(len(t.rows)) {
		return false, nil
	}
	err = e.db.View(func(tx *bbolt.Tx) error {
		recs := tx.Bucket(bucketRecords)
		cur := tx.Bucket(bucketChanges).Cursor()
		for k, v := cur.Seek(seqKey(feedSeq + 1)); k != nil; k, v = cur.Next() {
			c, err := decodeChange(v, t.namespaceOf)
			if err != nil {
				return err
			}
			rv := recs.Get([]byte(c.id))
			var s storedRecord
			if rv != nil {
				if s, err = decodeRecord(rv, partHeader, t.namespaceOf); err != nil {
					return fmt.Errorf("record %s: %w", c.id, err)
				}
			}
			if ord, ok := t.ordOfID(c.id); ok && (rv == nil || s.ord != ord) {
				t.remove(ord)
			}
			if rv != nil {
				t.put(c.id, &s)
			}
		}
		return nil
	})
	if err != nil {
		return false, contract.EngineErr("replay the saved table: %w", err)
	}
	e.t = t
	e.tableSaved, e.tableSavedOK, e.tableFromFile = feedSeq, true, true
	// The replay's removals are records the file still holds.
	e.tableSavedDropped = 0
	return true, nil
}

// kickTableSave saves the table in the background a moment after a forget
// (a burst of forgets is one save), so a long-running process does not keep
// a forgotten record's metadata in the file until it closes. Called under
// mu's write lock; never waits for closeMu (Close may hold it while waiting
// for the call that got here).
func (e *Engine) kickTableSave() {
	if !e.largeStore || !e.tableLoaded.Load() || e.tableSaving.Swap(true) {
		return
	}
	if !e.closeMu.TryLock() {
		e.tableSaving.Store(false)
		return
	}
	defer e.closeMu.Unlock()
	if e.closed.Load() {
		e.tableSaving.Store(false)
		return
	}
	e.goBackground(func() {
		defer e.tableSaving.Store(false)
		select {
		case <-e.closing:
			return // Close saves it
		case <-time.After(tableSaveQuiet):
		}
		e.mu.RLock()
		defer e.mu.RUnlock()
		if err := e.saveTableIfBehind(); err != nil {
			e.log.Error("saving the table failed; the next open loads it from the records", "err", err)
		}
	})
}

// tableSaveQuiet is how long after a forget the table is saved.
const tableSaveQuiet = time.Second

// tableReplayLimit is how many changes a load replays on top of a saved
// table of n rows before loading from the records is the cheaper way.
func tableReplayLimit(n int) uint64 { return max(100_000, uint64(n)/4) }

// writeFileAtomic writes a file beside its final path, syncs it, renames it
// over the path and syncs the directory: a crash leaves the old file or the
// new one, never a torn one.
func writeFileAtomic(path string, write func(w *bufio.Writer) error) (err error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			_ = tmp.Close()
			_ = os.Remove(tmp.Name())
		}
	}()
	w := bufio.NewWriterSize(tmp, 1<<20)
	if err := write(w); err != nil {
		return err
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if err := tmp.Sync(); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	return syncDir(filepath.Dir(path))
}
