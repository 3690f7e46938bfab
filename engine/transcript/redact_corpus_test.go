package transcript

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// The corpus tests below run only when asked to, over texts outside the
// repository: MNEMO_REDACT_CORPUS names a file of texts (each a uvarint
// length and its bytes) that TestRedactCorpusDump writes and
// TestRedactCorpusGolden redacts.
//
//	MNEMO_REDACT_DUMP=DIR,DIR,… writes it from every transcript under each
//	    DIR (Claude Code, Codex, Gemini, … as the readers deliver their
//	    prose, unredacted) and every .md/.txt/.jsonl file under it (whole,
//	    and a .jsonl line by line);
//	MNEMO_REDACT_GOLDEN=FILE: the SHA-256 of Redact's output for every
//	    text, written to FILE when it does not exist, compared with it when
//	    it does — so one run on the old redactor and one on the new tell
//	    whether any output changed, byte for byte.

// writeText appends one text to a corpus file.
func writeText(w *bufio.Writer, s string) error {
	var n [binary.MaxVarintLen64]byte
	if _, err := w.Write(n[:binary.PutUvarint(n[:], uint64(len(s)))]); err != nil {
		return err
	}
	_, err := w.WriteString(s)
	return err
}

// readCorpus calls f with every text of a corpus file.
func readCorpus(tb testing.TB, path string, f func(string)) {
	tb.Helper()
	file, err := os.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer file.Close()
	r := bufio.NewReaderSize(file, 1<<20)
	for {
		n, err := binary.ReadUvarint(r)
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			tb.Fatal(err)
		}
		b := make([]byte, n)
		if _, err := io.ReadFull(r, b); err != nil {
			tb.Fatal(err)
		}
		f(string(b))
	}
}

func TestRedactCorpusDump(t *testing.T) {
	dirs, out := os.Getenv("MNEMO_REDACT_DUMP"), os.Getenv("MNEMO_REDACT_CORPUS")
	if dirs == "" || out == "" {
		t.Skip("MNEMO_REDACT_DUMP and MNEMO_REDACT_CORPUS not set")
	}
	f, err := os.Create(out)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	texts, size := 0, 0
	put := func(s string) {
		if s == "" {
			return
		}
		if err := writeText(w, s); err != nil {
			t.Fatal(err)
		}
		texts++
		size += len(s)
	}
	ctx := context.Background()
	for _, dir := range strings.Split(dirs, ",") {
		n0, s0 := texts, size
		// Transcripts, as the readers deliver them.
		for _, src := range DefaultSources(dir, func(string) string { return "" }) {
			paths, _, err := src.Discover(ctx, Options{Scratch: t.TempDir()})
			if err != nil {
				continue
			}
			for _, p := range paths {
				h := Handler{Message: func(m Message) error { put(m.Text); return nil }}
				readWith(ctx, src, p, Cursor{}, Options{Scratch: t.TempDir()}, h, noRedact)
			}
		}
		t.Logf("%s: %d messages, %d bytes from transcripts", dir, texts-n0, size-s0)
		n1, s1 := texts, size
		// Documents, whole, and JSONL line by line.
		filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return nil
			}
			switch filepath.Ext(p) {
			case ".md", ".txt":
				if b, err := os.ReadFile(p); err == nil {
					put(string(b))
				}
			case ".jsonl":
				if strings.Contains(p, "/.claude/") || strings.Contains(p, "/.codex/") {
					return nil // read above as transcripts
				}
				if b, err := os.ReadFile(p); err == nil {
					for _, l := range bytes.Split(b, []byte("\n")) {
						put(string(l))
					}
				}
			}
			return nil
		})
		t.Logf("%s: %d texts, %d bytes from documents", dir, texts-n1, size-s1)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d texts, %d bytes written to %s", texts, size, out)
}

func TestRedactCorpusGolden(t *testing.T) {
	corpus, golden := os.Getenv("MNEMO_REDACT_CORPUS"), os.Getenv("MNEMO_REDACT_GOLDEN")
	if corpus == "" || golden == "" {
		t.Skip("MNEMO_REDACT_CORPUS and MNEMO_REDACT_GOLDEN not set")
	}
	h0 := heapAlloc()
	var want []byte
	if b, err := os.ReadFile(golden); err == nil {
		want = b
	}
	var texts []string
	size := 0
	readCorpus(t, corpus, func(s string) { texts = append(texts, s); size += len(s) })
	Redact("warm up")
	outs := make([]string, len(texts))
	c0 := cpuTime()
	for i, s := range texts {
		outs[i] = Redact(s)
	}
	cpu := cpuTime() - c0
	var got bytes.Buffer
	changed, differ := 0, 0
	for i, out := range outs {
		sum := sha256.Sum256([]byte(out))
		got.Write(sum[:])
		if out != texts[i] {
			changed++
		}
		if want != nil {
			if j := i * 32; j+32 > len(want) || !bytes.Equal(want[j:j+32], sum[:]) {
				if differ++; differ <= 10 {
					t.Errorf("text %d differs from the golden output:\n in %.300q\nout %.300q", i, texts[i], out)
				}
			}
		}
	}
	t.Logf("%d texts, %d bytes (%.1f MiB), %d redacted; redaction %v CPU, %.1f cpu-ms/MiB",
		len(texts), size, float64(size)/(1<<20), changed, cpu.Round(time.Millisecond),
		float64(cpu.Milliseconds())/(float64(size)/(1<<20)))
	if want == nil {
		if err := os.WriteFile(golden, got.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("golden written to %s", golden)
	} else {
		if len(want) != got.Len() {
			t.Errorf("golden holds %d texts, the corpus %d", len(want)/32, len(texts))
		}
		t.Logf("%d bytes compared against the golden outputs, %d texts differ", size, differ)
	}
	want, texts, outs, got = nil, nil, nil, bytes.Buffer{}
	// What stays once the texts are gone is the redactor (loaded after h0).
	t.Logf("heap held after the run: %.1f MiB more than before the first Redact", float64(heapAlloc()-h0)/(1<<20))
}

// heapAlloc is the bytes of live heap objects, after a collection.
func heapAlloc() int64 {
	var ms runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}
