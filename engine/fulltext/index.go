// Package fulltext is everything of mnemo that faces Bleve: the one mapping
// (stored in the index and compared when it opens), the one analysis pass
// that feeds it (analysis.go, tokens.go, wordbreak.go), BM25F scoring over
// its postings, the excerpt indexes and the one snippet cutter both
// corpora show matches with, the checks that find a damaged index, and the
// tracker of which lazy batches are on disk.
//
// It knows nothing of memories or sessions beyond the fields a document
// has: the corpus decides what a document is and where its records live.
// It must not import the engine or a corpus, nor keep state of its own
// beyond an open index.
package fulltext

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"math"
	"math/bits"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/analysis/analyzer/custom"
	// Indexes before schema 6 name the keyword analyzer in their mapping;
	// it must be registered to open them (and rebuild them).
	_ "github.com/blevesearch/bleve/v2/analysis/analyzer/keyword"
	"github.com/blevesearch/bleve/v2/analysis/char/asciifolding"
	"github.com/blevesearch/bleve/v2/analysis/lang/en"
	"github.com/blevesearch/bleve/v2/analysis/token/lowercase"
	unicodetok "github.com/blevesearch/bleve/v2/analysis/tokenizer/unicode"
	"github.com/blevesearch/bleve/v2/document"
	"github.com/blevesearch/bleve/v2/index/scorch"
	"github.com/blevesearch/bleve/v2/mapping"
	index "github.com/blevesearch/bleve_index_api"

	"mnemo/engine/rank"
	"mnemo/engine/store"
)

// Field names of the full-text index, all scored by our own BM25 (see
// Score). Folder and tag filters are applied to the records, not
// here: indexes before schema 6 also held them as keys no query read.
const (
	fTitle = "title"
	fBody  = "body" // title + headings + plain text: what BM25 ranks by
	fTags  = "tags"
	fCJK   = "cjk" // title + body again, CJK bigrams, only for files with CJK text

	analyzerEN = "mnemo_en"
)

// textFields are the scored fields, in the order of a record's Lens.
var textFields = [...]string{fTitle, fBody, fTags, fCJK}

// NumFields is how many scored fields a document has: the length of the
// per-field token counts (FieldLens) and totals that BM25 needs.
const NumFields = len(textFields)

// Doc is one document as the index takes it (NewDoc makes one), and Batch
// a set of changes applied together (Index.NewBatch, Index.Batch).
type (
	Doc   = document.Document
	Batch = bleve.Batch
)

// ftDoc is one memory as the full-text index's mapping describes it. A
// sync does not map it: it gives Bleve the fields pre-analysed (tokens.go),
// with the options the mapping gives them (prepareAnalysis).
type ftDoc struct {
	Title string `json:"title"`
	Body  string `json:"body"`
	Tags  string `json:"tags"`
	CJK   string `json:"cjk,omitempty"`
}

// newMapping is the one place that says how memories are analysed: English
// with Snowball stemming and stopwords, diacritics folded, and CJK text
// in its own bigram field so a Chinese or Japanese query finds its memory.
func newMapping() (*mapping.IndexMappingImpl, error) {
	im := bleve.NewIndexMapping()
	im.ScoringModel = index.BM25Scoring
	err := im.AddCustomAnalyzer(analyzerEN, map[string]any{
		"type":          custom.Name,
		"char_filters":  []any{asciifolding.Name},
		"tokenizer":     unicodetok.Name,
		"token_filters": []any{en.PossessiveName, lowercase.Name, en.StopName, en.SnowballStemmerName},
	})
	if err != nil {
		return nil, fmt.Errorf("define analyzer: %w", err)
	}
	if err := addBigramAnalyzer(im); err != nil {
		return nil, err
	}
	im.DefaultAnalyzer = analyzerEN
	text := func(analyzer string) *mapping.FieldMapping {
		f := bleve.NewTextFieldMapping()
		f.Analyzer = analyzer
		f.Store = false
		f.IncludeInAll = false
		f.IncludeTermVectors = false
		f.DocValues = false
		return f
	}
	dm := bleve.NewDocumentStaticMapping()
	dm.AddFieldMappingsAt(fTitle, text(analyzerEN))
	dm.AddFieldMappingsAt(fBody, text(analyzerEN))
	dm.AddFieldMappingsAt(fTags, text(analyzerEN))
	dm.AddFieldMappingsAt(fCJK, text(analyzerBigram))
	// Bleve's _all field (every field's terms again, with term vectors)
	// serves queries that name no field; ours always name theirs.
	dm.AddSubDocumentMapping("_all", bleve.NewDocumentDisabledMapping())
	im.DefaultMapping = dm
	im.StoreDynamic = false
	im.IndexDynamic = false
	return im, nil
}

// Index wraps the Bleve index and the analyzers our scorer needs.
type Index struct {
	idx bleve.Index
	// damage, if set, is what openChecked found wrong with an index opened
	// read-only: its searches refuse to answer from what is left.
	damage error
	en     analysis.Analyzer
	cjk    analysis.Analyzer
	// The parts of en that the one analysis pass (tokens.go) runs itself,
	// and the indexing options the mapping gives each text field.
	fold    analysis.CharFilter
	filters []analysis.TokenFilter
	// the bigram analyzer's width and lowercase filters, for the pass
	cjkFilters []analysis.TokenFilter
	opts       map[string]index.FieldIndexingOptions
	kinds      runeKinds // which runes the pass segments itself (wordbreak.go)
	snippets   sync.Pool // *Analyser, for matchSpans (snippets.go)
}

// BatchMode says when a Batch on a writer's full-text index returns.
type BatchMode int

const (
	// DurableBatches: once Bleve has persisted the batch (Bleve's default).
	DurableBatches BatchMode = iota
	// LazyBatches: as soon as the batch is searchable (scorch's
	// unsafe_batch); the caller keeps track of what is not on disk yet
	// (Tracker).
	LazyBatches
)

// writerConfig is the scorch configuration a writer opens an index with: a
// bounded wait for Bleve's lock, the batch mode, and over them the options
// of over (tests only). Bleve's persister and merge plan are left as they
// are: neither a persister nap nor a lower merge floor measured better
// (BenchmarkTrickleWrites; docs/benchmarks.md). It is given at every open
// rather than kept in the index, as Bleve would keep what the index is
// created with: it is this process's choice, not the index's.
func writerConfig(mode BatchMode, over map[string]any) map[string]any {
	c := map[string]any{"bolt_timeout": "2s"}
	if mode == LazyBatches {
		c["unsafe_batch"] = true
	}
	maps.Copy(c, over)
	return c
}

// Dir is the name of a corpus's full-text index inside the corpus's
// index folder; both corpora keep theirs under it.
const Dir = "fulltext.bleve"

// Size is how many bytes the index at path takes on disk (what Status
// reports): the sum of its files' sizes, 0 for an index not there.
func Size(path string) int64 {
	var n int64
	filepath.WalkDir(path, func(_ string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}

// Open opens the full-text index at path: as its writer if create
// (creating it if missing, its batches returning as mode says, with the
// scorch options over the writer's: tests only), else read-only. A
// read-only index that is damaged is still opened, so Status can say
// what is wrong (Damage); a writer's is not.
func Open(path string, create bool, mode BatchMode, over map[string]any) (*Index, error) {
	if _, statErr := os.Stat(path); statErr != nil {
		if !create {
			return nil, store.ErrIndexNotReady
		}
		m, err := newMapping()
		if err != nil {
			return nil, err
		}
		idx, err := bleve.New(path, m)
		if err == nil {
			err = idx.Close() // and open it below, as its writer opens it
		}
		if err != nil {
			return nil, fmt.Errorf("create full-text index %s: %w", path, err)
		}
	}
	idx, damage := openChecked(path, create, writerConfig(mode, over))
	if idx == nil {
		return nil, damage
	}
	return newFulltext(path, idx, damage)
}

func newFulltext(path string, idx bleve.Index, damage error) (*Index, error) {
	m := idx.Mapping()
	ft := &Index{idx: idx, en: m.AnalyzerNamed(analyzerEN), cjk: m.AnalyzerNamed(analyzerBigram), damage: damage}
	if ft.en == nil || ft.cjk == nil {
		idx.Close()
		return nil, fmt.Errorf("full-text index %s lacks mnemo's analyzers: %w", path, store.ErrIndexIncompatible)
	}
	if err := ft.prepareAnalysis(); err != nil {
		idx.Close()
		return nil, fmt.Errorf("full-text index %s: %v: %w", path, err, store.ErrIndexIncompatible)
	}
	return ft, nil
}

// prepareAnalysis takes from the index's mapping what the one analysis
// pass needs: the English analyzer's parts, and each text field's
// indexing options, read from a mapped sample document. The pass gives
// Bleve term frequencies alone, so a field must not ask for stored
// values, term vectors or doc values.
func (ft *Index) prepareAnalysis() error {
	fold, filters, err := englishChain(ft.en)
	if err != nil {
		return err
	}
	ft.fold, ft.filters = fold, filters
	if ft.cjkFilters, err = bigramChain(ft.cjk); err != nil {
		return err
	}
	doc := document.NewDocument("sample")
	if err := ft.idx.Mapping().MapDocument(doc, &ftDoc{Title: "t", Body: "b", Tags: "g", CJK: "c"}); err != nil {
		return fmt.Errorf("map a sample document: %w", err)
	}
	ft.opts = map[string]index.FieldIndexingOptions{}
	doc.VisitFields(func(f index.Field) { ft.opts[f.Name()] = f.Options() })
	for _, name := range textFields {
		o, ok := ft.opts[name]
		if !ok || !o.IsIndexed() || o.IsStored() || o.IncludeTermVectors() || o.IncludeDocValues() {
			return fmt.Errorf("field %s is mapped with options %v, want indexed alone", name, o)
		}
	}
	return nil
}

// Close closes the index.
func (ft *Index) Close() error { return ft.idx.Close() }

// Damage is what the open found wrong with an index opened read-only, or nil.
func (ft *Index) Damage() error { return ft.damage }

// DocCount is how many documents the index holds.
func (ft *Index) DocCount() (uint64, error) { return ft.idx.DocCount() }

// NewBatch starts a batch of changes to the index.
func (ft *Index) NewBatch() *Batch { return ft.idx.NewBatch() }

// Batch applies b. On a writer opened with LazyBatches it returns once b
// is searchable; see Tracker for what is on disk.
func (ft *Index) Batch(b *Batch) error { return ft.idx.Batch(b) }

// NewDoc is a Bleve document made of fields the analysis pass made;
// indexed through Batch.IndexAdvanced, Bleve does not analyse them again.
func NewDoc(id string, text []*Field) *Doc {
	doc := document.NewDocument(id)
	for _, f := range text {
		doc.AddField(f)
	}
	return doc
}

// FieldLens reads how many tokens each scored field of a document
// holds, which BM25's length normalisation needs (Bleve keeps no such
// total); pre-analysed fields know it before Bleve indexes them.
func FieldLens(doc *Doc) [NumFields]int32 {
	var l [NumFields]int32
	doc.VisitFields(func(f index.Field) {
		for i, name := range textFields {
			if f.Name() == name {
				l[i] = int32(f.AnalyzedLength())
			}
		}
	})
	return l
}

// Terms analyses a query the way the index analysed the memories:
// term → how often it occurs in the query, per field analyzer.
type Terms struct {
	en  map[string]int
	cjk map[string]int
}

// QueryTerms is AnalyzeQuery for a search: a text that leaves no term to
// look up (only stopwords or punctuation) is rank.ErrNoTerms.
func (ft *Index) QueryTerms(text string) (Terms, error) {
	q := ft.AnalyzeQuery(text)
	if q.Empty() {
		return q, fmt.Errorf("%q: %w", text, rank.ErrNoTerms)
	}
	return q, nil
}

// AnalyzeQuery analyses a query's text as the index analysed its documents.
func (ft *Index) AnalyzeQuery(text string) Terms {
	q := Terms{en: map[string]int{}}
	for _, t := range ft.en.Analyze([]byte(text)) {
		q.en[string(t.Term)]++
	}
	if needsBigrams(text) {
		q.cjk = map[string]int{}
		for _, t := range ft.cjk.Analyze([]byte(text)) {
			if cjkTerm(string(t.Term)) {
				q.cjk[string(t.Term)]++
			}
		}
	}
	// Each term is looked up in its own field alone (englishTerm,
	// cjkTerm): CJK runs are matched as bigrams in the cjk field, where
	// the English analyzer's single Han characters would match everywhere
	// ("数" in 参数 for a query about 数据库).
	for t := range q.en {
		if !englishTerm(t) {
			delete(q.en, t)
		}
	}
	return q
}

// Empty reports whether the query has no term any field can match.
func (q Terms) Empty() bool { return len(q.en) == 0 && len(q.cjk) == 0 }

// BM25 holds BM25's parameters and the per-field weights of our BM25F-style sum.
type BM25 struct {
	K1, B   float64
	Weights [len(textFields)]float64 // title, body, tags, cjk
}

// NewBM25 is the full-text scorer's share of a Ranking: BM25's parameters
// and the weights of the fields it sums.
func NewBM25(r rank.Ranking) BM25 {
	return BM25{K1: r.K1, B: r.B, Weights: [NumFields]float64{r.TitleWeight, r.BodyWeight, r.TagsWeight, r.CJKWeight}}
}

// Hit is one document's BM25 score and how many query terms it matched,
// as ranking takes it.
type Hit = rank.TextHit

// Score computes BM25 over the index's postings: Σ fields w_f · Σ terms
// idf · tf·(k1+1) / (tf + k1·(1 − b + b·len/avglen)). We score ourselves
// rather than through Bleve's query scorer because Bleve's "BM25" multiplies
// in a coordination factor and a TF-IDF query norm and takes avglen from the
// number of distinct terms, which costs several points of nDCG on every set
// of docs/benchmarks.md. Bleve still does analysis, postings and storage.
// totals holds each field's total token count over all documents.
func (ft *Index) Score(ctx context.Context, q Terms, p BM25, totals [NumFields]int64) (hits []Hit, err error) {
	err = ft.ScoreEach(ctx, q, p, totals, func(snap Snapshot, nums []NumHit) error {
		hits = slices.Grow(hits, len(nums)) // one call, or a chunk a call
		for _, h := range nums {
			ext, err := snap.ExternalID(h.Num)
			if err != nil {
				return err
			}
			hits = append(hits, Hit{ID: ext, Score: h.Score, Matched: h.Matched})
		}
		return nil
	})
	return hits, err
}

// NumHit is one document's BM25 score and how many query terms it
// matched, by the document's number in the Snapshot that scored it.
type NumHit struct {
	Num     uint64
	Score   float64
	Matched int
}

// Snapshot is the state of the index one query read: its documents'
// numbers (NumHit.Num) mean something in it alone, and only while it is
// open (inside ScoreEach's use).
type Snapshot struct{ rd index.IndexReader }

// Same reports whether two snapshots are one state of the index, so that
// what a caller learnt of a number in one (its document's id) holds in
// the other. Bleve hands out the same snapshot until the index changes.
func (s Snapshot) Same(o Snapshot) bool { return s.rd != nil && s.rd == o.rd }

// SegmentSpan is one segment of a snapshot: its id in the index, and the
// numbers its documents take in the snapshot, [Offset, Offset+Count).
type SegmentSpan struct{ ID, Offset, Count uint64 }

// Layout is the snapshot's segments in number order; nil for an index
// that is not scorch's. A segment keeps its id and documents from one
// snapshot to the next until a merge replaces it, and scorch adds new and
// merged segments after those it keeps, so two snapshots' documents
// have the same numbers up to the first segment their layouts do not
// share (KeptNumbers).
func (s Snapshot) Layout() []SegmentSpan {
	is, ok := s.rd.(*scorch.IndexSnapshot)
	if !ok {
		return nil
	}
	var out []SegmentSpan
	var offset uint64
	for _, ss := range is.Segments() {
		n := ss.Segment().Count()
		out = append(out, SegmentSpan{ID: ss.Id(), Offset: offset, Count: n})
		offset += n
	}
	return out
}

// KeptNumbers is how many of the first document numbers mean the same
// documents in the snapshots of layouts a and b: those of the segments
// both begin with.
func KeptNumbers(a, b []SegmentSpan) uint64 {
	var n uint64
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			break
		}
		n = a[i].Offset + a[i].Count
	}
	return n
}

// ExternalID is the id of document num.
func (s Snapshot) ExternalID(num uint64) (string, error) {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], num)
	ext, err := s.rd.ExternalID(b[:])
	if err != nil {
		return "", fmt.Errorf("resolve document id: %w", err)
	}
	return ext, nil
}

// ScoreEach scores q as Score does, and hands use the hits by number in
// the snapshot they were scored in, in no order, while it is open: a
// caller that knows documents by number (a cache of what it resolved
// before) reads no stored id again. Use is called once or more, each
// time with the next hits (a chunk of them from docAtATimeFrom documents
// on, in ascending number), in a slice scoring reuses once use returns.
// A damaged index fails ScoreEach as it fails Score, use's reads
// included.
func (ft *Index) ScoreEach(ctx context.Context, q Terms, p BM25, totals [NumFields]int64, use func(Snapshot, []NumHit) error) error {
	return ft.guarded(ctx, func() error { return ft.score(ctx, q, p, totals, use) })
}

// guarded runs a query that reads Bleve's segments: a fault or a panic in
// Bleve is the index's damage, and a failure without one is checked for it.
func (ft *Index) guarded(ctx context.Context, query func() error) error {
	err := withFaults(func() (err error) {
		defer guardBleve(&err)
		return query()
	})
	if err != nil && ctx.Err() == nil && !errors.Is(err, store.ErrIndexDamaged) {
		// Bleve failed without panicking: a damaged segment, or not.
		if derr := withFaults(func() error { return Check(ft.idx) }); derr != nil {
			return fmt.Errorf("%w; the query failed with: %v", derr, err)
		}
	}
	return err
}

// reader opens a snapshot of the index and counts its documents.
func (ft *Index) reader() (index.IndexReader, uint64, error) {
	r, err := ft.idx.Advanced()
	if err != nil {
		return nil, 0, fmt.Errorf("full-text index: %w", err)
	}
	rd, err := r.Reader()
	if err != nil {
		return nil, 0, fmt.Errorf("full-text reader: %w", err)
	}
	n, err := rd.DocCount()
	if err != nil {
		rd.Close()
		return nil, 0, fmt.Errorf("full-text doc count: %w", err)
	}
	return rd, n, nil
}

func (ft *Index) score(ctx context.Context, q Terms, p BM25, totals [NumFields]int64, use func(Snapshot, []NumHit) error) error {
	rd, n, err := ft.reader()
	if err != nil {
		return err
	}
	defer rd.Close()
	return scoreAll(ctx, rd, n, queryLists(q, p, totals, n), p, use)
}

// docAtATimeFrom is the number of documents from which scoreAll reads
// the postings document at a time. Below it, a per-document table by
// number (4 bytes a document, plus an entry per match) stays in a core's
// caches and summing term at a time is cheaper (12 % less CPU in the
// memory corpus's BenchmarkSearchFullText, 2,000 memories); at 100k
// messages the two cost the same, at 1M reading in step took a sessions
// query's CPU p50 from 21–28 to 16–17 ms (docs/benchmarks.md).
const docAtATimeFrom = 1 << 17

// scoreAll scores every document of snapshot rd (n documents) that one
// of lists holds, and hands use the hits (in ascending number and in
// chunks from docAtATimeFrom documents on, in no order and at once below).
func scoreAll(ctx context.Context, rd index.IndexReader, n uint64, lists []postingList, p BM25, use func(Snapshot, []NumHit) error) error {
	if n == 0 {
		return use(Snapshot{rd}, nil)
	}
	if n < docAtATimeFrom {
		return scoreTermAtATime(ctx, rd, n, lists, p, use)
	}
	if is, ok := rd.(*scorch.IndexSnapshot); ok {
		return scoreSegments(ctx, is, lists, p, segConfig{cacheFrom: cachedFrom}, use)
	}
	return scoreDocAtATime(ctx, rd, n, lists, p, use)
}

// scoreTermAtATime reads each list's postings in turn, adding each part
// to its document's entry in a dense, pooled table by document number: a
// query of common words touches most documents, where a map by number
// cost a hash, a probe and an allocation for each.
func scoreTermAtATime(ctx context.Context, rd index.IndexReader, n uint64, lists []postingList, p BM25, use func(Snapshot, []NumHit) error) error {
	acc := newAccumulator(n)
	defer accumulators.Put(acc)
	for i := range lists {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := lists[i].addTo(ctx, rd, p, acc); err != nil {
			return err
		}
	}
	hits := make([]NumHit, 0, len(acc.docs))
	for i := range acc.docs {
		a := &acc.docs[i]
		hits = append(hits, NumHit{Num: a.num, Score: a.sum(), Matched: bits.OnesCount64(a.terms)})
	}
	return use(Snapshot{rd}, hits)
}

// addTo adds the list's part to every document its postings hold.
func (l *postingList) addTo(ctx context.Context, rd index.IndexReader, p BM25, acc *accumulator) error {
	tr, err := rd.TermFieldReader(ctx, []byte(l.term), l.tw.field, true, true, false)
	if err != nil {
		return fmt.Errorf("postings of %q: %w", l.term, err)
	}
	defer tr.Close()
	if l.df = tr.Count(); l.df == 0 {
		return nil
	}
	l.idf = l.tw.idf(l.df)
	var tfd index.TermFieldDoc
	for {
		d, err := tr.Next(&tfd)
		if err == nil && d == nil {
			return nil
		}
		var num uint64
		if err == nil {
			num, err = docNum(d)
		}
		if err == nil && num >= math.MaxInt32 {
			err = fmt.Errorf("document number %d, past what a query accumulates", num)
		}
		if err != nil {
			return fmt.Errorf("postings of %q: %w", l.term, err)
		}
		acc.doc(num).add(l.tw.part(d, l.idf, p), l.tw.bit)
	}
}

// accumulator is one query's termAccs, one per document it matched, found
// by document number through a dense index: a query of common words
// touches most documents, where a map by number cost a hash, a probe and
// an allocation for each. Accumulators are pooled, each cleared of what
// its last query touched.
type accumulator struct {
	at   []int32 // by document number: 1 + its index in docs, 0 for none
	docs []termAcc
}

var accumulators = sync.Pool{New: func() any { return &accumulator{} }}

// newAccumulator is an empty accumulator from the pool, its index sized
// for n documents (it grows past them as numbers need).
func newAccumulator(n uint64) *accumulator {
	a := accumulators.Get().(*accumulator)
	for _, d := range a.docs {
		if d.num < uint64(len(a.at)) {
			a.at[d.num] = 0
		}
	}
	a.docs = a.docs[:0]
	if uint64(cap(a.at)) < n {
		a.at = make([]int32, n)
	}
	return a
}

// doc is document num's termAcc, new if the query had not touched it yet.
func (a *accumulator) doc(num uint64) *termAcc {
	if num >= uint64(len(a.at)) {
		a.at = append(a.at, make([]int32, int(num)+1-len(a.at))...)
	}
	if i := a.at[num]; i > 0 {
		return &a.docs[i-1]
	}
	a.docs = append(a.docs, termAcc{num: num})
	a.at[num] = int32(len(a.docs))
	return &a.docs[len(a.docs)-1]
}

// termAcc is one document's BM25 contributions, one per field a query term
// matched in, and which query terms it matched (bit i: query term i),
// summed by sortedSum.
type termAcc struct {
	num   uint64     // the document's number
	few   [4]float64 // the first parts: most documents match few terms
	n     int        // how many of few hold a part
	more  []float64  // every part, once there are more than few holds
	terms uint64
}

func (a *termAcc) add(s float64, bit uint64) {
	a.terms |= bit
	switch {
	case a.more != nil:
		a.more = append(a.more, s)
	case a.n < len(a.few):
		a.few[a.n] = s
		a.n++
	default:
		a.more = append(append(make([]float64, 0, 2*len(a.few)), a.few[:]...), s)
	}
}

// sum is the document's score: the same for the same contributions, in
// whatever order they were added (sortedSum).
func (a *termAcc) sum() float64 {
	parts := a.few[:a.n]
	if a.more != nil {
		parts = a.more
	}
	return sortedSum(parts)
}

// scoreDocAtATime reads every list's postings in step, in ascending
// document number, and sums each document's parts as soon as every list
// has passed it: nothing is kept per document but its hit, and no memory
// is touched at random (summing term at a time into a table by number
// cost more than reading the postings at 1M messages).
func scoreDocAtATime(ctx context.Context, rd index.IndexReader, n uint64, lists []postingList, p BM25, use func(Snapshot, []NumHit) error) error {
	cs := make([]*cursor, 0, len(lists))
	defer func() {
		for _, c := range cs {
			c.tr.Close()
		}
	}()
	var most uint64 // what the hits can number: every list's documents, at most n
	for i := range lists {
		if err := ctx.Err(); err != nil {
			return err
		}
		c, err := openCursor(ctx, rd, &lists[i], p)
		if err != nil || c == nil {
			if err != nil {
				return err
			}
			continue
		}
		cs = append(cs, c)
		most = min(most+lists[i].df, n)
	}
	hits := make([]NumHit, 0, most)
	var parts []float64
	for {
		num := uint64(math.MaxUint64)
		for _, c := range cs {
			num = min(num, c.num)
		}
		if num == math.MaxUint64 {
			return use(Snapshot{rd}, hits)
		}
		if len(hits)%4096 == 4095 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		parts = parts[:0]
		var terms uint64
		for _, c := range cs {
			if c.num == num {
				parts, terms = append(parts, c.part), terms|c.l.tw.bit
				if err := c.next(p); err != nil {
					return err
				}
			}
		}
		hits = append(hits, NumHit{Num: num, Score: sortedSum(parts), Matched: bits.OnesCount64(terms)})
	}
}

// cursor is one list's postings read in step with the others: the
// document it is at (math.MaxUint64 past the last) and its part there.
type cursor struct {
	l    *postingList
	tr   index.TermFieldReader
	tfd  index.TermFieldDoc
	num  uint64
	part float64
}

// openCursor opens l's postings at their first document, setting l's
// document frequency and idf; nil when no document holds the term.
func openCursor(ctx context.Context, rd index.IndexReader, l *postingList, p BM25) (*cursor, error) {
	tr, err := rd.TermFieldReader(ctx, []byte(l.term), l.tw.field, true, true, false)
	if err != nil {
		return nil, fmt.Errorf("postings of %q: %w", l.term, err)
	}
	if l.df = tr.Count(); l.df == 0 {
		tr.Close()
		return nil, nil
	}
	l.idf = l.tw.idf(l.df)
	c := &cursor{l: l, tr: tr}
	if err := c.next(p); err != nil {
		tr.Close()
		return nil, err
	}
	return c, nil
}

// next moves c to its next posting.
func (c *cursor) next(p BM25) error {
	d, err := c.tr.Next(&c.tfd)
	if err == nil && d == nil {
		c.num = math.MaxUint64
		return nil
	}
	if err == nil {
		c.num, err = docNum(d)
	}
	if err != nil {
		return fmt.Errorf("postings of %q: %w", c.l.term, err)
	}
	c.part = c.l.tw.part(d, c.l.idf, p)
	return nil
}

// sortedSum is a document's score from its parts, one per field a query
// term matched in. Floating-point addition is not associative and the
// terms arrive in a map's order, so a running sum could score two
// documents with the same parts a last bit apart, either way round from
// one query to the next, and their tie (which ranking breaks by date,
// then path) would fall by chance. sortedSum adds them in ascending
// order instead: the same for the same parts, in whatever order they
// came. It sorts parts in place.
func sortedSum(parts []float64) float64 {
	switch {
	case len(parts) == 2: // most documents that match more than one list
		if parts[1] < parts[0] {
			parts[0], parts[1] = parts[1], parts[0]
		}
	case len(parts) > 2:
		slices.Sort(parts)
	}
	var s float64
	for _, x := range parts {
		s += x
	}
	return s
}

// postingList is one query term in one field it is scored in: its
// weights, and once its postings are open, how many documents hold it
// and its idf.
type postingList struct {
	tw   termWeight
	term string
	df   uint64
	idf  float64
}

// queryLists is every query term in every field it is scored in (a field
// of weight 0 or of no tokens scores none), in no particular order.
func queryLists(q Terms, p BM25, totals [NumFields]int64, n uint64) []postingList {
	bit := q.bits()
	var lists []postingList
	for fi, field := range textFields {
		w := p.Weights[fi]
		terms, ns := q.en, ""
		if field == fCJK {
			terms, ns = q.cjk, "\x00"
		}
		if w == 0 || len(terms) == 0 || totals[fi] == 0 {
			continue
		}
		avg := float64(totals[fi]) / float64(n)
		for term, qtf := range terms {
			tw := termWeight{field: field, w: w * float64(qtf), n: float64(n), avg: avg, bit: bit[ns+term]}
			lists = append(lists, postingList{tw: tw, term: term})
		}
	}
	return lists
}

// bits numbers the query's terms, one bit each (CJK ones after a NUL, so an
// English and a CJK term never share one), for counting how many a
// document matched.
func (q Terms) bits() map[string]uint64 {
	bit := map[string]uint64{}
	for t := range q.en {
		bit[t] = 1 << min(len(bit), 63)
	}
	for t := range q.cjk {
		bit["\x00"+t] = 1 << min(len(bit), 63)
	}
	return bit
}

// termWeight is what one query term's postings in one field are scored
// with: the field's weight times the term's count in the query, the
// document count and the field's average length, and the term's bit.
type termWeight struct {
	field     string
	w, n, avg float64
	bit       uint64
}

// idf is BM25's inverse document frequency of a term df documents hold.
func (tw termWeight) idf(df uint64) float64 {
	return math.Log(1 + (tw.n-float64(df)+0.5)/(float64(df)+0.5))
}

// part is the term's BM25 contribution to the document of posting d.
func (tw termWeight) part(d *index.TermFieldDoc, idf float64, p BM25) float64 {
	return tw.partOf(float64(d.Freq), d.Norm, idf, p)
}

// partOf is the term's BM25 contribution to a document that holds it tf
// times in a field of norm 1/√length (Bleve's, 0 for none): both ways
// of reading postings score through it, so they agree to the bit.
func (tw termWeight) partOf(tf, norm, idf float64, p BM25) float64 {
	dl := tw.avg
	if norm > 0 {
		dl = 1 / (norm * norm)
	}
	return tw.w * idf * tf * (p.K1 + 1) / (tf + p.K1*(1-p.B+p.B*dl/tw.avg))
}

// docNum is the number of a posting's document.
func docNum(d *index.TermFieldDoc) (uint64, error) {
	if len(d.ID) != 8 {
		return 0, fmt.Errorf("a document number of %d bytes, want 8", len(d.ID))
	}
	num := binary.BigEndian.Uint64(d.ID)
	if num == math.MaxUint64 {
		return 0, fmt.Errorf("document number %d, past what a query reads", num)
	}
	return num, nil
}
