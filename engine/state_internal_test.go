package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// TestStatePagesPacked: a full sync writes the files in path order, batch
// after batch, so the state store's records, vectors and excerpt indexes
// are appended and their pages filled (bbolt's default split leaves them
// half empty); a later sync that inserts among them still reads back.
func TestStatePagesPacked(t *testing.T) {
	root := t.TempDir()
	cfg := Config{MemoryDir: filepath.Join(root, "mem"), IndexDir: filepath.Join(root, "idx")}
	write := func(rel, text string) {
		p := filepath.Join(cfg.MemoryDir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 300 {
		write(fmt.Sprintf("f%02d/n%04d.md", i%13, i), fmt.Sprintf("# Note %d\n\n%s\n", i, strings.Repeat("the quick brown fox jumps over the lazy dog ", 3+i%9)))
	}
	ctx := context.Background()
	e, err := Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	e.batchFiles = 25
	if _, err := e.Sync(ctx, true); err != nil {
		t.Fatal(err)
	}
	fill := func() map[string]float64 {
		f := map[string]float64{}
		e.st.db.View(func(tx *bolt.Tx) error {
			for _, name := range [][]byte{bucketFiles, bucketVectors, bucketExcerpts} {
				s := tx.Bucket(name).Stats()
				f[string(name)] = float64(s.LeafInuse) / float64(s.LeafAlloc)
			}
			return nil
		})
		return f
	}
	for name, f := range fill() {
		if f < 0.85 {
			t.Errorf("after a full sync, %s leaf pages are %.0f%% full, want at least 85%%", name, 100*f)
		}
	}
	for i := range 40 { // inserted among the packed keys
		write(fmt.Sprintf("f%02d/n%04da.md", i%13, i*7), "# Inserted\n\nbetween two others\n")
	}
	rep, err := e.Sync(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Added) != 40 {
		t.Fatalf("second sync added %d files, want 40", len(rep.Added))
	}
	l, err := e.st.load()
	if err != nil {
		t.Fatal(err)
	}
	if len(l.files) != 340 {
		t.Errorf("state store holds %d records, want 340", len(l.files))
	}
}

// TestRecordJSON: a record without frontmatter dates leaves them out (66
// bytes of "0001-01-01T00:00:00Z" a record otherwise), and both forms read
// back as the same record: older records, with the zero dates written, too.
func TestRecordJSON(t *testing.T) {
	created := time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)
	cases := []struct {
		name string
		rec  record
		old  string // the same record as older mnemo wrote it
	}{
		{"no dates", record{Path: "a.md", Size: 3, Title: "A"},
			`{"p":"a.md","s":3,"m":0,"h":"","t":"A","c":"0001-01-01T00:00:00Z","o":"0001-01-01T00:00:00Z","k":0,"l":[0,0,0,0]}`},
		{"created only", record{Path: "b.md", Created: created},
			`{"p":"b.md","s":0,"m":0,"h":"","t":"","c":"2026-11-30T08:00:00Z","o":"0001-01-01T00:00:00Z","k":0,"l":[0,0,0,0]}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			j, err := json.Marshal(&c.rec)
			if err != nil {
				t.Fatal(err)
			}
			if bytes.Contains(j, []byte("0001-01-01")) {
				t.Errorf("record written with a zero date: %s", j)
			}
			for _, in := range [][]byte{j, []byte(c.old)} {
				var got record
				if err := json.Unmarshal(in, &got); err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(got, c.rec) {
					t.Errorf("%s read back as %+v, want %+v", in, got, c.rec)
				}
			}
		})
	}
}
