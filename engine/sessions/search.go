package sessions

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"mnemo/engine/admit"
	"mnemo/engine/fulltext"
	"mnemo/engine/rank"
	"mnemo/engine/store"
	"mnemo/engine/vectors"
)

// Errors of the sessions API, for errors.Is.
var (
	ErrBadRole       = errors.New("unknown role (want user or assistant)")
	ErrBadLimit      = fmt.Errorf("limit must be between 1 and %d", MaxLimit)
	ErrBadMaxHits    = fmt.Errorf("maxHits must be between 1 and %d", MaxHits)
	ErrBadOffset     = errors.New("offset must be 0 or more")
	ErrBadContext    = fmt.Errorf("context must be between 0 and %d", MaxContext)
	ErrNoSession     = errors.New("session not found")
	ErrNoMessage     = errors.New("message not found in the session")
	ErrBadMessageArg = errors.New("messageId is required")
)

// Bounds of a sessions query, which front ends' schemas state: sessions
// per page, hits per session, and messages either side of GetMessage's.
const (
	MaxLimit   = 200
	MaxHits    = 20
	MaxContext = 50
)

// MaxMessages is the most messages one GetSession returns: the one
// bound the engine, the MCP tool's schema and the CLI's paging share.
const MaxMessages = 1000

// Query is one search of the sessions index. Zero values mean "no
// constraint" or the default.
type Query struct {
	Text      string    `json:"query"`
	Mode      rank.Mode `json:"mode,omitempty"`      // default Hybrid
	Project   string    `json:"project,omitempty"`   // substring of the working folder, or a full path whose hash a Gemini session carries
	SessionID string    `json:"sessionId,omitempty"` // only this session
	Agent     string    `json:"sourceAgent,omitempty"`
	Role      string    `json:"role,omitempty"` // user or assistant
	// Archived, if set, keeps only archived sessions (true) or only those
	// whose transcript is there (false).
	Archived *bool     `json:"archived,omitempty"`
	From     time.Time `json:"from,omitzero"` // bounds on the message's timestamp, inclusive
	To       time.Time `json:"to,omitzero"`
	Sort     rank.Sort `json:"sort,omitempty"` // relevance (default) or recency: sessions by their latest hit
	Limit    int       `json:"limit,omitempty"`
	MaxHits  int       `json:"maxHits,omitempty"`
}

// Validate checks q and fills in its defaults.
func (q Query) Validate() (Query, error) {
	q.Text = strings.TrimSpace(q.Text)
	if q.Text == "" {
		return q, rank.ErrEmptyQuery
	}
	var err error
	if q.Mode, err = rank.ParseMode(q.Mode); err != nil {
		return q, err
	}
	if err := rank.CheckRange(q.From, q.To); err != nil {
		return q, err
	}
	if q.Sort, err = rank.ParseSort(q.Sort); err != nil {
		return q, err
	}
	switch r := strings.ToLower(strings.TrimSpace(q.Role)); r {
	case "", "user", "assistant":
		q.Role = r
	default:
		return q, fmt.Errorf("%q: %w", q.Role, ErrBadRole)
	}
	if q.Limit, err = rank.Count("limit", q.Limit, 10, MaxLimit, ErrBadLimit); err != nil {
		return q, err
	}
	if q.MaxHits, err = rank.Count("maxHits", q.MaxHits, 3, MaxHits, ErrBadMaxHits); err != nil {
		return q, err
	}
	q.Project = strings.TrimSpace(q.Project)
	q.SessionID = strings.TrimSpace(q.SessionID)
	q.Agent = strings.ToLower(strings.TrimSpace(q.Agent))
	return q, nil
}

// Page is the answer to a Query: sessions best first (a
// session's score is its best hit's), each with its hits best first.
type Page struct {
	Query         string    `json:"query"`
	Mode          rank.Mode `json:"mode"`
	Sort          rank.Sort `json:"sort"`
	Indexing      bool      `json:"indexing"`
	TotalSessions int       `json:"totalSessions"`
	Sessions      []Result  `json:"sessions"`
}

// Result is one session in a Page.
type Result struct {
	SessionID    string    `json:"sessionId"`
	SourceAgent  string    `json:"sourceAgent"`
	Project      string    `json:"project"`
	Started      time.Time `json:"started,omitzero"`
	Ended        time.Time `json:"ended,omitzero"`
	MessageCount int       `json:"messageCount"`
	// Archived: the transcript is gone; the session is served from the index.
	Archived bool         `json:"archived,omitempty"`
	Score    float64      `json:"score"`
	Hits     []MessageHit `json:"hits"`
}

// MessageHit is one matching message of a session.
type MessageHit struct {
	MessageID  string    `json:"messageId"`
	Role       string    `json:"role"`
	Timestamp  time.Time `json:"timestamp,omitzero"`
	Excerpt    string    `json:"excerpt"`
	Score      float64   `json:"score"`
	MatchCount int       `json:"matchCount"`
}

// sessionScope is the one place that decides whether a message is inside
// a sessions query's filters.
type sessionScope struct {
	q        Query
	projHash string  // sha256 of q.Project, for Gemini's hashed project folders
	from, to msgTime // q.From and q.To as the columns hold times
}

func newSessionScope(q Query) sessionScope {
	sc := sessionScope{q: q, from: toMsgTime(q.From), to: toMsgTime(q.To)}
	if q.Project != "" {
		sum := sha256.Sum256([]byte(q.Project))
		sc.projHash = hex.EncodeToString(sum[:])
	}
	return sc
}

func (sc sessionScope) filters() bool {
	q := sc.q
	return q.Project != "" || q.SessionID != "" || q.Agent != "" || q.Role != "" || !q.From.IsZero() || !q.To.IsZero() || q.Archived != nil
}

func (sc sessionScope) session(ss *session) bool {
	q := sc.q
	if q.SessionID != "" && ss.ID != q.SessionID {
		return false
	}
	if q.Agent != "" && !strings.EqualFold(ss.Agent, q.Agent) {
		return false
	}
	if q.Archived != nil && ss.archived() != *q.Archived {
		return false
	}
	if q.Project != "" && !strings.Contains(ss.Project, q.Project) && (ss.ProjectHash == "" || ss.ProjectHash != sc.projHash) {
		return false
	}
	return true
}

// message is whether message n of c is inside the query's role and dates.
func (sc sessionScope) message(c *msgCols, n msgNum) bool {
	q := sc.q
	if q.Role != "" && c.roleName(n) != q.Role {
		return false
	}
	t := c.time[n]
	if !q.From.IsZero() && t.before(sc.from) {
		return false
	}
	if !q.To.IsZero() && sc.to.before(t) {
		return false
	}
	return true
}

// Search answers q with the memory search's stages and scores: BM25
// candidates (normalised by the best in scope), vector candidates (cosine
// of the message, clipped at 0, joining on meaning alone above the
// semantic floor; over a large scope only when the text candidates do not
// already decide the page, vecstage.go), fusion (engine/rank), then
// grouping by session. Messages
// carry no recency decay: a transcript is a record of what was said, and
// "latest first" is sort recency or the date filters. A search first
// waits its turn at Config.Admit, the process's gate.
func (s *Corpus) Search(ctx context.Context, q Query) (Page, error) {
	return admit.Do(ctx, s.cfg.Admit, func() (Page, error) { return s.search(ctx, q) })
}

func (s *Corpus) search(ctx context.Context, q Query) (Page, error) {
	q, err := q.Validate()
	if err != nil {
		return Page{}, err
	}
	page := Page{Query: q.Text, Mode: q.Mode, Sort: q.Sort, Sessions: []Result{}}
	err = rank.EmbedOutsideLock(ctx, &s.mu, q.Mode,
		func() (fulltext.Terms, bool, error) { return s.searchableLocked(q, &page) },
		func(ctx context.Context) ([]float32, error) { return vectors.EmbedQuery(ctx, s.emb, q.Text, q.Mode) },
		func(terms fulltext.Terms, qv []float32, embedErr error) error {
			return s.searchLocked(ctx, q, terms, qv, embedErr, &page)
		})
	if err != nil {
		return Page{}, err
	}
	return page, nil
}

// searchLocked is the search's stages under the read lock, as the memory
// corpus's (engine.Engine.searchLocked): messages instead of memories, grouped by session,
// without decay. It fills page.
func (s *Corpus) searchLocked(ctx context.Context, q Query, terms fulltext.Terms, qv []float32, embedErr error, page *Page) error {
	sc := newSessionScope(q)
	p := sessionPlan{mode: q.Mode, fuser: rank.NewFuser(s.cfg.Fusion, s.rank), floor: s.rank.SemanticFloor,
		limit: q.Limit, hits: q.MaxHits, chunks: max(256, 4*q.Limit*q.MaxHits)}

	var text []msgCandidate
	var textSessions *sidSet
	semDone := s.startSemantic(ctx, q, sc, qv, embedErr, p.chunks)
	var err error
	div := 1.0
	if q.Mode != rank.Semantic {
		text, textSessions, err = textStage(s, ctx, terms, sc, max(maxTextCandidates, 20*p.limit*p.hits))
		if err == nil {
			div, err = s.rerank(ctx, text, q.Text)
		}
	}
	if err != nil {
		if semDone != nil {
			<-semDone // never leave the vector query reading under a released lock
		}
		return err
	}
	var wider widerText
	if textSessions != nil {
		wider = func(k int) ([]msgCandidate, float64, error) { return s.widerText(ctx, terms, sc, k, text, div) }
	}
	groups, err := s.candidateGroups(ctx, p, sc, text, textCut(text, textSessions != nil), qv, semDone, wider)
	if err != nil {
		return err
	}
	page.TotalSessions = len(groups)
	if textSessions != nil {
		for _, g := range groups {
			textSessions.add(g.ss.SID)
		}
		page.TotalSessions = textSessions.len()
	}
	for _, g := range firstGroups(groups, q.Sort, q.Limit) {
		r, err := s.result(g, q.MaxHits, terms)
		if err != nil {
			return err
		}
		page.Sessions = append(page.Sessions, r)
	}
	// The hits' records and text blocks were read once, for this page:
	// a serve that kept every page it ever read mapped grew by ~150 MB of
	// them over 100 queries at 1M messages (searchPages).
	s.st.pages.Tend()
	return nil
}

// searchableLocked checks that the index can answer q and analyses its
// text. done says the answer is page as it stands (a first sync that
// has stored nothing yet); err, that q cannot be answered. The caller
// holds s.mu.
func (s *Corpus) searchableLocked(q Query, page *Page) (fulltext.Terms, bool, error) {
	page.Indexing = s.indexingNow()
	done, err := rank.Ready(q.Mode, page.Indexing, s.lastSync.IsZero() && s.cols.live == 0, s.damaged(), store.ErrIndexNotReady)
	if err != nil {
		return fulltext.Terms{}, false, fmt.Errorf("sessions %w", err)
	}
	terms := fulltext.Terms{}
	if !done {
		terms, err = s.ft.QueryTerms(q.Text)
	}
	return terms, done, err
}

// indexingNow reports whether answers may be partial: a first or full sync
// is running, or one was cut short and none has completed since. The
// caller holds s.mu.
func (s *Corpus) indexingNow() bool {
	return s.unfinished != "" || (s.indexing.Load() && (s.lastSync.IsZero() || s.needFull != ""))
}

// maxScopedScan is how many in-scope messages startSemantic compares
// one by one before it asks the vector store to search instead.
const maxScopedScan = 50_000

// semanticCandidates is stage two over a scope too large to compare
// message by message (startSemantic decides): the vector store scans
// every message for the n nearest qv, with the exact-match part of the
// scope as labels.
func (s *Corpus) semanticCandidates(ctx context.Context, qv []float32, sc sessionScope, n int) (vectors.NumFound, error) {
	if err := s.vectorsLoaded(); err != nil {
		return vectors.NumFound{}, err
	}
	s.vecScans.Add(1)
	return s.vec.Query(ctx, qv, n, sc.labels())
}

// scopedMessages lists the messages in sc's sessions and inside its role
// and dates; false when they are more than maxScopedScan.
func (s *Corpus) scopedMessages(sc sessionScope) ([]msgNum, bool) {
	var in []msgNum
	for _, ss := range s.sessions {
		if !sc.session(ss) {
			continue
		}
		ss.each(func(_ uint32, n msgNum) {
			if sc.message(&s.cols, n) {
				in = append(in, n)
			}
		})
		if len(in) > maxScopedScan {
			return nil, false
		}
	}
	return in, true
}

// textStage is stage one, (*Corpus).textCandidates: a variable so that a
// test can hold it to the exhaustive reference it replaced.
var textStage = (*Corpus).textCandidates

// maxTextCandidates bounds the text matches that go on to fusion: past it,
// only the best by BM25 do (at least 20 per hit a page can show). A query
// of common words matches most of a large history, and every candidate
// costs a vector lookup and a place in its session's list; one beyond the
// bound could only reach the page on its similarity, which the vector
// candidates already cover. On the sessions benchmark no query reaches
// the bound (a project holds ~600 messages), so its figures are exact.
const maxTextCandidates = 2000

// labels is the exact-match part of a scope, for the vector store.
func (sc sessionScope) labels() []string {
	var l []string
	if sc.q.Agent != "" {
		l = append(l, "agent:"+sc.q.Agent)
	}
	if sc.q.Role != "" {
		l = append(l, "role:"+sc.q.Role)
	}
	if sc.q.SessionID != "" {
		l = append(l, "session:"+sc.q.SessionID)
	}
	return l
}

// sessionPlan is what the stages after the candidates need of a query.
type sessionPlan struct {
	mode        rank.Mode
	fuser       rank.Fuser
	floor       float64
	limit, hits int
	chunks      int // how many message vectors to ask the store for first
}

// inScope is the one check of a message against a query's filters.
func (s *Corpus) inScope(sc sessionScope, n msgNum) bool {
	if !sc.filters() {
		return true
	}
	ss := s.sessions[s.cols.sid[n]]
	return ss != nil && sc.session(ss) && sc.message(&s.cols, n)
}

// fuse is stage two and three: text matches get their exact similarity,
// messages found by meaning alone join above the floor, and every
// candidate gets its fused score.
func (s *Corpus) fuse(ctx context.Context, p sessionPlan, sc sessionScope, text []msgCandidate, qv []float32, found vectors.NumFound) ([]msgCandidate, error) {
	cands, err := s.join(ctx, p, sc, text, qv, found)
	if err != nil {
		return nil, err
	}
	p.score(cands)
	return cands, nil
}

// score gives every candidate its fused score, which is its score:
// sessions are not decayed.
func (p sessionPlan) score(cands []msgCandidate) {
	rank.FuseAll(p.fuser, cands, p.mode)
	for i := range cands {
		cands[i].Score = cands[i].Fused
	}
}

// join is rank.Join by message number: a text candidate gets its own
// similarity however low (none without a query vector), and a message
// found by meaning alone joins when its similarity reaches the floor and
// it is inside sc. Similarities are clipped at 1.
func (s *Corpus) join(ctx context.Context, p sessionPlan, sc sessionScope, text []msgCandidate, qv []float32, found vectors.NumFound) ([]msgCandidate, error) {
	cands := make([]msgCandidate, len(text), len(text)+len(found.Hits))
	copy(cands, text)
	if qv == nil {
		return cands, nil
	}
	sims, err := s.textSims(ctx, qv, text)
	if err != nil {
		return nil, err
	}
	taken := make(map[msgNum]bool, len(cands))
	for i := range cands {
		taken[cands[i].Rec.num] = true
		setSim(&cands[i], sims[i])
	}
	for _, h := range found.Hits {
		if float64(h.Similarity) < p.floor || taken[h.Num] || !s.inScope(sc, h.Num) {
			continue
		}
		cands = append(cands, msgCandidate{Rec: s.cols.item(h.Num), Sem: math.Min(float64(h.Similarity), 1), SemRank: 1})
	}
	return cands, nil
}

// setSim gives text candidate c its similarity sim (-2 for none): a
// positive one is its semantic evidence, clipped at 1.
func setSim(c *msgCandidate, sim float32) {
	if sim > 0 {
		c.Sem, c.Chunk, c.SemRank = math.Min(float64(sim), 1), 0, 1
	}
}

// textSims is qv's similarity to each text candidate (-2: it has no
// vector): from the vector store once it is loaded, else read from the
// state store for these candidates alone, so that a hybrid query the
// text candidates decide (vecstage.go) loads no vector (a cold CLI
// query, a serve that never needs a full scan).
func (s *Corpus) textSims(ctx context.Context, qv []float32, text []msgCandidate) ([]float32, error) {
	if !s.vecReady.Load() {
		refs := make([]textRef, len(text))
		for i := range text {
			refs[i] = textRef{sid: text[i].Rec.sid, seq: text[i].Rec.seq}
		}
		return s.st.similarities(ctx, qv, refs)
	}
	nums := make([]uint32, len(text))
	for i := range text {
		nums[i] = text[i].Rec.num
	}
	sims := make([]float32, len(text))
	s.vec.NearestEach(qv, nums, sims)
	return sims, nil
}

// sessionGroup is one session's hits, best first.
type sessionGroup struct {
	ss     *session
	hits   []*msgCandidate
	best   float64
	latest msgTime // zeroMsgTime until a hit is dated later
}

// group is stage four: hits by session, each session scored by its best
// hit. Hits are put in order only in the sessions a page shows. Two
// passes over the candidates: which session each goes to (by session
// number, in an array, not a map) and how many each gets, then the hits,
// into one array cut by session; a map and a list grown a hit at a time
// were most of the stage's CPU at 1M messages. Sessions come in the order
// of their first candidate.
func (s *Corpus) group(p sessionPlan, cands []msgCandidate) []*sessionGroup {
	var top uint32
	for i := range cands {
		if cands[i].Score > 0 {
			top = max(top, cands[i].Rec.sid)
		}
	}
	slot := make([]int32, top+1) // by session number: its group + 1, -1 none, 0 not met
	var sess []*session
	var counts []int
	for i := range cands {
		c := &cands[i]
		if c.Score <= 0 {
			continue
		}
		at := &slot[c.Rec.sid]
		if *at == 0 {
			*at = -1
			if ss := s.sessions[c.Rec.sid]; ss != nil {
				sess, counts = append(sess, ss), append(counts, 0)
				*at = int32(len(sess))
			}
		}
		if *at > 0 {
			counts[*at-1]++
		}
	}
	groups := make([]sessionGroup, len(sess))
	hits := make([]*msgCandidate, 0, len(cands))
	out := make([]*sessionGroup, len(sess))
	for i, ss := range sess {
		end := len(hits) + counts[i]
		groups[i] = sessionGroup{ss: ss, hits: hits[len(hits):len(hits):end], latest: zeroMsgTime}
		hits = hits[:end]
		out[i] = &groups[i]
	}
	for i := range cands {
		c := &cands[i]
		if c.Score <= 0 || slot[c.Rec.sid] <= 0 {
			continue
		}
		g := &groups[slot[c.Rec.sid]-1]
		g.hits = append(g.hits, c)
		g.best = math.Max(g.best, c.Score)
		if g.latest.before(c.Rec.time) {
			g.latest = c.Rec.time
		}
	}
	return out // each group's hits are ordered for the page alone (result)
}

// wantsMore reports whether a message the vector store did not return could
// still change which sessions make the page: its similarity is at most
// found.Bound, so its fused score is at most what that bound fuses to, and
// it matters if that reaches the limit-th session's best. (A missing
// message could also add a weak hit inside a session already on the page;
// finding those exactly means reading every message above the floor,
// which cost 8× the query time on the sessions benchmark for no change in
// its figures, so hits inside a session are the best among those found.)
func (p sessionPlan) wantsMore(groups []*sessionGroup, found vectors.NumFound) bool {
	if found.Complete || float64(found.Bound) < p.floor {
		return false
	}
	if len(groups) < p.limit {
		return true
	}
	seen := 0
	for _, g := range groups {
		for _, c := range g.hits {
			if c.SemRank > 0 {
				seen++
			}
		}
	}
	bound := p.fuser.Ceiling(p.mode, float64(found.Bound), seen)
	return bound >= kthBest(groups, p.limit)
}

// kthBest is the k-th highest best score among groups (k ≤ len(groups)).
func kthBest(groups []*sessionGroup, k int) float64 {
	bests := make([]float64, len(groups))
	for i, g := range groups {
		bests[i] = g.best
	}
	return rank.KthLargest(bests, k)
}

// firstGroups is the first n sessions of gs in page order, found without
// ordering the rest: a query of common words has a group for most
// sessions, a page shows a few.
func firstGroups(gs []*sessionGroup, by rank.Sort, n int) []*sessionGroup {
	return firstN(gs, n, func(a, b *sessionGroup) bool { return groupBefore(a, b, by) })
}

// groupBefore is the page's order of sessions: best first (ties: latest
// ended, then number), or by their latest hit for recency.
func groupBefore(a, b *sessionGroup, by rank.Sort) bool {
	if by == rank.ByRecency && a.latest != b.latest {
		return b.latest.before(a.latest)
	}
	if a.best != b.best {
		return a.best > b.best
	}
	if !a.ss.Ended.Equal(b.ss.Ended) {
		return a.ss.Ended.After(b.ss.Ended)
	}
	return a.ss.SID < b.ss.SID
}

// firstN is the first n of xs in the strict total order before, in that
// order: a sorted window of n that an element joins only when it comes
// before the window's last, so most of a long list costs one comparison.
// xs is not changed.
func firstN[T any](xs []T, n int, before func(a, b T) bool) []T {
	top := make([]T, 0, min(n, len(xs)))
	for _, x := range xs {
		if len(top) == n && !before(x, top[n-1]) {
			continue
		}
		i := sort.Search(len(top), func(i int) bool { return before(x, top[i]) })
		if len(top) < n {
			top = append(top, x)
		}
		copy(top[i+1:], top[i:len(top)-1])
		top[i] = x
	}
	return top
}

// result is stage five: one session of the page with its best hits, each
// with its id, role and time from its stored record and an excerpt of
// its stored (redacted) text.
func (s *Corpus) result(g *sessionGroup, maxHits int, terms fulltext.Terms) (Result, error) {
	r := Result{
		SessionID: g.ss.ID, SourceAgent: g.ss.Agent, Project: g.ss.Project,
		Started: g.ss.Started, Ended: g.ss.Ended, MessageCount: g.ss.count, Archived: g.ss.archived(),
		Score: rank.Round(g.best), Hits: []MessageHit{},
	}
	hits := firstN(g.hits, maxHits, func(a, b *msgCandidate) bool { return rank.CandidateBefore(a, b, rank.ByRelevance) })
	for _, c := range hits {
		rec, text, err := s.st.hit(c.Rec.sid, c.Rec.seq)
		if err != nil {
			return Result{}, fmt.Errorf("read a hit of session %q: %w", g.ss.ID, err)
		}
		excerpt, n := s.ft.MessageSnippet(text, terms)
		r.Hits = append(r.Hits, MessageHit{
			MessageID: rec.ID, Role: rec.Role, Timestamp: rec.Time,
			Excerpt: excerpt, Score: rank.Round(c.Score), MatchCount: n,
		})
	}
	return r, nil
}

// Message is one stored message, as GetSession and GetMessage show it.
type Message struct {
	MessageID string    `json:"messageId"`
	Role      string    `json:"role"`
	Timestamp time.Time `json:"timestamp,omitzero"`
	Text      string    `json:"text"`
}

// View is a session with a run of its messages in order.
type View struct {
	SessionID    string    `json:"sessionId"`
	SourceAgent  string    `json:"sourceAgent"`
	Project      string    `json:"project"`
	Path         string    `json:"path"`
	Summary      string    `json:"summary,omitempty"`
	Started      time.Time `json:"started,omitzero"`
	Ended        time.Time `json:"ended,omitzero"`
	MessageCount int       `json:"messageCount"`
	// Archived: the transcript is gone (since ArchivedAt, when a sync
	// found it missing); the messages are what the index stored.
	Archived   bool      `json:"archived,omitempty"`
	ArchivedAt time.Time `json:"archivedAt,omitzero"`
	Offset     int       `json:"offset"`
	Messages   []Message `json:"messages"`
	// Focus is the index in Messages of the message GetMessage asked for; -1 otherwise.
	Focus int `json:"focus"`
}

// findSession resolves a session id (the format's id, else a transcript path).
func (s *Corpus) findSession(id string) (*session, error) {
	id = strings.TrimSpace(id)
	if id == "" {
		return nil, fmt.Errorf("sessionId is required: %w", ErrNoSession)
	}
	var found *session
	for _, ss := range s.sessions {
		if ss.ID == id || ss.Path == id {
			// A live session before an archived one of the same id, then the latest.
			if found == nil || (found.archived() && !ss.archived()) || (found.archived() == ss.archived() && ss.Ended.After(found.Ended)) {
				found = ss
			}
		}
	}
	if found == nil {
		if s.lastSync.IsZero() && len(s.sessions) == 0 {
			return nil, fmt.Errorf("sessions %w", store.ErrIndexNotReady)
		}
		return nil, fmt.Errorf("%q: %w", id, ErrNoSession)
	}
	return found, nil
}

// GetSession returns up to limit messages of a session from offset, in order
// (limit 0 means 50, at most 1000).
func (s *Corpus) GetSession(ctx context.Context, id string, offset, limit int) (View, error) {
	if offset < 0 {
		return View{}, fmt.Errorf("offset %d: %w", offset, ErrBadOffset)
	}
	switch {
	case limit == 0:
		limit = 50
	case limit < 0 || limit > MaxMessages:
		return View{}, fmt.Errorf("limit %d: want 1 to %d: %w", limit, MaxMessages, ErrBadLimit)
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	ss, err := s.findSession(id)
	if err != nil {
		return View{}, err
	}
	seqs := ss.orderedSeqs()
	v := s.view(ss, offset)
	if offset >= len(seqs) {
		return v, nil
	}
	return s.fill(v, ss, seqs[offset:min(offset+limit, len(seqs))])
}

// GetMessage returns one message with n messages either side of it.
func (s *Corpus) GetMessage(ctx context.Context, id, messageID string, n int) (View, error) {
	if strings.TrimSpace(messageID) == "" {
		return View{}, ErrBadMessageArg
	}
	if n < 0 || n > MaxContext {
		return View{}, fmt.Errorf("context %d: %w", n, ErrBadContext)
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	ss, err := s.findSession(id)
	if err != nil {
		return View{}, err
	}
	// The first live message of that id in seq order, read from the
	// store: the columns hold no message id.
	seq, found, err := s.st.firstSeqWithID(ss.SID, messageID, func(seq uint32) bool { return ss.num(seq) != noMsg })
	if err != nil {
		return View{}, fmt.Errorf("find %q in session %q: %w", messageID, ss.ID, err)
	}
	seqs := ss.orderedSeqs()
	at := -1
	if found {
		at = sort.Search(len(seqs), func(i int) bool { return seqs[i] >= seq })
	}
	if at < 0 {
		return View{}, fmt.Errorf("%q in session %q: %w", messageID, ss.ID, ErrNoMessage)
	}
	lo := max(at-n, 0)
	v := s.view(ss, lo)
	v, err = s.fill(v, ss, seqs[lo:min(at+n+1, len(seqs))])
	v.Focus = at - lo
	return v, err
}

func (s *Corpus) view(ss *session, offset int) View {
	return View{
		SessionID: ss.ID, SourceAgent: ss.Agent, Project: ss.Project, Path: ss.Path, Summary: ss.Summary,
		Started: ss.Started, Ended: ss.Ended, MessageCount: ss.count, Offset: offset,
		Archived: ss.archived(), ArchivedAt: ss.Archived,
		Messages: []Message{}, Focus: -1,
	}
}

func (s *Corpus) fill(v View, ss *session, seqs []uint32) (View, error) {
	if len(seqs) == 0 {
		return v, nil
	}
	stored, err := s.st.messages(ss.SID, seqs[0], seqs[len(seqs)-1]+1)
	if err != nil {
		return v, fmt.Errorf("read messages of %q: %w", ss.ID, err)
	}
	for _, m := range stored {
		if ss.num(m.seq) == noMsg {
			continue
		}
		v.Messages = append(v.Messages, Message{MessageID: m.ID, Role: m.Role, Timestamp: m.Time, Text: m.Text})
	}
	return v, nil
}
