//go:build !linux && !darwin && !freebsd

package remote

import (
	"net"
	"os"
)

// peerUID has no peer credentials to read on this system: on Windows a
// unix socket's file permissions (the folder's ACL) are what keep other
// users out, so the peer is taken to be this user.
func peerUID(*net.UnixConn) (int, error) { return os.Getuid(), nil }
