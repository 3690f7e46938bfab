package transcript

import (
	"strconv"
	"testing"
)

// TestTreeHoldBound runs the tree formats' tests again with the first
// pass holding nothing, then a few lines, of what it read: the second pass
// reads the rest again, and every answer stays as it was.
func TestTreeHoldBound(t *testing.T) {
	defer func(n int) { treeHoldBytes = n }(treeHoldBytes)
	for _, hold := range []int{0, 2 * treeLineBytes} {
		treeHoldBytes = hold
		t.Run(strconv.Itoa(hold), func(t *testing.T) {
			for name, test := range map[string]func(*testing.T){
				"fixtures": TestReadFixtures, "appends": TestAppendEverySplit, "rewrites": TestRewriteAndTruncate,
				"coverage": TestCoverage, "rewind": TestClaudeRewindAnsweredAgain, "pi": TestPi,
				"careful": TestCarefulReader, "long lines": TestLongLineSkipped,
			} {
				t.Run(name, test)
			}
		})
	}
}
