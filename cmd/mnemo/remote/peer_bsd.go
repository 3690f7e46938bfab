//go:build darwin || freebsd

package remote

import (
	"fmt"
	"net"

	"golang.org/x/sys/unix"
)

// peerUID is the user id of the process at the other end of c
// (LOCAL_PEERCRED, what getpeereid reads).
func peerUID(c *net.UnixConn) (int, error) {
	raw, err := c.SyscallConn()
	if err != nil {
		return 0, err
	}
	var cred *unix.Xucred
	var cerr error
	if err := raw.Control(func(fd uintptr) {
		cred, cerr = unix.GetsockoptXucred(int(fd), unix.SOL_LOCAL, unix.LOCAL_PEERCRED)
	}); err != nil {
		return 0, err
	}
	if cerr != nil {
		return 0, fmt.Errorf("peer credentials: %w", cerr)
	}
	return int(cred.Uid), nil
}
