package sessions_test

import (
	"testing"

	"mnemo/engine/enginetest"
)

// TestMain puts the tests' temporary folders on a RAM file system (see
// enginetest.RAMTempDir).
func TestMain(m *testing.M) { enginetest.Main(m) }
