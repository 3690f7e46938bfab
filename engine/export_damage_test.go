package engine

import (
	"path/filepath"
	"testing"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/index/scorch"

	"mnemo/engine/fulltext"
)

// NewestSegments lists the segment files the newest snapshot of the
// (closed) full-text index in indexDir refers to: older snapshots, kept
// for a while, refer to files that harm nothing when damaged.
func NewestSegments(t testing.TB, indexDir string) []string {
	t.Helper()
	idx, err := bleve.OpenUsing(filepath.Join(indexDir, fulltext.Dir), map[string]any{"read_only": true})
	if err != nil {
		t.Fatal(err)
	}
	defer idx.Close()
	adv, err := idx.Advanced()
	if err != nil {
		t.Fatal(err)
	}
	s := adv.(*scorch.Scorch)
	epochs, err := s.RootBoltSnapshotEpochs()
	if err != nil || len(epochs) == 0 {
		t.Fatalf("snapshots: %v %v", epochs, err)
	}
	snap, err := s.LoadSnapshot(epochs[0])
	if err != nil {
		t.Fatal(err)
	}
	defer snap.DecRef()
	var out []string
	for _, ss := range snap.Segments() {
		out = append(out, ss.Segment().(interface{ Path() string }).Path())
	}
	return out
}
