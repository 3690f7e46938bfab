//go:build !unix

package transcript

// noFollow is 0 where the system has no O_NOFOLLOW (Windows): the open
// then relies on the Lstat before it and the os.SameFile check after it.
const noFollow = 0
