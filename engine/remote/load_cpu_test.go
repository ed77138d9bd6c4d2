package remote_test

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// cpuSample is the CPU time this process, its child processes (mnemo
// watch, the watchers' process) and the whole machine had used, from /proc
// (zero where there is none), so a run can say what its followers cost
// apart from what else the shared machine was doing.
type cpuSample struct {
	self, child, apart time.Duration
	// busy and total are the machine's CPU time, over every core.
	busy, total time.Duration
}

// clockTick is the unit of /proc's CPU times (USER_HZ, 100 on Linux).
const clockTick = 10 * time.Millisecond

func sampleCPU(childPID, apartPID int) cpuSample {
	s := cpuSample{self: procCPU("/proc/self/stat")}
	if childPID > 0 {
		s.child = procCPU(fmt.Sprintf("/proc/%d/stat", childPID))
	}
	if apartPID > 0 {
		s.apart = procCPU(fmt.Sprintf("/proc/%d/stat", apartPID))
	}
	if b, err := os.ReadFile("/proc/stat"); err == nil {
		line, _, _ := strings.Cut(string(b), "\n")
		f := strings.Fields(line)
		if len(f) > 5 && f[0] == "cpu" {
			for i, v := range f[1:] {
				n, _ := strconv.ParseInt(v, 10, 64)
				d := time.Duration(n) * clockTick
				s.total += d
				if i != 3 && i != 4 { // idle, iowait
					s.busy += d
				}
			}
		}
	}
	return s
}

// procCPU is utime + stime of /proc/PID/stat.
func procCPU(path string) time.Duration {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	// The fields after the command's name, which ends at the last ')'.
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0
	}
	u, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(u+st) * clockTick
}

func (s cpuSample) sub(o cpuSample) cpuSample {
	return cpuSample{self: s.self - o.self, child: s.child - o.child, apart: s.apart - o.apart, busy: s.busy - o.busy, total: s.total - o.total}
}

// summary says how many cores each used over d, and this process's CPU per record.
func (s cpuSample) summary(d time.Duration, records int) string {
	if s.total <= 0 || d <= 0 {
		return ""
	}
	cores := func(x time.Duration) float64 { return x.Seconds() / d.Seconds() }
	n := runtime.NumCPU()
	out := fmt.Sprintf("CPU while writing: this process %.2f cores (%.0f µs a record)", cores(s.self), float64(s.self.Microseconds())/float64(max(records, 1)))
	if s.child > 0 {
		out += fmt.Sprintf(", mnemo watch %.2f", cores(s.child))
	}
	if s.apart > 0 {
		out += fmt.Sprintf(", the watchers' process %.2f", cores(s.apart))
	}
	busy := float64(n) * s.busy.Seconds() / s.total.Seconds()
	return out + fmt.Sprintf(", the machine %.2f of %d busy (%.2f by other processes)", busy, n, max(busy-cores(s.self)-cores(s.child)-cores(s.apart), 0))
}

// settle waits until this process uses less than a tenth of a core over a
// second (at most limit), so that a run does not start while the last one's
// leftovers still run: a TUI's background clustering, a tea.Cmd, goes on
// after its program has ended. It answers how long it waited and the CPU
// this process used meanwhile.
func settle(limit time.Duration) (waited, used time.Duration) {
	start, first := time.Now(), procCPU("/proc/self/stat")
	for time.Since(start) < limit {
		before := procCPU("/proc/self/stat")
		time.Sleep(time.Second)
		if procCPU("/proc/self/stat")-before < 100*time.Millisecond {
			break
		}
	}
	return time.Since(start), procCPU("/proc/self/stat") - first
}
