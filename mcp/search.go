package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"

	"mnemo/engine"
	"mnemo/mcp/args"
)

// Argument limits shared by the tools, beyond the engine's own bounds
// (engine.MaxPage, engine.MaxPageSize, engine.MaxTags, …), which the
// schemas state as the engine declares them.
const (
	maxQueryChars = 4096
	maxPathBytes  = 4096 // identifiers, folders, destinations
)

// searchArgs are the SearchMemories arguments, in the order the schema
// lists them, with what each means to the agent. The arguments decode into
// args.Query (its JSON names are these); "now" and "noSnippets" are
// args.Query fields the tool does not offer.
var searchArgs = []struct{ name, desc string }{
	{"query", "what to look for: words, a phrase or a question"},
	{"mode", "Hybrid (words and meaning, the default), Semantic (meaning) or FullText (words); case-insensitive"},
	{"pageSize", "results per page, 1 to 200"},
	{"page", "which page, from 1"},
	{"folder", "only memories under this folder, relative to the memory folder"},
	{"tags", "only memories that have all of these tags"},
	{"minScore", "drop results whose score is below this, 0 to 1"},
	{"from", "only memories created on or after this date: YYYY-MM-DD or RFC 3339"},
	{"to", "only memories created on or before this date (a whole day if YYYY-MM-DD)"},
	{"sort", "relevance (the default) or recency (most recently modified first)"},
}

type searchOut struct {
	Mode                string         `json:"mode" jsonschema:"Hybrid, Semantic or FullText"`
	Query               string         `json:"query"`
	TotalCount          int            `json:"totalCount" jsonschema:"matches on all pages"`
	Page                int            `json:"page"`
	PageSize            int            `json:"pageSize"`
	TextResultCount     int            `json:"textResultCount" jsonschema:"matches found by words"`
	SemanticResultCount int            `json:"semanticResultCount" jsonschema:"matches found by meaning"`
	Indexing            bool           `json:"indexing" jsonschema:"the index is being built; results may be incomplete"`
	Results             []searchResult `json:"results"`
	Truncated           bool           `json:"truncated,omitempty" jsonschema:"results were cut to fit the response limit"`
	Hint                string         `json:"hint,omitempty" jsonschema:"why an empty page is empty, when there is more to say than no match"`
	Note                string         `json:"note,omitempty"`
}

type searchResult struct {
	URI           string    `json:"uri" jsonschema:"pass to ReadMemory"`
	Title         string    `json:"title"`
	Score         float64   `json:"score" jsonschema:"0 to 1, recency decay applied"`
	TextScore     float64   `json:"textScore" jsonschema:"BM25, normalised to 0 to 1"`
	SemanticScore float64   `json:"semanticScore" jsonschema:"cosine similarity, 0 to 1"`
	Snippets      []string  `json:"snippets" jsonschema:"passages that match, matches in **bold**"`
	MatchCount    int       `json:"matchCount" jsonschema:"query terms found in the memory"`
	Created       time.Time `json:"created,omitzero"`
	Modified      time.Time `json:"modified,omitzero"`
	Tags          []string  `json:"tags"`
}

func (o *searchOut) units() int { return len(o.Results) }

func (o *searchOut) keep(n int) {
	if n >= len(o.Results) {
		return
	}
	o.Note = fmt.Sprintf("response cut to %d of %d results to stay under the response size limit; ask for a smaller pageSize", n, len(o.Results))
	o.Results, o.Truncated = o.Results[:n], true
}

// modeNames are the spellings the tool speaks, as the issue and maenifold do.
var modeNames = map[engine.Mode]string{engine.Hybrid: "Hybrid", engine.Semantic: "Semantic", engine.FullText: "FullText"}

func (s *server) searchTool() tool[args.Query, searchOut] {
	return tool[args.Query, searchOut]{
		name:  "SearchMemories",
		title: "Search memories",
		desc: "Search the memory folder by words and meaning. Returns ranked memories with scores (0 to 1, recent memories ranked a little higher) and matching snippets. " +
			"Filter by folder, tags (all must match), creation dates and a minimum score; page through results. Searching does not count as reading: use ReadMemory on a result to open it.",
		readOnly:   true,
		idempotent: true,
		schema: func(in *jsonschema.Schema) {
			props := map[string]*jsonschema.Schema{}
			in.PropertyOrder = nil
			for _, a := range searchArgs {
				p := property(in, a.name)
				p.Description = a.desc
				props[a.name] = p
				in.PropertyOrder = append(in.PropertyOrder, a.name)
			}
			in.Properties = props
			property(in, "query").MaxLength = ptr(maxQueryChars)
			m := property(in, "mode")
			m.Default = json.RawMessage(`"Hybrid"`)
			m.Examples = []any{"Hybrid", "Semantic", "FullText"}
			ps := property(in, "pageSize")
			ps.Default, ps.Minimum, ps.Maximum = json.RawMessage("10"), ptr(1.0), ptr(float64(engine.MaxPageSize))
			p := property(in, "page")
			p.Default, p.Minimum, p.Maximum = json.RawMessage("1"), ptr(1.0), ptr(float64(engine.MaxPage))
			ms := property(in, "minScore")
			ms.Minimum, ms.Maximum = ptr(0.0), ptr(1.0)
			property(in, "tags").MaxItems = ptr(engine.MaxTags)
			st := property(in, "sort")
			st.Default, st.Enum = json.RawMessage(`"relevance"`), []any{"relevance", "recency"}
		},
		run:  s.search,
		text: searchText,
	}
}

func (s *server) search(ctx context.Context, in *args.Query) (*searchOut, error) {
	q := (*engine.Query)(in)
	switch {
	case strings.TrimSpace(q.Text) == "":
		return nil, fmt.Errorf("query is required")
	case utf8.RuneCountInString(q.Text) > maxQueryChars:
		return nil, fmt.Errorf("query is %d characters, over the limit of %d", utf8.RuneCountInString(q.Text), maxQueryChars)
	case q.Page < 1 || q.Page > engine.MaxPage:
		return nil, fmt.Errorf("page must be between 1 and %d (got %d)", engine.MaxPage, q.Page)
	case q.PageSize < 1 || q.PageSize > engine.MaxPageSize:
		return nil, fmt.Errorf("pageSize must be between 1 and %d (got %d)", engine.MaxPageSize, q.PageSize)
	case len(q.Folder) > maxPathBytes:
		return nil, fmt.Errorf("folder is %d bytes, over the %d-byte limit", len(q.Folder), maxPathBytes)
	case len(q.Tags) > engine.MaxTags:
		return nil, fmt.Errorf("%d tags, over the limit of %d", len(q.Tags), engine.MaxTags)
	}
	p, err := s.eng.Search(ctx, *q)
	if errors.Is(err, engine.ErrIndexNotReady) {
		// Before its first sync has begun: the server always syncs at
		// start, so "run sync" would send the model after a step that is
		// already happening. An empty page that says so is the truth.
		return &searchOut{Mode: modeNames[engine.Mode(strings.ToLower(string(q.Mode)))], Query: q.Text, Page: q.Page, PageSize: q.PageSize, Indexing: true,
			Results: []searchResult{}, Hint: "the index is being built (the server's first sync has not finished): retry in a moment"}, nil
	}
	if err != nil {
		return nil, err
	}
	out := &searchOut{
		Mode: modeNames[p.Mode], Query: p.Query, TotalCount: p.TotalCount, Page: p.Page, PageSize: p.PageSize,
		TextResultCount: p.TextResultCount, SemanticResultCount: p.SemanticResultCount, Indexing: p.Indexing, Hint: p.Hint,
		Results: make([]searchResult, 0, len(p.Results)),
	}
	for _, r := range p.Results {
		snips := make([]string, 0, len(r.Snippets))
		for _, sn := range r.Snippets {
			snips = append(snips, clip(sn, s.opts.MaxSnippetBytes))
		}
		out.Results = append(out.Results, searchResult{
			URI: r.URI, Title: r.Title, Score: r.Score, TextScore: r.TextScore, SemanticScore: r.SemanticScore,
			Snippets: snips, MatchCount: r.MatchCount, Created: r.Created, Modified: r.Modified, Tags: r.Tags,
		})
	}
	return out, nil
}

func searchText(o *searchOut) string {
	var b strings.Builder
	if len(o.Results) == 0 {
		if o.TotalCount > 0 {
			fmt.Fprintf(&b, "No results on page %d for %q (%s); %d in all.", o.Page, o.Query, o.Mode, o.TotalCount)
		} else {
			fmt.Fprintf(&b, "No memories match %q (%s).", o.Query, o.Mode)
		}
	} else {
		first := (o.Page-1)*o.PageSize + 1
		verb := "memories match"
		if o.TotalCount == 1 {
			verb = "memory matches"
		}
		fmt.Fprintf(&b, "%d %s %q (%s); results %d–%d:\n", o.TotalCount, verb, o.Query, o.Mode, first, first+len(o.Results)-1)
		for i, r := range o.Results {
			fmt.Fprintf(&b, "%d. %s — %s (score %.2f)\n", first+i, r.Title, r.URI, r.Score)
			if len(r.Snippets) > 0 {
				fmt.Fprintf(&b, "   %s\n", clip(r.Snippets[0], 200)) // snippets come on one line
			}
		}
	}
	if o.Indexing {
		b.WriteString("\n(The index is still being built; results may be incomplete.)")
	}
	if o.Hint != "" {
		b.WriteString("\nHint: " + o.Hint)
	}
	if o.Note != "" {
		b.WriteString("\n(" + o.Note + ")")
	}
	return strings.TrimRight(b.String(), "\n")
}
