package bolt

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"sync/atomic"

	"github.com/RoaringBitmap/roaring/v2"
)

// The content index's postings are persisted in a file beside mnemo.db
// (contentFileName), memory-mapped and read in place, so a process that has
// the store open holds the trigram postings in the page cache, not in its
// heap, and a new process has its content index at open instead of after a
// scan of every record. The file describes the store at one position of the
// change feed (feedSeq): at open the changes after it are replayed into a
// small heap overlay, and the file is rewritten when the overlay or the
// forgotten records it still names grow (contentRewriteDue).
//
// Layout, little-endian, written front to back in one pass:
//
//	blob: each posting a serialised roaring bitmap at an 8-byte boundary
//	commons: u32 each, sorted (trigrams too common to index)
//	directory: per trigram, sorted: gram u32, card u32, off u64, len u32, crc u32
//	trailer (64 bytes): magic, version u32, grams u32, commons u32, nextOrd u32,
//	  maxOrd u32, 0, feedSeq u64, commonsOff u64, dirOff u64, 0, crc u32
//
// The trailer's crc covers the commons, the directory and the trailer, checked
// at open; each posting's crc is checked every time it is read. A file that
// fails either, or is of another version, is never read: the index is
// rebuilt from the records.
const (
	contentFileName    = "content.idx"
	contentMagic       = "MNEMOTRI"
	contentFileVersion = 1
	contentTrailerSize = 64
	contentDirEntry    = 24
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// contentFile is an open, verified postings file.
type contentFile struct {
	data    []byte // the whole file, mapped (or read where mmap is not wired)
	unmap   func() error
	feedSeq uint64
	nextOrd uint32
	maxOrd  uint32
	grams   int
	commons []uint32
	dir     []byte
	blob    []byte
	// touched counts posting bytes read since the mapping's pages were last
	// released (releaseMappedEvery).
	touched atomic.Int64
}

// errContentCorrupt marks a posting that failed its checksum.
var errContentCorrupt = errors.New("content index file is corrupt")

func contentPath(dir string) string { return filepath.Join(dir, contentFileName) }

// openContentFile maps and verifies the file; a missing file is (nil, nil).
func openContentFile(path string) (*contentFile, error) {
	data, unmap, err := mapFile(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	f, err := parseContentFile(data)
	if err != nil {
		_ = unmap()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	f.unmap = unmap
	return f, nil
}

func parseContentFile(data []byte) (*contentFile, error) {
	n := uint64(len(data))
	if n < contentTrailerSize {
		return nil, errors.New("not a content index file")
	}
	t := data[n-contentTrailerSize:]
	if string(t[:8]) != contentMagic {
		return nil, errors.New("not a content index file")
	}
	le := binary.LittleEndian
	if v := le.Uint32(t[8:]); v != contentFileVersion {
		return nil, fmt.Errorf("content index file version %d, this mnemo writes %d", v, contentFileVersion)
	}
	f := &contentFile{data: data, grams: int(le.Uint32(t[12:])), nextOrd: le.Uint32(t[20:]), maxOrd: le.Uint32(t[24:]),
		feedSeq: le.Uint64(t[32:])}
	commons := uint64(le.Uint32(t[16:]))
	commonsOff, dirOff := le.Uint64(t[40:]), le.Uint64(t[48:])
	if commonsOff%8 != 0 || dirOff != commonsOff+4*commons || dirOff+contentDirEntry*uint64(f.grams)+contentTrailerSize != n {
		return nil, errors.New("content index file's sections do not fit")
	}
	sum := crc32.Update(crc32.Checksum(data[commonsOff:n-contentTrailerSize], castagnoli), castagnoli, t[:60])
	if le.Uint32(t[60:]) != sum {
		return nil, errors.New("content index file's checksum does not match")
	}
	f.commons = make([]uint32, commons)
	for i := range f.commons {
		f.commons[i] = le.Uint32(data[commonsOff+4*uint64(i):])
	}
	f.dir, f.blob = data[dirOff:n-contentTrailerSize], data[:commonsOff]
	return f, nil
}

func (f *contentFile) close() error {
	if f == nil || f.unmap == nil {
		return nil
	}
	err := f.unmap()
	f.unmap = nil
	return err
}

// entry finds a trigram's directory entry.
func (f *contentFile) entry(g uint32) (card uint32, off uint64, n uint32, crc uint32, ok bool) {
	le := binary.LittleEndian
	lo, hi := 0, f.grams
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if le.Uint32(f.dir[m*contentDirEntry:]) < g {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo == f.grams {
		return 0, 0, 0, 0, false
	}
	e := f.dir[lo*contentDirEntry:]
	if le.Uint32(e) != g {
		return 0, 0, 0, 0, false
	}
	return le.Uint32(e[4:]), le.Uint64(e[8:]), le.Uint32(e[16:]), le.Uint32(e[20:]), true
}

// card is a trigram's number of ordinals in the file (0 when absent).
func (f *contentFile) card(g uint32) uint64 {
	if f == nil {
		return 0
	}
	c, _, _, _, _ := f.entry(g)
	return uint64(c)
}

// posting reads a trigram's ordinals into a new heap bitmap (nil when the
// file has none), checking its checksum.
func (f *contentFile) posting(g uint32) (*roaring.Bitmap, error) {
	if f == nil {
		return nil, nil
	}
	_, off, n, crc, ok := f.entry(g)
	if !ok {
		return nil, nil
	}
	if off+uint64(n) > uint64(len(f.blob)) {
		return nil, errContentCorrupt
	}
	buf := f.blob[off : off+uint64(n)]
	if crc32.Checksum(buf, castagnoli) != crc {
		return nil, errContentCorrupt
	}
	f.touched.Add(int64(n))
	b := roaring.New()
	if err := b.UnmarshalBinary(buf); err != nil {
		return nil, errContentCorrupt
	}
	return b, nil
}

// eachGram yields the file's trigrams in order.
func (f *contentFile) eachGram(yield func(g uint32) bool) {
	if f == nil {
		return
	}
	for i := 0; i < f.grams; i++ {
		if !yield(binary.LittleEndian.Uint32(f.dir[i*contentDirEntry:])) {
			return
		}
	}
}

// contentSnapshot is what a file is written from.
type contentSnapshot struct {
	feedSeq uint64
	nextOrd uint32
	maxOrd  uint32
	commons []uint32 // sorted
	grams   []uint32 // sorted
	// posting returns a trigram's ordinals (the caller's merge of the old
	// file, the overlay and the forgotten records).
	posting func(g uint32) (*roaring.Bitmap, error)
	// stop is polled between postings; a true ends the write with errStopped.
	stop func() bool
}

// errStopped: the work was not done now (closing, a suspension, or nothing to
// work from yet); a later kick does it.
var errStopped = errors.New("stopped")

// writeContentFile writes s to path atomically (writeFileAtomic).
func writeContentFile(path string, s contentSnapshot) error {
	return writeFileAtomic(path, func(f *os.File) error {
		w := bufio.NewWriterSize(f, 1<<20)
		if err := s.write(w); err != nil {
			return err
		}
		return w.Flush()
	})
}

func (s contentSnapshot) write(w *bufio.Writer) error {
	le := binary.LittleEndian
	dir := make([]byte, 0, contentDirEntry*len(s.grams))
	var off uint64
	var pad [8]byte
	for i, g := range s.grams {
		if s.stop != nil && i%1024 == 0 && s.stop() {
			return errStopped
		}
		b, err := s.posting(g)
		if err != nil {
			return err
		}
		if b == nil || b.IsEmpty() {
			continue // every ordinal it had was forgotten
		}
		b.RunOptimize()
		buf, err := b.ToBytes()
		if err != nil {
			return err
		}
		dir = le.AppendUint32(dir, g)
		dir = le.AppendUint32(dir, uint32(b.GetCardinality()))
		dir = le.AppendUint64(dir, off)
		dir = le.AppendUint32(dir, uint32(len(buf)))
		dir = le.AppendUint32(dir, crc32.Checksum(buf, castagnoli))
		if _, err := w.Write(buf); err != nil {
			return err
		}
		off += uint64(len(buf))
		if r := off % 8; r != 0 {
			if _, err := w.Write(pad[:8-r]); err != nil {
				return err
			}
			off += 8 - r
		}
	}
	tail := make([]byte, 0, 4*len(s.commons)+len(dir)+contentTrailerSize)
	for _, g := range s.commons {
		tail = le.AppendUint32(tail, g)
	}
	tail = append(tail, dir...)
	t := make([]byte, contentTrailerSize)
	copy(t, contentMagic)
	le.PutUint32(t[8:], contentFileVersion)
	le.PutUint32(t[12:], uint32(len(dir)/contentDirEntry))
	le.PutUint32(t[16:], uint32(len(s.commons)))
	le.PutUint32(t[20:], s.nextOrd)
	le.PutUint32(t[24:], s.maxOrd)
	le.PutUint64(t[32:], s.feedSeq)
	le.PutUint64(t[40:], off)
	le.PutUint64(t[48:], off+4*uint64(len(s.commons)))
	le.PutUint32(t[60:], crc32.Update(crc32.Checksum(tail, castagnoli), castagnoli, t[:60]))
	if _, err := w.Write(tail); err != nil {
		return err
	}
	_, err := w.Write(t)
	return err
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
