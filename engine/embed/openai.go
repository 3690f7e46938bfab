package embed

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// DefaultOpenAIBaseURL is OpenAI's own API.
const DefaultOpenAIBaseURL = "https://api.openai.com/v1"

// NewOpenAI returns an embedder that asks an OpenAI-compatible API at
// baseURL (DefaultOpenAIBaseURL when empty) to embed with model, through
// POST <baseURL>/embeddings:
//
//	request  {"model": "text-embedding-3-small", "input": ["text", …]}
//	response {"object": "list", "data": [{"object": "embedding", "index": 0, "embedding": [0.01, …]}, …], …}
//	error    {"error": {"message": "Incorrect API key provided", "type": "invalid_request_error", …}}
//
// apiKey is sent as a bearer token; it may be empty for local servers
// (llama.cpp, vLLM, LM Studio, Ollama's /v1), never for OpenAI itself.
// It embeds a probe text to learn the dimension, so a wrong model or key
// fails here. Its name is "openai:<model>@<host>", since two servers may
// give the same model name to different models.
func NewOpenAI(ctx context.Context, model, baseURL, apiKey string, cfg HTTPConfig) (*Remote, error) {
	base := baseOf(baseURL, DefaultOpenAIBaseURL)
	u, err := url.Parse(base)
	if err != nil || u.Hostname() == "" || strings.HasSuffix(u.Host, ":") {
		return nil, fmt.Errorf("OpenAI base URL %q: want a URL like %s: %w", baseURL, DefaultOpenAIBaseURL, ErrBadSpec)
	}
	if apiKey == "" && u.Host == "api.openai.com" {
		return nil, fmt.Errorf("embedder openai:%s needs an API key: set %s or %s: %w", model, EnvOpenAIKey, EnvOpenAIKeyStd, ErrBadSpec)
	}
	w := wire{
		url:    base + "/embeddings",
		header: http.Header{},
		body: func(texts []string) any {
			return openAIRequest{Model: model, Input: texts}
		},
		parse: parseOpenAI,
	}
	if apiKey != "" {
		w.header.Set("Authorization", "Bearer "+apiKey)
	}
	return newRemote(ctx, "openai:"+model+"@"+u.Host, w, cfg.withDefaults(60*time.Second), "")
}

type openAIRequest struct {
	Model string   `json:"model"`
	Input []string `json:"input"`
}

type openAIResponse struct {
	Data []struct {
		Index     int       `json:"index"`
		Embedding []float32 `json:"embedding"`
	} `json:"data"`
}

// parseOpenAI places each embedding by its "index": the API does not
// promise to answer in input order.
func parseOpenAI(body []byte, n int) ([][]float32, error) {
	var r openAIResponse
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, fmt.Errorf("decode response: %w", err)
	}
	if len(r.Data) != n {
		return nil, fmt.Errorf("got %d embeddings for %d texts", len(r.Data), n)
	}
	out := make([][]float32, n)
	for _, d := range r.Data {
		if d.Index < 0 || d.Index >= n || out[d.Index] != nil {
			return nil, fmt.Errorf("embedding index %d is out of range or repeated", d.Index)
		}
		out[d.Index] = d.Embedding
	}
	return out, nil
}
