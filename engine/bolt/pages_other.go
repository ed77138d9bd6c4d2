//go:build !linux

package bolt

// releasePages is a no-op where madvise is not wired up.
func (e *Engine) releasePages() { e.scannedSince.Store(0) }
