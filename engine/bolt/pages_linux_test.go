package bolt

import (
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"unsafe"

	bbolt "go.etcd.io/bbolt"
	"golang.org/x/sys/unix"

	"mnemo/contract"
	"mnemo/engine/bolt/internal/vecblock"
)

// TestReleaseKeepsTheVectorBlocksMapped: a release drops the pages reads
// touched from the process's page tables, except the vector blocks', which
// every vector search reads again (faulted back one 4 KB page at a time,
// they made a search on the 1M bench store 58 ms instead of 32).
func TestReleaseKeepsTheVectorBlocksMapped(t *testing.T) {
	ctx := context.Background()
	var items []contract.StoreItem
	for i := range 2500 {
		items = append(items, contract.Document(fmt.Sprintf("note %d about the release of mapped pages, batch %d, word%d", i, i%7, i%113), contract.MemoryMeta{}))
	}
	e := storeInVectorBlocks(t, items)
	pagemap, err := os.Open("/proc/self/pagemap")
	if err != nil {
		t.Skipf("no pagemap: %v", err)
	}
	defer pagemap.Close()

	// mapped counts the pages of the vector blocks and of the rest of the
	// file that are in this process's page tables.
	mapped := func() (vectors, rest int) {
		t.Helper()
		err := e.db.View(func(tx *bbolt.Tx) error {
			info := e.db.Info()
			size, page := uintptr(tx.Size()), uintptr(info.PageSize)
			kept := keptRanges(tx, info.Data, size)
			if len(kept) == 0 {
				return fmt.Errorf("the store has no vector blocks")
			}
			count := func(lo, hi uintptr) int {
				buf := make([]byte, 8*((hi-lo)/page))
				if _, err := pagemap.ReadAt(buf, int64(8*(lo/page))); err != nil {
					t.Fatal(err)
				}
				n := 0
				for i := 0; i < len(buf); i += 8 {
					if binary.LittleEndian.Uint64(buf[i:])&(1<<63) != 0 {
						n++
					}
				}
				return n
			}
			gaps := gapsBetween(info.Data, size, page, kept)
			for _, g := range gaps {
				rest += count(g[0], g[1])
			}
			vectors = count(info.Data, info.Data+size) - rest
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return vectors, rest
	}

	e.releasePages()
	if _, err := e.Fetch(ctx, contract.FetchRequest{Query: "release of mapped pages", Mode: contract.ModeVector, Limit: 10}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Browse(ctx, contract.BrowseQuery{Limit: 200}); err != nil {
		t.Fatal(err)
	}
	vecBefore, restBefore := mapped()
	if vecBefore == 0 || restBefore == 0 {
		t.Fatalf("after a search and a browse, %d vector pages and %d others are mapped; want both", vecBefore, restBefore)
	}
	e.releasePages()
	vecAfter, restAfter := mapped()
	if vecAfter < vecBefore {
		t.Errorf("a release dropped vector pages: %d mapped before, %d after", vecBefore, vecAfter)
	}
	// The count's own read transaction maps a few pages back (meta, the
	// buckets' roots, the vector blocks' leaves).
	if restAfter > restBefore/2 {
		t.Errorf("a release kept %d of the %d other pages mapped", restAfter, restBefore)
	}
}

// TestGapsBetween: the pages a release drops are the mapping less the kept
// ranges, each widened to whole pages.
func TestGapsBetween(t *testing.T) {
	const base, page = 0x10000, 0x1000
	cases := []struct {
		name string
		size uintptr
		kept [][2]uintptr
		want [][2]uintptr
	}{
		{"nothing kept", 8 * page, nil, [][2]uintptr{{base, base + 8*page}}},
		{"one range inside pages", 8 * page, [][2]uintptr{{base + 2*page + 16, base + 4*page + 100}},
			[][2]uintptr{{base, base + 2*page}, {base + 5*page, base + 8*page}}},
		{"ranges out of order, one overlapping another", 10 * page,
			[][2]uintptr{{base + 6*page + 16, base + 7*page}, {base + page + 16, base + 3*page}, {base + 2*page, base + 2*page + 8}},
			[][2]uintptr{{base, base + page}, {base + 3*page, base + 6*page}, {base + 7*page, base + 10*page}}},
		{"at both ends", 4 * page, [][2]uintptr{{base, base + 16}, {base + 3*page + 16, base + 4*page}},
			[][2]uintptr{{base + page, base + 3*page}}},
		{"everything kept", 2 * page, [][2]uintptr{{base + 16, base + 2*page}}, nil},
	}
	for _, c := range cases {
		got := gapsBetween(base, c.size, page, c.kept)
		if fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("%s: gaps %x, want %x", c.name, got, c.want)
		}
	}
}

// TestRewriteAfterCloseKeepsTheFileCached: a store written in bulk has its
// file's pages dropped from the page cache at Close, unless the caller
// rewrites the file next (mnemo import's full-page rewrite), which then
// reads it from memory instead of from the disk a page at a time.
func TestRewriteAfterCloseKeepsTheFileCached(t *testing.T) {
	cached := func(path string) int {
		t.Helper()
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		st, err := f.Stat()
		if err != nil {
			t.Fatal(err)
		}
		m, err := unix.Mmap(int(f.Fd()), 0, int(st.Size()), unix.PROT_READ, unix.MAP_SHARED)
		if err != nil {
			t.Fatal(err)
		}
		defer unix.Munmap(m)
		vec := make([]byte, (len(m)+os.Getpagesize()-1)/os.Getpagesize())
		if _, _, errno := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(&m[0])), uintptr(len(m)), uintptr(unsafe.Pointer(&vec[0]))); errno != 0 {
			t.Fatal(errno)
		}
		n := 0
		for _, v := range vec {
			n += int(v & 1)
		}
		return n
	}
	for _, rewrite := range []bool{false, true} {
		t.Run(fmt.Sprintf("rewrite=%v", rewrite), func(t *testing.T) {
			dir := t.TempDir()
			e, err := Open(dir, Options{})
			if err != nil {
				t.Fatal(err)
			}
			e.SetBulk(true)
			var items []contract.StoreItem
			for i := range 3000 {
				items = append(items, contract.Document(fmt.Sprintf("bulk note %d on the page cache, word%d", i, i%97), contract.MemoryMeta{}))
			}
			for lo := 0; lo < len(items); lo += MaxBulkItems {
				if _, err := e.StoreBulk(context.Background(), items[lo:min(lo+MaxBulkItems, len(items))], contract.WriteOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			e.SetBulk(false)
			if rewrite {
				e.RewriteAfterClose()
			}
			if err := e.Close(); err != nil {
				t.Fatal(err)
			}
			n := cached(filepath.Join(dir, DBFile))
			switch {
			case rewrite && n == 0:
				t.Fatalf("no page of %s is cached after a close that leaves them for the rewrite", DBFile)
			case !rewrite && n != 0:
				// tmpfs keeps its pages whatever fadvise says.
				var fs unix.Statfs_t
				if unix.Statfs(dir, &fs) == nil && fs.Type == unix.TMPFS_MAGIC {
					t.Skip("the store is on tmpfs")
				}
				t.Fatalf("%d pages of %s are still cached after the close of a bulk load", n, DBFile)
			}
		})
	}
}

// TestVectorBlocksKeepFaultAround: after a release, which turns the
// kernel's read-ahead and fault-around off for the mapping (a record read
// maps its own page only), the vector blocks keep them: a fault in a block
// maps its neighbouring pages too, so a new process's first searches do not
// read the columns a 4 KB page at a time (p50 96 against 31 ms, max 1.6 s
// against 54 ms, the bench's 21 queries on the 1M store, its page cache
// cold).
func TestVectorBlocksKeepFaultAround(t *testing.T) {
	var items []contract.StoreItem
	for i := range 2500 {
		items = append(items, contract.Document(fmt.Sprintf("note %d on fault-around in the vector blocks, word%d", i, i%89), contract.MemoryMeta{}))
	}
	e := storeInVectorBlocks(t, items)
	pagemap, err := os.Open("/proc/self/pagemap")
	if err != nil {
		t.Skipf("no pagemap: %v", err)
	}
	defer pagemap.Close()
	e.releasePages()
	page := uintptr(os.Getpagesize())
	err = e.db.View(func(tx *bbolt.Tx) error {
		_, v := tx.Bucket(vecblock.Bucket).Cursor().First()
		start := uintptr(unsafe.Pointer(unsafe.SliceData(v)))
		lo, hi := (start+page-1)/page*page, (start+uintptr(len(v)))/page*page
		if hi-lo < 32*page {
			return fmt.Errorf("the first vector block spans %d whole pages; the test needs 32", (hi-lo)/page)
		}
		// Out of this process's page tables, still in the page cache.
		if _, _, errno := unix.Syscall(unix.SYS_MADVISE, lo, hi-lo, unix.MADV_DONTNEED); errno != 0 {
			return errno
		}
		mid := (lo + hi) / 2 / page * page
		runtime.KeepAlive(v[mid-start+page/2]) // one read fault in the middle of the block
		buf := make([]byte, 8*((hi-lo)/page))
		if _, err := pagemap.ReadAt(buf, int64(8*(lo/page))); err != nil {
			return err
		}
		n := 0
		for i := 0; i < len(buf); i += 8 {
			if binary.LittleEndian.Uint64(buf[i:])&(1<<63) != 0 {
				n++
			}
		}
		if n < 2 {
			t.Errorf("one read in a vector block mapped %d page; want its neighbours mapped too", n)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
