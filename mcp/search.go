package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"

	"mnemo/engine"
)

// Argument limits shared by the tools.
const (
	maxQueryChars = 4096
	maxPathBytes  = 4096 // identifiers, folders, destinations
	maxPage       = 1_000_000
	maxPageSize   = 200
	maxTags       = 64
)

type searchIn struct {
	Query    string   `json:"query" jsonschema:"what to look for: words, a phrase or a question"`
	Mode     string   `json:"mode,omitempty" jsonschema:"Hybrid (words and meaning, the default), Semantic (meaning) or FullText (words); case-insensitive"`
	PageSize int      `json:"pageSize,omitempty" jsonschema:"results per page, 1 to 200"`
	Page     int      `json:"page,omitempty" jsonschema:"which page, from 1"`
	Folder   string   `json:"folder,omitempty" jsonschema:"only memories under this folder, relative to the memory folder"`
	Tags     []string `json:"tags,omitempty" jsonschema:"only memories that have all of these tags"`
	MinScore float64  `json:"minScore,omitempty" jsonschema:"drop results whose score is below this, 0 to 1"`
	From     string   `json:"from,omitempty" jsonschema:"only memories created on or after this date: YYYY-MM-DD or RFC 3339"`
	To       string   `json:"to,omitempty" jsonschema:"only memories created on or before this date (a whole day if YYYY-MM-DD)"`
	Sort     string   `json:"sort,omitempty" jsonschema:"relevance (the default) or recency (most recently modified first)"`
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

func (s *server) searchTool() tool[searchIn, searchOut] {
	return tool[searchIn, searchOut]{
		name:  "SearchMemories",
		title: "Search memories",
		desc: "Search the memory folder by words and meaning. Returns ranked memories with scores (0 to 1, recent memories ranked a little higher) and matching snippets. " +
			"Filter by folder, tags (all must match), creation dates and a minimum score; page through results. Searching does not count as reading: use ReadMemory on a result to open it.",
		readOnly:   true,
		idempotent: true,
		schema: func(in *jsonschema.Schema) {
			property(in, "query").MaxLength = ptr(maxQueryChars)
			m := property(in, "mode")
			m.Default = json.RawMessage(`"Hybrid"`)
			m.Examples = []any{"Hybrid", "Semantic", "FullText"}
			ps := property(in, "pageSize")
			ps.Default, ps.Minimum, ps.Maximum = json.RawMessage("10"), ptr(1.0), ptr(float64(maxPageSize))
			p := property(in, "page")
			p.Default, p.Minimum, p.Maximum = json.RawMessage("1"), ptr(1.0), ptr(float64(maxPage))
			ms := property(in, "minScore")
			ms.Minimum, ms.Maximum = ptr(0.0), ptr(1.0)
			property(in, "tags").MaxItems = ptr(maxTags)
			st := property(in, "sort")
			st.Default, st.Enum = json.RawMessage(`"relevance"`), []any{"relevance", "recency"}
		},
		run:  s.search,
		text: searchText,
	}
}

func (s *server) search(ctx context.Context, in *searchIn) (*searchOut, error) {
	switch {
	case strings.TrimSpace(in.Query) == "":
		return nil, fmt.Errorf("query is required")
	case utf8.RuneCountInString(in.Query) > maxQueryChars:
		return nil, fmt.Errorf("query is %d characters, over the limit of %d", utf8.RuneCountInString(in.Query), maxQueryChars)
	case in.Page < 1 || in.Page > maxPage:
		return nil, fmt.Errorf("page must be between 1 and %d (got %d)", maxPage, in.Page)
	case in.PageSize < 1 || in.PageSize > maxPageSize:
		return nil, fmt.Errorf("pageSize must be between 1 and %d (got %d)", maxPageSize, in.PageSize)
	case len(in.Folder) > maxPathBytes:
		return nil, fmt.Errorf("folder is %d bytes, over the %d-byte limit", len(in.Folder), maxPathBytes)
	case len(in.Tags) > maxTags:
		return nil, fmt.Errorf("%d tags, over the limit of %d", len(in.Tags), maxTags)
	}
	q := engine.Query{
		Text: in.Query, Mode: engine.Mode(in.Mode), Page: in.Page, PageSize: in.PageSize,
		Folder: in.Folder, Tags: in.Tags, MinScore: in.MinScore, Sort: engine.Sort(in.Sort),
	}
	var err error
	if q.From, err = parseDate("from", in.From, false); err != nil {
		return nil, err
	}
	if q.To, err = parseDate("to", in.To, true); err != nil {
		return nil, err
	}
	leave, err := s.searches.enter(ctx)
	if err != nil {
		return nil, err
	}
	p, err := s.eng.Search(ctx, q)
	leave()
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

// parseDate reads a from/to bound: RFC 3339, or a date that means the
// start of that day (UTC) for from and its end for to.
func parseDate(name, s string, end bool) (time.Time, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("%s %.40q: want YYYY-MM-DD or RFC 3339 (2025-06-01T12:00:00Z)", name, s)
	}
	if end {
		t = t.Add(24*time.Hour - time.Nanosecond)
	}
	return t, nil
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
		fmt.Fprintf(&b, "%d memories match %q (%s); results %d–%d:\n", o.TotalCount, o.Query, o.Mode, first, first+len(o.Results)-1)
		for i, r := range o.Results {
			fmt.Fprintf(&b, "%d. %s — %s (score %.2f)\n", first+i, r.Title, r.URI, r.Score)
			if len(r.Snippets) > 0 {
				fmt.Fprintf(&b, "   %s\n", clip(strings.Join(strings.Fields(r.Snippets[0]), " "), 200))
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
