package eval

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Query is one judged query: what to ask and which memories answer it.
// It reads the fields of a benchmark's queries.jsonl line and ignores the
// rest (a line may also carry search fields, "answer", "evidence", …).
type Query struct {
	ID   string // "id" as text: a JSON string as is, a number as written
	Text string // "query"

	// Relevant lists the paths, relative to the memory folder, that answer
	// the query. A query without any is left out of every mean.
	Relevant []string
	// Grades, when present, gives graded relevance (higher is better) for
	// nDCG@10; without it every relevant memory has gain 1.
	Grades map[string]float64

	// Category groups queries in the breakdown; "" means none. A number is
	// kept as written ("5"). CategoryName, when set, labels the group instead.
	Category     string
	CategoryName string

	// Scope is a folder prefix ("conv-26/"): with Options.Scope, results
	// outside it are dropped before scoring.
	Scope string
	// AsOf is the query's "now" for recency decay (RFC 3339), if it has one.
	AsOf string
}

// UnmarshalJSON reads a queries.jsonl line. "id" and "category" may be
// strings or numbers.
func (q *Query) UnmarshalJSON(b []byte) error {
	var l struct {
		ID           json.RawMessage    `json:"id"`
		Query        string             `json:"query"`
		Relevant     []string           `json:"relevant"`
		Grades       map[string]float64 `json:"grades"`
		Category     json.RawMessage    `json:"category"`
		CategoryName string             `json:"category_name"`
		Scope        string             `json:"scope"`
		AsOf         string             `json:"as_of"`
	}
	if err := json.Unmarshal(b, &l); err != nil {
		return err
	}
	id, err := scalarText(l.ID)
	if err != nil {
		return fmt.Errorf(`"id": %w`, err)
	}
	if id == "" {
		return errors.New(`missing "id"`)
	}
	cat, err := scalarText(l.Category)
	if err != nil {
		return fmt.Errorf(`"category": %w`, err)
	}
	*q = Query{ID: id, Text: l.Query, Relevant: l.Relevant, Grades: l.Grades,
		Category: cat, CategoryName: l.CategoryName, Scope: l.Scope, AsOf: l.AsOf}
	return nil
}

// scalarText is a JSON string's value or a number as written; "" for
// absent or null.
func scalarText(raw json.RawMessage) (string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	if raw[0] == '"' {
		var s string
		err := json.Unmarshal(raw, &s)
		return s, err
	}
	if _, err := strconv.ParseFloat(string(raw), 64); err != nil {
		return "", fmt.Errorf("want a string or a number, got %s", raw)
	}
	return string(raw), nil
}

// Group is the breakdown key of the query's category, "cat:<name>" as
// score.py prints it, or "" when the query has no category.
func (q Query) Group() string {
	switch {
	case q.Category == "":
		return ""
	case q.CategoryName != "":
		return "cat:" + q.CategoryName
	}
	return "cat:" + q.Category
}

// MaxLine bounds one JSONL line; a query or a run line can be long.
const MaxLine = 64 << 20

// EachLine calls fn with every non-blank line of a JSONL stream (trimmed)
// and its 1-based number, stopping at fn's first error. A line longer than
// MaxLine is an error that names it.
func EachLine(r io.Reader, fn func(n int, line []byte) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<16), MaxLine)
	n := 0
	for sc.Scan() {
		n++
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		if err := fn(n, line); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return fmt.Errorf("line %d is longer than %d MiB", n+1, MaxLine>>20)
		}
		return fmt.Errorf("line %d: %w", n+1, err)
	}
	return nil
}

// ReadQueries reads a queries.jsonl stream. An error names the line.
func ReadQueries(r io.Reader) ([]Query, error) {
	var qs []Query
	err := EachLine(r, func(n int, line []byte) error {
		var q Query
		if err := json.Unmarshal(line, &q); err != nil {
			return fmt.Errorf("line %d: %s", n, strings.TrimPrefix(err.Error(), "json: "))
		}
		qs = append(qs, q)
		return nil
	})
	return qs, err
}

// Run is a system's answer to every query: query id → memory paths, best
// first, without repeats.
type Run map[string][]string

// runLine is one line of a run file: score.py's RUN format, which is also
// what `mnemo search --batch --json` writes. A result is a path or an
// object with a "path".
type runLine struct {
	ID      json.RawMessage   `json:"id"`
	Results []json.RawMessage `json:"results"`
}

// ReadRun reads a run file. Repeated paths in a result list keep their
// first place; a query id that appears twice keeps its last line.
func ReadRun(r io.Reader) (Run, error) {
	run := Run{}
	err := EachLine(r, func(n int, line []byte) error {
		var l runLine
		if err := json.Unmarshal(line, &l); err != nil {
			return fmt.Errorf("line %d: %s", n, strings.TrimPrefix(err.Error(), "json: "))
		}
		id, err := scalarText(l.ID)
		if err != nil || id == "" {
			return fmt.Errorf(`line %d: want an "id" string or number`, n)
		}
		paths := make([]string, 0, len(l.Results))
		for i, raw := range l.Results {
			var p string
			if err := json.Unmarshal(raw, &p); err != nil {
				var obj struct {
					Path string `json:"path"`
				}
				if err := json.Unmarshal(raw, &obj); err != nil {
					return fmt.Errorf("line %d: result %d is neither a path nor an object with a \"path\"", n, i+1)
				}
				p = obj.Path
			}
			paths = append(paths, p)
		}
		run[id] = unique(paths)
		return nil
	})
	return run, err
}

// Options select and filter what Evaluate scores, as score.py's flags do.
type Options struct {
	// Scope drops results outside each query's Scope folder (plain prefix
	// match) before scoring: LoCoMo's per-conversation setting.
	Scope bool
	// ExcludeCategory leaves out queries whose Category is one of these
	// (LoCoMo "5" is adversarial).
	ExcludeCategory []string
}

// Subset is the mean of every metric over N queries. Its JSON is score.py's:
// {"n": N, "R@1": …, …}.
type Subset struct {
	N int `json:"n"`
	Scores
}

// Scored is one query with its metrics.
type Scored struct {
	Query  Query
	Scores Scores
}

// Report is what Evaluate found.
type Report struct {
	// Subsets holds "all" and one "cat:<name>" entry per category.
	Subsets map[string]Subset
	// PerQuery lists the scored queries in input order.
	PerQuery []Scored
	// Missing counts scored queries that the run does not answer; they
	// score as empty result lists.
	Missing int
}

// Selects reports whether Evaluate scores q: it has relevant memories and
// a category that o does not exclude.
func (o Options) Selects(q Query) bool {
	if len(q.Relevant) == 0 {
		return false
	}
	return q.Category == "" || !containsNumber(o.ExcludeCategory, q.Category)
}

// containsNumber reports whether list holds v, comparing numbers by value
// ("5" matches "5.0").
func containsNumber(list []string, v string) bool {
	fv, verr := strconv.ParseFloat(v, 64)
	for _, x := range list {
		if x == v {
			return true
		}
		if fx, err := strconv.ParseFloat(x, 64); err == nil && verr == nil && fx == fv {
			return true
		}
	}
	return false
}

// Evaluate scores run against the selected queries and averages the
// metrics overall and per category.
func Evaluate(queries []Query, run Run, opt Options) Report {
	rep := Report{Subsets: map[string]Subset{}}
	for _, q := range queries {
		if !opt.Selects(q) {
			continue
		}
		ranked, ok := run[q.ID]
		if !ok {
			rep.Missing++
		}
		if opt.Scope && q.Scope != "" {
			var in []string
			for _, d := range ranked {
				if strings.HasPrefix(d, q.Scope) {
					in = append(in, d)
				}
			}
			ranked = in
		}
		s := Score(q, ranked)
		rep.PerQuery = append(rep.PerQuery, Scored{q, s})
		for _, k := range []string{"all", q.Group()} {
			if k == "" {
				continue
			}
			sub := rep.Subsets[k]
			sub.N++
			sub.add(s)
			rep.Subsets[k] = sub
		}
	}
	for k, sub := range rep.Subsets {
		sub.div(float64(sub.N))
		rep.Subsets[k] = sub
	}
	if _, ok := rep.Subsets["all"]; !ok {
		rep.Subsets["all"] = Subset{}
	}
	return rep
}

// Values returns one metric of every scored query, in order: the input of
// PairedTest.
func (r Report) Values(metric string) []float64 {
	out := make([]float64, len(r.PerQuery))
	for i, s := range r.PerQuery {
		out[i], _ = s.Scores.Get(metric)
	}
	return out
}
