//go:build !linux

package local

import "net"

// peerChecked relies on the socket's mode (0600) where the peer's
// credentials cannot be read the Linux way.
type peerChecked struct{ net.Listener }
