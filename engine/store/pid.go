package store

import (
	"os"
	"path/filepath"
	"strconv"

	"mnemo/engine/safefile"
)

// WritePID records this process as the writer of the index in dir, so a
// second writer's "in use" error can name it. Best effort: the lock itself
// is bbolt's. It never writes through a link planted at the name.
func WritePID(dir string) {
	safefile.Write(filepath.Join(dir, PIDFile), []byte(strconv.Itoa(os.Getpid())+"\n"), 0o644)
}

// RemovePID removes the PID file a writer wrote in dir, as it lets go of
// the index.
func RemovePID(dir string) { os.Remove(filepath.Join(dir, PIDFile)) }
