package web

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"time"

	"mnemo/engine"
	"mnemo/engine/sessions"
)

// search answers the search box: memories (the default) or sessions, with
// the same filters as the SearchMemories and SearchSessions tools.
func (s *Server) search(ctx context.Context, c *Corpora, r *http.Request) (any, error) {
	a := &args{r: r}
	if a.str("corpus") == "sessions" {
		return s.searchSessions(ctx, c, a)
	}
	q := engine.Query{Text: a.str("q"), Mode: a.mode(), Page: a.num("page"), PageSize: a.num("pageSize"),
		Folder: a.str("folder"), Tags: a.list("tags"), From: a.date("from", false), To: a.date("to", true)}
	if a.err != nil {
		return nil, a.err
	}
	p, err := c.Memories.Search(ctx, q)
	if errors.Is(err, engine.ErrIndexNotReady) {
		return engine.Page{Query: q.Text, Mode: q.Mode, Indexing: true, Results: []engine.Result{},
			Hint: "the index is being built: results appear as soon as the first sync has read some memories"}, nil
	}
	return p, err
}

func (s *Server) searchSessions(ctx context.Context, c *Corpora, a *args) (any, error) {
	if c.Sessions == nil {
		return nil, errNoSessions
	}
	q := sessions.Query{Text: a.str("q"), Mode: a.mode(), Project: a.str("project"), Agent: a.str("agent"),
		Role: a.str("role"), Archived: a.archived(), From: a.date("from", false), To: a.date("to", true), Limit: a.num("limit")}
	if a.err != nil {
		return nil, a.err
	}
	p, err := c.Sessions.Search(ctx, q)
	if errors.Is(err, engine.ErrIndexNotReady) {
		return sessions.Page{Query: q.Text, Mode: q.Mode, Indexing: true, Sessions: []sessions.Result{}}, nil
	}
	return p, err
}

// memoryPage is a memory as the page shows it.
type memoryPage struct {
	engine.Memory
	HTML      string                  `json:"html"`      // the body rendered, inert
	Backlinks []string                `json:"backlinks"` // memories that link to this one
	Concepts  []engine.FileConcept    `json:"concepts"`  // concepts it links to
	Related   []engine.Relation       `json:"related"`   // concepts linked beside its own
	Similar   []engine.SimilarConcept `json:"similar"`   // concepts like its own in meaning
}

// memory reads one memory (the read is recorded, as ReadMemory records
// it) with what surrounds it in the graph.
func (s *Server) memory(ctx context.Context, c *Corpora, r *http.Request) (any, error) {
	id := (&args{r: r}).str("id")
	m, err := c.Memories.Read(ctx, id)
	if err != nil {
		return nil, err
	}
	out := memoryPage{Memory: m, Backlinks: []string{}, Concepts: []engine.FileConcept{}, Related: []engine.Relation{}, Similar: []engine.SimilarConcept{}}
	var gone error // a link left unresolved by a handover is no dead link
	resolve := func(id string) (string, error) {
		p, err := c.Memories.Resolve(id)
		if gone == nil {
			gone = optional(err)
		}
		return p, err
	}
	if out.HTML, err = render(m.Content, resolve); err == nil {
		err = gone
	}
	if err != nil {
		return nil, err
	}
	if bl, err := c.Memories.Backlinks(ctx, m.Path); err == nil {
		out.Backlinks = bl
	} else if err := optional(err); err != nil {
		return nil, err
	}
	if fc, err := c.Memories.FileConcepts(ctx, m.Path); err == nil {
		out.Concepts = fc.Concepts
	} else if err := optional(err); err != nil {
		return nil, err
	}
	concept := noteConcept(m.Path)
	if cc, err := c.Memories.BuildContext(ctx, engine.ContextQuery{Concept: concept, Depth: 1, MaxEntities: 12}); err == nil {
		out.Related = cc.DirectRelations
	} else if err := optional(err); err != nil {
		return nil, err
	}
	if sim, err := c.Memories.FindSimilarConcepts(ctx, concept, 8); err == nil {
		out.Similar = sim.Similar
	} else if err := optional(err); err != nil {
		return nil, err
	}
	return out, nil
}

// noteConcept is the concept a memory's file name stands for, as a link
// names it: the graph resolves the spelling.
func noteConcept(path string) string {
	name := path[strings.LastIndexByte(path, '/')+1:]
	return strings.TrimSuffix(strings.TrimSuffix(name, ".md"), ".markdown")
}

func (s *Server) list(ctx context.Context, c *Corpora, r *http.Request) (any, error) {
	return c.Memories.List(ctx, (&args{r: r}).str("folder"))
}

// sessions lists sessions newest first, with ListSessions' filters.
func (s *Server) sessions(ctx context.Context, c *Corpora, r *http.Request) (any, error) {
	if c.Sessions == nil {
		return nil, errNoSessions
	}
	a := &args{r: r}
	q := sessions.ListQuery{Project: a.str("project"), Agent: a.str("agent"), Archived: a.archived(),
		From: a.date("from", false), To: a.date("to", true), Page: a.num("page"), PageSize: a.num("pageSize")}
	if a.err != nil {
		return nil, a.err
	}
	return c.Sessions.List(ctx, q)
}

// session is one session as a conversation: around a message (a search
// hit, which the view's Focus points at) or from an offset.
func (s *Server) session(ctx context.Context, c *Corpora, r *http.Request) (any, error) {
	if c.Sessions == nil {
		return nil, errNoSessions
	}
	a := &args{r: r}
	id, msg, offset, limit := a.str("id"), a.str("message"), a.num("offset"), a.num("limit")
	if a.err != nil {
		return nil, a.err
	}
	if msg != "" {
		return c.Sessions.GetMessage(ctx, id, msg, 50)
	}
	if limit == 0 {
		limit = 200
	}
	return c.Sessions.GetSession(ctx, id, offset, limit)
}

// activityDays bounds the activity chart: the last year, by day.
const activityDays = 366

// activity counts sessions and messages per day, per project and per
// agent, for the chart; sessions are placed on the day they ended.
type activity struct {
	Days     []string         `json:"days"` // YYYY-MM-DD, oldest first, every day
	Projects map[string][]int `json:"projects"`
	Agents   map[string][]int `json:"agents"`
	Sessions int              `json:"sessions"`
}

func (s *Server) activity(ctx context.Context, c *Corpora, r *http.Request) (any, error) {
	if c.Sessions == nil {
		return nil, errNoSessions
	}
	end := time.Now().UTC().Truncate(24 * time.Hour)
	start := end.AddDate(0, 0, -activityDays+1)
	out := activity{Projects: map[string][]int{}, Agents: map[string][]int{}}
	for d := start; !d.After(end); d = d.AddDate(0, 0, 1) {
		out.Days = append(out.Days, d.Format(time.DateOnly))
	}
	add := func(m map[string][]int, key string, day int) {
		if m[key] == nil {
			m[key] = make([]int, len(out.Days))
		}
		m[key][day]++
	}
	for page := 1; ; page++ {
		l, err := c.Sessions.List(ctx, sessions.ListQuery{From: start, Page: page, PageSize: 200})
		if err != nil {
			return nil, err
		}
		for _, ss := range l.Sessions {
			t := ss.Ended
			if t.IsZero() {
				t = ss.Started
			}
			day := int(t.UTC().Sub(start) / (24 * time.Hour))
			if t.IsZero() || day < 0 || day >= len(out.Days) {
				continue
			}
			out.Sessions++
			add(out.Projects, ss.Project, day)
			add(out.Agents, ss.SourceAgent, day)
		}
		if page*l.PageSize >= l.TotalCount || len(l.Sessions) == 0 {
			return out, nil
		}
	}
}

// status is both corpora's health, as the status tool reports it.
type statusPage struct {
	Memories engine.Status    `json:"memories"`
	Sessions *sessions.Status `json:"sessions,omitempty"`
	Version  string           `json:"version"`
}

func (s *Server) status(ctx context.Context, c *Corpora, _ *http.Request) (any, error) {
	return s.statusOf(ctx, c)
}

func (s *Server) statusOf(ctx context.Context, c *Corpora) (statusPage, error) {
	ms, err := c.Memories.Status(ctx)
	if err != nil {
		return statusPage{}, err
	}
	out := statusPage{Memories: ms, Version: s.opts.Version}
	if c.Sessions != nil {
		ss, err := c.Sessions.Status(ctx)
		if err != nil {
			return statusPage{}, err
		}
		out.Sessions = &ss
	}
	return out, nil
}

// concepts finds concepts whose name holds q, most mentioned first: the
// graph's "jump to a concept" box.
func (s *Server) concepts(ctx context.Context, c *Corpora, r *http.Request) (any, error) {
	q := strings.ToLower((&args{r: r}).str("q"))
	all, err := c.Memories.Concepts(ctx)
	if err != nil {
		return nil, err
	}
	out := []engine.ConceptInfo{}
	for _, ci := range all {
		if strings.Contains(ci.Name, q) {
			out = append(out, ci)
		}
		if len(out) == 20 {
			break
		}
	}
	slices.SortStableFunc(out, func(a, b engine.ConceptInfo) int {
		return boolInt(!strings.HasPrefix(a.Name, q)) - boolInt(!strings.HasPrefix(b.Name, q))
	})
	return out, nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
