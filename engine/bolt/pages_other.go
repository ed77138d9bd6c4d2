//go:build !linux

package bolt

// releasePages is a no-op where madvise is not wired up.
func (e *Engine) releasePages() { e.scannedSince.Store(0) }

// dropCachedPages is a no-op where fadvise is not wired up.
func dropCachedPages(string) {}
