//go:build unix

package fileio

import (
	"errors"
	"os"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// MapFile maps a file read-only. The mapping is shared, so its pages are the
// page cache's: releasing them (ReleaseMapped) costs the next reader a minor
// fault, not a read.
func MapFile(path string) ([]byte, func() error, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	if st.Size() == 0 {
		return nil, nil, errors.New("empty file")
	}
	data, err := syscall.Mmap(int(f.Fd()), 0, int(st.Size()), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, nil, err
	}
	return data, func() error { return syscall.Munmap(data) }, nil
}

// ReleaseMapped drops a mapping's pages from this process's resident set.
func ReleaseMapped(data []byte) {
	if len(data) > 0 {
		_ = unix.Madvise(data, unix.MADV_DONTNEED)
	}
}

// ReleaseReadPages drops from this process's resident set the pages of a
// mapping that lie wholly inside b, a range nothing has written or will
// write (the page b's last byte shares with what follows may be written, so
// it stays). A read of them faults them in again from the file.
func ReleaseReadPages(b []byte) {
	if len(b) == 0 {
		return
	}
	page := uintptr(os.Getpagesize())
	start := uintptr(unsafe.Pointer(&b[0]))
	from, to := (start+page-1)/page*page, (start+uintptr(len(b)))/page*page
	if to > from {
		_ = unix.Madvise(b[from-start:to-start], unix.MADV_DONTNEED)
	}
}

// MapPrivate maps a file copy-on-write: writes go to this process's own
// pages, never to the file.
func MapPrivate(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if st.Size() == 0 {
		return nil, errors.New("empty file")
	}
	return syscall.Mmap(int(f.Fd()), 0, int(st.Size()), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE)
}

// UnmapPrivate unmaps what MapPrivate mapped.
func UnmapPrivate(data []byte) { _ = syscall.Munmap(data) }
