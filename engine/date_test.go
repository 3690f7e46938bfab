package engine_test

import (
	"errors"
	"testing"
	"time"

	"mnemo/engine"
)

func TestParseDate(t *testing.T) {
	if d, err := engine.ParseDate("to", " 2024-05-01 ", true); err != nil || !d.Equal(time.Date(2024, 5, 2, 0, 0, 0, 0, time.UTC).Add(-time.Nanosecond)) {
		t.Errorf("to 2024-05-01 = %v, %v", d, err)
	}
	if d, err := engine.ParseDate("from", "", false); err != nil || !d.IsZero() {
		t.Errorf("empty = %v, %v", d, err)
	}
	if _, err := engine.ParseDate("from", "yesterday", false); !errors.Is(err, engine.ErrBadDate) {
		t.Errorf("yesterday: err = %v, want ErrBadDate", err)
	}
}
