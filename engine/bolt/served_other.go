//go:build !unix

package bolt

// servedByLiveProcess is false where a process cannot be probed: Open then
// waits its whole lock timeout, as before.
func servedByLiveProcess(string) bool { return false }
