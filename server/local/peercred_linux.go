package local

import (
	"net"
	"os"
	"syscall"
)

// peerChecked accepts only connections from processes of this user (or
// root): the socket's mode already keeps others out, and this holds even
// where a directory above it was made reachable.
type peerChecked struct{ net.Listener }

func (l peerChecked) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if samePeer(c) {
			return c, nil
		}
		_ = c.Close()
	}
}

// samePeer reads the peer's credentials (SO_PEERCRED).
func samePeer(c net.Conn) bool {
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return false
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return false
	}
	var cred *syscall.Ucred
	var cerr error
	if err := raw.Control(func(fd uintptr) {
		cred, cerr = syscall.GetsockoptUcred(int(fd), syscall.SOL_SOCKET, syscall.SO_PEERCRED)
	}); err != nil || cerr != nil {
		return false
	}
	uid := uint32(os.Geteuid())
	return cred.Uid == uid || cred.Uid == 0
}
