//go:build unix

package main

import (
	"errors"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// onOutputClosed calls closed when the reading end of f (a pipe, a socket, a
// terminal that hung up) goes away, so a watch blocked on a quiet feed ends at
// once. It returns a stop function; a regular file never reports it.
func onOutputClosed(f *os.File, closed func()) (stop func()) {
	fi, err := f.Stat()
	if err != nil || fi.Mode().IsRegular() {
		return func() {}
	}
	fd := int(f.Fd())
	done := make(chan struct{})
	go func() {
		for {
			// No events asked: poll reports only POLLERR and POLLHUP.
			fds := []unix.PollFd{{Fd: int32(fd), Events: 0}}
			n, err := unix.Poll(fds, -1)
			select {
			case <-done:
				return
			default:
			}
			if err != nil && !errors.Is(err, unix.EINTR) {
				return
			}
			if n > 0 && fds[0].Revents&(unix.POLLERR|unix.POLLHUP|unix.POLLNVAL) != 0 {
				closed()
				return
			}
		}
	}()
	return func() { close(done) }
}

// isBrokenPipe tells whether err is a write to a pipe nobody reads.
func isBrokenPipe(err error) bool { return errors.Is(err, syscall.EPIPE) }
