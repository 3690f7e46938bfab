package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	bolt "go.etcd.io/bbolt"

	"mnemo/decay"
	"mnemo/engine/vault"
	"mnemo/graph"
	"mnemo/markdown"
)

// The concept graph rides along with the indexes: processOne takes each
// file's WikiLinks from the same parse that feeds Bleve and the vectors,
// apply replaces the file's mentions in memory, and commitBatch writes
// them in the same transaction as the file's record, so the graph can
// never disagree with what is indexed. On disk it is postings only, one
// key per concept and file ("concept\x00path" → count and sections in
// bucketGraph); pairs of concepts are never stored.

// Limits of the graph queries: the defaults are maenifold's but for
// Visualize's nodes, 15 rather than 30, which with graph.EdgesPerNode
// keeps a default drawing readable (docs/benchmarks.md, "Visualize");
// the maxima bound what one query can cost.
const (
	DefaultContextDepth  = 2
	MaxContextDepth      = 4
	DefaultMaxEntities   = 20
	MaxEntities          = 100
	DefaultVisualNodes   = 15
	MaxVisualNodes       = 100
	DefaultSimilar       = 10
	MaxSimilar           = 50
	maxSuggestions       = 5
	maxPreviewRunes      = 240
	maxConceptContexts   = 12 // files whose title and sections describe a concept for its vector
	defaultLouvainGamma  = 1.0
	similarEmbedMaxBatch = 256
)

// Errors of the graph queries, for errors.Is.
var (
	ErrUnknownConcept = errors.New("concept not found in the graph")
	ErrBadGraphArg    = errors.New("graph query argument out of range")
)

// Relation is a concept related to the one asked about, as BuildContext
// returns it.
type Relation struct {
	Name string `json:"name"`
	// CoOccurrenceCount is the number of memories that link to both.
	CoOccurrenceCount int `json:"coOccurrenceCount"`
	// Files are up to three of those memories (memory:// URIs), the most
	// recent first.
	Files []string `json:"files"`
	// WeightedScore is the sum of those memories' recency factors (the
	// decay search applies: 1 − strength to 1 each), so fresh
	// co-occurrences count more.
	WeightedScore float64 `json:"weightedScore"`
	CommunityID   int     `json:"communityId"`
	// Via is the concept it was reached from; Depth how many steps out.
	Via   string `json:"via"`
	Depth int    `json:"depth"`
	// ContentPreview is the start of its first file, when asked for.
	ContentPreview string `json:"contentPreview,omitempty"`
}

// ConceptContext is what surrounds a concept: BuildContext's answer.
type ConceptContext struct {
	Concept           string     `json:"concept"`
	CommunityID       int        `json:"communityId"`
	DirectRelations   []Relation `json:"directRelations"`
	ExpandedRelations []Relation `json:"expandedRelations"`
	CommunitySiblings []string   `json:"communitySiblings"`
}

// ContextQuery asks BuildContext about one concept. Zero values take the defaults.
type ContextQuery struct {
	Concept        string    `json:"conceptName"`
	Depth          int       `json:"depth"`       // 1–4, default 2
	MaxEntities    int       `json:"maxEntities"` // 1–100, default 20
	IncludeContent bool      `json:"includeContent"`
	Now            time.Time `json:"now,omitzero"`
}

// Diagram is a concept's neighbourhood drawn as a Mermaid flowchart.
type Diagram struct {
	Concept string `json:"concept"`
	Nodes   int    `json:"nodes"`
	Edges   int    `json:"edges"`
	// HiddenEdges counts the co-occurrences between drawn concepts left
	// out so the drawing stays readable (graph.EdgesPerNode).
	HiddenEdges int    `json:"hiddenEdges"`
	Mermaid     string `json:"mermaid"`
}

// SimilarConcept is one concept like another in meaning.
type SimilarConcept struct {
	Name       string  `json:"name"`
	Similarity float64 `json:"similarity"` // cosine of the concept vectors, 0–1
}

// Similar is FindSimilarConcepts' answer.
type Similar struct {
	Concept string           `json:"concept"`
	Similar []SimilarConcept `json:"similar"`
}

// ConceptInfo is one concept with its totals.
type ConceptInfo struct {
	Name     string `json:"name"`
	Mentions int    `json:"mentions"` // WikiLinks to it
	Files    int    `json:"files"`    // memories that link to it
}

// FileConcept is one concept a memory links to.
type FileConcept struct {
	Name     string   `json:"name"`
	Count    int      `json:"count"`
	Sections []string `json:"sections"`
}

// FileConcepts is what one memory links to: ExtractConceptsFromFile's answer.
type FileConcepts struct {
	URI      string        `json:"uri"`
	Path     string        `json:"path"`
	Concepts []FileConcept `json:"concepts"`
}

// GraphStatus counts the concept graph for Status.
type GraphStatus struct {
	Concepts    int `json:"concepts"`
	Mentions    int `json:"mentions"`    // WikiLinks over all memories
	Communities int `json:"communities"` // -1 until first computed
	// LinkRules names the tool whose link rules the vault is read by:
	// obsidian (also Foam's), logseq or dendron (detectFlavor).
	LinkRules string `json:"linkRules"`
	// Stale says why the graph (with the rest of the index) must be
	// rebuilt by the next sync, when it must: until then graph queries
	// refuse with ErrIndexNotReady and these counts are the old index's.
	Stale string `json:"stale,omitempty"`
}

// graphState is the engine's share of the graph: the graph itself is
// guarded by Engine.mu like the rest of the index; communities and concept
// vectors are derived from it and cached until it changes.
type graphState struct {
	g   *graph.Graph
	off bool // not fed: only the benchmark that measures sync without the graph sets it

	commMu sync.Mutex                        // one Louvain at a time
	comm   atomic.Pointer[graph.Communities] // the latest computed; Status reads it without locks

	simMu      sync.Mutex               // guards simVecs and simVersion; one refresh at a time
	simVecs    map[string]conceptVector // concept → its vector and the text it was embedded from
	simVersion uint64                   // the graph version simVecs describe
}

type conceptVector struct {
	text string
	vec  []float32
}

// graphMentions turns a parsed file's links into the graph's mentions.
func graphMentions(doc *markdown.Doc) []graph.Mention {
	if len(doc.Mentions) == 0 {
		return nil
	}
	out := make([]graph.Mention, len(doc.Mentions))
	for i, m := range doc.Mentions {
		out[i] = graph.Mention{Concept: m.Concept, Count: m.Count, Sections: m.Sections}
	}
	return out
}

// graphChange is one file's new postings, with the concepts whose old
// postings must go, and the names it declares.
type graphChange struct {
	drop  []string        // concepts the file mentioned before, as written
	put   []graph.Mention // what it mentions now, as written; nil if nothing (or removed)
	names graphNames      // its concept and aliases; zero if none (or removed)
}

// graphNames is what a file declares about names: the concept it stands
// for and its aliases (graph.SetNames). Stored only for a file with aliases.
type graphNames struct {
	Concept string   `json:"c"`
	Aliases []string `json:"a"`
}

// namesKey is the state store key of a file's declared names: a 0 byte
// (no concept is empty, so no posting key starts with one) and the path.
func namesKey(path string) []byte { return append([]byte{0}, path...) }

// graphChangeFor is what an outcome does to the graph: nothing for a file
// whose content did not change, its new mentions for one (re)indexed, and
// none for one removed or skipped.
func (e *Engine) graphChangeFor(o outcome) *graphChange {
	if o.touched || e.gs.off {
		return nil
	}
	e.mu.RLock()
	old := e.gs.g.FileLinks(o.path)
	e.mu.RUnlock()
	c := &graphChange{}
	for _, m := range old {
		c.drop = append(c.drop, m.Concept)
	}
	if o.doc != nil && o.skip == "" && !o.removed {
		c.put = o.links
		if len(o.aliases) > 0 {
			c.names = graphNames{Concept: o.concept, Aliases: o.aliases}
		}
	}
	return c
}

// applyGraph applies a batch's changes to the graph in memory. The caller
// holds e.mu.
func (e *Engine) applyGraph(changes []change) {
	for _, c := range changes {
		if c.graph != nil {
			e.gs.g.SetNames(c.path, c.graph.names.Concept, c.graph.names.Aliases)
			e.gs.g.Set(c.path, c.graph.put)
		}
	}
}

// putGraph writes one file's graph change in the commit's transaction.
func putGraph(tx *bolt.Tx, path string, c *graphChange) error {
	if c == nil {
		return nil
	}
	b := tx.Bucket(bucketGraph)
	if err := b.Delete(namesKey(path)); err != nil {
		return err
	}
	if len(c.names.Aliases) > 0 {
		v, err := json.Marshal(c.names)
		if err != nil {
			return err
		}
		if err := b.Put(namesKey(path), v); err != nil {
			return err
		}
	}
	for _, concept := range c.drop {
		if err := b.Delete(graphKey(concept, path)); err != nil {
			return err
		}
	}
	for _, m := range c.put {
		v, err := json.Marshal(posting{Count: m.Count, Sections: m.Sections})
		if err != nil {
			return err
		}
		if err := b.Put(graphKey(m.Concept, path), v); err != nil {
			return err
		}
	}
	return nil
}

// posting is the stored value of one concept–file key.
type posting struct {
	Count    int      `json:"n"`
	Sections []string `json:"s,omitempty"`
}

func graphKey(concept, path string) []byte {
	k := make([]byte, 0, len(concept)+1+len(path))
	k = append(k, concept...)
	k = append(k, 0)
	return append(k, path...)
}

// loadGraph rebuilds the graph from its postings. Postings of files the
// state does not hold (left by a batch a crash interrupted, which Open
// undid) are dropped, from the store too unless read-only.
func (e *Engine) loadGraph() error {
	byFile := map[string][]graph.Mention{}
	names := map[string]graphNames{}
	var orphans [][]byte
	err := e.st.db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketGraph)
		if b == nil {
			return nil
		}
		return b.ForEach(func(k, v []byte) error {
			i := slices.Index(k, 0)
			if i == 0 {
				var n graphNames
				if _, ok := e.files[string(k[1:])]; !ok || json.Unmarshal(v, &n) != nil {
					orphans = append(orphans, slices.Clone(k))
					return nil
				}
				names[string(k[1:])] = n
				return nil
			}
			if i < 0 {
				orphans = append(orphans, slices.Clone(k))
				return nil
			}
			concept, path := string(k[:i]), string(k[i+1:])
			var p posting
			if _, ok := e.files[path]; !ok || json.Unmarshal(v, &p) != nil {
				orphans = append(orphans, slices.Clone(k))
				return nil
			}
			byFile[path] = append(byFile[path], graph.Mention{Concept: concept, Count: p.Count, Sections: p.Sections})
			return nil
		})
	})
	if err != nil {
		return fmt.Errorf("load concept graph: %w", err)
	}
	e.gs.g = graph.New()
	for path, n := range names {
		e.gs.g.SetNames(path, n.Concept, n.Aliases)
	}
	for path, ms := range byFile {
		e.gs.g.Set(path, ms)
	}
	if len(orphans) > 0 && !e.cfg.ReadOnly {
		return e.st.db.Update(func(tx *bolt.Tx) error {
			b := tx.Bucket(bucketGraph)
			for _, k := range orphans {
				if err := b.Delete(k); err != nil {
					return fmt.Errorf("drop stale concept posting: %w", err)
				}
			}
			return nil
		})
	}
	return nil
}

// graphReady fails when the graph cannot be trusted to be complete: no
// sync has finished, or the index must be rebuilt. The caller holds e.mu.
func (e *Engine) graphReady() error {
	switch {
	case e.needFull != "":
		return fmt.Errorf("%w: the index must be rebuilt first (%s)", ErrIndexNotReady, e.needFull)
	case e.lastSync.IsZero() && len(e.files) == 0:
		return ErrIndexNotReady
	}
	return nil
}

// concept normalises a name as links are, resolves an alias to the
// concept it names, and checks it is known. An unknown name gives an
// *unknownConcept with the known names nearest in spelling; the caller,
// once it has let go of e.mu, adds those nearest in meaning
// (suggestByMeaning). The caller holds e.mu.
func (e *Engine) concept(name string) (string, error) {
	if err := e.graphReady(); err != nil {
		return "", err
	}
	c := markdown.NormalizeConcept(name)
	if c == "" {
		return "", fmt.Errorf("conceptName is required: %w", ErrBadGraphArg)
	}
	asked := c
	c = e.gs.g.Resolve(c)
	if e.gs.g.Has(c) {
		return c, nil
	}
	u := &unknownConcept{name: name, concept: c, spelling: e.gs.g.Nearest(c, maxSuggestions), empty: e.gs.g.Len() == 0}
	if c != asked {
		u.aliasOf = asked
	}
	return "", u
}

// unknownConcept is the error for a name no memory links to, with the
// known concepts nearest to it in spelling and in meaning.
type unknownConcept struct {
	name, concept     string
	aliasOf           string // the alias asked for, when concept is what it names
	spelling, meaning []string
	meaningErr        error // why there are no suggestions by meaning, if it failed
	empty             bool  // the graph has no concept at all
}

func (u *unknownConcept) Error() string {
	msg := fmt.Sprintf("%q: no memory links to [[%s]]", u.name, u.concept)
	if u.aliasOf != "" {
		msg += fmt.Sprintf(" (%s is an alias of it)", u.aliasOf)
	}
	switch {
	case u.empty:
		msg += "; no memory has any [[WikiLink]] yet"
	case len(u.spelling)+len(u.meaning) == 0:
		msg += "; no known concept is near it in spelling or meaning"
	}
	if len(u.spelling) > 0 {
		msg += "; nearest known concepts: " + strings.Join(u.spelling, ", ")
	}
	if len(u.meaning) > 0 {
		msg += "; near in meaning: " + strings.Join(u.meaning, ", ")
	}
	if u.meaningErr != nil {
		msg += fmt.Sprintf(" (no suggestions by meaning: %v)", u.meaningErr)
	}
	return msg + ": " + ErrUnknownConcept.Error()
}

func (u *unknownConcept) Unwrap() error { return ErrUnknownConcept }

// suggestByMeaning adds to an unknown-concept error the concepts of the
// memories nearest to the name in meaning: a semantic search (the
// configured embedder, as SearchMemories' Semantic mode) for the name,
// and for each of the first memories found, in order, the concept it
// stands for if it is one, then the concepts it links to most. A concept
// vector (FindSimilarConcepts') of a name nobody links to has no context
// to lean on, and on the bundled vault ranking them put unrelated
// concepts first; the memories' own chunks are what search is good at.
// err is returned as it is if it is not an unknown concept. The caller
// does not hold e.mu.
func (e *Engine) suggestByMeaning(ctx context.Context, err error) error {
	var u *unknownConcept
	if !errors.As(err, &u) || u.empty {
		return err
	}
	page, serr := e.search(ctx, Query{Text: strings.ReplaceAll(u.concept, "-", " "), Mode: Semantic, PageSize: maxSuggestions, NoSnippets: true})
	if serr != nil {
		u.meaningErr = serr
		return u
	}
	seen := map[string]bool{}
	for _, s := range u.spelling {
		seen[s] = true
	}
	e.mu.RLock()
	defer e.mu.RUnlock()
	add := func(c string) {
		if len(u.meaning) < maxSuggestions && !seen[c] && e.gs.g.Has(c) {
			seen[c] = true
			u.meaning = append(u.meaning, c)
		}
	}
	for _, r := range page.Results {
		add(e.gs.g.Resolve(markdown.NoteConcept(r.Path, e.flavor)))
		ms := e.gs.g.FileMentions(r.Path)
		slices.SortStableFunc(ms, func(a, b graph.Mention) int { return b.Count - a.Count })
		for _, m := range ms {
			add(m.Concept)
		}
	}
	return u
}

// fileWeight is the recency factor of a memory, exactly as search applies
// it (decay.Config.Factor: 1 − strength + strength·weight, in
// [1 − strength, 1]), so a co-occurrence in a fresh memory counts a little
// more than one in an old memory, by the same settings. The caller holds e.mu.
func (e *Engine) fileWeight(now time.Time) graph.Weight {
	return func(path string) float64 {
		r := e.files[path]
		if r == nil {
			return 0
		}
		return e.cfg.Decay.Factor(path, decay.Reference(e.reads[path], r.Created, r.mtime()), now)
	}
}

// BuildContext walks the graph out from one concept: the concepts that
// share memories with it (direct), theirs (expanded, up to Depth steps),
// and the other members of its community.
func (e *Engine) BuildContext(ctx context.Context, q ContextQuery) (ConceptContext, error) {
	if q.Depth == 0 {
		q.Depth = DefaultContextDepth
	}
	if q.MaxEntities == 0 {
		q.MaxEntities = DefaultMaxEntities
	}
	if q.Depth < 1 || q.Depth > MaxContextDepth {
		return ConceptContext{}, fmt.Errorf("depth must be between 1 and %d (got %d): %w", MaxContextDepth, q.Depth, ErrBadGraphArg)
	}
	if q.MaxEntities < 1 || q.MaxEntities > MaxEntities {
		return ConceptContext{}, fmt.Errorf("maxEntities must be between 1 and %d (got %d): %w", MaxEntities, q.MaxEntities, ErrBadGraphArg)
	}
	if q.Now.IsZero() {
		q.Now = e.now()
	}
	comm, err := e.communities(ctx)
	if err != nil {
		return ConceptContext{}, err
	}
	e.mu.RLock()
	c, err := e.concept(q.Concept)
	if err != nil {
		e.mu.RUnlock()
		return ConceptContext{}, e.suggestByMeaning(ctx, err)
	}
	gc, _ := e.gs.g.Context(c, graph.ContextOptions{
		Depth: q.Depth, MaxEntities: q.MaxEntities, Weight: e.fileWeight(q.Now), Communities: comm,
	})
	e.mu.RUnlock()
	out := ConceptContext{
		Concept: gc.Concept, CommunityID: communityOf(comm, c),
		DirectRelations: e.relations(comm, gc.Direct), ExpandedRelations: e.relations(comm, gc.Expanded),
		CommunitySiblings: gc.Siblings,
	}
	if q.IncludeContent {
		previews := map[string]string{}
		for _, rs := range [][]Relation{out.DirectRelations, out.ExpandedRelations} {
			for i := range rs {
				if len(rs[i].Files) == 0 {
					continue
				}
				uri := rs[i].Files[0]
				if _, ok := previews[uri]; !ok {
					previews[uri] = e.preview(uri)
				}
				rs[i].ContentPreview = previews[uri]
			}
		}
	}
	return out, nil
}

func communityOf(c *graph.Communities, concept string) int {
	if id, ok := c.Of(concept); ok {
		return id
	}
	return -1
}

func (e *Engine) relations(comm *graph.Communities, rs []graph.Relation) []Relation {
	out := make([]Relation, 0, len(rs))
	for _, r := range rs {
		files := make([]string, len(r.Files))
		for i, f := range r.Files {
			files[i] = URI(f)
		}
		out = append(out, Relation{
			Name: r.Name, CoOccurrenceCount: r.CoOccurrence, Files: files,
			WeightedScore: math.Round(r.Weighted*1e6) / 1e6, CommunityID: communityOf(comm, r.Name),
			Via: r.Via, Depth: r.Depth,
		})
	}
	return out
}

// preview is the start of a memory's body, on one line; "" if unreadable.
func (e *Engine) preview(uri string) string {
	m, err := e.memoryAt(vault.RelOfURI(uri))
	if err != nil {
		return ""
	}
	s := strings.Join(strings.Fields(m.Content), " ")
	if utf8.RuneCountInString(s) <= maxPreviewRunes {
		return s
	}
	return string([]rune(s)[:maxPreviewRunes]) + "…"
}

// Visualize draws a concept's neighbourhood, up to depth steps out and
// maxNodes concepts, as a Mermaid flowchart whose node ids are safe and
// whose labels are escaped, so that any concept name renders.
func (e *Engine) Visualize(ctx context.Context, concept string, depth, maxNodes int) (Diagram, error) {
	if depth == 0 {
		depth = DefaultContextDepth
	}
	if maxNodes == 0 {
		maxNodes = DefaultVisualNodes
	}
	if depth < 1 || depth > MaxContextDepth {
		return Diagram{}, fmt.Errorf("depth must be between 1 and %d (got %d): %w", MaxContextDepth, depth, ErrBadGraphArg)
	}
	if maxNodes < 1 || maxNodes > MaxVisualNodes {
		return Diagram{}, fmt.Errorf("maxNodes must be between 1 and %d (got %d): %w", MaxVisualNodes, maxNodes, ErrBadGraphArg)
	}
	e.mu.RLock()
	c, err := e.concept(concept)
	if err != nil {
		e.mu.RUnlock()
		return Diagram{}, e.suggestByMeaning(ctx, err)
	}
	p, _ := e.gs.g.Picture(c, depth, maxNodes, e.fileWeight(e.now()))
	e.mu.RUnlock()
	return Diagram{Concept: c, Nodes: len(p.Nodes), Edges: len(p.Edges), HiddenEdges: p.Hidden, Mermaid: p.Mermaid()}, nil
}

// Concepts lists every concept, most mentioned first.
func (e *Engine) Concepts(ctx context.Context) ([]ConceptInfo, error) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	if err := e.graphReady(); err != nil {
		return nil, err
	}
	cs := e.gs.g.Concepts()
	out := make([]ConceptInfo, len(cs))
	for i, c := range cs {
		out[i] = ConceptInfo{Name: c.Name, Mentions: c.Mentions, Files: c.Files}
	}
	return out, nil
}

// FileConcepts lists the concepts one memory (any identifier Resolve
// takes) links to, as indexed.
func (e *Engine) FileConcepts(ctx context.Context, id string) (FileConcepts, error) {
	rel, err := e.Resolve(id)
	if err != nil {
		return FileConcepts{}, err
	}
	e.mu.RLock()
	defer e.mu.RUnlock()
	if err := e.graphReady(); err != nil {
		return FileConcepts{}, err
	}
	if _, ok := e.files[rel]; !ok {
		why := "not indexed yet (run sync)"
		if s, ok := e.skips[rel]; ok {
			why = "not indexed: " + s
		}
		return FileConcepts{}, fmt.Errorf("%s is %s: %w", rel, why, ErrIndexNotReady)
	}
	out := FileConcepts{URI: URI(rel), Path: rel, Concepts: []FileConcept{}}
	for _, m := range e.gs.g.FileMentions(rel) {
		out.Concepts = append(out.Concepts, FileConcept{Name: m.Concept, Count: m.Count, Sections: nonNilStrings(m.Sections)})
	}
	slices.SortStableFunc(out.Concepts, func(a, b FileConcept) int { return b.Count - a.Count })
	return out, nil
}

func nonNilStrings(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// graphStatus counts the graph. The caller holds e.mu.
func (e *Engine) graphStatus() GraphStatus {
	s := GraphStatus{Concepts: e.gs.g.Len(), Mentions: e.gs.g.Links(), Communities: -1, LinkRules: e.flavor.String(), Stale: e.needFull}
	if c := e.gs.comm.Load(); c != nil && c.Version == e.gs.g.Version() {
		s.Communities = c.Len()
	}
	return s
}

// communities are the graph's Louvain communities, recomputed when the
// graph has changed since they were last computed: after each sync, and
// lazily after edits. The snapshot is taken under the read lock; Louvain
// runs outside it, so searches and syncs go on meanwhile.
func (e *Engine) communities(ctx context.Context) (*graph.Communities, error) {
	e.gs.commMu.Lock()
	defer e.gs.commMu.Unlock()
	e.mu.RLock()
	if c := e.gs.comm.Load(); c != nil && c.Version == e.gs.g.Version() {
		e.mu.RUnlock()
		return c, nil
	}
	net := e.gs.g.Network()
	e.mu.RUnlock()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	gamma := e.cfg.LouvainGamma
	if gamma == 0 {
		gamma = defaultLouvainGamma
	}
	c := graph.Louvain(net, gamma)
	e.gs.comm.Store(c)
	return c, nil
}

// FindSimilarConcepts ranks the other concepts by the cosine of their
// concept vectors. A concept's vector is the configured embedder's vector
// of its name followed by its contexts: the titles and section headings of
// the memories that link to it most. Vectors are cached, and re-embedded
// only when that text changes.
func (e *Engine) FindSimilarConcepts(ctx context.Context, concept string, maxResults int) (Similar, error) {
	if maxResults == 0 {
		maxResults = DefaultSimilar
	}
	if maxResults < 1 || maxResults > MaxSimilar {
		return Similar{}, fmt.Errorf("maxResults must be between 1 and %d (got %d): %w", MaxSimilar, maxResults, ErrBadGraphArg)
	}
	e.mu.RLock()
	c, err := e.concept(concept)
	e.mu.RUnlock()
	if err != nil {
		return Similar{}, e.suggestByMeaning(ctx, err)
	}
	vecs, err := e.conceptVectorsNow(ctx)
	if err != nil {
		return Similar{}, err
	}
	target, ok := vecs[c]
	if !ok {
		return Similar{}, fmt.Errorf("%q left the graph while it was being compared: %w", c, ErrUnknownConcept)
	}
	out := Similar{Concept: c, Similar: []SimilarConcept{}}
	for name, v := range vecs {
		if name == c {
			continue
		}
		out.Similar = append(out.Similar, SimilarConcept{Name: name, Similarity: math.Round(cosine(target.vec, v.vec)*1e4) / 1e4})
	}
	sortSimilar(out.Similar)
	out.Similar = out.Similar[:min(len(out.Similar), maxResults)]
	return out, nil
}

// sortSimilar orders concepts most similar first, then by name.
func sortSimilar(s []SimilarConcept) {
	slices.SortFunc(s, func(a, b SimilarConcept) int {
		if a.Similarity != b.Similarity {
			if a.Similarity > b.Similarity {
				return -1
			}
			return 1
		}
		return strings.Compare(a.Name, b.Name)
	})
}

// conceptVectorsNow returns a vector for every concept of the graph as it
// is: the cached ones when the graph has not changed since they were
// made, else those re-embedded whose text changed. It takes e.mu itself.
func (e *Engine) conceptVectorsNow(ctx context.Context) (map[string]conceptVector, error) {
	e.mu.RLock()
	version := e.gs.g.Version()
	var texts map[string]string
	if !e.gs.simFresh(version) {
		// Any change to a file that links to something bumps the version,
		// so the texts (titles and sections included) only change with it.
		texts = make(map[string]string, e.gs.g.Len())
		for _, ci := range e.gs.g.Concepts() {
			texts[ci.Name] = e.conceptText(ci.Name)
		}
	}
	e.mu.RUnlock()
	return e.conceptVectors(ctx, version, texts)
}

// conceptText is what a concept's vector is embedded from: its name in
// words, then the titles and section headings of the memories that link
// to it most (at most maxConceptContexts). The caller holds e.mu.
func (e *Engine) conceptText(concept string) string {
	var b strings.Builder
	b.WriteString(strings.ReplaceAll(concept, "-", " "))
	for _, a := range e.gs.g.Aliases(concept) {
		b.WriteString(", ")
		b.WriteString(strings.ReplaceAll(a, "-", " "))
	}
	ps := e.gs.g.Postings(concept)
	slices.SortStableFunc(ps, func(x, y graph.Posting) int { return y.Count - x.Count })
	for _, p := range ps[:min(len(ps), maxConceptContexts)] {
		b.WriteString("\n")
		if r := e.files[p.Path]; r != nil {
			b.WriteString(r.Title)
		}
		for _, s := range p.Sections {
			b.WriteString(" — ")
			b.WriteString(s)
		}
	}
	return b.String()
}

// simFresh reports whether the cached concept vectors are those of the
// graph at version.
func (gs *graphState) simFresh(version uint64) bool {
	gs.simMu.Lock()
	defer gs.simMu.Unlock()
	return gs.simVecs != nil && gs.simVersion == version
}

// conceptVectors returns a vector for every concept of the graph at
// version: the cached ones if texts is nil (simFresh said so), else
// embedding those whose text is new or changed and forgetting concepts
// that are gone.
func (e *Engine) conceptVectors(ctx context.Context, version uint64, texts map[string]string) (map[string]conceptVector, error) {
	e.gs.simMu.Lock()
	defer e.gs.simMu.Unlock()
	if texts == nil && e.gs.simVecs != nil {
		// Fresh when asked, or refreshed since by a query on a newer graph.
		return maps.Clone(e.gs.simVecs), nil
	}
	if e.gs.simVecs == nil {
		e.gs.simVecs = map[string]conceptVector{}
	}
	for name := range e.gs.simVecs {
		if _, ok := texts[name]; !ok {
			delete(e.gs.simVecs, name)
		}
	}
	var names []string
	for name, t := range texts {
		if cv, ok := e.gs.simVecs[name]; !ok || cv.text != t {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	for i := 0; i < len(names); i += similarEmbedMaxBatch {
		batch := names[i:min(i+similarEmbedMaxBatch, len(names))]
		in := make([]string, len(batch))
		for j, n := range batch {
			in[j] = texts[n]
		}
		vs, err := e.emb.Embed(ctx, in)
		if err != nil {
			return nil, fmt.Errorf("embed concepts: %w", err)
		}
		if len(vs) != len(batch) {
			return nil, fmt.Errorf("embed concepts: embedder %s returned %d vectors for %d texts", e.emb.Name(), len(vs), len(batch))
		}
		for j, n := range batch {
			e.gs.simVecs[n] = conceptVector{text: texts[n], vec: vs[j]}
		}
	}
	e.gs.simVersion = version
	return maps.Clone(e.gs.simVecs), nil
}

// cosine is the cosine similarity of a and b clipped to 0–1: opposite or
// unrelated vectors are 0, and a zero vector is like nothing.
func cosine(a, b []float32) float64 {
	if len(a) != len(b) {
		return 0
	}
	var dot, na, nb float64
	for i := range a {
		x, y := float64(a[i]), float64(b[i])
		dot += x * y
		na += x * x
		nb += y * y
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return max(0, min(1, dot/math.Sqrt(na*nb)))
}
