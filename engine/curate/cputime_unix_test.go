//go:build unix

package curate

import (
	"syscall"
	"time"
)

// cpuTime is the process's CPU time, which other work on a shared machine
// does not inflate the way it inflates wall time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
