package engine

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// ErrBadDate is wrapped by every date that is neither form a query accepts.
var ErrBadDate = errors.New("want YYYY-MM-DD or RFC 3339 (2025-06-01T12:00:00Z)")

// ParseDate reads a query date: RFC 3339, or YYYY-MM-DD meaning midnight
// UTC, or with endOfDay the last nanosecond of that day, so that "to
// 2024-05-01" includes all of May 1st. "" is the zero time (no bound).
// name is the field, for the error.
//
// It lives beside the queries rather than with one front end because
// what a day means as a bound is the same for both corpora and every front
// end (flags, tool arguments, batch lines).
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
