//go:build linux || darwin || freebsd

package remote

import (
	"fmt"
	"net"
)

// peerUID is the user id of the process at the other end of c, read from
// the socket by the system's own call (sockPeerUID, one per system).
func peerUID(c *net.UnixConn) (int, error) {
	raw, err := c.SyscallConn()
	if err != nil {
		return 0, err
	}
	var uid int
	var cerr error
	if err := raw.Control(func(fd uintptr) { uid, cerr = sockPeerUID(int(fd)) }); err != nil {
		return 0, err
	}
	if cerr != nil {
		return 0, fmt.Errorf("peer credentials: %w", cerr)
	}
	return uid, nil
}
