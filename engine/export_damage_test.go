package engine

import (
	"path/filepath"
	"testing"

	"mnemo/engine/fulltext"
)

// NewestSegments lists the segment files the newest snapshot of the
// (closed) full-text index in indexDir refers to (fulltext.NewestSegments).
func NewestSegments(t testing.TB, indexDir string) []string {
	t.Helper()
	segs, err := fulltext.NewestSegments(filepath.Join(indexDir, fulltext.Dir))
	if err != nil {
		t.Fatal(err)
	}
	return segs
}
