package mcp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// MaxLineBytes bounds one JSON-RPC message on stdio. It is the SDK's own
// frame limit, and above the largest request mnemo accepts (a WriteMemory
// of a 10 MiB file, JSON-escaped).
const MaxLineBytes = sdk.DefaultMaxLineLength

// lineTransport is the SDK's newline-delimited JSON transport with a guard
// in front of it. The SDK ends the session on the first line that is not a
// JSON-RPC message (it returns the decode error from Connection.Read, and
// the server stops), so one malformed line from a client would kill the
// server. The guard reads each line itself: a well-formed message goes on
// to the SDK unchanged; anything else is answered here as JSON-RPC 2.0 asks
// (-32700 for text that is not JSON, -32600 for JSON that is not a request,
// both with id null) and the session goes on. A line longer than maxLine
// is discarded without being held in memory, and answered the same way.
type lineTransport struct {
	in      io.Reader
	out     io.Writer
	maxLine int
}

// newStdioTransport serves MCP over in and out (stdin and stdout) with the guard.
func newStdioTransport(in io.Reader, out io.Writer) *lineTransport {
	return &lineTransport{in: in, out: out, maxLine: MaxLineBytes}
}

// Connect implements sdk.Transport.
func (t *lineTransport) Connect(ctx context.Context) (sdk.Connection, error) {
	w := &lockedWriter{w: t.out}
	pr, pw := io.Pipe()
	go t.filter(pw, w)
	// The SDK's limit is set above ours: every line it sees has passed the guard.
	inner := &sdk.IOTransport{Reader: pr, Writer: nopCloser{w}, MaxLineLength: t.maxLine + 1}
	return inner.Connect(ctx)
}

// filter copies the well-formed lines of t.in to pw and answers the others
// on w. It ends at the end of t.in, or when the SDK closes the pipe.
func (t *lineTransport) filter(pw *io.PipeWriter, w *lockedWriter) {
	r := bufio.NewReaderSize(t.in, 64<<10)
	for {
		line, tooLong, err := readLine(r, t.maxLine)
		if tooLong {
			if werr := w.reply(jsonrpc.CodeParseError, fmt.Sprintf("Parse error: message longer than %d bytes, discarded", t.maxLine)); werr != nil {
				pw.CloseWithError(werr)
				return
			}
		} else if line = bytes.TrimSpace(line); len(line) > 0 {
			if code, msg := check(line); code != 0 {
				if werr := w.reply(code, msg); werr != nil {
					pw.CloseWithError(werr)
					return
				}
			} else if _, werr := pw.Write(append(line, '\n')); werr != nil {
				return // the SDK closed the connection
			}
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = nil
			}
			pw.CloseWithError(err) // nil: the SDK sees EOF, the client hung up
			return
		}
	}
}

// readLine reads one line, without its newline. A line longer than max is
// read to its end but not kept: tooLong reports it.
func readLine(r *bufio.Reader, max int) (line []byte, tooLong bool, err error) {
	for {
		frag, err := r.ReadSlice('\n')
		if !tooLong {
			if len(line)+len(frag) > max+1 { // +1: the newline
				tooLong, line = true, nil
			} else {
				line = append(line, frag...)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return bytes.TrimSuffix(line, []byte("\n")), tooLong, err
	}
}

// check says why line is not one JSON-RPC message the SDK can take, as a
// JSON-RPC error code and message; code 0 means it is fine.
func check(line []byte) (code int64, msg string) {
	if !json.Valid(line) {
		return jsonrpc.CodeParseError, "Parse error: not valid JSON"
	}
	if line[0] == '[' {
		// The SDK takes a batch only from clients of protocol versions
		// before 2025-06-18 and ends the session otherwise; no client we
		// know sends one, so refusing it is the safe answer.
		return jsonrpc.CodeInvalidRequest, "Invalid Request: JSON-RPC batches are not supported"
	}
	if _, err := jsonrpc.DecodeMessage(line); err != nil {
		return jsonrpc.CodeInvalidRequest, "Invalid Request: " + err.Error()
	}
	return 0, ""
}

// lockedWriter serialises the SDK's writes and the guard's error replies, so
// that each goes out as one whole line.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// reply writes a JSON-RPC error response with id null.
func (l *lockedWriter) reply(code int64, msg string) error {
	b, err := json.Marshal(map[string]any{
		"jsonrpc": "2.0",
		"id":      nil,
		"error":   map[string]any{"code": code, "message": msg},
	})
	if err != nil {
		return err
	}
	_, err = l.Write(append(b, '\n'))
	return err
}

// nopCloser keeps the SDK from closing stdout when the session ends.
type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }
