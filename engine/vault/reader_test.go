//go:build unix

package vault

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"testing/iotest"
)

// TestReaderRules: the sync's folder-at-a-time reader keeps every
// rule of Vault.Read — regular files only (links, FIFOs, folders refused
// without being opened or followed), links out of the memory folder
// reported as such, the size bound — and reads what Vault.Read reads.
func TestReaderRules(t *testing.T) {
	root := readerFixture(t)
	v := &Vault{root: root, limit: 64}
	fr := v.NewReader()
	defer fr.Close()
	cases := []struct {
		rel  string
		want string // the text, when err is nil
		err  error
	}{
		{"top.md", "at the top", nil},
		{"a/b/deep.md", "two folders down", nil},
		{"a/b/empty.md", "", nil},
		{"a/limit.md", strings.Repeat("y", 64), nil},
		{"a/up/real.md", "behind an in-vault folder link", nil},
		{"a/big.md", "", ErrInvalid},
		{"a/out.md", "", ErrOutsideRoot},
		{"a/alias.md", "", ErrNotRegular},
		{"a/pipe.md", "", ErrNotRegular},
		{"a/b", "", ErrNotRegular},
		{"outdir/secret.md", "", ErrOutsideRoot},
		{"a/gone.md", "", fs.ErrNotExist},
		{"nowhere/gone.md", "", fs.ErrNotExist},
	}
	for _, c := range cases {
		t.Run(c.rel, func(t *testing.T) {
			for name, read := range map[string]func(string) ([]byte, fs.FileInfo, error){
				"Reader.Read": fr.Read,
				"Vault.Read":  v.Read,
			} {
				data, _, err := read(c.rel) // a FIFO opened without O_NONBLOCK would hang here
				if c.err != nil {
					if !errors.Is(err, c.err) {
						t.Errorf("%s(%s) = %q, %v; want %v", name, c.rel, data, err, c.err)
					}
					if err != nil && !strings.Contains(err.Error(), c.rel) {
						t.Errorf("%s(%s): error %q does not name the file", name, c.rel, err)
					}
					if bytes.Contains(data, []byte("secret")) {
						t.Errorf("%s(%s) read the file outside", name, c.rel)
					}
					continue
				}
				if err != nil || string(data) != c.want {
					t.Errorf("%s(%s) = %q, %v; want %q", name, c.rel, data, err, c.want)
				}
			}
		})
	}
}

// readerFixture makes a memory folder with files in folders, links in and
// out of it and a FIFO, and returns it; it skips where FIFOs cannot be made.
func readerFixture(t *testing.T) string {
	t.Helper()
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "secret.md"), []byte("outside secret"), 0o644); err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	for rel, text := range map[string]string{
		"top.md":         "at the top",
		"a/b/deep.md":    "two folders down",
		"a/b/empty.md":   "",
		"a/big.md":       strings.Repeat("x", 65),
		"a/limit.md":     strings.Repeat("y", 64),
		"a/real/real.md": "behind an in-vault folder link",
	} {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for link, target := range map[string]string{
		"a/out.md":   filepath.Join(outside, "secret.md"),
		"a/alias.md": "limit.md",
		"outdir":     outside,
		"a/up":       "real",
	} {
		if err := os.Symlink(target, filepath.Join(root, filepath.FromSlash(link))); err != nil {
			t.Fatal(err)
		}
	}
	if err := syscall.Mkfifo(filepath.Join(root, "a", "pipe.md"), 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	return root
}

// TestReadBounded: sized reads stop one byte past the limit, whatever the
// size fstat reported (a file that grew, or shrank, since).
func TestReadBounded(t *testing.T) {
	cases := []struct {
		name        string
		text        string
		size, limit int64
		want        int
	}{
		{"as stated", "hello", 5, 10, 5},
		{"empty", "", 0, 10, 0},
		{"shrank", "hi", 5, 10, 2},
		{"grew, within limit", "hello world", 5, 20, 11},
		{"grew over the limit", strings.Repeat("z", 50), 5, 20, 21},
		{"stated over the limit", strings.Repeat("z", 50), 50, 20, 21},
		{"one byte reads", "hello world", 3, 20, 11},
		// a first read of exactly the stated size is the whole file
		{"first read stops at the stated size", "hello world", 1, 20, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var r interface{ Read([]byte) (int, error) } = strings.NewReader(c.text)
			if strings.HasPrefix(c.name, "one byte reads") || strings.HasPrefix(c.name, "first read") {
				r = iotest.OneByteReader(r)
			}
			got, err := readBounded(r, c.size, c.limit)
			if err != nil || len(got) != c.want || string(got) != c.text[:c.want] {
				t.Errorf("readBounded = %q, %v; want %q", got, err, c.text[:c.want])
			}
		})
	}
	if _, err := readBounded(iotest.ErrReader(errors.New("disk on fire")), 5, 10); err == nil {
		t.Error("readBounded hid a read error")
	}
}

// BenchmarkReadCorpus reads every memory file of the folder MNEMO_BENCH_DIR
// names (e.g. /tmp/mnemo-bench/corpora/tldr) as a sync does, through the
// vault's root (Vault.Read) and through each file's folder (Reader),
// and reports µs a file.
func BenchmarkReadCorpus(b *testing.B) {
	dir := os.Getenv("MNEMO_BENCH_DIR")
	if dir == "" {
		b.Skip("set MNEMO_BENCH_DIR to a folder of markdown (e.g. /tmp/mnemo-bench/corpora/tldr) to run this benchmark")
	}
	var rels []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() && IsMemoryName(d.Name()) {
			rel, _ := filepath.Rel(dir, p)
			rels = append(rels, filepath.ToSlash(rel))
		}
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
	v := &Vault{root: dir, limit: 10 << 20}
	run := func(b *testing.B, read func(string) ([]byte, fs.FileInfo, error)) {
		for b.Loop() {
			for _, rel := range rels {
				if _, _, err := read(rel); err != nil {
					b.Fatal(err)
				}
			}
		}
		b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*len(rels)), "µs/file")
	}
	b.Run("Vault.Read", func(b *testing.B) { run(b, v.Read) })
	b.Run("Reader", func(b *testing.B) {
		fr := v.NewReader()
		defer fr.Close()
		run(b, fr.Read)
	})
}
