package vault

import (
	"crypto/sha256"
	"encoding/hex"
)

// Hash is the SHA-256 of a file's bytes, in hex: the checksum Edit
// compares and the hash sync uses to notice content that did not change.
func Hash(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}
