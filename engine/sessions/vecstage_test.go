package sessions

import (
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"mnemo/engine/fulltext"
	"mnemo/engine/rank"
	"mnemo/engine/vectors"
)

// TestVectorsWaitForText: a hybrid query whose text candidates decide the
// page skips the vector scan and answers the same sessions, with the same
// scores, in the same order, as the scan beside the text stage; every hit
// with a word of the query that the scan's page shows, it shows in the
// same order. Queries whose text candidates cannot decide (few matches, a
// weak tenth session) still scan. Over many queries of a small
// vocabulary, so that both kinds occur, and with filters.
func TestVectorsWaitForText(t *testing.T) {
	r := rand.New(rand.NewPCG(25, 2))
	words := strings.Fields("apple orchard harvest ladder basket pear cider press frost blossom root graft prune soil rain wind bee hive honey wax")
	sentence := func(n int) string {
		ws := make([]string, n)
		for i := range ws {
			ws[i] = words[r.IntN(len(words))]
		}
		return strings.Join(ws, " ")
	}
	root := filepath.Join(t.TempDir(), "t")
	for i := range 40 {
		var ms []lineMsg
		for k := range 60 {
			text := sentence(1 + r.IntN(8))
			if i%10 == 0 && k%20 == 0 {
				text += " quince" // in few sessions: its queries cannot fill a page from text alone
			}
			ms = append(ms, msgAt(fmt.Sprintf("m%d-%d", i, k), []string{"user", "assistant"}[k%2], text, r.IntN(5000)))
		}
		writeLines(t, filepath.Join(root, fmt.Sprintf("%c/s%d.jsonl", 'p'+i%2, i)), ms, false)
	}
	s := openTestSessions(t, t.TempDir(), lineSource{root})
	mustSync(t, s)
	skipped, scanned := 0, 0
	for i := range 120 {
		q := Query{Text: sentence(1 + r.IntN(3)), Mode: rank.Hybrid, Limit: 1 + r.IntN(12), MaxHits: 1 + r.IntN(8)}
		switch i % 3 {
		case 1:
			q.Role = "user"
		case 2:
			q.Text, q.Limit = "quince zebra", 5+r.IntN(8) // zebra: a word no message holds
		}
		before := s.vecScans.Load()
		got := search(t, s, q)
		if s.vecScans.Load() == before {
			skipped++
		} else {
			scanned++
		}
		vectorsWait = func(*Corpus, Query) bool { return false }
		want := search(t, s, q)
		vectorsWait = (*Corpus).deferVectors
		if !reflect.DeepEqual(sessionScores(got), sessionScores(want)) {
			t.Fatalf("%q %+v: sessions\ngot  %v\nwant %v", q.Text, q, sessionScores(got), sessionScores(want))
		}
		for j := range want.Sessions {
			if w, g := worded(want.Sessions[j].Hits), worded(got.Sessions[j].Hits); len(g) < len(w) || !reflect.DeepEqual(g[:len(w)], w) {
				t.Fatalf("%q %+v: session %s: hits with a query word\ngot  %v\nwant %v", q.Text, q, want.Sessions[j].SessionID, g, w)
			}
		}
	}
	if skipped < 20 || scanned < 20 {
		t.Errorf("%d queries skipped the vector scan and %d scanned, want 20 or more of each", skipped, scanned)
	}
}

// sessionScores is a page's sessions with their scores, in order.
func sessionScores(p Page) []string {
	var out []string
	for _, r := range p.Sessions {
		out = append(out, fmt.Sprintf("%s %.6f", r.SessionID, r.Score))
	}
	return out
}

// worded is the ids of the hits that hold a word of the query.
func worded(hs []MessageHit) []string {
	out := []string{}
	for _, h := range hs {
		if h.MatchCount > 0 {
			out = append(out, h.MessageID)
		}
	}
	return out
}

// TestVectorsWaitForMeaning: when a message that shares no word with the
// query belongs on the page (three strong text sessions, nine weak ones,
// five whose messages mean what the query means without its word, and
// many short others),
// the text candidates cannot decide the page, the vector scan runs, and
// those sessions are on it as the scan beside the text stage puts them.
func TestVectorsWaitForMeaning(t *testing.T) {
	root := filepath.Join(t.TempDir(), "t")
	filler := strings.Repeat("the committee reviewed quarterly budget figures and scheduled another meeting ", 40)
	for i := range 300 {
		text := "see you tomorrow" // short, so that the long ones' text scores are weak
		switch {
		case i < 3:
			text = "apple apple apple apple"
		case i < 12:
			text = filler + "apple " + filler
		case i < 17:
			text = "pear"
		}
		writeLines(t, filepath.Join(root, fmt.Sprintf("p/s%02d.jsonl", i)), []lineMsg{msgAt(fmt.Sprintf("m%d", i), "user", text, i)}, false)
	}
	s := openTestSessions(t, t.TempDir(), lineSource{root})
	mustSync(t, s)
	q := Query{Text: "apple", Mode: rank.Hybrid, Limit: 10, MaxHits: 3}
	before := s.vecScans.Load()
	got := search(t, s, q)
	if s.vecScans.Load() == before {
		t.Errorf("the vector scan did not run")
	}
	vectorsWait = func(*Corpus, Query) bool { return false }
	want := search(t, s, q)
	vectorsWait = (*Corpus).deferVectors
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got  %v\nwant %v", sessionScores(got), sessionScores(want))
	}
	meaning := 0
	for _, r := range got.Sessions {
		if r.Hits[0].MatchCount == 0 {
			meaning++
		}
	}
	if meaning == 0 {
		t.Errorf("no session found by meaning alone on the page: %v", sessionScores(got))
	}
	// Nor do more text candidates decide it (widerGroups): those sessions
	// hold no word of the query.
	ctx := context.Background()
	f := firstRunOf(t, s, q, 11) // of the 12 that hold "apple"
	if f.dropped == nil {
		t.Fatal("a first run of 11 kept every match")
	}
	wider := func(int) ([]msgCandidate, float64, error) {
		return s.widerText(ctx, f.terms, f.sc, 1000, f.first, f.div)
	}
	if _, ok, err := s.widerGroups(ctx, f.p, f.groups, f.qv, wider); ok || err != nil {
		t.Errorf("the text candidates widened decided a page that sessions found by meaning alone belong on (%v)", err)
	}
}

// TestTextSimsFromStore: before the vector store is loaded, the text
// candidates' similarities are read from the state store for them alone,
// bit for bit what the loaded store gives, and nothing is loaded.
func TestTextSimsFromStore(t *testing.T) {
	root := filepath.Join(t.TempDir(), "t")
	texts := []string{"apple harvest in the orchard", "the ladder by the pear tree", "bees in the hive", "frost on the blossom", "rain"}
	for i := range 4 {
		var ms []lineMsg
		for k, text := range texts {
			ms = append(ms, msgAt(fmt.Sprintf("m%d-%d", i, k), "user", text, k))
		}
		writeLines(t, filepath.Join(root, fmt.Sprintf("p/s%d.jsonl", i)), ms, false)
	}
	s := openTestSessions(t, t.TempDir(), lineSource{root})
	mustSync(t, s)
	qv, err := vectors.EmbedQuery(context.Background(), s.emb, "orchard fruit", rank.Hybrid)
	if err != nil || qv == nil {
		t.Fatalf("embed: %v %v", qv, err)
	}
	var cands []msgCandidate
	for _, ss := range s.sessions {
		ss.each(func(_ uint32, n msgNum) { cands = append(cands, msgCandidate{Rec: s.cols.item(n)}) })
	}
	stored, err := s.textSims(context.Background(), qv, cands)
	if err != nil {
		t.Fatal(err)
	}
	if n := s.vecLoads.Load(); n != 0 {
		t.Fatalf("the vectors were loaded %d times for the candidates' similarities, want 0", n)
	}
	if err := s.vectorsLoaded(); err != nil {
		t.Fatal(err)
	}
	loaded, err := s.textSims(context.Background(), qv, cands)
	if err != nil {
		t.Fatal(err)
	}
	if len(stored) != len(texts)*4 || !reflect.DeepEqual(stored, loaded) {
		t.Fatalf("similarities from the state store %v, from the loaded store %v", stored, loaded)
	}
	if slices.Max(stored) <= 0 {
		t.Errorf("no candidate is similar to the query: %v", stored)
	}
}

// TestTextGroupsAsEverySimilarity: textGroups, which looks up only the
// similarities that can matter, gives the page every similarity gives:
// the same sessions with the same bests and every hit of theirs scored
// the same, the same number of sessions, and the same textDecides. And
// it does skip some: sessions off the page keep candidates unlooked-up.
// topicSessions is 60 sessions of 50 messages over three topics of
// words, and "quince": common in four sessions, rare and in long
// messages in the others, so that the last sessions of a page are weak
// ones that the query's similarity orders. It returns the corpus, the
// random source that made it, and the topics.
func topicSessions(t *testing.T) (*Corpus, *rand.Rand, [][]string) {
	r := rand.New(rand.NewPCG(25, 4))
	// Three topics, so that a message holding a query word among words of
	// another topic is less similar to the query than one among its own.
	topics := [][]string{
		strings.Fields("apple orchard harvest pear cider blossom ladder basket"),
		strings.Fields("server database query index cache network latency disk"),
		strings.Fields("football goal match team score referee stadium season"),
	}
	pick := func(ws []string) string { return ws[r.IntN(len(ws))] }
	root := filepath.Join(t.TempDir(), "t")
	for i := range 60 {
		var ms []lineMsg
		for k := range 50 {
			topic := topics[r.IntN(len(topics))]
			ws := make([]string, 1+r.IntN(r.IntN(40)+1)) // lengths spread BM25's scores
			for j := range ws {
				ws[j] = pick(topic)
			}
			if r.IntN(3) == 0 {
				ws = append(ws, pick(topics[r.IntN(len(topics))]))
			}
			// quince: common in four sessions, rare in the others, so that the
			// last sessions of a page are weak ones that its similarity orders
			if r.IntN(100) < []int{40, 5}[min(i/4, 1)] {
				ws = append(ws, "quince")
				for len(ws) < 30 && i >= 4 { // long: a lower BM25 than the four's
					ws = append(ws, pick(topic))
				}
			}
			ms = append(ms, msgAt(fmt.Sprintf("m%d-%d", i, k), "user", strings.Join(ws, " "), r.IntN(5000)))
		}
		writeLines(t, filepath.Join(root, fmt.Sprintf("p/s%d.jsonl", i)), ms, false)
	}
	s := openTestSessions(t, t.TempDir(), lineSource{root})
	mustSync(t, s)
	return s, r, topics
}

func TestTextGroupsAsEverySimilarity(t *testing.T) {
	s, r, topics := topicSessions(t)
	pick := func(ws []string) string { return ws[r.IntN(len(ws))] }
	ctx := context.Background()
	skipped := 0
	for range 200 {
		words := pick(topics[r.IntN(3)])
		if r.IntN(2) == 0 {
			words = "quince"
		} else if r.IntN(4) == 0 { // the re-rank lifts the best 50 of a longer query far above the rest
			words += " " + pick(topics[r.IntN(3)])
		}
		q := Query{Text: words, Mode: rank.Hybrid, Limit: 1 + r.IntN(14), MaxHits: 1 + r.IntN(5)}
		p, terms, qv := planOf(t, s, q)
		text, _, err := s.textCandidates(ctx, terms, newSessionScope(q), 2000)
		if err == nil {
			_, err = s.rerank(ctx, text, q.Text)
		}
		if err != nil {
			t.Fatal(err)
		}
		lazy, err := s.textGroups(ctx, p, text, qv)
		if err != nil {
			t.Fatal(err)
		}
		cands, err := s.fuse(ctx, p, sessionScope{}, text, qv, vectors.NumFound{Bound: -1, Complete: true})
		if err != nil {
			t.Fatal(err)
		}
		every := s.group(p, cands)
		if len(lazy) != len(every) || p.textDecides(lazy, 0) != p.textDecides(every, 0) {
			t.Fatalf("%q: %d sessions (decides %v), every similarity %d (%v)", q.Text, len(lazy), p.textDecides(lazy, 0), len(every), p.textDecides(every, 0))
		}
		if got, want := pageOf(lazy, q), pageOf(every, q); !reflect.DeepEqual(got, want) {
			t.Fatalf("%q limit %d: page\ngot  %v\nwant %v", q.Text, q.Limit, got, want)
		}
		sem := map[msgNum]float64{}
		for _, c := range cands {
			sem[c.Rec.num] = c.Sem
		}
		for _, g := range lazy {
			for _, c := range g.hits {
				if c.Sem != sem[c.Rec.num] {
					skipped++ // its similarity was not looked up
				}
			}
		}
	}
	if skipped == 0 {
		t.Error("every similarity was looked up: the test does not reach textGroups' early stop")
	}
}

// pageOf is the first q.Limit sessions of groups in page order, each
// with its best and its hits' messages and scores, best first.
func pageOf(groups []*sessionGroup, q Query) []string {
	var out []string
	for _, g := range firstGroups(groups, q.Sort, q.Limit) {
		line := fmt.Sprintf("%d %.9f:", g.ss.SID, g.best)
		hits := slices.Clone(g.hits)
		slices.SortFunc(hits, func(a, b *msgCandidate) int {
			if a.Score != b.Score {
				return cmp.Compare(b.Score, a.Score)
			}
			return cmp.Compare(a.Rec.num, b.Rec.num)
		})
		for _, c := range hits {
			line += fmt.Sprintf(" %d=%.9f", c.Rec.num, c.Score)
		}
		out = append(out, line)
	}
	return out
}

// TestWiderText: the text stage widened after a re-ranked first run
// scores every match as a first run of that width, re-ranked, does.
func TestWiderText(t *testing.T) {
	s, _, _ := topicSessions(t)
	ctx := context.Background()
	for _, text := range []string{"quince", "quince orchard", "server cache latency", "goal"} {
		q := Query{Text: text, Mode: rank.Hybrid}
		sc := newSessionScope(q)
		terms, err := s.ft.QueryTerms(text)
		if err != nil {
			t.Fatal(err)
		}
		first, dropped, err := s.textCandidates(ctx, terms, sc, 200)
		if err != nil || dropped == nil {
			t.Fatalf("%q: first run of 200: dropped %v, %v", text, dropped, err)
		}
		div, err := s.rerank(ctx, first, text)
		if err != nil {
			t.Fatal(err)
		}
		wide, cut, err := s.widerText(ctx, terms, sc, 1000, first, div)
		if err != nil {
			t.Fatal(err)
		}
		ref, _, err := s.textCandidates(ctx, terms, sc, 1000)
		if err == nil {
			_, err = s.rerank(ctx, ref, text)
		}
		if err != nil {
			t.Fatal(err)
		}
		want := map[msgNum]float64{}
		for _, c := range ref {
			want[c.Rec.num] = c.Text
		}
		if len(wide) != len(ref) || cut != textCut(ref, len(ref) == 1000) {
			t.Fatalf("%q: %d wide candidates, cut %v; a run of 1,000: %d, cut %v", text, len(wide), cut, len(ref), textCut(ref, len(ref) == 1000))
		}
		for _, c := range wide {
			if w, ok := want[c.Rec.num]; !ok || w != c.Text {
				t.Fatalf("%q: message %d scored %v widened, %v (%v) in a run of 1,000", text, c.Rec.num, c.Text, w, ok)
			}
		}
	}
}

// TestWiderGroupsAsEveryMatch: when the first run's cut keeps the text
// candidates from deciding the page, the widened ones decide it as every
// match and every message by meaning would (the same sessions and
// bests), or
// leave it to the vector scan when a message without the query's words
// could reach it.
func TestWiderGroupsAsEveryMatch(t *testing.T) {
	s, r, topics := topicSessions(t)
	pick := func(ws []string) string { return ws[r.IntN(len(ws))] }
	ctx := context.Background()
	var every []msgNum
	for _, ss := range s.sessions {
		ss.each(func(_ uint32, n msgNum) { every = append(every, n) })
	}
	decided, scanned := 0, 0
	for range 150 {
		words := "quince"
		if r.IntN(3) == 0 {
			words = pick(topics[r.IntN(3)])
		}
		q := Query{Text: words, Mode: rank.Hybrid, Limit: 1 + r.IntN(14), MaxHits: 3}
		f := firstRunOf(t, s, q, 20+r.IntN(40))
		p, terms, qv, sc, first, dropped, div, groups := f.p, f.terms, f.qv, f.sc, f.first, f.dropped, f.div, f.groups
		if dropped == nil || p.textDecides(groups, textCut(first, true)) {
			continue
		}
		wider := func(int) ([]msgCandidate, float64, error) { return s.widerText(ctx, terms, sc, 3000, first, div) }
		got, ok, err := s.widerGroups(ctx, p, groups, qv, wider)
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			if len(groups) >= p.limit && kthBest(groups, p.limit) > p.fuser.Fuse(0, 1, 0, 0) {
				// every match was kept, so nothing but a message without
				// the query's words could stop it deciding
				t.Fatalf("%q limit %d: every match widened and still undecided", q.Text, q.Limit)
			}
			scanned++
			continue
		}
		decided++
		all, _, err := s.textCandidates(ctx, terms, sc, 3000)
		if err == nil {
			_, err = s.rerank(ctx, all, q.Text)
		}
		if err != nil {
			t.Fatal(err)
		}
		found, err := s.compareEach(ctx, qv, every) // every message by meaning, too
		if err != nil {
			t.Fatal(err)
		}
		cands, err := s.fuse(ctx, p, sc, all, qv, found)
		if err != nil {
			t.Fatal(err)
		}
		if g, w := bestsOf(got, q), bestsOf(s.group(p, cands), q); !reflect.DeepEqual(g, w) {
			t.Fatalf("%q limit %d: page\ngot  %v\nwant %v", q.Text, q.Limit, g, w)
		}
	}
	if decided < 10 || scanned < 10 {
		t.Errorf("%d pages decided by wider text candidates and %d left to the scan, want 10 or more of each", decided, scanned)
	}
}

// bestsOf is the first q.Limit sessions of groups in page order, each
// with its best.
func bestsOf(groups []*sessionGroup, q Query) []string {
	var out []string
	for _, g := range firstGroups(groups, q.Sort, q.Limit) {
		out = append(out, fmt.Sprintf("%d %.9f", g.ss.SID, g.best))
	}
	return out
}

// planOf is what the stages after the text candidates need of q: its
// plan, its terms and its vector.
func planOf(t *testing.T, s *Corpus, q Query) (sessionPlan, fulltext.Terms, []float32) {
	t.Helper()
	p := sessionPlan{mode: q.Mode, fuser: rank.NewFuser(s.cfg.Fusion, s.rank), floor: s.rank.SemanticFloor, limit: q.Limit, hits: q.MaxHits}
	terms, err := s.ft.QueryTerms(q.Text)
	if err != nil {
		t.Fatal(err)
	}
	qv, err := vectors.EmbedQuery(context.Background(), s.emb, q.Text, q.Mode)
	if err != nil {
		t.Fatal(err)
	}
	return p, terms, qv
}

// firstRun is a hybrid search's first text run as candidateGroups meets
// it: the plan, the query's terms, vector and scope, the text stage's
// candidates (k kept, re-ranked) and the sessions of the dropped ones,
// what the re-rank divided by, and the candidates grouped (textGroups).
type firstRun struct {
	p       sessionPlan
	terms   fulltext.Terms
	qv      []float32
	sc      sessionScope
	first   []msgCandidate
	dropped *sidSet
	div     float64
	groups  []*sessionGroup
}

func firstRunOf(t *testing.T, s *Corpus, q Query, k int) firstRun {
	t.Helper()
	ctx := context.Background()
	f := firstRun{sc: newSessionScope(q)}
	f.p, f.terms, f.qv = planOf(t, s, q)
	var err error
	if f.first, f.dropped, err = s.textCandidates(ctx, f.terms, f.sc, k); err != nil {
		t.Fatal(err)
	}
	if f.div, err = s.rerank(ctx, f.first, q.Text); err != nil {
		t.Fatal(err)
	}
	if f.groups, err = s.textGroups(ctx, f.p, f.first, f.qv); err != nil {
		t.Fatal(err)
	}
	return f
}
