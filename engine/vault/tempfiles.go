package vault

import (
	"io/fs"
	"os"
	"path/filepath"

	"mnemo/engine/safefile"
)

// RemoveStaleTemps removes the temporary files (safefile.IsTemp: the
// hidden .mnemo-*.tmp a write stages before its rename) in the memory
// folder and the index folder, and returns their paths. Called by the
// writer at open, when no write of its own can be under way: a file found
// is what a writer killed mid-write left, which the scan ignores (it is
// hidden) and nothing else would ever remove. Links are not followed and
// hidden folders not entered, as in the scan.
func (v *Vault) RemoveStaleTemps(indexDir string) []string {
	root := v.root
	var removed []string
	sweep := func(dir string, deep bool) {
		filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil // unreadable: the scan reports it
			}
			if d.IsDir() {
				if p != dir && (!deep || d.Name()[0] == '.' || samePath(p, indexDir)) {
					return fs.SkipDir
				}
				return nil
			}
			if d.Type().IsRegular() && safefile.IsTemp(d.Name()) && os.Remove(p) == nil {
				removed = append(removed, p)
			}
			return nil
		})
	}
	sweep(root, true)
	sweep(indexDir, false)
	return removed
}

// samePath reports whether a and b are the same folder by name.
func samePath(a, b string) bool {
	aa, errA := filepath.Abs(a)
	bb, errB := filepath.Abs(b)
	return errA == nil && errB == nil && aa == bb
}
