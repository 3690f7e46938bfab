package transcript

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
)

// anchorBytes is how much of the file before the cursor's offset is hashed to
// tell an append (those bytes unchanged) from a rewrite. With the head hash
// this catches truncation, rewrites and edits near either end; an edit in the
// middle of a long file that keeps its size is not seen (hashing all of a
// 200 MB file on every append would be).
const anchorBytes = 256

// begin decides where an append-only format resumes: -1 when the file is as
// the cursor left it (nothing to do), the cursor's offset when the file only
// grew, else 0 after calling Handler.Reset if anything was delivered before.
// On resuming it carries the previous state over.
func (r *run) begin() (int64, error) {
	if r.unchanged() {
		r.next = r.prev
		return -1, nil
	}
	if r.prev.V == stateVersion && r.cur.State != nil && r.appendable() {
		r.next = r.prev
		return r.cur.Offset, nil
	}
	return 0, r.restart()
}

// restart begins a full read: Reset if the caller holds messages of this file.
func (r *run) restart() error {
	r.next = state{}
	r.cur = Cursor{}
	if r.prev.Messages > 0 {
		return r.reset()
	}
	return nil
}

// appendable reports whether the file still holds, unchanged, the bytes just
// before the previous offset (so what follows is an append).
func (r *run) appendable() bool {
	off := r.cur.Offset
	if off > r.fi.Size() || off < 0 {
		return false
	}
	if off == 0 {
		return true
	}
	got, n, err := r.anchorAt(off, anchorBytes)
	if err != nil || n != r.prev.AnchorLen || got != r.prev.Anchor {
		return false
	}
	head, n, err := r.anchorAt(int64(r.prev.HeadLen), headBytes)
	return err == nil && n == r.prev.HeadLen && head == r.prev.Head
}

// headBytes is how much of the file's start is hashed to catch an edit there.
const headBytes = 4 << 10

// anchorAt hashes up to max bytes of the transcript before off.
func (r *run) anchorAt(off int64, max int) (string, int, error) {
	n := int64(max)
	if off < n {
		n = off
	}
	f, err := r.open()
	if err != nil {
		return "", 0, err
	}
	defer f.Close()
	buf := make([]byte, n)
	if _, err := f.ReadAt(buf, off-n); err != nil {
		return "", 0, err
	}
	sum := sha256.Sum256(buf)
	return hex.EncodeToString(sum[:]), int(n), nil
}

// settle records the offset reached and its anchor in the cursor to hand back.
func (r *run) settle(off int64) error {
	r.cur.Offset = off
	r.cur.Size = r.fi.Size()
	r.cur.ModTime = r.fi.ModTime()
	a, n, err := r.anchorAt(off, anchorBytes)
	if err != nil {
		return fmt.Errorf("anchor: %w", err)
	}
	r.next.Anchor, r.next.AnchorLen = a, n
	h, n, err := r.anchorAt(min(off, headBytes), headBytes)
	if err != nil {
		return fmt.Errorf("anchor: %w", err)
	}
	r.next.Head, r.next.HeadLen = h, n
	return nil
}

// lines streams the complete lines of path between from and the size Read saw,
// calling fn with each non-blank line and its start offset. A final line
// without a newline is taken only if it is valid JSON (a writer may be half-way
// through it). It returns the offset just after the last line it consumed.
// A line longer than Options.MaxLineBytes is skipped without being held, and
// counted in TooLong.
func (r *run) lines(from int64, fn func(line []byte, at int64) error) (int64, error) {
	return r.linesIn(from, r.fi.Size(), fn)
}

// linesIn is lines over the bytes between from and to.
func (r *run) linesIn(from, to int64, fn func(line []byte, at int64) error) (int64, error) {
	f, err := r.openAt(from)
	if err != nil {
		return from, err
	}
	defer f.Close()
	br := bufio.NewReaderSize(io.LimitReader(f, to-from), 64<<10)
	off := from
	// acc holds a line longer than the reader's buffer; it is the run's, so
	// that the passes of one Read share one buffer of at most MaxLineBytes.
	acc := r.lineBuf[:0]
	defer func() { r.lineBuf = acc[:0] }()
	for n := 0; ; n++ {
		if n%256 == 0 {
			if err := r.ctx.Err(); err != nil {
				return off, err
			}
		}
		chunk, err := br.ReadSlice('\n')
		if len(acc)+len(chunk) > r.opt.MaxLineBytes && (err == nil || errors.Is(err, bufio.ErrBufferFull)) {
			// Too long: skip to the end of the line without keeping it.
			skipped := int64(len(acc) + len(chunk))
			acc = acc[:0]
			for k := 0; errors.Is(err, bufio.ErrBufferFull); k++ {
				if k%256 == 0 {
					if cerr := r.ctx.Err(); cerr != nil {
						return off, cerr
					}
				}
				chunk, err = br.ReadSlice('\n')
				skipped += int64(len(chunk))
			}
			if err != nil { // EOF inside the long line: a writer is still at it
				return off, nil
			}
			if r.tooLong == nil {
				r.tooLong = map[int64]bool{}
			}
			r.tooLong[off] = true // a set: formats read some lines twice
			off += skipped
			continue
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			acc = appendBounded(acc, chunk, r.opt.MaxLineBytes)
			continue
		}
		line := chunk
		if len(acc) > 0 {
			acc = appendBounded(acc, chunk, r.opt.MaxLineBytes)
			line = acc
		}
		if err == io.EOF {
			t := bytes.TrimSpace(line)
			if len(t) > 0 && json.Valid(t) {
				if err := fn(t, off); err != nil {
					return off, err
				}
				off += int64(len(line))
			}
			return off, nil
		}
		if err != nil {
			return off, err
		}
		at := off
		off += int64(len(line))
		acc = acc[:0]
		if t := bytes.TrimSpace(line); len(t) > 0 {
			if err := fn(t, at); err != nil {
				return at, err
			}
		}
	}
}

// contains reports whether the bytes between from and the size Read saw
// hold key, reading them in large blocks rather than as lines: false means
// that no line lines would give holds it.
func (r *run) contains(from int64, key []byte) (bool, error) {
	f, err := r.openAt(from)
	if err != nil {
		return false, err
	}
	defer f.Close()
	rest := max(r.fi.Size()-from, 0)
	rd := io.LimitReader(f, rest)
	// Blocks of 256 KiB, or one the size of what is left (with room for
	// the key, so that a read always makes progress): a read that picks up
	// a few new lines does not allocate a whole block for them.
	buf := make([]byte, min(256<<10, rest+int64(len(key))))
	kept := 0 // the end of the previous block, which key may straddle
	for {
		if err := r.ctx.Err(); err != nil {
			return false, err
		}
		n, err := io.ReadFull(rd, buf[kept:])
		n += kept
		if bytes.Contains(buf[:n], key) {
			return true, nil
		}
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		kept = min(len(key)-1, n)
		copy(buf, buf[n-kept:n])
	}
}

// openAt opens the transcript, positioned at off.
func (r *run) openAt(off int64) (*os.File, error) {
	f, err := r.open()
	if err != nil {
		return nil, err
	}
	if _, err := f.Seek(off, io.SeekStart); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// appendBounded appends b to acc, growing it at most to limit: append's own
// growth would overshoot the line bound by a quarter.
func appendBounded(acc, b []byte, limit int) []byte {
	if need := len(acc) + len(b); need > cap(acc) {
		grown := make([]byte, len(acc), min(max(2*cap(acc), need), max(limit, need)))
		copy(grown, acc)
		acc = grown
	}
	return append(acc, b...)
}
