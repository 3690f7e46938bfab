package fulltext

import (
	"errors"
	"fmt"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/index/scorch"
)

// What the corpora's tests need of the index beyond what a corpus does:
// documents Bleve maps itself (as an index before the analysis pass held
// them, or a crash left them), the analyzer's terms, scorch's counters.

// BodyField is the name of the field that holds a document's whole text.
const BodyField = fBody

// MappedDoc is a document for Batch.Index, which Bleve maps and analyses
// itself through the index's mapping: what tests plant in an index, as a
// crash or an older version would have left it.
func MappedDoc(title, body string) any { return &ftDoc{Title: title, Body: body} }

// EnglishTerms is what the English analyzer makes of text: the terms a
// segment holds for it.
func EnglishTerms(text string) ([]string, error) {
	m, err := newMapping()
	if err != nil {
		return nil, err
	}
	var out []string
	for _, t := range m.AnalyzerNamed(analyzerEN).Analyze([]byte(text)) {
		out = append(out, string(t.Term))
	}
	return out, nil
}

// Stats is scorch's counters for the index (Bleve's StatsMap), for
// benchmarks.
func (ft *Index) Stats() map[string]any { return ft.idx.StatsMap() }

// NewestSegments lists the segment files the newest snapshot of the
// (closed) index at path refers to: what a test harms to damage the index,
// since older snapshots, kept for a while, refer to files that harm
// nothing when damaged.
func NewestSegments(path string) ([]string, error) {
	idx, err := bleve.OpenUsing(path, map[string]any{"read_only": true})
	if err != nil {
		return nil, err
	}
	defer idx.Close()
	adv, err := idx.Advanced()
	if err != nil {
		return nil, err
	}
	s := adv.(*scorch.Scorch)
	epochs, err := s.RootBoltSnapshotEpochs()
	if err != nil {
		return nil, fmt.Errorf("snapshots: %w", err)
	}
	if len(epochs) == 0 {
		return nil, errors.New("snapshots: none")
	}
	snap, err := s.LoadSnapshot(epochs[0])
	if err != nil {
		return nil, err
	}
	defer snap.DecRef()
	var out []string
	for _, ss := range snap.Segments() {
		out = append(out, ss.Segment().(interface{ Path() string }).Path())
	}
	return out, nil
}
