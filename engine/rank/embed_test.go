package rank

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
)

// TestEmbedOutsideLock checks the order of a search's first steps: the
// index is checked under the read lock, the query is embedded with no lock
// held (a writer could take the lock meanwhile), checked again under the
// read lock, and searched under it with the second check's answer.
func TestEmbedOutsideLock(t *testing.T) {
	errCannot := errors.New("cannot answer")
	errEmbed := errors.New("embedder down")
	errSearch := errors.New("search failed")
	type answer struct {
		done bool
		err  error
	}
	tests := []struct {
		name      string
		mode      Mode
		checks    []answer // answers of check, call by call
		embedErr  error
		searchErr error
		steps     []string // what ran, in order
		err       error
	}{
		{"hybrid", Hybrid, nil, nil, nil,
			[]string{"check 1 (read lock)", "embed (no lock)", "check 2 (read lock)", "search 2 (read lock)"}, nil},
		{"semantic", Semantic, nil, nil, nil,
			[]string{"check 1 (read lock)", "embed (no lock)", "check 2 (read lock)", "search 2 (read lock)"}, nil},
		{"fulltext is not embedded", FullText, nil, nil, nil,
			[]string{"check 1 (read lock)", "check 2 (read lock)", "search 2 (read lock)"}, nil},
		{"a query the index cannot answer is not embedded", Hybrid, []answer{{false, errCannot}}, nil, nil,
			[]string{"check 1 (read lock)"}, errCannot},
		{"a page that is done is not embedded", Hybrid, []answer{{true, nil}}, nil, nil,
			[]string{"check 1 (read lock)"}, nil},
		{"the index changed while embedding", Hybrid, []answer{{false, nil}, {false, errCannot}}, nil, nil,
			[]string{"check 1 (read lock)", "embed (no lock)", "check 2 (read lock)"}, errCannot},
		{"the embedder's error goes to the search", Hybrid, nil, errEmbed, nil,
			[]string{"check 1 (read lock)", "embed (no lock)", "check 2 (read lock)", "search 2 (read lock) embed error"}, nil},
		{"the search's error is returned", FullText, nil, nil, errSearch,
			[]string{"check 1 (read lock)", "check 2 (read lock)", "search 2 (read lock)"}, errSearch},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.RWMutex
			// held says which lock a step runs under, as a writer sees it.
			held := func() string {
				if mu.TryLock() {
					mu.Unlock()
					return "no lock"
				}
				if mu.TryRLock() {
					mu.RUnlock()
					return "read lock"
				}
				return "write lock"
			}
			var steps []string
			calls := 0
			check := func() (int, bool, error) {
				calls++
				steps = append(steps, fmt.Sprintf("check %d (%s)", calls, held()))
				if calls <= len(tc.checks) {
					return calls, tc.checks[calls-1].done, tc.checks[calls-1].err
				}
				return calls, false, nil
			}
			vec := []float32{1, 0}
			embed := func(context.Context) ([]float32, error) {
				steps = append(steps, "embed ("+held()+")")
				if tc.embedErr != nil {
					return nil, tc.embedErr
				}
				return vec, nil
			}
			search := func(checked int, qv []float32, embedErr error) error {
				step := fmt.Sprintf("search %d (%s)", checked, held())
				if embedErr != nil {
					if !errors.Is(embedErr, tc.embedErr) {
						t.Errorf("embed error %v, want %v", embedErr, tc.embedErr)
					}
					step += " embed error"
				}
				if want := tc.mode != FullText && tc.embedErr == nil; (qv != nil) != want {
					t.Errorf("query vector %v, want one: %v", qv, want)
				}
				steps = append(steps, step)
				return tc.searchErr
			}
			err := EmbedOutsideLock(context.Background(), &mu, tc.mode, check, embed, search)
			if !errors.Is(err, tc.err) || (tc.err == nil && err != nil) {
				t.Errorf("error %v, want %v", err, tc.err)
			}
			if !slices.Equal(steps, tc.steps) {
				t.Errorf("steps\n %q\nwant\n %q", steps, tc.steps)
			}
			if got := held(); got != "no lock" {
				t.Errorf("after the search: %s held", got)
			}
		})
	}
}
