package engine_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"

	"mnemo/engine"
)

// damageFiles is a vault big enough for a full-text segment of some size.
func damageFiles() map[string]string {
	files := map[string]string{}
	for i := range 100 {
		files[fmt.Sprintf("n/m%03d.md", i)] = memo(fmt.Sprintf("Note %d", i), "2024-01-01", nil, synthetic(uint64(i), 120)+" platypus")
	}
	return files
}

// largestSegment returns the biggest segment file of the newest snapshot
// of the vault's closed index.
func largestSegment(t *testing.T, v *vault) string {
	t.Helper()
	zaps := engine.NewestSegments(t, v.cfg.IndexDir)
	if len(zaps) == 0 {
		t.Fatal("no .zap segment in the index")
	}
	sort.Slice(zaps, func(i, j int) bool { return size(zaps[i]) > size(zaps[j]) })
	return zaps[0]
}

func size(p string) int64 {
	fi, err := os.Stat(p)
	if err != nil {
		return 0
	}
	return fi.Size()
}

// harms are the ways a segment is damaged: garbage at several offsets,
// truncated, its footer cut.
var harms = []struct {
	name string
	harm func(path string, n int64) error
}{
	{"garbage at 1%", garbageAt(0.01)},
	{"garbage at 25%", garbageAt(0.25)},
	{"garbage at 50%", garbageAt(0.50)},
	{"garbage at 75%", garbageAt(0.75)},
	{"garbage at 99%", garbageAt(0.99)},
	{"garbage in the footer", func(p string, n int64) error { return overwrite(p, n-30, 16) }},
	{"truncated by 1000 bytes", func(p string, n int64) error { return os.Truncate(p, n-1000) }},
	{"truncated to half", func(p string, n int64) error { return os.Truncate(p, n/2) }},
	{"footer cut", func(p string, n int64) error { return os.Truncate(p, n-20) }},
	{"emptied", func(p string, n int64) error { return os.Truncate(p, 0) }},
}

func garbageAt(frac float64) func(string, int64) error {
	return func(p string, n int64) error { return overwrite(p, int64(float64(n)*frac), 256) }
}

// overwrite writes n bytes of garbage at off, in place.
func overwrite(p string, off int64, n int) error {
	f, err := os.OpenFile(p, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = f.WriteAt([]byte(strings.Repeat("\xde\xad\xbe\xef", n/4)), off)
	return err
}

// TestDamagedSegment: a damaged full-text segment is found when the index
// is opened. Read-only (search --no-sync), full-text and hybrid searches
// fail with ErrIndexDamaged — never a panic, never "no results" — and
// Status says what is wrong; a writer rebuilds at its next sync, says why,
// and finds everything again. The vault is synced once; each harm damages
// its own copy of the closed index.
func TestDamagedSegment(t *testing.T) {
	files := damageFiles()
	synced := newVault(t, files)
	synced.close()
	for _, h := range harms {
		t.Run(h.name, func(t *testing.T) {
			t.Parallel()
			v := synced.closedCopy(t)
			seg := largestSegment(t, v)
			if err := h.harm(seg, size(seg)); err != nil {
				t.Fatal(err)
			}

			ro := v.cfg
			ro.ReadOnly = true
			r, err := engine.Open(context.Background(), ro)
			if err != nil {
				if !errors.Is(err, engine.ErrIndexDamaged) {
					t.Fatalf("read-only open: %v, want ErrIndexDamaged", err)
				}
			} else {
				for _, m := range []engine.Mode{engine.FullText, engine.Hybrid} {
					p, err := r.Search(context.Background(), engine.Query{Text: "platypus", Mode: m, PageSize: 200, Now: now0})
					if !errors.Is(err, engine.ErrIndexDamaged) {
						t.Errorf("read-only %s search: %d results, err %v; want ErrIndexDamaged", m, p.TotalCount, err)
					}
				}
				p, err := r.Search(context.Background(), engine.Query{Text: "database migration", Mode: engine.Semantic, PageSize: 10, Now: now0})
				if err != nil || p.TotalCount == 0 {
					t.Errorf("read-only semantic search: %d results, %v; the vectors are not damaged", p.TotalCount, err)
				}
				if st, _ := r.Status(context.Background()); st.Damaged == "" {
					t.Error("read-only Status.Damaged is empty")
				}
				r.Close()
			}

			v.open()
			if st := v.status(); st.Damaged == "" {
				t.Error("writer before its sync: Status.Damaged is empty")
			}
			if _, err := v.e.Search(context.Background(), engine.Query{Text: "platypus", Mode: engine.FullText, Now: now0}); !errors.Is(err, engine.ErrIndexDamaged) {
				t.Errorf("writer before its sync: search err %v, want ErrIndexDamaged", err)
			}
			rep := v.sync()
			if !rep.Full || !strings.Contains(rep.Rebuilt, "damaged") {
				t.Errorf("sync: Full %v, Rebuilt %q; want a rebuild that says the index was damaged", rep.Full, rep.Rebuilt)
			}
			if st := v.status(); st.Damaged != "" || st.Files != len(files) {
				t.Errorf("after the rebuild: Damaged %q, %d files; want none, %d", st.Damaged, st.Files, len(files))
			}
			for _, m := range allModes {
				if got := v.search(engine.Query{Text: "platypus", Mode: m, PageSize: 200}); m == engine.FullText && got.TotalCount != len(files) {
					t.Errorf("%s after the rebuild: %d results, want %d", m, got.TotalCount, len(files))
				}
			}
		})
	}
}

// TestSegmentDamagedWhileOpen: garbage written over a segment an open
// index has mapped. The query either answers or fails with
// ErrIndexDamaged (Bleve's panics are recovered at the engine's edge);
// after a failure, Status says so and the next sync rebuilds.
func TestSegmentDamagedWhileOpen(t *testing.T) {
	files := damageFiles()
	v := newVault(t, files)
	v.close()
	seg := largestSegment(t, v)
	ro := v.cfg
	ro.ReadOnly = true
	r, err := engine.Open(context.Background(), ro)
	if err != nil {
		t.Fatal(err)
	}
	n := size(seg)
	if err := overwrite(seg, 0, int(n-8)&^3); err != nil {
		t.Fatal(err)
	}
	p, err := r.Search(context.Background(), engine.Query{Text: "platypus", Mode: engine.FullText, PageSize: 200, Now: now0})
	switch {
	case errors.Is(err, engine.ErrIndexDamaged):
		if st, _ := r.Status(context.Background()); st.Damaged == "" {
			t.Error("after a damaged query: Status.Damaged is empty")
		}
	case err != nil:
		t.Errorf("search over a damaged segment: %v, want ErrIndexDamaged", err)
	case p.TotalCount != len(files):
		t.Errorf("search over a damaged segment: %d results and no error, want %d or ErrIndexDamaged", p.TotalCount, len(files))
	default:
		t.Log("the garbage was not read: complete results")
	}
	r.Close()

	v.open()
	if rep := v.sync(); !rep.Full {
		t.Errorf("sync after the damage: Full %v, Rebuilt %q; want a rebuild", rep.Full, rep.Rebuilt)
	}
	if got := v.search(engine.Query{Text: "platypus", Mode: engine.FullText, PageSize: 200}); got.TotalCount != len(files) {
		t.Errorf("after the rebuild: %d results, want %d", got.TotalCount, len(files))
	}
}
