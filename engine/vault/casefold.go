package vault

import (
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"unicode"

	"mnemo/engine/safefile"
)

// Volumes that fold case. macOS's and Windows' default file systems find
// "Notes/Foo.md" when asked for "notes/foo.md" (and HFS+ and APFS find a
// name in either Unicode normalisation form), while the index keys a
// memory by the one spelling the scan lists. An id, a folder or a path in
// another spelling would open the right file under a key the index does
// not know: a read boost recorded for nothing, an edit indexed a second
// time, a write into a second spelling of an existing folder. So on such a
// volume every path a caller gives is respelled as the folder lists it
// before it is used; on a volume that tells case apart another spelling is
// another file, and nothing is respelled.

// foldsCase reports whether the file system holding dir finds a file under
// another case of its name. The writer asks with a file of its own (a
// hidden temporary name, removed at once, and by RemoveStaleTemps if a
// crash leaves it); a read-only vault, which must not write, asks with
// the folder's own name in its parent.
func foldsCase(dir string, readOnly bool) bool {
	if !readOnly {
		f, err := os.CreateTemp(dir, safefile.TempPrefix+"*"+safefile.TempSuffix)
		if err == nil {
			name := f.Name()
			f.Close()
			defer os.Remove(name)
			return sameFile(name, filepath.Join(dir, otherCase(filepath.Base(name))))
		}
	}
	base := filepath.Base(dir)
	if otherCase(base) == base {
		return false // no letter to fold: assume a volume that tells case apart
	}
	return sameFile(dir, filepath.Join(filepath.Dir(dir), otherCase(base)))
}

// otherCase swaps the case of every letter in s.
func otherCase(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsUpper(r) {
			return unicode.ToLower(r)
		}
		return unicode.ToUpper(r)
	}, s)
}

// sameFile reports whether a and b both exist and are one file.
func sameFile(a, b string) bool {
	fa, errA := os.Lstat(a)
	fb, errB := os.Lstat(b)
	return errA == nil && errB == nil && os.SameFile(fa, fb)
}

// Spelled returns rel (slash-separated, relative to the memory folder) as
// the folder lists it, on a volume that folds case: each part that exists
// under another case or normalisation form takes the listed spelling; a
// part that does not exist yet, and everything after it, stays as given.
// Elsewhere rel is returned unchanged.
func (v *Vault) Spelled(rel string) string {
	if !v.foldsCase || rel == "" || rel == "." {
		return rel
	}
	r, err := v.OpenRoot()
	if err != nil {
		return rel
	}
	defer r.Close()
	return spellAs(r.FS(), rel)
}

// spellAs respells rel part by part as fsys lists it: a part listed as
// given is kept; else the one entry equal to it case- and
// normalisation-insensitively is taken; with none (or several, which only
// a volume that tells case apart can hold), the part and the rest of rel
// are kept as given.
func spellAs(fsys fs.FS, rel string) string {
	parts := strings.Split(rel, "/")
	dir := "."
	for i, want := range parts {
		entries, err := fs.ReadDir(fsys, dir)
		if err != nil {
			break
		}
		got, n := "", 0
		for _, en := range entries {
			if en.Name() == want {
				got, n = want, 1
				break
			}
			if strings.EqualFold(NFC(en.Name()), NFC(want)) {
				got, n = en.Name(), n+1
			}
		}
		if n != 1 {
			break
		}
		parts[i] = got
		dir = path.Join(parts[:i+1]...)
	}
	return strings.Join(parts, "/")
}
