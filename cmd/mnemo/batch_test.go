package main

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"mnemo/engine"
)

func TestParseBatchLine(t *testing.T) {
	asOf := time.Date(2023, 10, 22, 9, 55, 0, 0, time.UTC)
	tests := []struct {
		name   string
		line   string
		def    searchFlags
		wantID string
		want   engine.Query
	}{
		{
			"minimal", `{"id":"q1","query":"bbolt"}`, searchFlags{},
			`"q1"`, engine.Query{Text: "bbolt"},
		},
		{
			"every field",
			`{"id":"conv-26/q001","query":"When did Caroline go?","mode":"hybrid","folder":"conv-26",
			  "tags":["locomo"],"from":"2023-01-01","to":"2023-12-31","now":"2023-10-22T09:55:00Z",
			  "page":2,"page_size":100,"min_score":0.1,"sort":"recency"}`,
			searchFlags{},
			`"conv-26/q001"`,
			engine.Query{Text: "When did Caroline go?", Mode: engine.Hybrid, Folder: "conv-26", Tags: []string{"locomo"},
				From: time.Date(2023, 1, 1, 0, 0, 0, 0, time.UTC), To: time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC).Add(-time.Nanosecond),
				Now: asOf, Page: 2, PageSize: 100, MinScore: 0.1, Sort: engine.ByRecency},
		},
		{
			"numeric id kept as given", `{"id":17,"query":"x"}`, searchFlags{},
			`17`, engine.Query{Text: "x"},
		},
		{
			"command-line flags are defaults", `{"id":"a","query":"x","page_size":5}`,
			searchFlags{mode: "fulltext", pageSize: 100, tags: []string{"t"}},
			`"a"`, engine.Query{Text: "x", Mode: engine.FullText, PageSize: 5, Tags: []string{"t"}},
		},
		{
			"explicit zero beats default", `{"id":"a","query":"x","page_size":0,"mode":""}`,
			searchFlags{mode: "fulltext", pageSize: 100},
			`"a"`, engine.Query{Text: "x"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id, q, err := parseBatchLine([]byte(tt.line), tt.def)
			if err != nil {
				t.Fatalf("parseBatchLine: %v", err)
			}
			if string(id) != tt.wantID {
				t.Errorf("id = %s, want %s", id, tt.wantID)
			}
			if !q.From.Equal(tt.want.From) || !q.To.Equal(tt.want.To) || !q.Now.Equal(tt.want.Now) {
				t.Fatalf("times = %v / %v / %v, want %v / %v / %v", q.From, q.To, q.Now, tt.want.From, tt.want.To, tt.want.Now)
			}
			q.From, q.To, q.Now = tt.want.From, tt.want.To, tt.want.Now
			if !reflect.DeepEqual(q, tt.want) {
				t.Fatalf("got  %+v\nwant %+v", q, tt.want)
			}
		})
	}
}

func TestParseBatchLineErrors(t *testing.T) {
	tests := []struct {
		name, line string
		wantID     string // the id the error line carries
		want       string
	}{
		{"unknown field", `{"id":"q1","query":"x","top_k":5}`, `"q1"`, `unknown field "top_k"`},
		{"bad date", `{"id":"q2","query":"x","from":"last week"}`, `"q2"`, `from "last week"`},
		{"bad now", `{"id":"q3","query":"x","now":"2023-10-22 09:55"}`, `"q3"`, `now "2023-10-22 09:55"`},
		{"wrong type", `{"id":"q4","query":"x","page_size":"ten"}`, `"q4"`, "page_size"},
		{"not JSON", `id=q5 query=x`, ``, "invalid character"},
		{"missing id", `{"query":"x"}`, ``, `missing "id"`},
		{"trailing data", `{"id":"q6","query":"x"} {"id":"q7"}`, `"q6"`, "after the JSON object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id, _, err := parseBatchLine([]byte(tt.line), searchFlags{})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want one containing %q", err, tt.want)
			}
			if strings.HasPrefix(err.Error(), "json:") {
				t.Errorf("err = %q still carries the json: prefix", err)
			}
			if string(id) != tt.wantID {
				t.Errorf("id = %s, want %s", id, tt.wantID)
			}
		})
	}
}

func BenchmarkParseBatchLine(b *testing.B) {
	line := []byte(`{"id":"conv-26/q001","query":"When did Caroline go to the LGBTQ support group?","mode":"hybrid","page_size":100,"folder":"conv-26","now":"2023-10-22T09:55:00Z"}`)
	for b.Loop() {
		if _, _, err := parseBatchLine(line, searchFlags{}); err != nil {
			b.Fatal(err)
		}
	}
}
