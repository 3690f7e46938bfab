package transcript

import (
	"os"
	"testing"

	"mnemo/engine/enginetest"
)

func TestMain(m *testing.M) {
	cleanup := enginetest.RAMTempDir() // indexes and sockets in temp folders: see its doc
	code := m.Run()
	cleanup()
	os.Exit(code)
}
