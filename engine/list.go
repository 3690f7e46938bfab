package engine

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"
	"time"

	"mnemo/decay"
	"mnemo/engine/rank"
	"mnemo/engine/vault"
)

// Listing is one folder of the memory folder, as List returns it.
type Listing struct {
	Folder  string        `json:"folder"` // relative; "" is the memory folder itself
	Folders []FolderEntry `json:"folders"`
	Files   []FileEntry   `json:"files"`
}

// FolderEntry is a subfolder in a Listing.
type FolderEntry struct {
	Path     string `json:"path"`
	Memories int    `json:"memories"` // indexed memories at any depth below it
}

// FileEntry is a memory file in a Listing.
type FileEntry struct {
	URI      string    `json:"uri"`
	Path     string    `json:"path"`
	Title    string    `json:"title"`
	Created  time.Time `json:"created,omitzero"`
	Modified time.Time `json:"modified,omitzero"`
	LastRead time.Time `json:"lastRead,omitzero"`
	Size     int64     `json:"size"`
	// DecayWeight is the recency weight now, 0–1 (decay.Config.Weight):
	// 1 within the grace period, then fading with the half-life.
	DecayWeight float64 `json:"decayWeight"`
	Indexed     bool    `json:"indexed"` // false until a sync has seen it
}

// List describes one folder: its memory files (title, dates, size, decay
// weight) and its subfolders, both sorted by name. It shows what sync
// indexes: regular files with a memory extension and real folders; hidden
// entries, the index folder, ignored paths and symbolic links are left out,
// and nothing outside the memory folder is looked at. A folder given
// through an in-vault symlink is listed under its real path.
func (e *Engine) List(ctx context.Context, folder string) (Listing, error) {
	rel, err := vault.CleanRel(vault.NFC(folder))
	if err != nil {
		return Listing{}, fmt.Errorf("folder: %w", err)
	}
	if rel, err = vault.RealRel(e.root, e.vault.Spelled(rel)); err != nil {
		return Listing{}, fmt.Errorf("folder: %w", err)
	}
	r, err := e.vault.OpenRoot()
	if err != nil {
		return Listing{}, err
	}
	defer r.Close()
	rules, err := e.vault.LoadRules(r)
	if err != nil {
		return Listing{}, err
	}
	entries, err := fs.ReadDir(r.FS(), orDot(rel))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return Listing{}, fmt.Errorf("folder %q: %w", rel, ErrNotFound)
		}
		return Listing{}, fmt.Errorf("folder %q: %w", rel, err)
	}
	if rules.Skip(rel, true) {
		return Listing{}, fmt.Errorf("folder %q is not indexed (hidden, the index folder, or ignored): %w", rel, ErrNotFound)
	}
	l := Listing{Folder: rel, Folders: []FolderEntry{}, Files: []FileEntry{}}
	now := time.Now()
	e.mu.RLock()
	defer e.mu.RUnlock()
	for _, d := range entries {
		if err := ctx.Err(); err != nil {
			return Listing{}, err
		}
		name := d.Name()
		p := path.Join(rel, name)
		if rules.Skip(p, d.IsDir()) {
			continue
		}
		if d.IsDir() {
			n := 0
			for f := range e.files {
				if vault.InFolder(f, p) {
					n++
				}
			}
			l.Folders = append(l.Folders, FolderEntry{Path: p, Memories: n})
			continue
		}
		if !d.Type().IsRegular() || !vault.IsMemoryName(name) {
			continue
		}
		fi, err := d.Info() // an Lstat: never follows a link
		if err != nil || !fi.Mode().IsRegular() {
			continue
		}
		f := FileEntry{URI: URI(p), Path: p, Size: fi.Size(), LastRead: e.reads[p]}
		var created, mtime time.Time
		if r := e.files[p]; r != nil {
			f.Title, f.Created, f.Modified, f.Indexed = r.Title, r.Created, r.Modified, true
			created, mtime = r.Created, r.mtime()
		} else {
			f.Title = strings.TrimSuffix(name, path.Ext(name))
			mtime = fi.ModTime().UTC()
		}
		if f.Modified.IsZero() {
			f.Modified = mtime
		}
		f.DecayWeight = rank.Round(e.cfg.Decay.Weight(p, decay.Reference(f.LastRead, created, mtime), now))
		l.Files = append(l.Files, f)
	}
	sort.Slice(l.Folders, func(i, j int) bool { return l.Folders[i].Path < l.Folders[j].Path })
	sort.Slice(l.Files, func(i, j int) bool { return l.Files[i].Path < l.Files[j].Path })
	return l, nil
}
