package store

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// The errors an index answers with, whichever corpus it holds. A caller
// tests for them with errors.Is; each is wrapped with detail.
var (
	ErrReadOnly          = errors.New("index is open read-only")
	ErrIndexNotReady     = errors.New("index is not built yet; run sync")
	ErrIndexIncompatible = errors.New("index was written by an incompatible version of mnemo")
	// ErrIndexDamaged is returned when the full-text index's files are
	// damaged: a segment fails its checksum, the newest snapshot does not
	// load, or Bleve fails reading it. A writer rebuilds the index from its
	// sources at its next sync; a reader refuses full-text and hybrid
	// queries until then rather than answer from what is left.
	ErrIndexDamaged = errors.New("full-text index is damaged; run sync to rebuild it")
	// ErrInUse is returned by an open, read-only or not, while another
	// process holds the index as its writer; the message names that process.
	ErrInUse = errors.New("index is in use")
	// ErrCorrupt marks a state store that bbolt cannot read. A writer sets
	// it aside and rebuilds (OpenOrReplace).
	ErrCorrupt = errors.New("state store is corrupt")
)

// errInUse names the process that holds the index, from the pid file beside
// the state store.
func errInUse(statePath string) error {
	pid := "another process"
	if b, err := os.ReadFile(filepath.Join(filepath.Dir(statePath), PIDFile)); err == nil {
		pid = "PID " + strings.TrimSpace(string(b))
	}
	return fmt.Errorf("%w by %s (one writer at a time, and no reader beside it)", ErrInUse, pid)
}

// damageError is ErrIndexDamaged with what was found.
type damageError struct{ detail string }

func (d *damageError) Error() string        { return ErrIndexDamaged.Error() + " (" + d.detail + ")" }
func (d *damageError) Is(target error) bool { return target == ErrIndexDamaged }

// Damaged is an error wrapping ErrIndexDamaged that says what was found.
func Damaged(format string, args ...any) error {
	return &damageError{detail: fmt.Sprintf(format, args...)}
}

// DamageDetail says what was found wrong with a full-text index, for a
// rebuild's reason.
func DamageDetail(err error) string {
	var d *damageError
	if errors.As(err, &d) {
		return "full-text index was damaged: " + d.detail
	}
	return "full-text index was unreadable: " + err.Error()
}
