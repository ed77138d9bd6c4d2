package bolt

import (
	"os"
	"syscall"

	bbolt "go.etcd.io/bbolt"
	"golang.org/x/sys/unix"
)

// releasePages tells the kernel this process no longer needs the pages of
// the store's memory map that a scan touched: they leave the process's
// resident set and stay in the page cache, where the next read finds them.
// Scans at open (the table, the content index, the vectors) read every
// record once; without this the whole file stayed resident in the process.
// The read transaction holds bbolt's mmap lock, so the mapping cannot move.
func (e *Engine) releasePages() {
	e.scannedSince.Store(0)
	_ = e.db.View(func(tx *bbolt.Tx) error {
		info := e.db.Info()
		// A raw madvise on the mapping's address keeps this free of
		// pointer conversions; MADV_DONTNEED on a shared file mapping only
		// drops this process's page table entries.
		_, _, _ = syscall.Syscall(syscall.SYS_MADVISE, info.Data, uintptr(tx.Size()), syscall.MADV_DONTNEED)
		// No fault-around: without it the kernel maps up to 16 neighbouring
		// pages on each fault, so reading a record made 64 KB resident.
		// (Advised again each time: bbolt maps the file anew as it grows.)
		_, _, _ = syscall.Syscall(syscall.SYS_MADVISE, info.Data, uintptr(tx.Size()), syscall.MADV_RANDOM)
		return nil
	})
}

// dropCachedPages asks the kernel to drop a file's pages from the page
// cache. A file written in one pass (mnemo compact) sits there in large
// folios, and a fault on a memory map of it maps the whole folio whatever
// MADV_RANDOM says: a browsing process of a freshly compacted 100k store
// held 62 MB of mnemo.db, against 7 MB once its pages came back one read at
// a time. Dropping them costs the next reads a trip to the disk.
func dropCachedPages(path string) {
	f, err := os.Open(path)
	if err != nil {
		return
	}
	defer f.Close()
	_ = unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED)
}
