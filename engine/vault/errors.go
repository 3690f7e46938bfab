package vault

import "errors"

// Errors the vault returns, wrapped with the path and what failed. Package
// engine exports each under the same name, so a caller of the engine tests
// them with errors.Is without knowing the vault.
var (
	// ErrOutsideRoot reports a path that leaves the memory folder: "..",
	// an absolute path, or a symbolic link out of it.
	ErrOutsideRoot = errors.New("path resolves outside the memory folder")
)
