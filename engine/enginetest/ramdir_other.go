//go:build !linux

package enginetest

// ramDir finds no RAM file system outside Linux: the tests use the
// system's temporary folder.
func ramDir() (string, bool) { return "", false }
