package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"mnemo/engine"
	"mnemo/mcp/args"
)

// maxBatchLine bounds one JSONL input line; queries can be whole documents.
const maxBatchLine = 64 << 20

// batchResult is one output line of search --batch.
type batchResult struct {
	ID         json.RawMessage `json:"id"`
	Error      string          `json:"error,omitempty"`
	TotalCount int             `json:"totalCount"`
	Results    []batchHit      `json:"results"`
}

type batchHit struct {
	Path          string  `json:"path"`
	URI           string  `json:"uri"`
	Score         float64 `json:"score"`
	TextScore     float64 `json:"textScore"`
	SemanticScore float64 `json:"semanticScore"`
}

// parseBatchLine decodes one input line: its "id" and, in the rest, a
// search as args.Decode reads it (the SearchMemories argument names);
// fields the line leaves out take their value from def. Any other field is an error. The id is returned even when the
// rest of the line is wrong, so the error line can carry it.
func parseBatchLine(line []byte, def searchFlags) (json.RawMessage, engine.Query, error) {
	var obj json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(line))
	if err := dec.Decode(&obj); err != nil {
		return nil, engine.Query{}, errors.New(strings.TrimPrefix(err.Error(), "json: "))
	}
	var id json.RawMessage
	if _, err := dec.Token(); err != io.EOF {
		_ = json.Unmarshal(obj, &struct {
			ID *json.RawMessage `json:"id"`
		}{&id})
		return id, engine.Query{}, errors.New("unexpected data after the JSON object")
	}
	q, err := buildQuery("", def)
	if err == nil {
		err = args.Decode(obj, &q, func(name string, v json.RawMessage) error {
			if name != "id" {
				return fmt.Errorf("unknown field %.40q", name)
			}
			id = v
			return nil
		})
	}
	if err != nil {
		if id == nil {
			_ = json.Unmarshal(obj, &struct {
				ID *json.RawMessage `json:"id"`
			}{&id})
		}
		return id, engine.Query{}, err
	}
	if len(id) == 0 || string(id) == "null" {
		return nil, engine.Query{}, errors.New(`missing "id"`)
	}
	return id, q, nil
}

// openBatch opens the JSONL input of a --batch run: the file at path, or
// standard input for "-". The returned func closes what it opened.
func openBatch(path string) (io.Reader, func(), error) {
	if path == "-" {
		return os.Stdin, func() {}, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("batch: %w", err)
	}
	return f, func() { f.Close() }, nil
}

// runBatch answers every line of the JSONL file at path ("-" is stdin) with
// one engine, after one incremental sync unless noSync. A line that fails
// gets an error line and the batch goes on; only a broken input stream, a
// cancelled context or a failure to open the index stops it.
func (a *app) runBatch(ctx context.Context, path string, def searchFlags, noSync bool) error {
	in, closeIn, err := openBatch(path)
	if err != nil {
		return err
	}
	defer closeIn()
	return a.withEngine(ctx, noSync, nil, func(e backend) error {
		if !noSync {
			rep, err := e.Sync(ctx, false)
			if err != nil {
				return fmt.Errorf("sync before search: %w", err)
			}
			a.noteRebuild(rep)
		}
		sc := bufio.NewScanner(in)
		sc.Buffer(make([]byte, 0, 1<<20), maxBatchLine)
		out := bufio.NewWriterSize(a.stdout, 1<<16)
		enc := json.NewEncoder(out)
		enc.SetEscapeHTML(false)
		var lineNo, n, failed int
		for sc.Scan() {
			lineNo++
			line := bytes.TrimSpace(sc.Bytes())
			if len(line) == 0 {
				continue
			}
			n++
			res := batchResult{Results: []batchHit{}}
			id, q, err := parseBatchLine(line, def)
			res.ID = id
			if err == nil {
				var p engine.Page
				q.NoSnippets = true // batch output carries paths and scores only
				p, err = e.Search(ctx, q)
				if ctx.Err() != nil {
					return ctx.Err()
				}
				res.TotalCount = p.TotalCount
				for _, r := range p.Results {
					res.Results = append(res.Results, batchHit{r.Path, r.URI, r.Score, r.TextScore, r.SemanticScore})
				}
			}
			if err != nil {
				failed++
				res.Error = oneLine(err.Error())
				res.TotalCount = 0
				res.Results = []batchHit{}
			}
			if err := enc.Encode(res); err != nil {
				return fmt.Errorf("batch: write: %w", err)
			}
			// On stdin, answer each line at once: the caller may be a
			// program that writes one query and waits for its result.
			if path == "-" {
				if err := out.Flush(); err != nil {
					return fmt.Errorf("batch: write: %w", err)
				}
			}
		}
		if err := out.Flush(); err != nil {
			return fmt.Errorf("batch: write: %w", err)
		}
		if err := sc.Err(); err != nil {
			if errors.Is(err, bufio.ErrTooLong) {
				return fmt.Errorf("batch: line %d is longer than %d MiB", lineNo+1, maxBatchLine>>20)
			}
			return fmt.Errorf("batch: read: %w", err)
		}
		if failed > 0 {
			fmt.Fprintf(a.stderr, "mnemo: batch: %d of %d queries failed (their lines carry \"error\")\n", failed, n)
		}
		return nil
	})
}
