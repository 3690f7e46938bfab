package vault

import (
	"path"
	"testing"
)

// TestFolderChecks: InFolder and DirectlyIn answer as the path package
// would (rel under folder, or rel's own folder is folder), without its
// allocations.
func TestFolderChecks(t *testing.T) {
	folders := []string{"", "a", "a/b", "ab", "load"}
	rels := []string{"x.md", "a", "a.md", "a/x.md", "a/b/x.md", "ab/x.md", "abc/x.md", "a/bc/x.md", "a/b", "load/n.md", "loader/n.md", "load/sub/n.md"}
	for _, f := range folders {
		for _, r := range rels {
			wantIn := f == "" || r == f || len(r) > len(f) && r[:len(f)+1] == f+"/"
			if got := InFolder(r, f); got != wantIn {
				t.Errorf("InFolder(%q, %q) = %v, want %v", r, f, got, wantIn)
			}
			dir := path.Dir(r)
			if dir == "." {
				dir = ""
			}
			if got, want := DirectlyIn(r, f), dir == f; got != want {
				t.Errorf("DirectlyIn(%q, %q) = %v, want %v", r, f, got, want)
			}
		}
	}
}
