// Package contentfile is the on-disk form of engine/bolt's content
// (trigram) index: a file of roaring postings, read in place through a
// memory map, describing the store at one position of its change feed.
package contentfile

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"mnemo/engine/bolt/internal/fileio"
	"os"
	"path/filepath"
	"sync/atomic"

	"github.com/RoaringBitmap/roaring/v2"
)

// The content index's postings are persisted in a file beside mnemo.db
// (Name), memory-mapped and read in place, so a process that has
// the store open holds the trigram postings in the page cache, not in its
// heap, and a new process has its content index at open instead of after a
// scan of every record. The file describes the store at one position of the
// change feed (feedSeq): at open the changes after it are replayed into a
// small heap overlay, and the file is rewritten when the overlay or the
// forgotten records it still names grow.
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
	// Name is the file's name in the store's directory.
	Name               = "content.idx"
	contentMagic       = "MNEMOTRI"
	contentFileVersion = 1
	contentTrailerSize = 64
	contentDirEntry    = 24
)

// File is an open, verified postings file.
type File struct {
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
	// released (Release).
	touched atomic.Int64
}

// ErrCorrupt marks a posting that failed its checksum.
var ErrCorrupt = errors.New("content index file is corrupt")

// Path is the file's path in a store's directory.
func Path(dir string) string { return filepath.Join(dir, Name) }

// Open maps and verifies the file; a missing file is (nil, nil).
func Open(path string) (*File, error) {
	data, unmap, err := fileio.MapFile(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	f, err := parse(data)
	if err != nil {
		_ = unmap()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	f.unmap = unmap
	return f, nil
}

func parse(data []byte) (*File, error) {
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
	f := &File{data: data, grams: int(le.Uint32(t[12:])), nextOrd: le.Uint32(t[20:]), maxOrd: le.Uint32(t[24:]),
		feedSeq: le.Uint64(t[32:])}
	commons := uint64(le.Uint32(t[16:]))
	commonsOff, dirOff := le.Uint64(t[40:]), le.Uint64(t[48:])
	if commonsOff%8 != 0 || dirOff != commonsOff+4*commons || dirOff+contentDirEntry*uint64(f.grams)+contentTrailerSize != n {
		return nil, errors.New("content index file's sections do not fit")
	}
	sum := crc32.Update(crc32.Checksum(data[commonsOff:n-contentTrailerSize], fileio.Castagnoli), fileio.Castagnoli, t[:60])
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

// Close unmaps the file (a nil file is closed).
func (f *File) Close() error {
	if f == nil || f.unmap == nil {
		return nil
	}
	err := f.unmap()
	f.unmap = nil
	return err
}

// entry finds a trigram's directory entry.
func (f *File) entry(g uint32) (card uint32, off uint64, n uint32, crc uint32, ok bool) {
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

// Card is a trigram's number of ordinals in the file (0 when absent).
func (f *File) Card(g uint32) uint64 {
	if f == nil {
		return 0
	}
	c, _, _, _, _ := f.entry(g)
	return uint64(c)
}

// Posting reads a trigram's ordinals into a new heap bitmap (nil when the
// file has none), checking its checksum.
func (f *File) Posting(g uint32) (*roaring.Bitmap, error) {
	if f == nil {
		return nil, nil
	}
	_, off, n, crc, ok := f.entry(g)
	if !ok {
		return nil, nil
	}
	if off+uint64(n) > uint64(len(f.blob)) {
		return nil, ErrCorrupt
	}
	buf := f.blob[off : off+uint64(n)]
	if crc32.Checksum(buf, fileio.Castagnoli) != crc {
		return nil, ErrCorrupt
	}
	f.touched.Add(int64(n))
	b := roaring.New()
	if err := b.UnmarshalBinary(buf); err != nil {
		return nil, ErrCorrupt
	}
	return b, nil
}

// EachGram yields the file's trigrams in order.
func (f *File) EachGram(yield func(g uint32) bool) {
	if f == nil {
		return
	}
	for i := 0; i < f.grams; i++ {
		if !yield(binary.LittleEndian.Uint32(f.dir[i*contentDirEntry:])) {
			return
		}
	}
}

// Snapshot is what a file is written from.
type Snapshot struct {
	FeedSeq uint64
	NextOrd uint32
	MaxOrd  uint32
	Commons []uint32 // sorted
	Grams   []uint32 // sorted
	// Posting returns a trigram's ordinals (the caller's merge of the old
	// file, the overlay and the forgotten records).
	Posting func(g uint32) (*roaring.Bitmap, error)
	// Stop is polled between postings; a true ends the write with ErrStopped.
	Stop func() bool
}

// ErrStopped: the work was not done now (closing, a suspension, or nothing
// to work from yet); a later kick does it.
var ErrStopped = errors.New("stopped")

// Write writes s to path atomically (fileio.WriteAtomic).
func Write(path string, s Snapshot) error {
	return fileio.WriteAtomic(path, func(f *os.File) error {
		w := bufio.NewWriterSize(f, 1<<20)
		if err := s.write(w); err != nil {
			return err
		}
		return w.Flush()
	})
}

func (s Snapshot) write(w *bufio.Writer) error {
	le := binary.LittleEndian
	dir := make([]byte, 0, contentDirEntry*len(s.Grams))
	var off uint64
	var pad [8]byte
	for i, g := range s.Grams {
		if s.Stop != nil && i%1024 == 0 && s.Stop() {
			return ErrStopped
		}
		b, err := s.Posting(g)
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
		dir = le.AppendUint32(dir, crc32.Checksum(buf, fileio.Castagnoli))
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
	tail := make([]byte, 0, 4*len(s.Commons)+len(dir)+contentTrailerSize)
	for _, g := range s.Commons {
		tail = le.AppendUint32(tail, g)
	}
	tail = append(tail, dir...)
	t := make([]byte, contentTrailerSize)
	copy(t, contentMagic)
	le.PutUint32(t[8:], contentFileVersion)
	le.PutUint32(t[12:], uint32(len(dir)/contentDirEntry))
	le.PutUint32(t[16:], uint32(len(s.Commons)))
	le.PutUint32(t[20:], s.NextOrd)
	le.PutUint32(t[24:], s.MaxOrd)
	le.PutUint64(t[32:], s.FeedSeq)
	le.PutUint64(t[40:], off)
	le.PutUint64(t[48:], off+4*uint64(len(s.Commons)))
	le.PutUint32(t[60:], crc32.Update(crc32.Checksum(tail, fileio.Castagnoli), fileio.Castagnoli, t[:60]))
	if _, err := w.Write(tail); err != nil {
		return err
	}
	_, err := w.Write(t)
	return err
}

// FeedSeq is the change feed's position the file describes.
func (f *File) FeedSeq() uint64 { return f.feedSeq }

// NextOrd is the store's next ordinal when the file was written.
func (f *File) NextOrd() uint32 { return f.nextOrd }

// MaxOrd is the largest ordinal the file holds.
func (f *File) MaxOrd() uint32 { return f.maxOrd }

// Commons are the trigrams too common to index, sorted.
func (f *File) Commons() []uint32 { return f.commons }

// Grams is how many trigrams the file holds.
func (f *File) Grams() int { return f.grams }

// Release drops the mapping's pages from the process's resident set once
// postings of at least every bytes were read since the last release: they
// stay in the page cache.
func (f *File) Release(every int64) {
	if f != nil && f.touched.Load() >= every {
		f.touched.Store(0)
		fileio.ReleaseMapped(f.data)
	}
}
