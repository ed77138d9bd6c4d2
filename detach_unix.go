//go:build unix

package main

import (
	"os"
	"os/exec"
	"strconv"
	"syscall"
)

// startDetached starts the mnemo binary exe with args as a process of its
// own: in a session of its own, so a terminal's hangup or Ctrl-C does not
// reach it, its standard streams on /dev/null, this process's environment
// (its profile files renamed: finisherEnv) with env added.
// It answers its pid; nothing waits for it (once this process exits, init
// reaps it).
func startDetached(exe string, args, env []string) (int, error) {
	cmd := exec.Command(exe, args...)
	cmd.Env = append(finisherEnv(os.Environ()), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	pid := cmd.Process.Pid
	return pid, cmd.Process.Release()
}

// finisherNice is the niceness the import's finisher runs at: its work can
// wait, and a person's next command (a browse through it, a TUI) should not.
const finisherNice = 10

// lowerPriority gives every thread of this process the finisher's niceness
// (on Linux a thread's niceness is its own; threads made later inherit
// their maker's, so the runtime's are done twice, for one started meanwhile).
func lowerPriority() {
	for range 2 {
		tasks, err := os.ReadDir("/proc/self/task")
		if err != nil {
			// Elsewhere the niceness is the process's.
			_ = syscall.Setpriority(syscall.PRIO_PROCESS, 0, finisherNice)
			return
		}
		for _, t := range tasks {
			if tid, err := strconv.Atoi(t.Name()); err == nil {
				_ = syscall.Setpriority(syscall.PRIO_PROCESS, tid, finisherNice)
			}
		}
	}
}
