package vault

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
)

// Walk visits what the scan indexes at or below start (relative; "" is
// the memory folder): every folder and file that rules do not skip,
// reached through r, so nothing outside the memory folder is ever seen.
// Symbolic links are never followed — a link is visited as a link, and a
// linked folder is not entered — so each file is reached once, under its
// real path, and link loops cannot arise. A folder that cannot be read is
// passed to unreadable (what it holds is unknown, not gone); an unreadable
// memory folder is an error. The sync scan and the watcher both walk with it.
func Walk(ctx context.Context, r *os.Root, rules *Rules, start string, visit func(rel string, d fs.DirEntry) error, unreadable func(rel string)) error {
	top := start
	if top == "" {
		top = "."
	}
	return fs.WalkDir(r.FS(), top, func(p string, d fs.DirEntry, err error) error {
		rel := p
		if rel == "." {
			rel = ""
		}
		if err != nil {
			switch {
			case p == top && errors.Is(err, fs.ErrNotExist):
				return fs.SkipAll
			case rel == "":
				return err // the memory folder itself: nothing can be known
			case d == nil || d.IsDir():
				unreadable(rel)
			}
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if rules.skipEntry(rel, d.IsDir()) {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		return visit(rel, d)
	})
}

// WalkStart Lstats where a path-wise walk of rel would begin. It is false
// when rel does not exist, or goes through a symbolic link on the way
// (a/up/x.md with a/up → ..): that target is walked under its real path.
func (v *Vault) WalkStart(r *os.Root, rel string) (fs.FileInfo, bool) {
	dir := path.Dir(rel)
	if dir == "." {
		dir = ""
	}
	if real, err := RealRel(v.root, dir); err != nil || real != dir {
		return nil, false
	}
	fi, err := r.Lstat(rel)
	return fi, err == nil
}

// WatchRel turns an absolute path the watcher reports into a memory path;
// ok is false for paths outside the memory folder or left out by the rules.
func (v *Vault) WatchRel(abs string) (string, bool) {
	r, err := filepath.Rel(v.root, abs)
	if err != nil {
		return "", false
	}
	if r == "." {
		return "", true
	}
	if !filepath.IsLocal(r) {
		return "", false
	}
	r = filepath.ToSlash(r)
	if v.Rules().Skip(r, false) {
		return "", false
	}
	return r, true
}

// IsIgnoreFile reports whether abs is the vault's ignore file.
func (v *Vault) IsIgnoreFile(abs string) bool { return abs == v.Abs(IgnoreFile) }

// WatchFolders calls add for every folder at or below rel that the scan
// walks (Walk), until add returns fs.SkipAll. Folders that vanish or
// cannot be read are passed over: the sync reports them.
func (v *Vault) WatchFolders(rel string, add func(rel, abs string) error) {
	r, err := v.OpenRoot()
	if err != nil {
		return
	}
	defer r.Close()
	if rel != "" {
		if fi, ok := v.WalkStart(r, rel); !ok || !fi.IsDir() {
			return
		}
	}
	rules, err := v.LoadRules(r)
	if err != nil {
		rules = v.Rules() // the sync reports the broken file
	}
	Walk(context.Background(), r, rules, rel, func(p string, d fs.DirEntry) error {
		if !d.IsDir() {
			return nil
		}
		return add(p, v.Abs(p))
	}, func(string) {})
}
