package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"mnemo/cmd/mnemo/remote"
	"mnemo/engine"
	"mnemo/mcp"
)

// routes mounts the page and its API.
func (s *Server) routes() {
	s.mux.Handle("GET /{$}", s.asset("index.html"))
	s.mux.Handle("GET /assets/", http.StripPrefix("/assets/", assetServer()))
	api := map[string]func(context.Context, *Corpora, *http.Request) (any, error){
		"search":   s.search,
		"memory":   s.memory,
		"list":     s.list,
		"sessions": s.sessions,
		"session":  s.session,
		"activity": s.activity,
		"graph":    s.graph,
		"concepts": s.concepts,
		"status":   s.status,
	}
	for name, fn := range api {
		s.mux.Handle("GET /api/"+name, s.guard(jsonHandler(s, fn)))
	}
	s.mux.Handle("GET /api/events", s.guard(http.HandlerFunc(s.events)))
	s.mux.Handle("/api/", s.guard(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, errors.New("no such API call"))
	})))
}

// guard lets an API request through only from the page's own origin (a
// request a browser sends for another site's page carries that site's
// Origin) and with the bearer token.
func (s *Server) guard(h http.Handler) http.Handler {
	authed := mcp.RequireToken(s.opts.Token, h)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if o := r.Header.Get("Origin"); o != "" && o != "http://"+r.Host {
			writeError(w, http.StatusForbidden, errors.New("requests from web pages of another origin are refused"))
			return
		}
		if r.Header.Get("Sec-Fetch-Site") == "cross-site" {
			writeError(w, http.StatusForbidden, errors.New("cross-site requests are refused"))
			return
		}
		w.Header().Set("Cache-Control", "no-store")
		authed.ServeHTTP(w, r)
	})
}

// errNoCorpora is the API's answer while this serve holds no index and
// fronts no holder; errHandover when the holder went away mid-request.
// Both are moments: the next holder answers.
var (
	errNoCorpora = errors.New("this serve does not reach the index right now (it is starting, or the index is being handed over): retry in a moment")
	errHandover  = errors.New("the serve holding the index went away mid-request (the index is being handed over): retry in a moment")
)

// retryLater writes the 503 of an API call made while this serve reaches
// no index, or cut by a handover; "retry" tells the page to draw the view
// again once the status stream says the index answers.
func retryLater(w http.ResponseWriter, err error) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(http.StatusServiceUnavailable)
	json.NewEncoder(w).Encode(map[string]any{"error": err.Error(), "retry": true})
}

// errNoSessions is the answer to a sessions call when serve runs without
// the sessions index.
var errNoSessions = errors.New("this serve does not index agent sessions (--no-sessions)")

// jsonHandler runs fn on the current corpora and writes its answer as JSON.
func jsonHandler(s *Server, fn func(context.Context, *Corpora, *http.Request) (any, error)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c := s.corpora.Load()
		if c == nil || c.Memories == nil {
			retryLater(w, errNoCorpora)
			return
		}
		v, err := fn(r.Context(), c, r)
		if errors.Is(err, remote.ErrGone) {
			retryLater(w, fmt.Errorf("%w (%w)", errHandover, err))
			return
		}
		if err != nil {
			writeError(w, statusOf(err), err)
			return
		}
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		json.NewEncoder(w).Encode(v)
	})
}

// badRequest marks an argument the page sent wrong.
type badRequest struct{ error }

// statusOf maps an engine error to the HTTP status that says whose fault it is.
func statusOf(err error) int {
	var br badRequest
	switch {
	case errors.As(err, &br):
		return http.StatusBadRequest
	case errors.Is(err, errNoSessions), errors.Is(err, engine.ErrIndexNotReady):
		return http.StatusServiceUnavailable
	case errors.Is(err, engine.ErrNotFound), errors.Is(err, engine.ErrUnknownConcept):
		return http.StatusNotFound
	case errors.Is(err, engine.ErrEmptyQuery), errors.Is(err, engine.ErrNoTerms), errors.Is(err, engine.ErrBadPage),
		errors.Is(err, engine.ErrBadPageSize), errors.Is(err, engine.ErrBadMode), errors.Is(err, engine.ErrBadRange),
		errors.Is(err, engine.ErrOutsideRoot), errors.Is(err, engine.ErrBadSort), errors.Is(err, engine.ErrBadMinScore):
		return http.StatusBadRequest
	}
	return http.StatusInternalServerError
}

// optional is the error of a lookup the page can do without (a memory's
// backlinks, a concept's mentions): none, unless the holder went away, so
// that a handover is reported rather than shown as "no backlinks".
func optional(err error) error {
	if errors.Is(err, remote.ErrGone) {
		return err
	}
	return nil
}

func writeError(w http.ResponseWriter, code int, err error) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(map[string]string{"error": err.Error()})
}

// args reads a request's query parameters, collecting the first bad one.
type args struct {
	r   *http.Request
	err error
}

func (a *args) str(name string) string { return strings.TrimSpace(a.r.URL.Query().Get(name)) }

func (a *args) num(name string) int {
	v := a.str(name)
	if v == "" {
		return 0
	}
	n, err := strconv.Atoi(v)
	if err != nil && a.err == nil {
		a.err = badRequest{fmt.Errorf("%s=%q: want a whole number", name, v)}
	}
	return n
}

// date reads YYYY-MM-DD (the start of that day, UTC) or RFC 3339; end
// makes a bare date mean the end of its day, so "to" includes it.
func (a *args) date(name string, end bool) time.Time {
	v := a.str(name)
	if v == "" {
		return time.Time{}
	}
	if t, err := time.Parse(time.DateOnly, v); err == nil {
		if end {
			t = t.Add(24*time.Hour - time.Nanosecond)
		}
		return t
	}
	t, err := time.Parse(time.RFC3339, v)
	if err != nil && a.err == nil {
		a.err = badRequest{fmt.Errorf("%s=%q: want YYYY-MM-DD", name, v)}
	}
	return t
}

func (a *args) list(name string) []string {
	var out []string
	for _, t := range strings.Split(a.str(name), ",") {
		if t = strings.TrimSpace(t); t != "" {
			out = append(out, t)
		}
	}
	return out
}

// archived reads "yes", "no" or nothing (both).
func (a *args) archived() *bool {
	switch a.str("archived") {
	case "yes", "true":
		t := true
		return &t
	case "no", "false":
		f := false
		return &f
	}
	return nil
}

// mode reads the search mode the page names.
func (a *args) mode() engine.Mode {
	return engine.Mode(strings.ToLower(a.str("mode")))
}
