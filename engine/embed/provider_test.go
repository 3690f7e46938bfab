package embed

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// api describes one provider's wire format, as its documentation gives it,
// so that every test below runs against both.
type api struct {
	name string
	path string // the endpoint the fake server answers
	// open builds the embedder against the fake server.
	open func(ctx context.Context, url string, cfg HTTPConfig) (*Remote, error)
	// request decodes a request body; input must be a JSON array.
	request func(t *testing.T, body []byte) (model string, input []string)
	// response encodes vectors as a 200 body.
	response func(vecs [][]float32) any
	// errorBody is the provider's error body for msg.
	errorBody func(msg string) any
}

var apis = []api{
	{
		name: "ollama",
		path: "/api/embed",
		open: func(ctx context.Context, url string, cfg HTTPConfig) (*Remote, error) {
			return NewOllama(ctx, "nomic-embed-text", url, cfg)
		},
		request: func(t *testing.T, body []byte) (string, []string) {
			var r struct {
				Model string          `json:"model"`
				Input json.RawMessage `json:"input"`
			}
			if err := json.Unmarshal(body, &r); err != nil {
				t.Errorf("request body %s: %v", body, err)
			}
			return r.Model, inputArray(t, r.Input)
		},
		response: func(vecs [][]float32) any {
			return map[string]any{"model": "nomic-embed-text", "embeddings": vecs,
				"total_duration": 14143917, "load_duration": 1019500, "prompt_eval_count": 8}
		},
		errorBody: func(msg string) any { return map[string]any{"error": msg} },
	},
	{
		name: "openai",
		path: "/v1/embeddings",
		open: func(ctx context.Context, url string, cfg HTTPConfig) (*Remote, error) {
			return NewOpenAI(ctx, "text-embedding-3-small", url+"/v1", "sk-test", cfg)
		},
		request: func(t *testing.T, body []byte) (string, []string) {
			var r struct {
				Model string          `json:"model"`
				Input json.RawMessage `json:"input"`
			}
			if err := json.Unmarshal(body, &r); err != nil {
				t.Errorf("request body %s: %v", body, err)
			}
			return r.Model, inputArray(t, r.Input)
		},
		response: func(vecs [][]float32) any {
			data := make([]map[string]any, len(vecs))
			for i, v := range vecs {
				// Answer in reverse order: clients must place by "index".
				data[len(vecs)-1-i] = map[string]any{"object": "embedding", "index": i, "embedding": v}
			}
			return map[string]any{"object": "list", "data": data, "model": "text-embedding-3-small",
				"usage": map[string]int{"prompt_tokens": 8, "total_tokens": 8}}
		},
		errorBody: func(msg string) any {
			return map[string]any{"error": map[string]any{"message": msg, "type": "invalid_request_error", "param": nil, "code": "invalid_api_key"}}
		},
	},
}

func inputArray(t *testing.T, raw json.RawMessage) []string {
	var in []string
	if err := json.Unmarshal(raw, &in); err != nil {
		t.Errorf("input is not an array of strings: %s", raw)
	}
	return in
}

// vectorOf is the fake model: a deterministic, not yet unit-length vector
// of dimension dim that differs between texts.
func vectorOf(text string, dim int) []float32 {
	v := make([]float32, dim)
	for i := range v {
		v[i] = float32(len(text)+i) * 0.5
	}
	v[0] += float32(text[0])
	return v
}

// reply is what the fake server does for one request.
type reply struct {
	status int               // 0 means 200 with vectors
	header map[string]string // extra response headers
	body   any               // a value to encode, or a string sent as is
	dim    int               // dimension of the vectors on success (0 means 3)
	hang   bool              // never answer
}

// fake is a provider's server. script decides each reply from the call
// number (1 = the dimension probe) and the texts; it records the batches.
type fake struct {
	t       *testing.T
	api     api
	script  func(call int, texts []string) reply
	mu      sync.Mutex
	batches [][]string
	auth    []string
}

func (f *fake) calls() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.batches)
}

func (f *fake) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != f.api.path {
		f.t.Errorf("%s %s, want POST %s", r.Method, r.URL.Path, f.api.path)
		http.NotFound(w, r)
		return
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/json" {
		f.t.Errorf("Content-Type %q", ct)
	}
	body, _ := io.ReadAll(r.Body)
	model, texts := f.api.request(f.t, body)
	if model == "" {
		f.t.Errorf("request without a model: %s", body)
	}
	f.mu.Lock()
	f.batches = append(f.batches, texts)
	f.auth = append(f.auth, r.Header.Get("Authorization"))
	call := len(f.batches)
	f.mu.Unlock()

	rep := f.script(call, texts)
	if rep.hang {
		<-r.Context().Done()
		return
	}
	for k, v := range rep.header {
		w.Header().Set(k, v)
	}
	w.Header().Set("Content-Type", "application/json")
	if rep.status != 0 {
		w.WriteHeader(rep.status)
	}
	switch b := rep.body.(type) {
	case string:
		io.WriteString(w, b)
		return
	case nil:
		dim := rep.dim
		if dim == 0 {
			dim = 3
		}
		vecs := make([][]float32, len(texts))
		for i, t := range texts {
			vecs[i] = vectorOf(t, dim)
		}
		json.NewEncoder(w).Encode(f.api.response(vecs))
	default:
		json.NewEncoder(w).Encode(b)
	}
}

// serve starts a fake server for a; cfg gets short waits so tests are quick.
func serve(t *testing.T, a api, script func(call int, texts []string) reply) (*fake, string) {
	t.Helper()
	f := &fake{t: t, api: a, script: script}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return f, srv.URL
}

var quick = HTTPConfig{Backoff: time.Millisecond, Timeout: 5 * time.Second}

func ok(int, []string) reply { return reply{} }

func TestRemoteSuccess(t *testing.T) {
	for _, a := range apis {
		t.Run(a.name, func(t *testing.T) {
			f, url := serve(t, a, ok)
			e, err := a.open(context.Background(), url, quick)
			if err != nil {
				t.Fatal(err)
			}
			if e.Dim() != 3 {
				t.Errorf("Dim = %d, want 3", e.Dim())
			}
			wantName := map[string]string{"ollama": "ollama:nomic-embed-text", "openai": "openai:text-embedding-3-small@" + strings.TrimPrefix(url, "http://")}[a.name]
			if e.Name() != wantName {
				t.Errorf("Name = %q, want %q", e.Name(), wantName)
			}
			texts := []string{"alpha", "be", "  ", "gamma ray"}
			vecs, err := e.Embed(context.Background(), texts)
			if err != nil {
				t.Fatal(err)
			}
			if len(vecs) != 4 {
				t.Fatalf("%d vectors", len(vecs))
			}
			for i, v := range vecs {
				if texts[i] == "  " {
					if v == nil || len(v) != 3 || v[0] != 0 || v[1] != 0 || v[2] != 0 {
						t.Errorf("blank text: %v, want the zero vector", v)
					}
					continue
				}
				want := normalize(vectorOf(texts[i], 3))
				for j := range v {
					if math.Abs(float64(v[j]-want[j])) > 1e-6 {
						t.Errorf("text %q: %v, want %v", texts[i], v, want)
						break
					}
				}
			}
			if got := f.batches[1]; strings.Join(got, "|") != "alpha|be|gamma ray" {
				t.Errorf("server saw %q; blank texts must not be sent", got)
			}
			if a.name == "openai" && f.auth[0] != "Bearer sk-test" {
				t.Errorf("Authorization %q", f.auth[0])
			}
			if vecs, err := e.Embed(context.Background(), nil); err != nil || len(vecs) != 0 || f.calls() != 2 {
				t.Errorf("empty Embed = %v, %v after %d calls; want no request", vecs, err, f.calls())
			}
		})
	}
}

func TestRemoteBatching(t *testing.T) {
	for _, a := range apis {
		t.Run(a.name, func(t *testing.T) {
			f, url := serve(t, a, ok)
			cfg := quick
			cfg.BatchSize = 2
			e, err := a.open(context.Background(), url, cfg)
			if err != nil {
				t.Fatal(err)
			}
			texts := []string{"a", "b", "c", "d", "e"}
			vecs, err := e.Embed(context.Background(), texts)
			if err != nil {
				t.Fatal(err)
			}
			var sizes []int
			for _, b := range f.batches {
				sizes = append(sizes, len(b))
			}
			if fmt.Sprint(sizes) != "[1 2 2 1]" {
				t.Errorf("batch sizes %v, want [1 2 2 1] (probe, then 2+2+1)", sizes)
			}
			for i, v := range vecs {
				if w := normalize(vectorOf(texts[i], 3)); math.Abs(float64(v[0]-w[0])) > 1e-6 {
					t.Errorf("text %d out of place", i)
				}
			}
		})
	}
}

func TestRemoteErrors(t *testing.T) {
	tests := []struct {
		name      string
		script    func(a api) func(call int, texts []string) reply
		cfg       func(*HTTPConfig)
		atOpen    bool     // the error comes from the constructor's probe
		want      []string // in the error message
		calls     int      // requests the server saw, probe included
		minWait   time.Duration
		maxElapse time.Duration
	}{
		{
			name: "401 with an error body",
			script: func(a api) func(int, []string) reply {
				return func(int, []string) reply {
					return reply{status: 401, body: a.errorBody("Incorrect API key provided: sk-test")}
				}
			},
			atOpen: true, want: []string{"401 Unauthorized", "Incorrect API key provided"}, calls: 1,
		},
		{
			name: "404 model missing",
			script: func(a api) func(int, []string) reply {
				return func(int, []string) reply {
					return reply{status: 404, body: a.errorBody(`model "nomic-embed-text" not found, try pulling it first`)}
				}
			},
			atOpen: true, want: []string{"404 Not Found", "try pulling it first"}, calls: 1,
		},
		{
			name: "429 with Retry-After, then success",
			script: func(a api) func(int, []string) reply {
				return func(call int, _ []string) reply {
					if call == 2 {
						return reply{status: 429, header: map[string]string{"Retry-After": "1"}, body: a.errorBody("Rate limit reached")}
					}
					return reply{}
				}
			},
			calls: 3, minWait: time.Second,
		},
		{
			name: "429 asking to wait past the budget",
			script: func(a api) func(int, []string) reply {
				return func(call int, _ []string) reply {
					if call == 2 {
						return reply{status: 429, header: map[string]string{"Retry-After": "120"}, body: a.errorBody("Rate limit reached")}
					}
					return reply{}
				}
			},
			want: []string{"429 Too Many Requests", "Rate limit reached", "retry budget"}, calls: 2, maxElapse: 2 * time.Second,
		},
		{
			name: "500, then success",
			script: func(a api) func(int, []string) reply {
				return func(call int, _ []string) reply {
					if call == 2 {
						return reply{status: 500, body: "upstream exploded"}
					}
					return reply{}
				}
			},
			calls: 3,
		},
		{
			name: "503 every time",
			script: func(a api) func(int, []string) reply {
				return func(call int, _ []string) reply {
					if call > 1 {
						return reply{status: 503, body: "<html>busy</html>"}
					}
					return reply{}
				}
			},
			want: []string{"503 Service Unavailable", "<html>busy</html>", "gave up after 5 tries"}, calls: 6,
		},
		{
			name:      "hanging server",
			script:    func(api) func(int, []string) reply { return func(int, []string) reply { return reply{hang: true} } },
			cfg:       func(c *HTTPConfig) { c.Timeout = 100 * time.Millisecond },
			want:      []string{"no answer within 100ms"},
			calls:     2, // the probe starts it offline; Embed tries again
			maxElapse: 2 * time.Second,
		},
		{
			name: "wrong dimension mid-way",
			script: func(api) func(int, []string) reply {
				return func(call int, _ []string) reply {
					if call == 2 {
						return reply{dim: 4}
					}
					return reply{}
				}
			},
			want: []string{"dimension 4, want 3"}, calls: 2,
		},
		{
			name: "malformed JSON",
			script: func(api) func(int, []string) reply {
				return func(call int, _ []string) reply {
					if call == 2 {
						return reply{body: `{"embeddings": [[0.1, 0.2,`}
					}
					return reply{}
				}
			},
			want: []string{"decode response", `body starts "{\"embeddings\": [[0.1, 0.2,"`}, calls: 2,
		},
		{
			name: "too few vectors",
			script: func(a api) func(int, []string) reply {
				return func(call int, _ []string) reply {
					if call == 2 {
						return reply{body: a.response([][]float32{{1, 2, 3}})}
					}
					return reply{}
				}
			},
			want: []string{"got 1 embeddings for 2 texts"}, calls: 2,
		},
	}
	for _, a := range apis {
		for _, tt := range tests {
			t.Run(a.name+"/"+tt.name, func(t *testing.T) {
				t.Parallel() // the Retry-After and backoff cases wait real seconds
				f, url := serve(t, a, tt.script(a))
				cfg := quick
				if tt.cfg != nil {
					tt.cfg(&cfg)
				}
				start := time.Now()
				e, err := a.open(context.Background(), url, cfg)
				if err == nil {
					_, err = e.Embed(context.Background(), []string{"first text", "second"})
				} else if !tt.atOpen {
					t.Fatalf("open: %v", err)
				}
				elapsed := time.Since(start)
				if err != nil {
					t.Logf("error: %v", err)
				}
				if len(tt.want) == 0 && err != nil {
					t.Fatalf("err = %v, want success", err)
				}
				if len(tt.want) > 0 && err == nil {
					t.Fatalf("no error, want one saying %q", tt.want)
				}
				for _, w := range tt.want {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("err = %v, want it to say %q", err, w)
					}
				}
				if err != nil && !strings.Contains(err.Error(), "embedder "+a.name+":") {
					t.Errorf("err = %v, want it to name the embedder", err)
				}
				if f.calls() != tt.calls {
					t.Errorf("server saw %d requests, want %d", f.calls(), tt.calls)
				}
				if elapsed < tt.minWait {
					t.Errorf("took %s, want at least %s (Retry-After)", elapsed, tt.minWait)
				}
				if tt.maxElapse > 0 && elapsed > tt.maxElapse {
					t.Errorf("took %s, want under %s", elapsed, tt.maxElapse)
				}
			})
		}
	}
}

func TestRemoteCancelDuringBackoff(t *testing.T) {
	a := apis[0]
	_, url := serve(t, a, func(call int, _ []string) reply {
		if call > 1 {
			return reply{status: 429, header: map[string]string{"Retry-After": "20"}}
		}
		return reply{}
	})
	e, err := a.open(context.Background(), url, quick)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	if _, err := e.Embed(ctx, []string{"x"}); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err = %v, want the context's", err)
	}
	if time.Since(start) > 2*time.Second {
		t.Errorf("cancel took %s", time.Since(start))
	}
}

func TestOllamaNotRunning(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	r, err := NewOllama(context.Background(), "nomic-embed-text", addr, quick) // "host:port" gets http://
	if err != nil {
		t.Fatalf("a server that is down must not stop the embedder from opening (full-text search needs no vectors): %v", err)
	}
	if r.Dim() != 0 {
		t.Errorf("Dim() = %d before the server ever answered, want 0", r.Dim())
	}
	for name, err := range map[string]error{"Offline": r.Offline(), "Embed": func() error { _, err := r.Embed(context.Background(), []string{"x"}); return err }()} {
		if err == nil || !strings.Contains(err.Error(), "ollama serve") || !strings.Contains(err.Error(), "http://"+addr+"/api/embed") {
			t.Errorf("%s: err = %v, want a hint to start Ollama and the URL", name, err)
		}
	}
}

func TestOpenAIKey(t *testing.T) {
	a := apis[1]
	f, url := serve(t, a, ok)
	if _, err := NewOpenAI(context.Background(), "m", url+"/v1", "", quick); err != nil {
		t.Fatalf("a local server needs no key: %v", err)
	}
	if f.auth[0] != "" {
		t.Errorf("Authorization %q sent without a key", f.auth[0])
	}
	_, err := NewOpenAI(context.Background(), "text-embedding-3-small", "", "", quick)
	if err == nil || !strings.Contains(err.Error(), EnvOpenAIKey) || !strings.Contains(err.Error(), EnvOpenAIKeyStd) || !errors.Is(err, ErrBadSpec) {
		t.Errorf("err = %v, want one naming both key variables", err)
	}
	if _, err := NewOpenAI(context.Background(), "m", "http://", "k", quick); err == nil {
		t.Error("a base URL without a host was accepted")
	}
}

func TestFromSpec(t *testing.T) {
	ollama, ollamaURL := serve(t, apis[0], ok)
	openai, openaiURL := serve(t, apis[1], ok)
	env := map[string]string{
		EnvOllamaURL:     ollamaURL + "/api/", // the trailing /api is forgiven
		EnvOpenAIBaseURL: openaiURL + "/v1",
		EnvOpenAIKey:     "sk-mnemo",
		EnvOpenAIKeyStd:  "sk-std",
	}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	for _, spec := range []string{"", "builtin", " BuiltIn ", BuiltinName} {
		e, err := FromSpec(context.Background(), spec, lookup)
		if err != nil || e.Name() != BuiltinName {
			t.Errorf("FromSpec(%q) = %v, %v; want the built-in embedder", spec, e, err)
		}
	}
	e, err := FromSpec(context.Background(), "ollama:bge-m3:latest", lookup)
	if err != nil || e.Name() != "ollama:bge-m3:latest" || e.Dim() != 3 || ollama.calls() != 1 {
		t.Errorf("ollama: %v, %v", e, err)
	}
	e, err = FromSpec(context.Background(), "openai:text-embedding-3-large", lookup)
	if err != nil || !strings.HasPrefix(e.Name(), "openai:text-embedding-3-large@127.0.0.1:") {
		t.Errorf("openai: %v, %v", e, err)
	}
	if openai.calls() != 1 || openai.auth[0] != "Bearer sk-mnemo" {
		t.Errorf("openai key %q, want $%s before $%s", openai.auth, EnvOpenAIKey, EnvOpenAIKeyStd)
	}
	delete(env, EnvOpenAIKey)
	if _, err := FromSpec(context.Background(), "openai:m", lookup); err != nil || openai.auth[1] != "Bearer sk-std" {
		t.Errorf("fallback key: %v, %q", err, openai.auth)
	}
	for spec, want := range map[string]string{
		"ollama":       "needs a model",
		"ollama:":      "needs a model",
		"openai: ":     "needs a model",
		"cohere:embed": `unknown embedder "cohere:embed"`,
	} {
		if _, err := FromSpec(context.Background(), spec, lookup); err == nil || !strings.Contains(err.Error(), want) || !errors.Is(err, ErrBadSpec) {
			t.Errorf("FromSpec(%q) = %v, want an error saying %q", spec, err, want)
		}
	}
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		h    map[string]string
		want time.Duration
		ok   bool
	}{
		{map[string]string{"Retry-After": "2"}, 2 * time.Second, true},
		{map[string]string{"Retry-After": "0"}, 0, true},
		{map[string]string{"Retry-After": "Wed, 01 Jan 2025 12:00:05 GMT"}, 5 * time.Second, true},
		{map[string]string{"Retry-After": "Wed, 01 Jan 2025 11:00:00 GMT"}, 0, true},
		{map[string]string{"Retry-After-Ms": "250", "Retry-After": "1"}, 250 * time.Millisecond, true},
		{map[string]string{"Retry-After": "soon"}, 0, false},
		{nil, 0, false},
	} {
		h := http.Header{}
		for k, v := range tt.h {
			h.Set(k, v)
		}
		if got, ok := retryAfter(h, now); got != tt.want || ok != tt.ok {
			t.Errorf("retryAfter(%v) = %s, %v; want %s, %v", tt.h, got, ok, tt.want, tt.ok)
		}
	}
}

func TestErrorMessage(t *testing.T) {
	for body, want := range map[string]string{
		`{"error": "model not found"}`:                                       "model not found",
		`{"error": {"message": "bad key", "type": "invalid_request_error"}}`: "bad key",
		"<html>\n  <body>Bad Gateway</body>\n</html>":                        "<html> <body>Bad Gateway</body> </html>",
		strings.Repeat("é", 150):                                             strings.Repeat("é", 100) + "…",
		``:                                                                   "",
	} {
		if got := errorMessage([]byte(body)); got != want {
			t.Errorf("errorMessage(%q) = %q, want %q", body, got, want)
		}
	}
}

// A server that is down at start-up and comes back later: the embedder
// learns its dimension from the first answer and is online from then on.
func TestRemoteComesBackOnline(t *testing.T) {
	for _, a := range apis {
		t.Run(a.name, func(t *testing.T) {
			f, url := serve(t, a, func(call int, _ []string) reply {
				if call == 1 {
					return reply{status: 503, body: "starting"}
				}
				return reply{}
			})
			cfg := quick
			cfg.MaxTries = 1
			r, err := a.open(context.Background(), url, cfg)
			if err != nil {
				t.Fatalf("open: %v", err)
			}
			if r.Offline() == nil || r.Dim() != 0 {
				t.Fatalf("after a failed probe: Offline() = %v, Dim() = %d; want an error and 0", r.Offline(), r.Dim())
			}
			v, err := r.Embed(context.Background(), []string{"hello", " "})
			if err != nil {
				t.Fatalf("Embed once the server is back: %v", err)
			}
			if r.Offline() != nil || r.Dim() != 3 || len(v[0]) != 3 || len(v[1]) != 3 {
				t.Errorf("Offline() = %v, Dim() = %d, vectors %d and %d long; want nil and 3", r.Offline(), r.Dim(), len(v[0]), len(v[1]))
			}
			if f.calls() != 2 {
				t.Errorf("server saw %d requests, want 2", f.calls())
			}
		})
	}
}
