// Package embed turns text into vectors for the semantic index. A provider is
// anything that satisfies Embedder; the built-in one needs no network and no
// set-up (static GloVe word vectors shipped inside the binary).
package embed

import (
	"context"
	"fmt"
)

// Embedder turns texts into vectors of a fixed dimension.
type Embedder interface {
	// Name identifies the model, e.g. "builtin:glove-6b-100d-sif-v2". The index
	// records it and refuses to mix vectors from two embedders.
	Name() string
	// Dim is the length of every vector Embed returns.
	Dim() int
	// Embed returns one vector per text, in order. A text with nothing the
	// model can represent gets an all-zero vector, never an error.
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// OrBuiltin is emb, or the built-in embedder when emb is nil: what each
// corpus's config means by leaving its embedder unset.
func OrBuiltin(emb Embedder) (Embedder, error) {
	if emb != nil {
		return emb, nil
	}
	b, err := Builtin()
	if err != nil {
		return nil, fmt.Errorf("built-in embedder: %w", err)
	}
	return b, nil
}
