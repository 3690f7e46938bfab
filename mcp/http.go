package mcp

import (
	"bytes"
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/net/netutil"
)

// Defaults for HTTPOptions. The body cap follows the largest content a
// tool accepts: a memory of the engine's 10 MiB file limit, JSON-escaped
// at a quarter more than its size (newlines and quotes; ordinary markdown
// escapes far less), plus room for the rest of the request.
const (
	DefaultMaxBodyBytes      = 10<<20 + 10<<20/4 + 64<<10
	DefaultSessionTimeout    = 30 * time.Minute
	DefaultMaxConns          = 128
	DefaultReadHeaderTimeout = 10 * time.Second
	DefaultReadTimeout       = time.Minute
	DefaultWriteTimeout      = 10 * time.Minute
	DefaultIdleTimeout       = 2 * time.Minute
)

// HTTPOptions configure the streamable HTTP server. Only Token is required.
type HTTPOptions struct {
	// Token must come with every request, as "Authorization: Bearer
	// <Token>"; a request without it, or with another, gets 401. Serving
	// HTTP without a token is refused.
	Token string
	// AllowedOrigins are the browser origins ("http://127.0.0.1:8765")
	// whose requests are served; a request with any other Origin header
	// gets 403. None by default: MCP clients are not web pages.
	AllowedOrigins []string
	// MaxBodyBytes caps a request body (413 above it); 0 means
	// DefaultMaxBodyBytes.
	MaxBodyBytes int64
	// SessionTimeout closes an MCP session idle that long; 0 means
	// DefaultSessionTimeout.
	SessionTimeout time.Duration
	// MaxConns caps the connections open at once (more wait to be
	// accepted); 0 means DefaultMaxConns.
	MaxConns int
	// Page, if set, is served at every path but /mcp, with only the
	// loopback Host check in front: it is the web page, whose own API asks
	// for the token (a browser opening the page cannot send it).
	Page http.Handler
	// Timeouts of one request: its headers, its body, writing its answer
	// (a tool call may run long: a full sync), and an idle keep-alive
	// connection. 0 means the Default*.
	ReadHeaderTimeout, ReadTimeout, WriteTimeout, IdleTimeout time.Duration
}

func (o *HTTPOptions) fill() {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	if o.MaxBodyBytes <= 0 {
		o.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if o.MaxConns <= 0 {
		o.MaxConns = DefaultMaxConns
	}
	def(&o.SessionTimeout, DefaultSessionTimeout)
	def(&o.ReadHeaderTimeout, DefaultReadHeaderTimeout)
	def(&o.ReadTimeout, DefaultReadTimeout)
	def(&o.WriteTimeout, DefaultWriteTimeout)
	def(&o.IdleTimeout, DefaultIdleTimeout)
}

// ErrNoToken is Serve's answer to HTTP without HTTPOptions.Token.
var ErrNoToken = errors.New("serving MCP over HTTP needs a token (HTTPOptions.Token)")

// serveHTTP serves s as streamable HTTP at /mcp on a loopback address.
func serveHTTP(ctx context.Context, s *sdk.Server, opts Options) error {
	addr := opts.HTTPAddr
	if err := CheckHTTPAddr(addr); err != nil {
		return err
	}
	ho := opts.HTTP
	if ho.Token == "" {
		return ErrNoToken
	}
	ho.fill()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("--http %q: %w", addr, err)
	}
	if tcp, ok := ln.Addr().(*net.TCPAddr); !ok || !tcp.IP.IsLoopback() {
		ln.Close()
		return fmt.Errorf("--http %q resolved to %s, which is not a loopback address", addr, ln.Addr())
	}
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s },
		&sdk.StreamableHTTPOptions{Logger: opts.Logger, MaxRequestBodyBytes: ho.MaxBodyBytes, SessionTimeout: ho.SessionTimeout})
	mux := http.NewServeMux()
	mux.Handle("/mcp", guard(ho, h))
	var handler http.Handler = RequireToken(ho.Token, mux)
	if ho.Page != nil {
		mux = http.NewServeMux()
		mux.Handle("/mcp", RequireToken(ho.Token, guard(ho, h)))
		mux.Handle("/", LoopbackHost(ho.Page))
		handler = mux
	}
	hs := &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: ho.ReadHeaderTimeout,
		IdleTimeout:       ho.IdleTimeout,
		// ReadTimeout and WriteTimeout are set per request by guard: a
		// server-wide read deadline would cancel a long call's context
		// once it passed, and a stream of events has no end to write by.
	}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(netutil.LimitListener(ln, ho.MaxConns)) }()
	if opts.Listening != nil {
		opts.Listening("http://" + ln.Addr().String() + "/mcp")
	}
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		err := hs.Shutdown(sctx)
		if errors.Is(err, context.DeadlineExceeded) {
			err = hs.Close() // streams still open: cut them
		}
		<-errc
		return err
	}
}

// RequireToken answers 401 to a request that does not carry "Authorization:
// Bearer <token>", compared in constant time, and passes the others to h.
// The token is never logged or echoed.
func RequireToken(token string, h http.Handler) http.Handler {
	want := []byte("Bearer " + token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got := []byte(r.Header.Get("Authorization"))
		if token == "" || subtle.ConstantTimeCompare(got, want) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="mnemo"`)
			http.Error(w, "401 unauthorized: this server needs its bearer token, as the header Authorization: Bearer <token>", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// guard applies the origin rule, the body cap and the per-request
// deadlines. The body is read here, within ReadTimeout, and the read
// deadline then lifted, so the tool call itself is bounded only by
// WriteTimeout; a GET (the server's stream of events) has no write
// deadline, and ends with its session.
func guard(o HTTPOptions, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if origin := r.Header.Get("Origin"); origin != "" && !slices.Contains(o.AllowedOrigins, origin) {
			http.Error(w, "403 forbidden: requests from web pages of another origin are refused", http.StatusForbidden)
			return
		}
		rc := http.NewResponseController(w)
		now := time.Now()
		rc.SetReadDeadline(now.Add(o.ReadTimeout))
		if r.Method != http.MethodGet {
			rc.SetWriteDeadline(now.Add(o.WriteTimeout))
		}
		if r.Body != nil && r.Body != http.NoBody {
			body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, o.MaxBodyBytes))
			r.Body.Close()
			var tooBig *http.MaxBytesError
			switch {
			case errors.As(err, &tooBig):
				http.Error(w, fmt.Sprintf("413 request body over %d bytes, the most a tool accepts", o.MaxBodyBytes), http.StatusRequestEntityTooLarge)
				return
			case err != nil:
				http.Error(w, "400 could not read the request body: "+err.Error(), http.StatusBadRequest)
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		rc.SetReadDeadline(time.Time{})
		h.ServeHTTP(w, r)
	})
}

// LoopbackHost answers 403 to a request whose Host header does not name a
// loopback address or localhost (a page served from a rebound DNS name),
// and passes the others to h.
func LoopbackHost(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host := r.Host
		if hh, _, err := net.SplitHostPort(host); err == nil {
			host = hh
		}
		if !isLoopback(strings.Trim(host, "[]")) {
			http.Error(w, "403 forbidden: Host must be a loopback address", http.StatusForbidden)
			return
		}
		h.ServeHTTP(w, r)
	})
}
