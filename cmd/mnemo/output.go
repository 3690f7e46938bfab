package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"mnemo/engine"
)

// listLimit is how many skips or warnings a text listing shows before "… and N more".
const listLimit = 20

// writeJSON prints v as indented JSON followed by a newline.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// normalizePage makes empty lists print as [] rather than null.
func normalizePage(p engine.Page) engine.Page {
	if p.Results == nil {
		p.Results = []engine.Result{}
	}
	for i := range p.Results {
		if p.Results[i].Snippets == nil {
			p.Results[i].Snippets = []string{}
		}
		if p.Results[i].Tags == nil {
			p.Results[i].Tags = []string{}
		}
	}
	return p
}

// normalizeReport makes empty lists print as [] rather than null.
func normalizeReport(r engine.Report) engine.Report {
	if r.Added == nil {
		r.Added = []string{}
	}
	if r.Updated == nil {
		r.Updated = []string{}
	}
	if r.Removed == nil {
		r.Removed = []string{}
	}
	if r.Skipped == nil {
		r.Skipped = []engine.Skip{}
	}
	if r.Warnings == nil {
		r.Warnings = []engine.Warning{}
	}
	return r
}

// writePage prints a page of results for a person:
//
//	2 results (page 1 of 1, mode hybrid)
//
//	1. 0.873  Title
//	   path/to/memory.md
//	     a snippet, on one line
func writePage(w io.Writer, p engine.Page) error {
	b := bufio.NewWriter(w)
	if p.Indexing {
		fmt.Fprintln(b, "indexing: the index is still being built")
	}
	noun := "results"
	if p.TotalCount == 1 {
		noun = "result"
	}
	page := max(p.Page, 1)
	pages := 1
	if p.PageSize > 0 && p.TotalCount > 0 {
		pages = (p.TotalCount + p.PageSize - 1) / p.PageSize
	}
	fmt.Fprintf(b, "%d %s (page %d of %d, mode %s)\n", p.TotalCount, noun, page, pages, p.Mode)
	if p.Hint != "" {
		fmt.Fprintln(b, "hint: "+p.Hint)
	}
	first := (page-1)*p.PageSize + 1
	width := len(fmt.Sprint(first + len(p.Results) - 1))
	for i, r := range p.Results {
		indent := strings.Repeat(" ", width+2)
		if r.Title != "" {
			fmt.Fprintf(b, "\n%*d. %.3f  %s\n%s%s\n", width, first+i, r.Score, r.Title, indent, r.Path)
		} else {
			fmt.Fprintf(b, "\n%*d. %.3f  %s\n", width, first+i, r.Score, r.Path)
		}
		for _, s := range r.Snippets {
			if s = collapseSpace(s); s != "" {
				fmt.Fprintf(b, "%s  %s\n", indent, s)
			}
		}
	}
	return b.Flush()
}

// collapseSpace puts a snippet on one line: runs of whitespace, newlines
// included, become one space.
func collapseSpace(s string) string { return strings.Join(strings.Fields(s), " ") }

// syncSummary is the one line sync prints, e.g.
// "synced 5183 files: 5183 added, 0 updated, 0 removed, 0 unchanged, 2 skipped, 3 warnings in 4.2s".
// elapsed stands in when the report carries no total time.
func syncSummary(r engine.Report, elapsed time.Duration) string {
	d := r.Total
	if d <= 0 {
		d = elapsed
	}
	files := len(r.Added) + len(r.Updated) + r.Unchanged
	line := fmt.Sprintf("synced %d files: %d added, %d updated, %d removed, %d unchanged, %d skipped, %d warnings in %.1fs",
		files, len(r.Added), len(r.Updated), len(r.Removed), r.Unchanged, len(r.Skipped), len(r.Warnings), d.Seconds())
	if r.Rebuilt != "" {
		line += " (full rebuild: " + r.Rebuilt + ")"
	}
	return line
}

// writeMemory prints one memory: a header of fields, a blank line, the content.
func writeMemory(w io.Writer, m engine.Memory) error {
	b := bufio.NewWriter(w)
	fmt.Fprintf(b, "title:    %s\n", m.Title)
	fmt.Fprintf(b, "uri:      %s\n", m.URI)
	fmt.Fprintf(b, "created:  %s\n", formatTime(m.Created))
	fmt.Fprintf(b, "modified: %s\n", formatTime(m.Modified))
	tags := strings.Join(m.Tags, ", ")
	if tags == "" {
		tags = "-"
	}
	fmt.Fprintf(b, "tags:     %s\n", tags)
	if len(m.Links) > 0 {
		fmt.Fprintf(b, "links:    %s\n", strings.Join(m.Links, ", "))
	}
	fmt.Fprintln(b)
	fmt.Fprint(b, m.Content)
	if !strings.HasSuffix(m.Content, "\n") {
		fmt.Fprintln(b)
	}
	return b.Flush()
}

// writeStatus prints the engine's status, listing the first listLimit skips
// and warnings.
func writeStatus(w io.Writer, s engine.Status, now time.Time) error {
	b := bufio.NewWriter(w)
	row := func(k, format string, args ...any) {
		fmt.Fprintf(b, "%-11s %s\n", k+":", fmt.Sprintf(format, args...))
	}
	row("memory", "%s", s.MemoryDir)
	row("index", "%s", s.IndexDir)
	row("files", "%d", s.Files)
	row("chunks", "%d", s.Chunks)
	comm := "communities not computed yet (the first graph query computes them)"
	if s.Graph.Communities >= 0 {
		comm = fmt.Sprintf("%d communities", s.Graph.Communities)
	}
	row("concepts", "%d (%d links, %s; links read by %s's rules)", s.Graph.Concepts, s.Graph.Mentions, comm, s.Graph.LinkRules)
	if s.Graph.Stale != "" {
		row("rebuild", "the next sync rebuilds the index (%s); until then the graph answers not ready", s.Graph.Stale)
	}
	row("full-text", "%s", formatBytes(s.FullTextSize))
	row("state", "%s", formatBytes(s.StateSize))
	emb := s.Embedder
	if s.Dimensions > 0 {
		emb = fmt.Sprintf("%s (%d dimensions)", emb, s.Dimensions)
	}
	row("embedder", "%s", emb)
	if s.EmbedderError != "" {
		row("embedder error", "%s (full-text search still works)", s.EmbedderError)
	}
	last := "never"
	if !s.LastSync.IsZero() {
		last = fmt.Sprintf("%s (%s ago)", formatTime(s.LastSync), now.Sub(s.LastSync).Round(time.Second))
	}
	row("last sync", "%s", last)
	if s.LastError != "" {
		row("last sync failed", "%s", s.LastError)
	}
	if s.Damaged != "" {
		row("damaged", "%s", s.Damaged)
	}
	switch {
	case s.Unfinished != "":
		row("indexing", "yes: a %s, so the index holds part of the folder; run mnemo sync", s.Unfinished)
	case s.Indexing:
		row("indexing", "yes, the index is still being built")
	}
	row("skipped", "%d", len(s.Skipped))
	for i, k := range s.Skipped {
		if i == listLimit {
			fmt.Fprintf(b, "  … and %d more\n", len(s.Skipped)-listLimit)
			break
		}
		fmt.Fprintf(b, "  %s: %s\n", k.Path, k.Reason)
	}
	row("warnings", "%d", len(s.Warnings))
	for i, wa := range s.Warnings {
		if i == listLimit {
			fmt.Fprintf(b, "  … and %d more\n", len(s.Warnings)-listLimit)
			break
		}
		fmt.Fprintf(b, "  %s: %s\n", wa.Path, wa.Message)
	}
	return b.Flush()
}

func formatTime(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.Format(time.RFC3339)
}

// formatBytes prints a size in binary units: 512 B, 1.5 KiB, 12.3 MiB.
func formatBytes(n int64) string {
	if n < 1024 {
		return fmt.Sprintf("%d B", n)
	}
	f, unit := float64(n)/1024, 0
	units := []string{"KiB", "MiB", "GiB", "TiB"}
	for f >= 1024 && unit < len(units)-1 {
		f /= 1024
		unit++
	}
	return fmt.Sprintf("%.1f %s", f, units[unit])
}
