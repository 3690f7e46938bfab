package engine

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
)

// ErrBadDate is wrapped by every date that is neither form a query accepts.
var ErrBadDate = errors.New("want YYYY-MM-DD or RFC 3339 (2025-06-01T12:00:00Z)")

// ParseDate reads a query date: RFC 3339, or YYYY-MM-DD meaning midnight
// UTC, or with endOfDay the last nanosecond of that day, so that "to
// 2024-05-01" includes all of May 1st. "" is the zero time (no bound).
// name is the field, for the error.
func ParseDate(name, s string, endOfDay bool) (time.Time, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("%s %.40q: %w", name, s, ErrBadDate)
	}
	if endOfDay {
		t = t.AddDate(0, 0, 1).Add(-time.Nanosecond)
	}
	return t, nil
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
	return q.DecodeJSON(b, nil)
}

// DecodeJSON is UnmarshalJSON for an object that carries more than a query
// (a batch line's "id", an evaluation's judgments): every field that is not
// a Query field is passed to other, in name order, and its error stops the
// decoding; nil other makes such a field an error. On an error q may hold
// some of the fields.
func (q *Query) DecodeJSON(b []byte, other func(name string, value json.RawMessage) error) error {
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
		if err := q.decodeField(field, name, val); err != nil {
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
func (q *Query) decodeField(field, name string, val json.RawMessage) error {
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
		return ParseDate(name, s, endOfDay)
	}
	var err error
	switch field {
	case "query":
		q.Text, err = str()
	case "mode":
		var s string
		s, err = str()
		q.Mode = Mode(s)
	case "folder":
		q.Folder, err = str()
	case "sort":
		var s string
		s, err = str()
		q.Sort = Sort(s)
	case "page":
		q.Page, err = jsonInt(name, val)
	case "pageSize":
		q.PageSize, err = jsonInt(name, val)
	case "minScore":
		if json.Unmarshal(val, &q.MinScore) != nil {
			err = fmt.Errorf("%s must be a number", name)
		}
	case "tags":
		q.Tags, err = DecodeTags(name, val)
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

// jsonInt reads an integer that some clients send as a float (2.0), but
// not one with a fraction (2.5) or beyond what a float holds exactly.
func jsonInt(name string, val json.RawMessage) (int, error) {
	var x float64
	if json.Unmarshal(val, &x) != nil || x != math.Trunc(x) || math.Abs(x) > 1<<53 {
		return 0, fmt.Errorf("%s must be an integer", name)
	}
	return int(x), nil
}

// DecodeTags reads a tags argument: an array of strings, or one string —
// what models often send for a single tag ("storage") — which is split at
// commas ("storage, db" is two tags; no tag holds a comma). name is the
// argument, for the error.
func DecodeTags(name string, val json.RawMessage) ([]string, error) {
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
