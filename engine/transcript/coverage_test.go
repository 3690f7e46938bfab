package transcript

import (
	"bytes"
	"maps"
	"os"
	"path/filepath"
	"testing"
)

// nonBlankLines counts the lines of a JSONL file that hold anything.
func nonBlankLines(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, l := range bytes.Split(b, []byte("\n")) {
		if len(bytes.TrimSpace(l)) > 0 {
			n++
		}
	}
	return n
}

// TestCoverage reads every reader's fixtures and checks that every line is
// accounted for: indexed or left out for the reason the fixture plants, the
// counts balance, a JSONL file's count is its number of lines, and the older
// per-reason fields agree with Coverage.
func TestCoverage(t *testing.T) {
	type m = map[Reason]int
	tests := []struct {
		kind    Kind
		path    string
		opt     Options
		indexed int
		leftOut m
		// records: a whole-file format's count (0: a JSONL file, counted by its lines).
		records int
	}{
		{ClaudeCode, claudeFixture, Options{}, 8,
			m{Abandoned: 2, Injected: 2, Malformed: 1, Meta: 4, Sidechain: 1, Thinking: 1, ToolCall: 1, ToolResult: 1, Unknown: 1}, 0},
		{ClaudeCode, claudeFixture, Options{IncludeTools: true}, 10,
			m{Abandoned: 2, Injected: 2, Malformed: 1, Meta: 4, Sidechain: 1, Thinking: 1, Unknown: 1}, 0},
		{ClaudeCode, "claude/projects/-home-dev-orchard/8b2e4f60-1a3c-4d5e-8f90-a1b2c3d4e5f6.jsonl", Options{}, 4,
			m{Injected: 1, Meta: 2}, 0},
		{ClaudeCode, "claude-sidebranch.jsonl", Options{}, 4, m{Meta: 3, ToolResult: 1}, 0},
		{Codex, codexFixture, Options{}, 4,
			m{Duplicate: 2, Injected: 3, Malformed: 1, Meta: 3, Thinking: 2, ToolCall: 1, ToolResult: 1, Unknown: 1}, 0},
		{Codex, codexRollback, Options{}, 4, m{Abandoned: 2, Duplicate: 6, Injected: 1, Meta: 3}, 0},
		{Codex, codexOld, Options{}, 2, m{Meta: 3, Injected: 1, Thinking: 1, ToolCall: 1, ToolResult: 1}, 0},
		{Gemini, geminiFixture, Options{}, 4, m{Injected: 1, ToolCall: 1}, 6},
		{Gemini, geminiJSONL, Options{}, 4, m{Abandoned: 2, Duplicate: 1, Meta: 4}, 0},
		{OpenClaw, openclawFixture, Options{}, 4,
			m{Abandoned: 1, Injected: 1, Malformed: 1, Meta: 5, Thinking: 1, ToolResult: 1, Unknown: 1}, 0},
		{CodeArchitect, caFixture, Options{}, 3, m{}, 3},
		{JSONL, jsonlFixture, Options{}, 3, m{Injected: 1, Malformed: 1, Foreign: 1, ToolResult: 1, Unknown: 1}, 0},
	}
	for _, tt := range tests {
		t.Run(string(tt.kind)+"/"+filepath.Base(tt.path), func(t *testing.T) {
			path := fixture(t, tt.path)
			res := read(t, Source{Kind: tt.kind}, path, Cursor{}, tt.opt, newCollector())
			cv := res.Coverage
			if !cv.Balanced() || !cv.Whole {
				t.Errorf("coverage %+v: balanced %v, whole %v", cv, cv.Balanced(), cv.Whole)
			}
			want := tt.records
			if want == 0 {
				want = nonBlankLines(t, path)
			}
			if cv.Lines != want {
				t.Errorf("%d lines counted, the file has %d", cv.Lines, want)
			}
			if cv.Indexed != tt.indexed || !maps.Equal(cv.LeftOut, tt.leftOut) && !(len(cv.LeftOut) == 0 && len(tt.leftOut) == 0) {
				t.Errorf("indexed %d, left out %v; want %d, %v", cv.Indexed, cv.LeftOut, tt.indexed, tt.leftOut)
			}
			if res.Malformed != cv.LeftOut[Malformed] || res.TooLong != cv.LeftOut[TooLong] || res.Ignored != cv.LeftOut[Unknown]+cv.LeftOut[Foreign] {
				t.Errorf("malformed %d, too long %d, ignored %d disagree with %v", res.Malformed, res.TooLong, res.Ignored, cv.LeftOut)
			}
			again := read(t, Source{Kind: tt.kind}, path, res.Cursor, tt.opt, newCollector())
			if again.Coverage.Lines != 0 || again.Coverage.Whole {
				t.Errorf("unchanged file counted again: %+v", again.Coverage)
			}
		})
	}
}
