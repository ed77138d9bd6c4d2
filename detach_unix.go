//go:build unix

package main

import (
	"os"
	"os/exec"
	"syscall"
)

// startDetached starts the mnemo binary exe with args as a process of its
// own: in a session of its own, so a terminal's hangup or Ctrl-C does not
// reach it, its standard streams on /dev/null, this process's environment.
// It answers its pid; nothing waits for it (once this process exits, init
// reaps it).
func startDetached(exe string, args []string) (int, error) {
	cmd := exec.Command(exe, args...)
	cmd.Env = os.Environ()
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	pid := cmd.Process.Pid
	return pid, cmd.Process.Release()
}
