package engine_test

import (
	"os"
	"testing"

	"mnemo/engine/enginetest"
)

func TestMain(m *testing.M) {
	cleanup := enginetest.RAMTempDir() // thousands of small files: see its doc
	code := m.Run()
	cleanup()
	os.Exit(code)
}
