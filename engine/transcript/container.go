package transcript

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"time"
)

// Some agents keep many sessions in one file: a SQLite database (Cursor,
// OpenCode, Goose, Crush, Zed) or a data export (conversations.json). Such
// a file is a container; each session in it is one transcript, named
// "<container path>/<key>" (the key path-escaped), so that everything after
// this package still sees one path per session.
//
// A container is read whole when it changes and never otherwise: its
// stamp (the size and mtime of the file and of its -wal and -journal) is
// kept in mnemo's scratch folder beside one small file per session holding
// that session's records, already redacted. A no-op sync stats the
// container and reads that listing; it never opens the container. Reading
// one session of a changed container extracts all of them once, and a
// container that keeps changing is extracted at most once per ten times
// its last extraction took (containerIndex.due).

// extractor reads every session of a container, calling emit once per
// session (keys unique within the container).
type extractor func(ctx context.Context, path string, opt Options, emit func(key string, doc wholeDoc) error) error

// containedPath names the session key inside container c.
func containedPath(c, key string) string { return filepath.Join(c, url.PathEscape(key)) }

// isContained reports whether path names a session inside a container file.
func isContained(path string) bool {
	fi, err := os.Stat(filepath.Dir(path))
	return err == nil && fi.Mode().IsRegular()
}

// containerStamp says what a container looked like: its file and, for
// SQLite, the write-ahead log and rollback journal beside it.
func containerStamp(c string) string { return stamps(c, c+"-wal", c+"-journal") }

// containerIndex is the scratch listing of one container.
type containerIndex struct {
	Container string            `json:"container"`
	Stamp     string            `json:"stamp"`
	Keys      []string          `json:"keys"`
	Hash      map[string]string `json:"hash"` // key → hash of its session file
	// Subagents counts the sub-agents' sessions left out (not in Keys).
	Subagents int `json:"subagents,omitempty"`
	// At and Took are when the last extraction ended and how long it took:
	// a container that keeps changing (an editor's database while it runs)
	// is extracted again only after ten times that long, so that reading
	// it costs mnemo at most a tenth of its time.
	At   time.Time     `json:"at"`
	Took time.Duration `json:"took"`
}

// due reports whether a container whose stamp changed may be extracted again.
func (idx containerIndex) due(now time.Time) bool {
	return idx.At.IsZero() || now.Sub(idx.At) >= 10*idx.Took
}

// scratchDir is the private folder for one container's listing and session
// files: under Options.Scratch (the index's), else the system temp folder.
func scratchDir(opt Options, k Kind, c string) string {
	base := opt.Scratch
	if base == "" {
		base = filepath.Join(os.TempDir(), "mnemo-sources-"+strconv.Itoa(os.Getuid()))
	}
	sum := sha256.Sum256([]byte(c))
	return filepath.Join(base, string(k)+"-"+hex.EncodeToString(sum[:8]))
}

func keyFile(dir, key string) string {
	sum := sha256.Sum256([]byte(key))
	return filepath.Join(dir, "s-"+hex.EncodeToString(sum[:12])+".json")
}

func loadIndex(dir string) containerIndex {
	var idx containerIndex
	if err := readJSONDoc(filepath.Join(dir, "index.json"), maxDoc, &idx); err != nil {
		return containerIndex{}
	}
	return idx
}

// listContainer lists the session keys of container c, extracting them
// again if c changed since the listing. If the extraction fails (a damaged
// database, an export being written), the previous listing stands and the
// failure is reported as a skip: sessions indexed before are kept.
func listContainer(ctx context.Context, k Kind, c string, opt Options) ([]string, []Skip) {
	dir := scratchDir(opt, k, c)
	stamp := containerStamp(c)
	idx := loadIndex(dir)
	var skips []Skip
	if idx.Stamp != stamp && idx.due(time.Now()) || idx.Container != c {
		if err := refreshContainer(ctx, k, c, opt, dir, stamp, &idx); err != nil && ctx.Err() == nil {
			skips = append(skips, Skip{Path: c, Reason: "unreadable: " + err.Error()})
		}
	}
	if idx.Subagents > 0 {
		skips = append(skips, Skip{Path: c, Reason: fmt.Sprintf("%d subagent sessions (not indexed by default)", idx.Subagents)})
	}
	return idx.Keys, skips
}

// refreshContainer extracts every session of c into dir and rewrites the
// listing; session files whose content did not change are left as they are.
func refreshContainer(ctx context.Context, k Kind, c string, opt Options, dir, stamp string, idx *containerIndex) error {
	ex := formats[k].container
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("scratch folder: %w", err)
	}
	start := time.Now()
	next := containerIndex{Container: c, Stamp: stamp, Hash: map[string]string{}}
	err := ex(ctx, c, opt, func(key string, doc wholeDoc) error {
		if _, dup := next.Hash[key]; dup {
			return nil
		}
		if doc.Subagent && !opt.IncludeSubagents {
			next.Subagents++
			return nil
		}
		for i := range doc.Items {
			doc.Items[i].Msg.Text = Redact(doc.Items[i].Msg.Text)
		}
		doc.Session.Summary = Redact(doc.Session.Summary)
		b, err := json.Marshal(doc)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(b)
		h := hex.EncodeToString(sum[:])
		next.Keys = append(next.Keys, key)
		next.Hash[key] = h
		if idx.Hash[key] == h {
			if _, err := os.Stat(keyFile(dir, key)); err == nil {
				return nil
			}
		}
		return writeAtomic(keyFile(dir, key), b)
	})
	if err != nil {
		return err
	}
	for key := range idx.Hash {
		if _, ok := next.Hash[key]; !ok {
			os.Remove(keyFile(dir, key))
		}
	}
	sort.Strings(next.Keys)
	next.At = time.Now()
	next.Took = next.At.Sub(start)
	b, err := json.Marshal(next)
	if err != nil {
		return err
	}
	if err := writeAtomic(filepath.Join(dir, "index.json"), b); err != nil {
		return err
	}
	*idx = next
	return nil
}

func writeAtomic(path string, b []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// Drop removes what the source keeps of the transcript at path in its
// scratch folder: for a session inside a container, its extract (its
// messages, redacted). A forgotten session must leave no copy there; the
// container's listing keeps only its key. Other transcripts keep nothing.
func (s Source) Drop(path string, opt Options) error {
	if !isContained(path) {
		return nil
	}
	return dropExtract(scratchDir(opt, s.Kind, filepath.Dir(path)), path)
}

// dropExtract removes from dir, a container's scratch folder, the extract of
// the session at path.
func dropExtract(dir, path string) error {
	key, err := url.PathUnescape(filepath.Base(path))
	if err != nil {
		return fmt.Errorf("transcript %s: bad session key: %w", path, err)
	}
	if err := os.Remove(keyFile(dir, key)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("remove the extract of %s: %w", path, err)
	}
	return nil
}

// Extract is what a scratch folder keeps of one container: its listing and
// one file per session, already redacted. The index that owns the scratch
// folder decides when a copy is no longer needed (Remove, Drop); nothing
// else ever removes one, since a container that is gone is never listed
// again.
type Extract struct {
	// Container is the container's path; "" for a leftover no read will
	// ever use: a folder whose first extraction was cut before its listing
	// was written, or a database snapshot a crash left behind.
	Container string
	Paths     []string // its sessions, named as Discover names them
	dir       string
	snapshot  string // the folder of the container's database snapshot
}

// Extracts lists the containers' copies kept under the scratch folder
// scratch (Options.Scratch). A database snapshot lives only while its
// extraction runs, so any there is listed as a leftover: call it only
// while no sync reads through the same scratch folder.
func Extracts(scratch string) ([]Extract, error) {
	ents, err := os.ReadDir(scratch)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("scratch folder: %w", err)
	}
	var out []Extract
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		dir := filepath.Join(scratch, e.Name())
		idx := loadIndex(dir)
		x := Extract{Container: idx.Container, dir: dir}
		if x.Container != "" {
			x.snapshot = filepath.Join(scratch, filepath.Base(scratchDir(Options{}, sqliteScratch, x.Container)))
			for _, k := range idx.Keys {
				x.Paths = append(x.Paths, containedPath(x.Container, k))
			}
		}
		out = append(out, x)
	}
	return out, nil
}

// Remove deletes the whole copy: every session's extract, the listing, and
// any database snapshot of the container.
func (x Extract) Remove() error {
	err := os.RemoveAll(x.dir)
	if x.snapshot != "" {
		err = errors.Join(err, os.RemoveAll(x.snapshot))
	}
	if err != nil {
		return fmt.Errorf("remove the copy of %s: %w", cmp.Or(x.Container, filepath.Base(x.dir)), err)
	}
	return nil
}

// Drop removes the extract of the session at path (one of x.Paths); the
// listing keeps only its key.
func (x Extract) Drop(path string) error { return dropExtract(x.dir, path) }

// Contained reports whether path names a session inside a container file
// (a database, an export) that is still there.
func Contained(path string) bool { return isContained(path) }

// readContained reads one session of a container.
func readContained(ctx context.Context, src Source, path string, prev Cursor, opt Options, h Handler, redact func(string) string) (Result, error) {
	c := filepath.Dir(path)
	key, err := url.PathUnescape(filepath.Base(path))
	if err != nil {
		return Result{}, fmt.Errorf("transcript %s: bad session key: %w", path, err)
	}
	fi, err := os.Stat(c)
	if err != nil {
		return Result{}, fmt.Errorf("transcript %s: %w", path, err)
	}
	r := &run{ctx: ctx, src: src, path: path, opt: opt, h: h, fi: fi, redact: redact}
	if len(prev.State) > 0 && json.Unmarshal(prev.State, &r.prev) != nil {
		prev, r.prev = Cursor{}, state{}
	}
	r.cur = prev
	stamp := containerStamp(c)
	if r.wholeUnchanged(stamp) {
		return r.finish()
	}
	dir := scratchDir(opt, src.Kind, c)
	idx := loadIndex(dir)
	if idx.Stamp != stamp && idx.due(time.Now()) || idx.Container != c {
		// Extract again; on failure what was extracted before stands.
		if err := refreshContainer(ctx, src.Kind, c, opt, dir, stamp, &idx); err != nil && ctx.Err() != nil {
			return Result{}, ctx.Err()
		}
	}
	if _, ok := idx.Hash[key]; !ok {
		return Result{}, fmt.Errorf("transcript %s: %w", path, errGone)
	}
	var doc wholeDoc
	if err := readJSONDoc(keyFile(dir, key), maxDoc, &doc); err != nil {
		return Result{}, fmt.Errorf("transcript %s: %w", path, err)
	}
	// The stamp of the extraction read, which may be older than the
	// container's: then the next read extracts again.
	if err := r.deliverWhole(doc, idx.Stamp); err != nil {
		return r.res, fmt.Errorf("transcript %s: %w", path, err)
	}
	return r.finish()
}

var errGone = errors.New("no longer in its container")
