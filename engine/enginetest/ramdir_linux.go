package enginetest

import "syscall"

// minFree is the room a test run may take: indexes of a few thousand
// memories, sparse 50 MB files, several packages at once. Docker's default
// /dev/shm (64 MB) is too small and is not used.
const minFree = 2 << 30

// ramDir returns /dev/shm if it is a tmpfs with minFree bytes available.
func ramDir() (string, bool) {
	const dir, tmpfsMagic = "/dev/shm", 0x01021994
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return "", false
	}
	if st.Type != tmpfsMagic || st.Bavail*uint64(st.Bsize) < minFree {
		return "", false
	}
	return dir, true
}
