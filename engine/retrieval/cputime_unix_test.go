//go:build unix

package retrieval

import (
	"syscall"
	"testing"
	"time"
)

// reportCPU adds the process CPU time per op to a benchmark: on a machine
// shared with other jobs, wall time per op swings with the load while CPU
// time stays put.
func reportCPU(b *testing.B, run func()) {
	var before, after syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &before)
	run()
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &after)
	cpu := time.Duration(after.Utime.Nano()+after.Stime.Nano()-before.Utime.Nano()-before.Stime.Nano()) * time.Nanosecond
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
}
