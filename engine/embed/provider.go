package embed

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unicode/utf8"
)

// The variables FromSpec reads through its lookup function. The names are
// maenifold's, so a vault configured for maenifold embeds the same way.
const (
	EnvEmbedder      = "MAENIFOLD_EMBEDDER"        // builtin, ollama:<model> or openai:<model>
	EnvOllamaURL     = "MAENIFOLD_OLLAMA_URL"      // default DefaultOllamaURL
	EnvOpenAIBaseURL = "MAENIFOLD_OPENAI_BASE_URL" // default DefaultOpenAIBaseURL
	EnvOpenAIKey     = "MAENIFOLD_OPENAI_API_KEY"  // else EnvOpenAIKeyStd
	EnvOpenAIKeyStd  = "OPENAI_API_KEY"            // the OpenAI SDKs' own variable
)

// ErrBadSpec wraps every FromSpec error that is the caller's configuration
// (an unknown provider, a missing model, key or URL) rather than a failure
// to reach the provider.
var ErrBadSpec = errors.New("bad embedder setting")

// FromSpec returns the embedder a spec names:
//
//	builtin (or "")   the static embedder compiled into the binary
//	ollama:<model>    an Ollama server's /api/embed, at $MAENIFOLD_OLLAMA_URL
//	openai:<model>    any OpenAI-compatible /embeddings endpoint, at
//	                  $MAENIFOLD_OPENAI_BASE_URL, with the key from
//	                  $MAENIFOLD_OPENAI_API_KEY or $OPENAI_API_KEY
//
// Variables are read through lookup (os.LookupEnv at the program's edge). A
// remote embedder is asked to embed one probe text here, to learn its
// dimension and to fail now, with the server's own words, if the model or
// the key is wrong; that needs ctx.
func FromSpec(ctx context.Context, spec string, lookup func(string) (string, bool)) (Embedder, error) {
	get := func(name string) string {
		v, _ := lookup(name)
		return strings.TrimSpace(v)
	}
	spec = strings.TrimSpace(spec)
	if spec == "" || strings.EqualFold(spec, "builtin") || spec == BuiltinName {
		return Builtin()
	}
	kind, model, _ := strings.Cut(spec, ":") // Ollama models have tags: "ollama:bge-m3:latest"
	model = strings.TrimSpace(model)
	switch strings.ToLower(kind) {
	case "ollama":
		if model == "" {
			return nil, fmt.Errorf(`embedder "ollama:" needs a model, e.g. ollama:nomic-embed-text: %w`, ErrBadSpec)
		}
		return NewOllama(ctx, model, get(EnvOllamaURL), HTTPConfig{})
	case "openai":
		if model == "" {
			return nil, fmt.Errorf(`embedder "openai:" needs a model, e.g. openai:text-embedding-3-small: %w`, ErrBadSpec)
		}
		key := get(EnvOpenAIKey)
		if key == "" {
			key = get(EnvOpenAIKeyStd)
		}
		return NewOpenAI(ctx, model, get(EnvOpenAIBaseURL), key, HTTPConfig{})
	}
	return nil, fmt.Errorf("unknown embedder %q (want builtin, ollama:<model> or openai:<model>): %w", spec, ErrBadSpec)
}

// HTTPConfig tunes a remote embedder. The zero value of each field means its
// default.
type HTTPConfig struct {
	// Timeout bounds one request (default 60 s; 120 s for Ollama, whose
	// first request may load the model from disk). A request that times out
	// is not retried: a server that hung once will likely hang again.
	Timeout time.Duration
	// BatchSize is how many texts one request carries (default 64).
	BatchSize int
	// MaxTries bounds the tries of one request answered 408, 429 or 5xx
	// (default 5).
	MaxTries int
	// MaxWait bounds the time one request spends waiting between tries
	// (default 30 s). A Retry-After that would pass it ends the retries at
	// once, with the server's answer as the error.
	MaxWait time.Duration
	// Backoff is the wait after the first failure when the server gives no
	// Retry-After; it doubles after each further failure (default 0.5 s).
	Backoff time.Duration
	// Client sends the requests (default a client of its own without an
	// overall timeout; Timeout applies per request).
	Client *http.Client
}

func (c HTTPConfig) withDefaults(timeout time.Duration) HTTPConfig {
	if c.Timeout <= 0 {
		c.Timeout = timeout
	}
	if c.BatchSize <= 0 {
		c.BatchSize = 64
	}
	if c.MaxTries <= 0 {
		c.MaxTries = 5
	}
	if c.MaxWait <= 0 {
		c.MaxWait = 30 * time.Second
	}
	if c.Backoff <= 0 {
		c.Backoff = 500 * time.Millisecond
	}
	if c.Client == nil {
		c.Client = &http.Client{}
	}
	return c
}

// wire is what differs between two providers' HTTP APIs.
type wire struct {
	url    string
	header http.Header
	// body is the JSON request for a batch of texts.
	body func(texts []string) any
	// parse decodes a 200 response to one vector per text, in order.
	parse func(body []byte, n int) ([][]float32, error)
}

// Remote is an embedder behind an HTTP API: Ollama's (NewOllama) or an
// OpenAI-compatible one (NewOpenAI). It sends texts in batches, retries what
// a server says to retry, checks that every vector has the dimension it
// learnt at construction, and returns unit-length vectors.
//
// The official clients of chromem-go (NewEmbeddingFuncOllama,
// NewEmbeddingFuncOpenAICompat) send one text per request, use Ollama's
// older /api/embeddings endpoint, do not retry and drop the error body, so
// Remote speaks the two APIs itself.
//
// A Remote is safe for concurrent use.
type Remote struct {
	name string
	dim  atomic.Int64 // 0 until the server has answered once
	cfg  HTTPConfig
	w    wire
	hint string // appended to connection errors, e.g. how to start the server

	mu      sync.Mutex
	offline error // why the server could not be reached at start-up, until it answers
}

// newRemote finishes a Remote and learns its dimension from a probe text.
// A server that refuses the request (a wrong key, an unknown model) is an
// error here. A server that cannot be reached, times out or keeps failing is
// not: the Remote starts offline, so that everything needing no new vector
// (full-text search, status, reads) keeps working, and it retries — and
// learns its dimension — on the next Embed. Offline says why.
func newRemote(ctx context.Context, name string, w wire, cfg HTTPConfig, hint string) (*Remote, error) {
	r := &Remote{name: name, cfg: cfg, w: w, hint: hint}
	v, err := r.post(ctx, []string{"dimension probe"})
	var se *statusError
	switch {
	case err != nil && ctx.Err() != nil:
		return nil, fmt.Errorf("embedder %s: %w", name, err)
	case err != nil && errors.As(err, &se) && !se.temporary():
		return nil, fmt.Errorf("embedder %s: %w", name, err)
	case err != nil:
		r.offline = r.explain(err)
		return r, nil
	}
	if len(v[0]) == 0 {
		return nil, fmt.Errorf("embedder %s: the server returned an empty vector", name)
	}
	r.dim.Store(int64(len(v[0])))
	return r, nil
}

// explain wraps a request error with the embedder's name and the hint.
func (r *Remote) explain(err error) error {
	if r.hint != "" && errors.Is(err, syscall.ECONNREFUSED) {
		return fmt.Errorf("embedder %s: %w (%s)", r.name, err, r.hint)
	}
	return fmt.Errorf("embedder %s: %w", r.name, err)
}

// Name is the provider and model, e.g. "ollama:nomic-embed-text".
func (r *Remote) Name() string { return r.name }

// Dim is the dimension the model returns, or 0 while the server has not
// answered yet (see Offline).
func (r *Remote) Dim() int { return int(r.dim.Load()) }

// Offline returns why the server could not be reached, or nil once it has
// answered.
func (r *Remote) Offline() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.offline
}

// Embed returns one unit vector per text, in order, sending at most
// BatchSize texts per request. A blank text gets the zero vector without a
// request (APIs reject empty input). A vector of the wrong dimension is an
// error: the server is no longer running the model the index was built with.
func (r *Remote) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	var idx []int // texts to send
	var blank []int
	for i, t := range texts {
		if strings.TrimSpace(t) == "" {
			blank = append(blank, i)
		} else {
			idx = append(idx, i)
		}
	}
	for start := 0; start < len(idx); start += r.cfg.BatchSize {
		part := idx[start:min(start+r.cfg.BatchSize, len(idx))]
		batch := make([]string, len(part))
		for j, i := range part {
			batch[j] = texts[i]
		}
		vecs, err := r.post(ctx, batch)
		if err != nil {
			return nil, r.explain(err)
		}
		if len(vecs) > 0 && r.dim.CompareAndSwap(0, int64(len(vecs[0]))) {
			r.mu.Lock()
			r.offline = nil // back online: the first answer sets the dimension
			r.mu.Unlock()
		}
		dim := r.Dim()
		for j, v := range vecs {
			if len(v) != dim || dim == 0 {
				return nil, fmt.Errorf("embedder %s: text %d has a vector of dimension %d, want %d (did the server switch models?)", r.name, part[j]+1, len(v), dim)
			}
			out[part[j]] = normalize(v)
		}
	}
	for _, i := range blank {
		out[i] = make([]float32, r.Dim())
	}
	return out, nil
}

// normalize scales v to unit length in place; the zero vector stays zero.
func normalize(v []float32) []float32 {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	if s == 0 {
		return v
	}
	inv := float32(1 / math.Sqrt(s))
	for i := range v {
		v[i] *= inv
	}
	return v
}

// statusError is a non-200 answer.
type statusError struct {
	code       int
	status     string // "429 Too Many Requests"
	msg        string // the server's message or an excerpt of its body
	retryAfter time.Duration
	hasRetry   bool // the server sent Retry-After
}

func (e *statusError) Error() string {
	if e.msg == "" {
		return e.status
	}
	return e.status + ": " + e.msg
}

func (e *statusError) temporary() bool {
	return e.code == http.StatusRequestTimeout || e.code == http.StatusTooManyRequests || e.code >= 500
}

// post sends one batch, retrying 408, 429 and 5xx answers up to MaxTries
// times. It waits what Retry-After says, else an exponential backoff with
// jitter, and gives up early rather than wait past MaxWait in all.
func (r *Remote) post(ctx context.Context, texts []string) ([][]float32, error) {
	body, err := json.Marshal(r.w.body(texts))
	if err != nil {
		return nil, fmt.Errorf("encode request: %w", err)
	}
	var waited time.Duration
	backoff := r.cfg.Backoff
	for try := 1; ; try++ {
		vecs, err := r.send(ctx, body, len(texts))
		var se *statusError
		if err == nil || !errors.As(err, &se) || !se.temporary() {
			return vecs, err
		}
		if try >= r.cfg.MaxTries {
			return nil, fmt.Errorf("%w (gave up after %d tries)", err, try)
		}
		wait := backoff + time.Duration(rand.Int64N(int64(backoff)/4+1))
		backoff *= 2
		if se.hasRetry {
			wait = se.retryAfter
		}
		if waited+wait > r.cfg.MaxWait {
			return nil, fmt.Errorf("%w (gave up: waiting %s more would pass the %s retry budget)", err, wait.Round(time.Millisecond), r.cfg.MaxWait)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-t.C:
		}
		waited += wait
	}
}

// maxResponse bounds a response body: 64 texts × 4,096 dimensions as JSON
// text is about 5 MB.
const maxResponse = 256 << 20

// send makes one request with its own timeout.
func (r *Remote) send(ctx context.Context, body []byte, n int) ([][]float32, error) {
	rctx, cancel := context.WithTimeout(ctx, r.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(rctx, http.MethodPost, r.w.url, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("build request: %w", err)
	}
	for k, v := range r.w.header {
		req.Header[k] = v
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := r.cfg.Client.Do(req)
	if err != nil {
		return nil, r.failed(ctx, rctx, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxResponse))
	if err != nil {
		return nil, r.failed(ctx, rctx, fmt.Errorf("read response: %w", err))
	}
	if resp.StatusCode != http.StatusOK {
		after, ok := retryAfter(resp.Header, time.Now())
		return nil, fmt.Errorf("POST %s: %w", r.w.url, &statusError{
			code: resp.StatusCode, status: resp.Status, msg: errorMessage(data), retryAfter: after, hasRetry: ok})
	}
	vecs, err := r.w.parse(data, n)
	if err != nil {
		return nil, fmt.Errorf("POST %s: %w (body starts %q)", r.w.url, err, excerpt(data, 120))
	}
	return vecs, nil
}

// failed explains a request that got no answer: the caller's context ended,
// the request's own timeout passed, or the connection failed.
func (r *Remote) failed(ctx, rctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if errors.Is(rctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("POST %s: no answer within %s", r.w.url, r.cfg.Timeout)
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err // its message repeats the URL
	}
	return fmt.Errorf("POST %s: %w", r.w.url, err)
}

// retryAfter reads how long the server asks us to wait: retry-after-ms
// (Azure OpenAI, milliseconds), else Retry-After in seconds or as an HTTP
// date.
func retryAfter(h http.Header, now time.Time) (time.Duration, bool) {
	if v := strings.TrimSpace(h.Get("Retry-After-Ms")); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms >= 0 {
			return time.Duration(ms * float64(time.Millisecond)), true
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0, false
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil && s >= 0 {
		return time.Duration(s * float64(time.Second)), true
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now), 0), true
	}
	return 0, false
}

// errorMessage finds the message in an error body: {"error": "…"} (Ollama)
// or {"error": {"message": "…"}} (OpenAI), else the start of the body.
func errorMessage(body []byte) string {
	var e struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(body, &e) == nil && len(e.Error) > 0 {
		var s string
		if json.Unmarshal(e.Error, &s) == nil && s != "" {
			return s
		}
		var o struct {
			Message string `json:"message"`
		}
		if json.Unmarshal(e.Error, &o) == nil && o.Message != "" {
			return o.Message
		}
	}
	return excerpt(body, 200)
}

// excerpt is the start of b as one line, at most about n bytes.
func excerpt(b []byte, n int) string {
	s := strings.Join(strings.Fields(strings.ToValidUTF8(string(b), "?")), " ")
	if len(s) > n {
		for n > 0 && !utf8.RuneStart(s[n]) {
			n--
		}
		s = s[:n] + "…"
	}
	return s
}
