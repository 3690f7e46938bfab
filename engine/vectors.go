package engine

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	chromem "github.com/philippgille/chromem-go"
)

// vectors is the semantic index: a chromem-go collection of chunk vectors.
// It lives in memory; the vectors themselves are persisted in the state store
// (one bbolt value per chunk) and loaded at open, because chromem-go's own
// persistence writes one gob file per document.
type vectors struct {
	col *chromem.Collection
}

// Metadata keys: chromem-go filters are exact-match, so every ancestor folder
// and every tag is its own key, and a filtered query stays inside the scan.
const (
	metaPath   = "path"
	metaFolder = "f:"
	metaTag    = "t:"
)

func newVectors() (*vectors, error) {
	db := chromem.NewDB()
	noEmbed := func(context.Context, string) ([]float32, error) {
		return nil, errors.New("mnemo embeds texts itself; chromem-go must not")
	}
	col, err := db.CreateCollection("chunks", nil, noEmbed)
	if err != nil {
		return nil, fmt.Errorf("create vector collection: %w", err)
	}
	return &vectors{col: col}, nil
}

func chunkID(path string, i int) string { return path + "#" + strconv.Itoa(i) }

// pathOf returns the file path of a chunk id.
func pathOf(id string) (string, int) {
	i := strings.LastIndexByte(id, '#')
	n, _ := strconv.Atoi(id[i+1:])
	return id[:i], n
}

func chromemDoc(path string, chunk int, tags []string, vec []float32) chromem.Document {
	return chromem.Document{ID: chunkID(path, chunk), Metadata: chunkMeta(path, tags), Embedding: vec}
}

func chunkMeta(path string, tags []string) map[string]string {
	m := map[string]string{metaPath: path}
	for _, f := range ancestors(path) {
		m[metaFolder+f] = "1"
	}
	for _, t := range tags {
		m[metaTag+t] = "1"
	}
	return m
}

// isZero reports an all-zero vector: a text the embedder could not represent.
func isZero(v []float32) bool {
	for _, x := range v {
		if x != 0 {
			return false
		}
	}
	return true
}

// put replaces the chunks of path with vecs (nil or zero entries are left out).
func (v *vectors) put(ctx context.Context, path string, oldChunks int, tags []string, vecs [][]float32) error {
	if err := v.remove(ctx, path, oldChunks); err != nil {
		return err
	}
	meta := chunkMeta(path, tags)
	docs := make([]chromem.Document, 0, len(vecs))
	for i, vec := range vecs {
		if vec == nil || isZero(vec) {
			continue
		}
		docs = append(docs, chromem.Document{ID: chunkID(path, i), Metadata: meta, Embedding: vec})
	}
	for _, d := range docs {
		if err := v.col.AddDocument(ctx, d); err != nil {
			return fmt.Errorf("add vectors of %s: %w", path, err)
		}
	}
	return nil
}

func (v *vectors) remove(ctx context.Context, path string, chunks int) error {
	if chunks == 0 {
		return nil
	}
	ids := make([]string, chunks)
	for i := range ids {
		ids[i] = chunkID(path, i)
	}
	if err := v.col.Delete(ctx, nil, nil, ids...); err != nil {
		return fmt.Errorf("remove vectors of %s: %w", path, err)
	}
	return nil
}

func (v *vectors) count() int { return v.col.Count() }

// semHit is one memory's best chunk.
type semHit struct {
	sim   float64
	chunk int
}

// query returns, for every memory in scope with at least one chunk, the
// cosine similarity of its best chunk to qv.
func (v *vectors) query(ctx context.Context, qv []float32, folder string, tags []string) (map[string]semHit, error) {
	n := v.col.Count()
	if n == 0 || isZero(qv) {
		return map[string]semHit{}, nil
	}
	var where map[string]string
	if folder != "" || len(tags) > 0 {
		where = map[string]string{}
		if folder != "" {
			where[metaFolder+folder] = "1"
		}
		for _, t := range tags {
			where[metaTag+t] = "1"
		}
	}
	res, err := v.col.QueryEmbedding(ctx, qv, min(n, 1000), where, nil)
	if err != nil {
		return nil, fmt.Errorf("vector query: %w", err)
	}
	out := make(map[string]semHit, len(res))
	for _, r := range res {
		p, c := pathOf(r.ID)
		if h, ok := out[p]; !ok || float64(r.Similarity) > h.sim {
			out[p] = semHit{sim: float64(r.Similarity), chunk: c}
		}
	}
	return out, nil
}
