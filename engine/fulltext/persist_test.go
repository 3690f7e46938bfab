package fulltext

import (
	"slices"
	"testing"
	"time"
)

// TestPersistenceMarks: a mark may go once Bleve has persisted the last
// batch that changed its path, not before; a batch given up keeps its
// marks; forget (the index replaced) leaves nothing to wait for.
func TestPersistenceMarks(t *testing.T) {
	p := NewTracker()
	persisted := p.persistedUpTo // what Bleve's callback calls
	s1, _ := p.Begin([]string{"a.md", "b.md"})
	s2, _ := p.Begin([]string{"b.md", "c.md"})
	persisted(s1)
	if got := p.Cleared(); !slices.Equal(got, []string{"a.md"}) {
		t.Errorf("after batch 1 persisted: clearable %v, want [a.md] (b.md is in batch 2 too)", got)
	}
	s3, clear := p.Begin([]string{"d.md"})
	if len(clear) != 0 {
		t.Errorf("clearable %v handed out twice", clear)
	}
	p.Abandon(s3) // never reached Bleve
	persisted(s2)
	got := p.Cleared()
	slices.Sort(got)
	if !slices.Equal(got, []string{"b.md", "c.md"}) {
		t.Errorf("after batch 2 persisted: clearable %v, want [b.md c.md] (d.md's batch was given up)", got)
	}
	if err := p.Wait(10 * time.Millisecond); err == nil {
		t.Error("wait returned although batch 3 was never persisted")
	}
	p.Begin([]string{"e.md"})
	p.Forget()
	if err := p.Wait(10 * time.Second); err != nil {
		t.Errorf("after forget: %v", err)
	}
	if got := p.Cleared(); len(got) != 0 {
		t.Errorf("after forget: clearable %v, want none", got)
	}
}
