package remote

import (
	"errors"
	"fmt"
	"testing"
)

// Every sentinel survives the trip: its kind names it, and an Error of that
// kind matches it with errors.Is, even wrapped with detail.
func TestSentinelKinds(t *testing.T) {
	seen := map[string]bool{}
	for _, s := range sentinels {
		if seen[s.kind] {
			t.Errorf("kind %q named twice", s.kind)
		}
		seen[s.kind] = true
		k := kindOf(fmt.Errorf("detail: %w", s.err))
		if k != s.kind {
			t.Errorf("kindOf(%v) = %q, want %q", s.err, k, s.kind)
		}
		if err := error(&Error{Msg: "m", Kind: k}); !errors.Is(err, s.err) {
			t.Errorf("Error{Kind: %q} is not %v", k, s.err)
		}
	}
	if k := kindOf(errors.New("disk on fire")); k != kindOther {
		t.Errorf("kindOf(other) = %q", k)
	}
	if err := (&Error{Msg: "m", Kind: kindBadRequest}); errors.Unwrap(err) != nil {
		t.Errorf("bad-request unwraps to %v", errors.Unwrap(err))
	}
}
