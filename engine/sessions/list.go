package sessions

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"mnemo/engine/fulltext"
	"mnemo/engine/rank"
	"mnemo/engine/store"
)

// ListQuery lists sessions without a query, newest first, a page
// at a time (page from 1, pageSize 1 to 200: SearchMemories' paging).
type ListQuery struct {
	Project string    `json:"project,omitempty"`     // as Query.Project
	Agent   string    `json:"sourceAgent,omitempty"` // as Query.Agent
	From    time.Time `json:"from,omitzero"`         // sessions active on or after this: their last message is not before it
	To      time.Time `json:"to,omitzero"`           // sessions active on or before this: their first message is not after it
	// Archived, if set, keeps only archived sessions (true) or only live ones (false).
	Archived *bool `json:"archived,omitempty"`
	Page     int   `json:"page,omitempty"`
	PageSize int   `json:"pageSize,omitempty"`
}

// Listing is one page of a listing.
type Listing struct {
	TotalCount int       `json:"totalCount"` // sessions matching, on all pages
	Page       int       `json:"page"`
	PageSize   int       `json:"pageSize"`
	Indexing   bool      `json:"indexing"`
	Sessions   []Summary `json:"sessions"`
}

// Summary is one session of a listing.
type Summary struct {
	SessionID    string    `json:"sessionId"`
	SourceAgent  string    `json:"sourceAgent"`
	Project      string    `json:"project"`
	Path         string    `json:"path"`
	Title        string    `json:"title"` // the first user message, on one line, cut to maxTitleRunes
	Started      time.Time `json:"started,omitzero"`
	Ended        time.Time `json:"ended,omitzero"`
	MessageCount int       `json:"messageCount"`
	Archived     bool      `json:"archived,omitempty"`
	ArchivedAt   time.Time `json:"archivedAt,omitzero"`
}

// maxTitleRunes bounds a listed session's title.
const maxTitleRunes = 100

// List returns one page of the sessions q selects, newest first: by the
// last message, then the first (undated sessions last).
func (s *Corpus) List(ctx context.Context, q ListQuery) (Listing, error) {
	var err error
	if q.Page, err = rank.Count("page", q.Page, 1, rank.MaxPage, rank.ErrBadPage); err != nil {
		return Listing{}, err
	}
	if q.PageSize, err = rank.Count("pageSize", q.PageSize, 10, MaxLimit, rank.ErrBadPageSize); err != nil {
		return Listing{}, err
	}
	if !q.From.IsZero() && !q.To.IsZero() && q.To.Before(q.From) {
		return Listing{}, fmt.Errorf("to %s is before from %s: %w", q.To.Format(time.RFC3339), q.From.Format(time.RFC3339), rank.ErrBadRange)
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := Listing{Page: q.Page, PageSize: q.PageSize, Indexing: s.indexingNow(), Sessions: []Summary{}}
	if s.lastSync.IsZero() && len(s.sessions) == 0 && !out.Indexing {
		return Listing{}, fmt.Errorf("sessions %w", store.ErrIndexNotReady)
	}
	sc := newSessionScope(Query{Project: strings.TrimSpace(q.Project), Agent: strings.ToLower(strings.TrimSpace(q.Agent)), Archived: q.Archived})
	var in []*session
	for _, ss := range s.sessions {
		if sc.session(ss) && activeWithin(ss, q.From, q.To) {
			in = append(in, ss)
		}
	}
	sort.Slice(in, func(i, j int) bool { return newer(in[i], in[j]) })
	out.TotalCount = len(in)
	lo := min((q.Page-1)*q.PageSize, len(in))
	for _, ss := range in[lo:min(lo+q.PageSize, len(in))] {
		if err := ctx.Err(); err != nil {
			return Listing{}, err
		}
		out.Sessions = append(out.Sessions, Summary{
			SessionID: ss.ID, SourceAgent: ss.Agent, Project: ss.Project, Path: ss.Path, Title: s.title(ss),
			Started: ss.Started, Ended: ss.Ended, MessageCount: ss.count, Archived: ss.archived(), ArchivedAt: ss.Archived,
		})
	}
	return out, nil
}

// activeWithin reports whether ss has messages in [from, to]: it ended on
// or after from and started on or before to. An undated session matches
// only when no bound is given.
func activeWithin(ss *session, from, to time.Time) bool {
	if from.IsZero() && to.IsZero() {
		return true
	}
	first, last := ss.Started, ss.Ended
	if first.IsZero() {
		first = last
	}
	if last.IsZero() {
		last = first
	}
	if first.IsZero() {
		return false
	}
	return (from.IsZero() || !last.Before(from)) && (to.IsZero() || !first.After(to))
}

// newer orders sessions newest first: by last message, then first, then
// the order they were indexed in; undated last.
func newer(a, b *session) bool {
	ta, tb := a.Ended, b.Ended
	if ta.IsZero() {
		ta = a.Started
	}
	if tb.IsZero() {
		tb = b.Started
	}
	if !ta.Equal(tb) {
		return ta.After(tb)
	}
	if !a.Started.Equal(b.Started) {
		return a.Started.After(b.Started)
	}
	return a.SID > b.SID
}

// title is a session's first user message (else its summary, else its
// first message) on one line, cut on a word boundary. The caller holds s.mu.
func (s *Corpus) title(ss *session) string {
	seqs := ss.orderedSeqs()
	pick := -1
	for i, seq := range seqs {
		if s.cols.roleName(ss.num(seq)) == "user" {
			pick = i
			break
		}
	}
	text := ""
	switch {
	case pick >= 0:
		text = s.st.text(ss.SID, seqs[pick])
	case ss.Summary != "":
		text = ss.Summary
	case len(seqs) > 0:
		text = s.st.text(ss.SID, seqs[0])
	}
	return titleLine(text, maxTitleRunes)
}

// titleLine folds white space (oneLine) and cuts the text to at most n
// runes, at a word boundary when there is one in the last third, marking
// the cut with "…".
func titleLine(text string, n int) string {
	text = fulltext.OneLine(text)
	if utf8.RuneCountInString(text) <= n {
		return text
	}
	end, k := len(text), 0
	for i := range text { // i: the byte offset of the k-th rune
		if k == n-1 {
			end = i
			break
		}
		k++
	}
	head := text[:end]
	if sp := strings.LastIndexByte(head, ' '); sp > len(head)*2/3 {
		head = head[:sp]
	}
	return strings.TrimRight(head, " ") + "…"
}
