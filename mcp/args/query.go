// Package args reads a memory search from JSON as the front ends that
// take JSON spell it: the SearchMemories tool's arguments (mcp), search
// --batch lines and eval's queries.jsonl (cmd/mnemo). The names are the
// tool's camelCase ones, with the older snake_case page_size and min_score
// still accepted; dates are YYYY-MM-DD or RFC 3339 (engine.ParseDate);
// integers may be written 2.0; tags may be one comma-separated string.
//
// The engine takes a plain engine.Query and knows none of these
// spellings. The socket between mnemo processes (cmd/mnemo/remote) does not
// decode through here: it carries a query in its own wire form, written
// and read by mnemo itself.
package args

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"mnemo/engine"
)

// Query is engine.Query with the SearchMemories tool's argument names: the
// MCP tool's input type (its schema is inferred from these tags) and what
// json.Unmarshal decodes with UnmarshalJSON. It converts to and from
// engine.Query, whose fields it repeats one for one; a field added to one
// and not the other stops the conversion from compiling.
type Query struct {
	Text       string      `json:"query"`
	Mode       engine.Mode `json:"mode,omitempty"`
	Page       int         `json:"page,omitempty"`
	PageSize   int         `json:"pageSize,omitempty"`
	Folder     string      `json:"folder,omitempty"`
	Tags       []string    `json:"tags,omitempty"`
	From       time.Time   `json:"from,omitzero"`
	To         time.Time   `json:"to,omitzero"`
	MinScore   float64     `json:"minScore,omitempty"`
	Sort       engine.Sort `json:"sort,omitempty"`
	Now        time.Time   `json:"now,omitzero"`
	NoSnippets bool        `json:"noSnippets,omitempty"`
}

// queryAliases are the older snake_case spellings of Query's JSON fields
// that published callers still send: search --batch lines and
// the shared benchmark data's tools/batch.py ("page_size"), and "min_score"
// beside it.
var queryAliases = map[string]string{"page_size": "pageSize", "min_score": "minScore"}

// UnmarshalJSON reads a Query from its JSON form, the SearchMemories
// argument names (aliases: page_size, min_score). A field the object does
// not name, or names as null, keeps the value it had, so a caller can fill
// in defaults first. Dates are YYYY-MM-DD or RFC 3339; integers may be
// written 2.0. A field that is not a Query field is an error.
func (q *Query) UnmarshalJSON(b []byte) error {
	return Decode(b, (*engine.Query)(q), nil)
}

// Decode is Query.UnmarshalJSON into an engine.Query, for an object that
// may carry more than a query (a batch line's "id", an evaluation's
// judgments): every field that is not a Query field is passed to other, in
// name order, and its error stops the decoding; nil other makes such a
// field an error. On an error q may hold some of the fields.
func Decode(b []byte, q *engine.Query, other func(name string, value json.RawMessage) error) error {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || b[0] != '{' {
		return errors.New("a query must be a JSON object")
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(b, &obj); err != nil {
		return errors.New(strings.TrimPrefix(err.Error(), "json: "))
	}
	names := make([]string, 0, len(obj))
	for k := range obj {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, alias := range names {
		if canon, ok := queryAliases[alias]; ok {
			if _, both := obj[canon]; both {
				return fmt.Errorf("%s and %s are the same field: give one", canon, alias)
			}
		}
	}
	for _, name := range names {
		val := obj[name]
		field := name
		if canon, ok := queryAliases[name]; ok {
			field = canon
		}
		if !isQueryField(field) {
			if other == nil {
				return fmt.Errorf("unknown field %.40q", name)
			}
			if err := other(name, val); err != nil {
				return err
			}
			continue
		}
		if string(val) == "null" {
			continue // as if absent: the caller's default stands
		}
		if err := decodeField(q, field, name, val); err != nil {
			return err
		}
	}
	return nil
}

func isQueryField(name string) bool {
	switch name {
	case "query", "mode", "page", "pageSize", "folder", "tags", "from", "to", "minScore", "sort", "now", "noSnippets":
		return true
	}
	return false
}

// decodeField sets one field; name is the spelling the caller used, for errors.
func decodeField(q *engine.Query, field, name string, val json.RawMessage) error {
	str := func() (string, error) {
		var s string
		if err := json.Unmarshal(val, &s); err != nil {
			return "", fmt.Errorf("%s must be a string", name)
		}
		return s, nil
	}
	date := func(endOfDay bool) (time.Time, error) {
		s, err := str()
		if err != nil {
			return time.Time{}, err
		}
		return engine.ParseDate(name, s, endOfDay)
	}
	var err error
	switch field {
	case "query":
		q.Text, err = str()
	case "mode":
		var s string
		s, err = str()
		q.Mode = engine.Mode(s)
	case "folder":
		q.Folder, err = str()
	case "sort":
		var s string
		s, err = str()
		q.Sort = engine.Sort(s)
	case "page":
		q.Page, err = Int(name, val)
	case "pageSize":
		q.PageSize, err = Int(name, val)
	case "minScore":
		if json.Unmarshal(val, &q.MinScore) != nil {
			err = fmt.Errorf("%s must be a number", name)
		}
	case "tags":
		q.Tags, err = Tags(name, val)
	case "noSnippets":
		if json.Unmarshal(val, &q.NoSnippets) != nil {
			err = fmt.Errorf("%s must be true or false", name)
		}
	case "from":
		q.From, err = date(false)
	case "to":
		q.To, err = date(true)
	case "now":
		q.Now, err = date(false)
	}
	return err
}

// Int reads an integer argument that some clients send as a float (2.0),
// but not one with a fraction (2.5) or beyond what a float holds exactly.
// name is the argument, for the error.
func Int(name string, val json.RawMessage) (int, error) {
	var x float64
	if json.Unmarshal(val, &x) != nil || x != math.Trunc(x) || math.Abs(x) > 1<<53 {
		return 0, fmt.Errorf("%s must be an integer", name)
	}
	return int(x), nil
}

// Tags reads a tags argument: an array of strings, or one string —
// what models often send for a single tag ("storage") — which is split at
// commas ("storage, db" is two tags; no tag holds a comma). name is the
// argument, for the error.
func Tags(name string, val json.RawMessage) ([]string, error) {
	var tags []string
	if json.Unmarshal(val, &tags) == nil {
		return tags, nil
	}
	var one string
	if json.Unmarshal(val, &one) != nil {
		return nil, fmt.Errorf("%s must be an array of strings (or one string)", name)
	}
	tags = []string{}
	for _, t := range strings.Split(one, ",") {
		if t = strings.TrimSpace(t); t != "" {
			tags = append(tags, t)
		}
	}
	return tags, nil
}
