// Package engine keeps a folder of markdown memories searchable: a Bleve BM25
// index for words, chromem-go collections of chunk vectors for meaning, and a bbolt
// state store that remembers what was indexed, so that an incremental sync
// touches only what changed and a deleted file never comes back as a ghost.
package engine

import (
	"errors"
	"time"

	"mnemo/decay"
	"mnemo/engine/admit"
	"mnemo/engine/embed"
	"mnemo/engine/rank"
	"mnemo/engine/store"
	"mnemo/engine/vault"
)

// The query vocabulary is the ranking layer's (engine/rank), which both
// corpora share; these names are the engine's API for it.
type (
	// Mode selects which index answers a query.
	Mode = rank.Mode
	// Sort orders a page of results.
	Sort = rank.Sort
	// Fusion names how Hybrid mode combines the two ranked lists.
	Fusion = rank.Fusion
	// Ranking holds every knob of relevance (see rank.Ranking).
	Ranking = rank.Ranking
)

// The search modes, orders and fusion methods (see engine/rank).
const (
	Hybrid      = rank.Hybrid
	Semantic    = rank.Semantic
	FullText    = rank.FullText
	ByRelevance = rank.ByRelevance
	ByRecency   = rank.ByRecency
	WeightedSum = rank.WeightedSum
	RRF         = rank.RRF
)

// DefaultRanking returns the tuned defaults.
func DefaultRanking() Ranking { return rank.DefaultRanking() }

// Config says where the memories and the index live and how to search them.
// It is filled once at the edge (cmd/, mcp/) and passed down.
type Config struct {
	MemoryDir string // the memory folder; every path is relative to it
	IndexDir  string // where Bleve, the state store and the lock file live

	Decay    decay.Config   // recency weighting
	Embedder embed.Embedder // nil means the built-in static embedder

	Fusion  Fusion   // default WeightedSum
	Ranking *Ranking // nil means DefaultRanking(): what measured best

	MaxFileBytes int64 // files larger than this are skipped; 0 means 10 MiB

	// LouvainGamma is the resolution of the concept graph's communities
	// (MAENIFOLD_LOUVAIN_GAMMA at the edge): 1, the default when 0, is
	// classic modularity; higher gives more, smaller communities.
	LouvainGamma float64

	// ReadOnly opens an existing index without taking the writer lock:
	// Sync, and writes of any kind, return ErrReadOnly.
	ReadOnly bool

	// Progress, if set, is called during Sync with files done and files total.
	Progress func(done, total int)

	// Admit is the process's search gate: every Search waits its turn
	// there, whichever front end it came from. nil admits every search at
	// once (tests, one-shot commands).
	Admit *admit.Gate

	// Clock, if set, replaces time.Now for the times the engine writes
	// (frontmatter created/modified, read times) and the default "now" of
	// decay, so tests can move time instead of waiting for it.
	Clock func() time.Time

	// scorch, in tests and benchmarks, overrides options of the memory
	// index's scorch configuration (writerConfig): a persister held back
	// so a test can kill the process while a write it answered is
	// searchable but not on disk, or merge policies to compare.
	scorch map[string]any
}

// Query is one search request. The zero value of each optional field means
// "no constraint" or "the default". It carries no JSON names: how a front
// end spells a search in JSON (the SearchMemories tool's arguments, a
// search --batch line, the socket's wire form) is that front end's to say
// (mcp/args, cmd/mnemo/remote).
type Query struct {
	Text     string
	Mode     Mode      // default Hybrid
	Page     int       // 1-based; 0 means 1
	PageSize int       // 0 means 10; at most 200
	Folder   string    // only memories under this folder (relative to the memory folder)
	Tags     []string  // only memories that have all of these
	From     time.Time // bounds on created, inclusive; zero means unbounded
	To       time.Time
	MinScore float64   // drop results whose final score is below this
	Sort     Sort      // default ByRelevance
	Now      time.Time // the clock for decay; zero means time.Now()

	// NoSnippets skips reading the page's files for snippets and match
	// counts: for callers that only want ranked paths (batch, benchmarks).
	NoSnippets bool
}

// Page is one page of results.
type Page struct {
	Query    string `json:"query"`
	Mode     Mode   `json:"mode"`
	Page     int    `json:"page"`
	PageSize int    `json:"pageSize"`
	// TotalCount counts the matches on all pages. On an index of more than
	// 5,000 chunks, memories found by meaning alone (no word in common)
	// are counted only as far as filling the requested page needed them:
	// the vector store is not asked for more than the page can use.
	TotalCount          int  `json:"totalCount"`
	TextResultCount     int  `json:"textResultCount"`
	SemanticResultCount int  `json:"semanticResultCount"`
	Indexing            bool `json:"indexing"`
	// Hint explains an empty page when there is more to say than "no
	// match": a semantic or hybrid query none of whose words the embedder knows.
	Hint    string   `json:"hint,omitempty"`
	Results []Result `json:"results"`
}

// Result is one memory in a page of results.
type Result struct {
	URI           string    `json:"uri"`
	Path          string    `json:"path"`
	Title         string    `json:"title"`
	Score         float64   `json:"score"`
	TextScore     float64   `json:"textScore"`
	SemanticScore float64   `json:"semanticScore"`
	Decay         float64   `json:"decay"`
	Snippets      []string  `json:"snippets"`
	MatchCount    int       `json:"matchCount"`
	Created       time.Time `json:"created,omitzero"`
	Modified      time.Time `json:"modified,omitzero"`
	Tags          []string  `json:"tags"`
}

// Memory is one memory file as read by Read.
type Memory struct {
	URI      string         `json:"uri"`
	Path     string         `json:"path"`
	Title    string         `json:"title"`
	Content  string         `json:"content"` // the body, without frontmatter
	Created  time.Time      `json:"created,omitzero"`
	Modified time.Time      `json:"modified,omitzero"`
	Tags     []string       `json:"tags"`
	Links    []string       `json:"links"`
	Meta     map[string]any `json:"meta,omitempty"`
	Checksum string         `json:"checksum"` // SHA-256 of the file, hex
	LastRead time.Time      `json:"lastRead,omitzero"`
}

// Report says what a Sync did.
type Report struct {
	Full      bool          `json:"full"`
	Rebuilt   string        `json:"rebuilt,omitempty"` // why the index was rebuilt unasked (corrupt or older index, new embedder)
	Added     []string      `json:"added"`
	Updated   []string      `json:"updated"`
	Removed   []string      `json:"removed"`
	Unchanged int           `json:"unchanged"`
	Skipped   []Skip        `json:"skipped"`
	Warnings  []Warning     `json:"warnings"`
	Chunks    int           `json:"chunks"` // chunks embedded by this sync
	Scan      time.Duration `json:"scanNs"`
	Index     time.Duration `json:"indexNs"`
	Total     time.Duration `json:"totalNs"`
}

// Skip is a file that was not indexed, and why.
type Skip = store.Skip

// Warning is a problem with a file that was indexed anyway.
type Warning struct {
	Path    string `json:"path"`
	Message string `json:"message"`
}

// Status describes the engine and its indexes.
type Status struct {
	MemoryDir    string    `json:"memoryDir"`
	IndexDir     string    `json:"indexDir"`
	Files        int       `json:"files"`
	Chunks       int       `json:"chunks"`
	Embedder     string    `json:"embedder"`
	Dimensions   int       `json:"dimensions"`
	FullTextSize int64     `json:"fullTextBytes"`
	StateSize    int64     `json:"stateBytes"`
	LastSync     time.Time `json:"lastSync,omitzero"`
	// LastError says why the last sync failed (e.g. the embedder stopped
	// answering part-way); the indexes hold every batch before it.
	LastError string `json:"lastError,omitempty"`
	// EmbedderError says why a remote embedder cannot be reached; full-text
	// search keeps working meanwhile.
	EmbedderError string `json:"embedderError,omitempty"`
	// Indexing is true while a sync runs, and from the moment a first or
	// full sync starts until one completes, even across a crash.
	Indexing bool `json:"indexing"`
	// Unfinished says which first or full sync was cut short (its start
	// time); "" once a sync completes. Searches meanwhile see part of the folder.
	Unfinished string `json:"unfinished,omitempty"`
	// Damaged says what is wrong with a damaged full-text index; the next
	// sync rebuilds it, and until then full-text and hybrid searches fail
	// with ErrIndexDamaged.
	Damaged  string    `json:"damaged,omitempty"`
	ReadOnly bool      `json:"readOnly"`
	Skipped  []Skip    `json:"skipped"`
	Warnings []Warning `json:"warnings"`
	// Graph counts the concept graph: concepts, WikiLinks, communities.
	Graph GraphStatus `json:"graph"`
}

// Errors a caller can test for with errors.Is. Each is wrapped with detail.
var (
	ErrEmptyQuery  = rank.ErrEmptyQuery
	ErrNoTerms     = rank.ErrNoTerms
	ErrBadPage     = rank.ErrBadPage
	ErrBadPageSize = rank.ErrBadPageSize
	ErrBadMode     = rank.ErrBadMode
	ErrBadSort     = rank.ErrBadSort
	ErrBadRange    = rank.ErrBadRange
	ErrBadMinScore = rank.ErrBadMinScore
	ErrOutsideRoot = vault.ErrOutsideRoot
	// ErrNotRegular reports a path that names something other than a
	// regular file — a symbolic link, a folder, a device, a FIFO or a
	// socket — where a memory file was expected. Such entries are left
	// alone: never opened, read, replaced or indexed.
	ErrNotRegular = vault.ErrNotRegular
	ErrNotFound   = errors.New("memory not found")
	// ErrClosed: the engine was closed (its serve is stopping or handing
	// the index over); a change asked of it now was not made.
	ErrClosed = errors.New("index closed: this serve is stopping")
)

// The index-level errors (engine/store holds them for both corpora), named
// here too because they are part of what Open, Sync and Search answer.
var (
	ErrReadOnly          = store.ErrReadOnly
	ErrIndexNotReady     = store.ErrIndexNotReady
	ErrIndexIncompatible = store.ErrIndexIncompatible
	ErrIndexDamaged      = store.ErrIndexDamaged
	ErrInUse             = store.ErrInUse
)
