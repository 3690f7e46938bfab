package main

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"mnemo/engine"
)

func TestBuildQuery(t *testing.T) {
	may1 := time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name  string
		text  string
		flags searchFlags
		want  engine.Query
	}{
		{"defaults", "bbolt lock", searchFlags{}, engine.Query{Text: "bbolt lock"}},
		{
			"every field", "q",
			searchFlags{mode: "FullText", page: 2, pageSize: 50, folder: " decisions ", tags: []string{"a"},
				minScore: 0.25, sort: "recency", now: "2024-06-01T12:00:00Z"},
			engine.Query{Text: "q", Mode: engine.FullText, Page: 2, PageSize: 50, Folder: "decisions", Tags: []string{"a"},
				MinScore: 0.25, Sort: engine.ByRecency, Now: time.Date(2024, 6, 1, 12, 0, 0, 0, time.UTC)},
		},
		{
			"tags repeated and comma-separated", "q",
			searchFlags{tags: []string{"db, decision", "go", " ,"}},
			engine.Query{Text: "q", Tags: []string{"db", "decision", "go"}},
		},
		{
			"date-only bounds cover whole days", "q",
			searchFlags{from: "2024-05-01", to: "2024-05-01"},
			engine.Query{Text: "q", From: may1, To: may1.Add(24*time.Hour - time.Nanosecond)},
		},
		{
			"RFC3339 bounds kept as given", "q",
			searchFlags{from: "2024-05-01T09:30:00+02:00", to: "2024-05-02T00:00:00Z"},
			engine.Query{Text: "q",
				From: time.Date(2024, 5, 1, 9, 30, 0, 0, time.FixedZone("", 2*3600)),
				To:   time.Date(2024, 5, 2, 0, 0, 0, 0, time.UTC)},
		},
		{
			// Mode and sort are the engine's to validate: passed through.
			"unknown mode passes through", "q", searchFlags{mode: "fuzzy"},
			engine.Query{Text: "q", Mode: "fuzzy"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := buildQuery(tt.text, tt.flags)
			if err != nil {
				t.Fatalf("buildQuery: %v", err)
			}
			if !got.From.Equal(tt.want.From) || !got.To.Equal(tt.want.To) || !got.Now.Equal(tt.want.Now) {
				t.Fatalf("times = %v / %v / %v, want %v / %v / %v", got.From, got.To, got.Now, tt.want.From, tt.want.To, tt.want.Now)
			}
			got.From, got.To, got.Now = tt.want.From, tt.want.To, tt.want.Now
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got  %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestBuildQueryErrors(t *testing.T) {
	tests := []struct {
		name  string
		flags searchFlags
		want  string
	}{
		{"bad from", searchFlags{from: "yesterday"}, `from "yesterday"`},
		{"bad to", searchFlags{to: "2024-02-30"}, `to "2024-02-30"`},
		{"bad now", searchFlags{now: "2024-05-01 10:00"}, `now "2024-05-01 10:00"`},
		{"from after to", searchFlags{from: "2024-06-01", to: "2024-05-01"}, "is after"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := buildQuery("q", tt.flags)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want one containing %q", err, tt.want)
			}
			if exitCode(err) != 2 {
				t.Fatalf("exitCode = %d, want 2", exitCode(err))
			}
		})
	}
}

func TestExitCode(t *testing.T) {
	tests := []struct {
		err  error
		want int
	}{
		{nil, 0},
		{usagef("bad"), 2},
		{engine.ErrEmptyQuery, 2},
		{errors.Join(errors.New("x"), engine.ErrBadMode), 2},
		{wrap(engine.ErrNoTerms), 2},
		{wrap(engine.ErrBadPage), 2},
		{wrap(engine.ErrBadPageSize), 2},
		{wrap(engine.ErrBadSort), 2},
		{wrap(engine.ErrOutsideRoot), 2},
		{wrap(engine.ErrNotFound), 1},
		{wrap(engine.ErrIndexNotReady), 1},
		{errors.New("disk full"), 1},
	}
	for _, tt := range tests {
		if got := exitCode(tt.err); got != tt.want {
			t.Errorf("exitCode(%v) = %d, want %d", tt.err, got, tt.want)
		}
	}
}

func wrap(err error) error { return fmt.Errorf("search %q: %w", "q", err) }
