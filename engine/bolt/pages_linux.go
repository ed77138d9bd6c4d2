package bolt

import (
	"cmp"
	"os"
	"slices"
	"syscall"
	"unsafe"

	bbolt "go.etcd.io/bbolt"
	"golang.org/x/sys/unix"
)

// releasePages tells the kernel this process no longer needs the pages of
// the store's memory map that a scan touched: they leave the process's
// resident set and stay in the page cache, where the next read finds them.
// Scans at open (the table, the content index, the vectors) read every
// record once; without this the whole file stayed resident in the process.
// The read transaction holds bbolt's mmap lock, so the mapping cannot move.
//
// The vector blocks' pages are left mapped: every vector search reads the
// same columns of every block, and faulting them back in one 4 KB page at a
// time after each release made a search on the 1M bench store take 58 ms
// instead of 32 (the bench's rows, which browse between searches, released
// them every few rounds).
func (e *Engine) releasePages() {
	e.scannedSince.Store(0)
	_ = e.db.View(func(tx *bbolt.Tx) error {
		info := e.db.Info()
		size, page := uintptr(tx.Size()), uintptr(info.PageSize)
		gaps := gapsBetween(info.Data, size, page, keptRanges(tx, info.Data, size))
		for _, gap := range gaps {
			// A raw madvise on the mapping's address keeps this free of
			// pointer conversions; MADV_DONTNEED on a shared file mapping
			// only drops this process's page table entries.
			_, _, _ = syscall.Syscall(syscall.SYS_MADVISE, gap[0], gap[1]-gap[0], syscall.MADV_DONTNEED)
		}
		// No fault-around: without it the kernel maps up to 16 neighbouring
		// pages on each fault, so reading a record made 64 KB resident.
		// (Advised again each time: bbolt maps the file anew as it grows.)
		_, _, _ = syscall.Syscall(syscall.SYS_MADVISE, info.Data, size, syscall.MADV_RANDOM)
		// Except the vector blocks: a search reads its columns' runs of
		// every block, and faulted one 4 KB page at a time (read from the
		// disk one page at a time when they were not cached), a new
		// process's first pass over the bench's 21 queries on the 1M store,
		// its pages not cached, took p50 96-100 ms and up to 1.6 s a query,
		// against 31 ms and at most 54 ms with it (TestVectorBlocksKeepFaultAround). With the normal advice the kernel reads ahead and maps
		// the neighbouring pages of each fault. What lies between the gaps
		// is the blocks' pages, adjacent blocks as one range: one call each
		// (about 130 at 1M, where one a block took 977).
		at := info.Data
		for _, gap := range append(gaps, [2]uintptr{info.Data + size, info.Data + size}) {
			if gap[0] > at {
				_, _, _ = syscall.Syscall(syscall.SYS_MADVISE, at, gap[0]-at, syscall.MADV_NORMAL)
			}
			at = gap[1]
		}
		return nil
	})
}

// keptRanges are the address ranges of the mapping that a release leaves
// alone: the vector blocks, each stored in a run of pages of its own.
func keptRanges(tx *bbolt.Tx, base, size uintptr) [][2]uintptr {
	b := tx.Bucket(bucketVecBlocks)
	if b == nil {
		return nil
	}
	var kept [][2]uintptr
	c := b.Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		if len(v) == 0 {
			continue
		}
		start := uintptr(unsafe.Pointer(unsafe.SliceData(v)))
		if start < base || start+uintptr(len(v)) > base+size {
			continue // not in the mapping (never for a read transaction)
		}
		kept = append(kept, [2]uintptr{start, start + uintptr(len(v))})
	}
	return kept
}

// gapsBetween is [base, base+size) less the kept ranges, each kept range
// widened to the pages it touches, as page-aligned [start, end) ranges.
func gapsBetween(base, size, page uintptr, kept [][2]uintptr) [][2]uintptr {
	slices.SortFunc(kept, func(a, b [2]uintptr) int { return cmp.Compare(a[0], b[0]) })
	var gaps [][2]uintptr
	at, end := base, base+size
	for _, r := range kept {
		lo := max(base+(r[0]-base)/page*page, at)
		hi := min(base+(r[1]-base+page-1)/page*page, end)
		if lo > at {
			gaps = append(gaps, [2]uintptr{at, lo})
		}
		at = max(at, hi)
	}
	if at < end {
		gaps = append(gaps, [2]uintptr{at, end})
	}
	return gaps
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
