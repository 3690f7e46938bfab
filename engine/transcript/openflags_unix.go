//go:build unix

package transcript

import "syscall"

// noFollow makes an open fail on a symbolic link in the last element of
// the path, closing the gap between the Lstat check and the open.
const noFollow = syscall.O_NOFOLLOW
