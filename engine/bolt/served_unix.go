//go:build unix

package bolt

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
)

// servedByLiveProcess tells whether a running `mnemo serve` holds the store
// in dir: it published its address, and the process named in the pid file
// is alive. Such a holder does not let go within a lock wait, so Open asks
// for the lock once, briefly, and the caller attaches to the server.
func servedByLiveProcess(dir string) bool {
	if _, err := os.Stat(filepath.Join(dir, AddrFile)); err != nil {
		return false
	}
	pid := PIDOf(dir)
	if pid <= 0 || pid == os.Getpid() {
		return false
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
