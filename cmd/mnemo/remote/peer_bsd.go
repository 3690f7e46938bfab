//go:build darwin || freebsd

package remote

import "golang.org/x/sys/unix"

// sockPeerUID reads LOCAL_PEERCRED (what getpeereid reads).
func sockPeerUID(fd int) (int, error) {
	cred, err := unix.GetsockoptXucred(fd, unix.SOL_LOCAL, unix.LOCAL_PEERCRED)
	if err != nil {
		return 0, err
	}
	return int(cred.Uid), nil
}
