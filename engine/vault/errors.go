package vault

import "errors"

// Errors the vault returns, wrapped with the path and what failed. Package
// engine exports each under the same name, so a caller of the engine tests
// them with errors.Is without knowing the vault.
var (
	// ErrOutsideRoot reports a path that leaves the memory folder: "..",
	// an absolute path, or a symbolic link out of it.
	ErrOutsideRoot = errors.New("path resolves outside the memory folder")
	// ErrNotRegular reports a path that names something other than a
	// regular file — a symbolic link, a folder, a device, a FIFO or a
	// socket — where a memory file was expected. Such entries are left
	// alone: never opened, read, replaced or indexed.
	ErrNotRegular = errors.New("not a regular file; memory files are regular files inside the memory folder")
	// ErrExists reports a write or rename that would replace a file it
	// was told not to.
	ErrExists = errors.New("a memory already exists there")
	// ErrInvalid reports a request the vault refuses as made: a file over
	// the size limit. The engine's own validation errors are this one too,
	// so a caller asks one question for "the request was wrong".
	ErrInvalid = errors.New("invalid request")
)
