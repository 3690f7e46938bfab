package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/pprof"
	"strings"
	"time"

	"mnemo/mcp"
)

// checkDebugAddr refuses a --debug-addr that is not HOST:PORT on a loopback
// host: the profiler shows the process's memory.
func checkDebugAddr(addr string) error {
	if addr == "" {
		return nil
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return usagef("--debug-addr %q: want HOST:PORT, e.g. 127.0.0.1:6060", addr)
	}
	if ip := net.ParseIP(host); !strings.EqualFold(host, "localhost") && (ip == nil || !ip.IsLoopback()) {
		return usagef("--debug-addr %q: refusing a non-loopback address; the profiler listens on 127.0.0.1, ::1 or localhost only", addr)
	}
	return nil
}

// serveDebug serves Go's profiler at http://addr/debug/pprof/ until ctx is
// done. Its own mux: nothing else is exposed, and nothing registers on
// http.DefaultServeMux. Like the MCP server it answers only requests with
// a loopback Host (a rebound DNS name is refused) and the bearer token.
func serveDebug(ctx context.Context, addr, token string, logf func(string)) error {
	if err := checkDebugAddr(addr); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("--debug-addr %q: %w", addr, err)
	}
	if tcp, ok := ln.Addr().(*net.TCPAddr); !ok || !tcp.IP.IsLoopback() {
		ln.Close()
		return fmt.Errorf("--debug-addr %q resolved to %s, which is not a loopback address", addr, ln.Addr())
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	hs := &http.Server{Handler: mcp.LoopbackHost(mcp.RequireToken(token, mux)),
		ReadHeaderTimeout: 10 * time.Second, IdleTimeout: time.Minute}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	logf("profiler listening on http://" + ln.Addr().String() + "/debug/pprof/")
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
		hs.Close() // a profile being taken is cut: serve is stopping
		if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
			return err
		}
		return nil
	}
}
