package remote

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"syscall"
	"time"

	"mnemo/engine"
	"mnemo/engine/sessions"
)

// Serve answers requests on ln with b (an open *engine.Engine) until ctx is done, then closes ln and
// every connection and returns nil once no request is running, so the
// caller may close b. Connections are served concurrently, the requests of
// one in order. A malformed or oversized request gets an error response;
// only a failing listener makes Serve return an error.
func Serve(ctx context.Context, ln net.Listener, b engine.Memories) error {
	return ServeWith(ctx, ln, b, nil)
}

// ServeWith is Serve with a sessions index beside the engine (nil: none).
func ServeWith(ctx context.Context, ln net.Listener, b engine.Memories, sess sessions.Index) error {
	return ServeOpts(ctx, ln, b, Options{Sessions: sess})
}

// Options are what a server offers beyond the memory corpus.
type Options struct {
	Sessions sessions.Index // nil: no sessions index
	// MCP, if set, serves the Model Context Protocol on a connection whose
	// first request is {"op": "mcp"}: after the answer {"result": "mcp"},
	// the connection carries MCP's JSON-RPC lines until either end closes
	// it. Another mnemo serve that finds the index held forwards its own
	// clients' tool calls this way.
	MCP func(ctx context.Context, rw io.ReadWriteCloser) error
}

// ServeOpts is Serve with Options.
func ServeOpts(ctx context.Context, ln net.Listener, b engine.Memories, opts Options) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		conns = map[net.Conn]struct{}{}
	)
	stop := context.AfterFunc(ctx, func() {
		ln.Close()
		mu.Lock()
		for c := range conns {
			c.Close()
		}
		mu.Unlock()
	})
	defer func() {
		stop()
		ln.Close()
		wg.Wait()
	}()
	var delay time.Duration
	for {
		c, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() || errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE) {
				// Out of file descriptors, most likely: wait and retry,
				// as net/http does, rather than stop serving.
				delay = min(max(2*delay, 5*time.Millisecond), time.Second)
				select {
				case <-time.After(delay):
				case <-ctx.Done():
				}
				continue
			}
			cancel()
			return fmt.Errorf("accept: %w", err)
		}
		delay = 0
		if err := checkPeer(c); err != nil {
			// Another user's process: it gets one line saying why, no more.
			c.SetWriteDeadline(time.Now().Add(time.Second))
			json.NewEncoder(c).Encode(response{Error: "mnemo serve: " + err.Error(), Kind: kindForeign})
			c.Close()
			continue
		}
		mu.Lock()
		if ctx.Err() != nil {
			mu.Unlock()
			c.Close()
			continue
		}
		conns[c] = struct{}{}
		wg.Add(1)
		mu.Unlock()
		go func() {
			defer wg.Done()
			serveConn(ctx, c, b, opts)
			mu.Lock()
			delete(conns, c)
			mu.Unlock()
			c.Close()
		}()
	}
}

// serveConn answers the requests of one connection until the client hangs
// up, a write fails, or a request is too long to read past.
func serveConn(ctx context.Context, c net.Conn, b engine.Memories, opts Options) {
	r := bufio.NewReaderSize(c, 64<<10)
	w := bufio.NewWriterSize(c, 64<<10)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	for {
		line, err := readLine(r, MaxRequest)
		if errors.Is(err, errLineTooLong) {
			// The rest of the line is unread and unbounded: answer, then hang up.
			enc.Encode(response{Error: fmt.Sprintf("request longer than %d bytes", MaxRequest), Kind: kindBadRequest})
			w.Flush()
			return
		}
		if err != nil {
			return
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		if opts.MCP != nil && isMCPRequest(line) {
			enc.Encode(response{Result: opMCP})
			if w.Flush() == nil {
				opts.MCP(ctx, &bufferedConn{Reader: r, Conn: c})
			}
			return
		}
		resp := handle(ctx, b, opts.Sessions, line)
		if err := enc.Encode(resp); err != nil {
			// A result that cannot be encoded (a NaN, say) is the server's
			// fault, but still an answer the client must get.
			enc.Encode(response{Error: "encode response: " + err.Error(), Kind: kindOther})
		}
		if err := w.Flush(); err != nil {
			return
		}
	}
}

// handle answers one request line.
func handle(ctx context.Context, b engine.Memories, sess sessions.Index, line []byte) (resp response) {
	defer func() {
		if p := recover(); p != nil {
			resp = response{Error: fmt.Sprintf("internal error: %v", p), Kind: kindOther}
		}
	}()
	var req request
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields() // a field this server does not know must not be ignored silently
	if err := dec.Decode(&req); err != nil {
		return response{Error: "bad request: " + strings.TrimPrefix(err.Error(), "json: "), Kind: kindBadRequest}
	}
	if _, err := dec.Token(); err != io.EOF {
		return response{Error: "bad request: unexpected data after the JSON object", Kind: kindBadRequest}
	}
	res, ok, err := handleSessions(ctx, sess, req)
	if ok {
		if err != nil {
			return response{Error: oneLine(err.Error()), Kind: kindOf(err)}
		}
		return response{Result: res}
	}
	switch req.Op {
	case opSearch:
		if req.Query == nil {
			return response{Error: `bad request: search needs "query"`, Kind: kindBadRequest}
		}
		res, err = b.Search(ctx, engine.Query(*req.Query))
	case opRead:
		res, err = b.Read(ctx, req.ID)
	case opPeek:
		res, err = b.Peek(ctx, req.ID)
	case opRecent:
		res, err = b.RecentWhere(ctx, req.Limit, req.Since, nil)
	case opResolve:
		res, err = b.Resolve(req.ID)
	case opBacklinks:
		res, err = b.Backlinks(ctx, req.ID)
	case opList:
		res, err = b.List(ctx, req.ID)
	case opStatus:
		res, err = b.Status(ctx)
	case opSync:
		res, err = b.Sync(ctx, req.Full)
	case opWrite:
		if req.Write == nil {
			return response{Error: `bad request: write needs "write"`, Kind: kindBadRequest}
		}
		res, err = b.Write(ctx, *req.Write)
	case opEdit:
		if req.Edit == nil {
			return response{Error: `bad request: edit needs "edit"`, Kind: kindBadRequest}
		}
		res, err = b.Edit(ctx, *req.Edit)
	case opDelete:
		err = b.Delete(ctx, req.ID)
	case opMove:
		res, err = b.Move(ctx, req.ID, req.To)
	case opGraphContext:
		if req.Context == nil {
			return response{Error: `bad request: graph-context needs "context"`, Kind: kindBadRequest}
		}
		res, err = b.BuildContext(ctx, *req.Context)
	case opGraphShow:
		res, err = b.Visualize(ctx, req.Concept, req.Depth, req.Max)
	case opGraphSimilar:
		res, err = b.FindSimilarConcepts(ctx, req.Concept, req.Max)
	case opGraphConcepts:
		res, err = b.Concepts(ctx)
	case opGraphFile:
		res, err = b.FileConcepts(ctx, req.ID)
	default:
		return response{Error: fmt.Sprintf("bad request: unknown op %q (want search, read, peek, resolve, backlinks, list, recent, status, sync, write, edit, delete, move or graph-*)", req.Op), Kind: kindBadRequest}
	}
	if err != nil {
		return response{Error: oneLine(err.Error()), Kind: kindOf(err)}
	}
	return response{Result: res}
}

// isMCPRequest reports whether line is {"op": "mcp"}.
func isMCPRequest(line []byte) bool {
	var req struct {
		Op string `json:"op"`
	}
	return json.Unmarshal(line, &req) == nil && req.Op == opMCP
}

// bufferedConn reads through the reader that may already hold the first
// bytes of what follows the request line.
type bufferedConn struct {
	*bufio.Reader
	net.Conn
}

func (b *bufferedConn) Read(p []byte) (int, error) { return b.Reader.Read(p) }

var errLineTooLong = errors.New("line too long")

// readLine reads up to and including the next newline, or what is left
// before EOF. A line longer than max bytes (newline excluded) fails with
// errLineTooLong once max is passed, without reading the rest.
func readLine(r *bufio.Reader, max int) ([]byte, error) {
	var line []byte
	for {
		frag, err := r.ReadSlice('\n')
		line = append(line, frag...)
		if len(bytes.TrimSuffix(line, []byte("\n"))) > max {
			return nil, errLineTooLong
		}
		switch {
		case err == nil:
			return line, nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF) && len(line) > 0:
			return line, nil
		default:
			return nil, err
		}
	}
}

// oneLine keeps an error message to one line (errors.Join makes several).
func oneLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	for i := range lines {
		lines[i] = strings.TrimSpace(lines[i])
	}
	return strings.Join(lines, "; ")
}
