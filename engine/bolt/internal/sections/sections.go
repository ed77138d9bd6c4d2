// Package sections is the layout of engine/bolt's mapped snapshot file
// (table.snap): after a header page, sections at page boundaries, each a
// 64-byte head (length, room, crc32c) and then its bytes, then room to grow
// left as a hole in the file (it takes no disk). A reader maps the file
// copy-on-write and uses each section's array in place, with its room as
// capacity, so appending to an array loaded from the file writes into the
// mapping instead of copying a million rows into the heap.
//
// Arrays are written as their memory (pointer-free element types only), so a
// file is read back by the same element types on the same byte order; the
// file's owner records what it needs to refuse another layout (engine/bolt's
// header holds its row size and a version).
package sections

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"unsafe"

	"mnemo/engine/bolt/internal/fileio"
)

const (
	// Align is where sections start: a page. The first page is the
	// owner's header.
	Align = 4096
	head  = 64
)

// Bytes views a slice of a pointer-free type as its bytes.
func Bytes[T any](s []T) []byte {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), len(s)*int(unsafe.Sizeof(s[0])))
}

func alignUp(n int64) int64 { return (n + Align - 1) / Align * Align }

// roomFor is the growth room a section of n bytes of elements of size elem
// gets: an eighth, and at least a page.
func roomFor(n, elem int64) int64 {
	r := max(n/8, Align)
	return r / elem * elem
}

// Writer writes sections at their offsets in a file. The first error stops
// every later write; Finish returns it.
type Writer struct {
	f   *os.File
	off int64
	err error
}

// NewWriter writes sections into f from offset Align on.
func NewWriter(f *os.File) *Writer { return &Writer{f: f, off: Align} }

// Write puts one section of n bytes of elements of size elem, whose bytes
// fill writes to f at the offset it is given and whose crc32c it returns.
func (w *Writer) Write(n, elem int64, fill func(f *os.File, at int64) (uint32, error)) {
	if w.err != nil {
		return
	}
	crc, err := fill(w.f, w.off+head)
	if err != nil {
		w.err = err
		return
	}
	room := roomFor(n, elem)
	h := make([]byte, head)
	binary.LittleEndian.PutUint64(h, uint64(n))
	binary.LittleEndian.PutUint64(h[8:], uint64(room))
	binary.LittleEndian.PutUint32(h[16:], crc)
	if _, w.err = w.f.WriteAt(h, w.off); w.err != nil {
		return
	}
	w.off = alignUp(w.off + head + n + room)
}

// Put writes v as the next section.
func Put[T any](w *Writer, v []T) {
	b := Bytes(v)
	w.Write(int64(len(b)), int64(unsafe.Sizeof(*new(T))), func(f *os.File, at int64) (uint32, error) {
		_, err := f.WriteAt(b, at)
		return crc32.Checksum(b, fileio.Castagnoli), err
	})
}

// Finish makes the last section's room part of the file, and returns the
// first error of any write.
func (w *Writer) Finish() error {
	if w.err != nil {
		return w.err
	}
	return w.f.Truncate(w.off)
}

// Reader hands out the sections of a mapped file in place, in the order they
// were written. Their checksums are checked by Verify, apart, so that the
// owner's own checks of what the sections hold can run beside it on another
// core: at 1M records the checksums of 290 MB take about 50 ms. Nothing read
// may be used before both have passed. The first error (a section that does
// not fit, or one the owner reports with Fail) makes every later read empty.
type Reader struct {
	data []byte
	off  int
	err  error
	sums []sum
}

// sum is a section's bytes and the crc32c written with them.
type sum struct {
	b    []byte
	want uint32
}

// NewReader reads the sections of data (a mapped file) from offset Align on.
func NewReader(data []byte) *Reader { return &Reader{data: data, off: Align} }

// Err is the first error of the reads.
func (r *Reader) Err() error { return r.err }

// Fail records err as the reader's error, unless it has one: the owner found
// what a section holds does not fit.
func (r *Reader) Fail(err error) {
	if r.err == nil {
		r.err = err
	}
}

// Verify checks every section handed out against its checksum.
func (r *Reader) Verify() error {
	for _, c := range r.sums {
		if crc32.Checksum(c.b, fileio.Castagnoli) != c.want {
			return errors.New("a section's checksum does not match")
		}
	}
	return nil
}

// Next is the next section as a slice of T over the mapping, with its room
// as capacity.
func Next[T any](r *Reader) []T {
	if r.err != nil {
		return nil
	}
	size := int(unsafe.Sizeof(*new(T)))
	if r.off+head > len(r.data) {
		r.err = errors.New("the file ends before its sections do")
		return nil
	}
	h := r.data[r.off:]
	n, room := binary.LittleEndian.Uint64(h), binary.LittleEndian.Uint64(h[8:])
	start := r.off + head
	if n > uint64(len(r.data)) || room > uint64(len(r.data)) || uint64(start)+n+room > uint64(len(r.data)) ||
		n%uint64(size) != 0 || room%uint64(size) != 0 {
		r.err = fmt.Errorf("a section of %d bytes does not fit", n)
		return nil
	}
	b := r.data[start : start+int(n)]
	r.sums = append(r.sums, sum{b, binary.LittleEndian.Uint32(h[16:])})
	r.off = int(alignUp(int64(start) + int64(n) + int64(room)))
	k, c := int(n)/size, int(n+room)/size
	if c == 0 {
		return make([]T, 0)
	}
	return unsafe.Slice((*T)(unsafe.Pointer(&r.data[start])), c)[:k]
}

// One is the next section as its one value.
func One[T any](r *Reader) T {
	v := Next[T](r)
	if r.err == nil && len(v) != 1 {
		r.err = errors.New("a scalar section holds more than one value")
	}
	if len(v) != 1 {
		var zero T
		return zero
	}
	return v[0]
}
