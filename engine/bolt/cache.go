package bolt

import (
	"sync"

	"mnemo/contract"
)

// recordCache keeps recently browsed records decoded, so the TUI's head
// refresh (the same first page, polled) costs no bbolt lookups or decoding.
// Readers fill it under the engine's read lock; writers drop an ordinal's
// entry under the write lock whenever they change or remove it, so an entry
// is never older than the snapshot that reads it. Cached records share their
// metadata's strings and slices with the cache: callers must not modify them.
type recordCache struct {
	mu  sync.Mutex
	m   map[uint32]contract.Record
	max int
}

func newRecordCache(size int) *recordCache {
	if size == 0 {
		size = 4096
	}
	return &recordCache{m: make(map[uint32]contract.Record, max(size, 0)), max: size}
}

func (c *recordCache) get(ord uint32) (contract.Record, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	r, ok := c.m[ord]
	return r, ok
}

func (c *recordCache) put(ord uint32, r contract.Record) {
	if c.max < 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.m) >= c.max {
		// Evict an arbitrary entry: map order is random enough for a cache
		// whose hot set is the head of one listing.
		for k := range c.m {
			delete(c.m, k)
			break
		}
	}
	c.m[ord] = r
}

func (c *recordCache) drop(ord uint32) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.m, ord)
}
