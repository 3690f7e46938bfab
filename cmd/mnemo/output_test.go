package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"mnemo/engine"
)

var created = time.Date(2024, 5, 1, 9, 30, 0, 0, time.UTC)

func fixedPage() engine.Page {
	return engine.Page{
		Query: "bbolt lock", Mode: engine.Hybrid, Page: 2, PageSize: 5, TotalCount: 12,
		TextResultCount: 12, SemanticResultCount: 9,
		Results: []engine.Result{
			{
				URI: "memory://decisions/use-bbolt", Path: "decisions/use-bbolt.md", Title: "Use bbolt",
				Score: 0.87654, TextScore: 0.9, SemanticScore: 0.8, Decay: 1,
				Snippets:   []string{"we chose **bbolt**\nfor its  single-writer lock", "  "},
				MatchCount: 3, Created: created, Modified: created, Tags: []string{"decision", "db"},
			},
			{
				URI: "memory://bugs/lock-timeout", Path: "bugs/lock-timeout.md",
				Score: 0.5, TextScore: 0.5,
			},
		},
	}
}

func TestWritePage(t *testing.T) {
	var b bytes.Buffer
	if err := writePage(&b, fixedPage(), false); err != nil {
		t.Fatal(err)
	}
	want := `12 results (page 2 of 3, mode hybrid)

6. 0.877  Use bbolt
   decisions/use-bbolt.md
     we chose **bbolt** for its single-writer lock

7. 0.500  bugs/lock-timeout.md
`
	if b.String() != want {
		t.Fatalf("got:\n%s\nwant:\n%s", b.String(), want)
	}
}

func TestWritePageEdges(t *testing.T) {
	tests := []struct {
		name  string
		page  engine.Page
		want  string
		dates bool
	}{
		{"empty", engine.Page{Mode: engine.FullText, Page: 1, PageSize: 10}, "0 results (page 1 of 1, mode fulltext)\n", false},
		{"ranks align", engine.Page{Mode: engine.Hybrid, Page: 1, PageSize: 10, TotalCount: 10,
			Results: []engine.Result{{Path: "a.md", Title: "A"}, {Path: "b.md", Title: "B"}, {Path: "c.md", Title: "C"},
				{Path: "d.md", Title: "D"}, {Path: "e.md", Title: "E"}, {Path: "f.md", Title: "F"}, {Path: "g.md", Title: "G"},
				{Path: "h.md", Title: "H"}, {Path: "i.md", Title: "I"}, {Path: "j.md", Title: "J"}}},
			"10 results (page 1 of 1, mode hybrid)\n\n 1. 0.000  A\n    a.md\n\n 2. 0.000  B\n    b.md\n\n 3. 0.000  C\n    c.md\n" +
				"\n 4. 0.000  D\n    d.md\n\n 5. 0.000  E\n    e.md\n\n 6. 0.000  F\n    f.md\n\n 7. 0.000  G\n    g.md\n" +
				"\n 8. 0.000  H\n    h.md\n\n 9. 0.000  I\n    i.md\n\n10. 0.000  J\n    j.md\n", false},
		{"one", engine.Page{Mode: engine.Semantic, Page: 1, PageSize: 10, TotalCount: 1,
			Results: []engine.Result{{Path: "a.md", Title: "A", Score: 1}}},
			"1 result (page 1 of 1, mode semantic)\n\n1. 1.000  A\n   a.md\n", false},
		{"indexing", engine.Page{Mode: engine.Hybrid, Page: 1, PageSize: 10, Indexing: true},
			"indexing: the index is still being built\n0 results (page 1 of 1, mode hybrid)\n", false},
		{"past the last page", engine.Page{Mode: engine.Hybrid, Page: 2, PageSize: 10, TotalCount: 3},
			"3 results (page 2 is past the last, 1, mode hybrid)\n", false},
		{"nothing, page 2", engine.Page{Mode: engine.Hybrid, Page: 2, PageSize: 10},
			"0 results (page 2 is past the last, 1, mode hybrid)\n", false},
		{"sorted by recency: dates", engine.Page{Mode: engine.Hybrid, Page: 1, PageSize: 10, TotalCount: 1,
			Results: []engine.Result{{Path: "a.md", Title: "A", Score: 1, Modified: created}}},
			"1 result (page 1 of 1, mode hybrid)\n\n1. 1.000  A\n   a.md  modified 2024-05-01\n", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := writePage(&b, tt.page, tt.dates); err != nil {
				t.Fatal(err)
			}
			if b.String() != tt.want {
				t.Fatalf("got:\n%q\nwant:\n%q", b.String(), tt.want)
			}
		})
	}
}

func TestWritePageJSON(t *testing.T) {
	var b bytes.Buffer
	if err := writeJSON(&b, normalizePage(fixedPage())); err != nil {
		t.Fatal(err)
	}
	var got engine.Page
	if err := json.Unmarshal(b.Bytes(), &got); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, b.String())
	}
	if got.TotalCount != 12 || len(got.Results) != 2 || got.Results[0].Path != "decisions/use-bbolt.md" ||
		got.Results[0].Score != 0.87654 || !got.Results[0].Created.Equal(created) {
		t.Fatalf("round trip lost data: %+v", got)
	}
	for _, key := range []string{`"totalCount": 12`, `"textScore": 0.9`, `"semanticScore": 0.8`, `"snippets": []`, `"tags": []`} {
		if !strings.Contains(b.String(), key) {
			t.Errorf("JSON lacks %s:\n%s", key, b.String())
		}
	}

	b.Reset()
	if err := writeJSON(&b, normalizePage(engine.Page{})); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), `"results": []`) {
		t.Errorf("empty page should have results [], got %s", b.String())
	}
}

func TestBatchResultJSON(t *testing.T) {
	ok, _ := json.Marshal(batchResult{ID: json.RawMessage(`"q1"`), TotalCount: 1,
		Results: []batchHit{{"a.md", "memory://a", 0.5, 0.25, 0.75}}})
	if want := `{"id":"q1","totalCount":1,"results":[{"path":"a.md","uri":"memory://a","score":0.5,"textScore":0.25,"semanticScore":0.75}]}`; string(ok) != want {
		t.Errorf("got  %s\nwant %s", ok, want)
	}
	bad, _ := json.Marshal(batchResult{ID: nil, Error: "missing \"id\"", Results: []batchHit{}})
	if want := `{"id":null,"error":"missing \"id\"","totalCount":0,"results":[]}`; string(bad) != want {
		t.Errorf("got  %s\nwant %s", bad, want)
	}
}

func TestSyncSummary(t *testing.T) {
	r := engine.Report{
		Added:    make([]string, 5183),
		Skipped:  make([]engine.Skip, 2),
		Warnings: make([]engine.Warning, 3),
		Total:    4200 * time.Millisecond,
	}
	want := "synced 5183 files: 5183 added, 0 updated, 0 removed, 0 unchanged, 2 skipped, 3 warnings in 4.2s"
	if got := syncSummary(r, time.Hour); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	r = engine.Report{Updated: []string{"a"}, Removed: []string{"b", "c"}, Unchanged: 10}
	want = "synced 11 files: 0 added, 1 updated, 2 removed, 10 unchanged, 0 skipped, 0 warnings in 0.3s"
	if got := syncSummary(r, 300*time.Millisecond); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	r = engine.Report{Added: []string{"a"}, Warnings: make([]engine.Warning, 1)}
	want = "synced 1 file: 1 added, 0 updated, 0 removed, 0 unchanged, 0 skipped, 1 warning in 0.1s"
	if got := syncSummary(r, 100*time.Millisecond); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

func TestWriteStatus(t *testing.T) {
	s := engine.Status{
		MemoryDir: "/r/memory", IndexDir: "/r/index", Files: 3, Chunks: 7,
		Embedder: "static", Dimensions: 256, FullTextSize: 3 << 20, StateSize: 512,
		LastSync: created, Skipped: []engine.Skip{{Path: "big.md", Reason: "larger than 10 MiB"}},
	}
	for i := range 25 {
		s.Warnings = append(s.Warnings, engine.Warning{Path: fmt.Sprintf("w%02d.md", i), Message: "bad frontmatter"})
	}
	var b bytes.Buffer
	if err := writeStatus(&b, s, created.Add(90*time.Minute)); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"files:      3\n", "chunks:     7\n", "full-text:  3.0 MiB\n", "state:      512 B\n",
		"embedder:   static (256 dimensions)\n", "last sync:  2024-05-01T09:30:00Z (1h30m0s ago)\n",
		"skipped:    1\n  big.md: larger than 10 MiB\n", "warnings:   25\n", "w19.md", "  … and 5 more\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("status lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "w20.md") {
		t.Errorf("status lists more than %d warnings:\n%s", listLimit, out)
	}
}

func TestWriteMemory(t *testing.T) {
	var b bytes.Buffer
	m := engine.Memory{URI: "memory://decisions/use-bbolt", Title: "Use bbolt", Content: "# Use bbolt\n\nBody.",
		Created: created, Tags: []string{"decision", "db"}}
	if err := writeMemory(&b, m); err != nil {
		t.Fatal(err)
	}
	want := `title:    Use bbolt
uri:      memory://decisions/use-bbolt
created:  2024-05-01T09:30:00Z
modified: -
tags:     decision, db

# Use bbolt

Body.
`
	if b.String() != want {
		t.Fatalf("got:\n%s\nwant:\n%s", b.String(), want)
	}
}

func TestFormatBytes(t *testing.T) {
	for n, want := range map[int64]string{0: "0 B", 1023: "1023 B", 1536: "1.5 KiB", 5 << 30: "5.0 GiB", 3 << 50: "3072.0 TiB"} {
		if got := formatBytes(n); got != want {
			t.Errorf("formatBytes(%d) = %q, want %q", n, got, want)
		}
	}
}
