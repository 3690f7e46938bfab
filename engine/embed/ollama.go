package embed

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// DefaultOllamaURL is where Ollama listens unless told otherwise.
const DefaultOllamaURL = "http://localhost:11434"

// NewOllama returns an embedder that asks the Ollama server at baseURL
// (DefaultOllamaURL when empty; "host:port" and a trailing "/api" are
// accepted too) to embed with model, through POST /api/embed:
//
//	request  {"model": "nomic-embed-text", "input": ["text", …]}
//	response {"model": "…", "embeddings": [[0.01, …], …], …}
//	error    {"error": "model \"x\" not found, try pulling it first"}
//
// It embeds a probe text to learn the dimension, so a server that is down
// or lacks the model fails here. Its name is "ollama:<model>".
func NewOllama(ctx context.Context, model, baseURL string, cfg HTTPConfig) (*Remote, error) {
	base := baseOf(baseURL, DefaultOllamaURL)
	base = strings.TrimSuffix(base, "/api")
	w := wire{
		url: base + "/api/embed",
		body: func(texts []string) any {
			return ollamaRequest{Model: model, Input: texts}
		},
		parse: parseOllama,
	}
	hint := fmt.Sprintf(`is Ollama running? start it with "ollama serve", or set %s`, EnvOllamaURL)
	return newRemote(ctx, "ollama:"+model, w, cfg.withDefaults(120*time.Second), hint)
}

type ollamaRequest struct {
	Model string   `json:"model"`
	Input []string `json:"input"`
}

type ollamaResponse struct {
	Embeddings [][]float32 `json:"embeddings"`
}

func parseOllama(body []byte, n int) ([][]float32, error) {
	var r ollamaResponse
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, fmt.Errorf("decode response: %w", err)
	}
	if len(r.Embeddings) != n {
		return nil, fmt.Errorf("got %d embeddings for %d texts", len(r.Embeddings), n)
	}
	return r.Embeddings, nil
}

// baseOf trims a base URL and gives it a scheme; def when it is empty.
func baseOf(u, def string) string {
	u = strings.TrimRight(strings.TrimSpace(u), "/")
	if u == "" {
		return def
	}
	if !strings.Contains(u, "://") {
		u = "http://" + u
	}
	return u
}
