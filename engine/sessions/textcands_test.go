package sessions

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"mnemo/engine/fulltext"
	"mnemo/engine/rank"
)

// exhaustiveText is stage one as it was before document numbers were
// cached: every match resolved by its stored id and looked up by it, all
// of them candidates, then the best k kept (ties at the cut in the page's
// order). TestTextCandidatesMatchExhaustive holds textCandidates to it.
func exhaustiveText(s *Corpus, ctx context.Context, terms fulltext.Terms, sc sessionScope, k int) ([]msgCandidate, *sidSet, error) {
	hits, err := s.ft.Score(ctx, terms, fulltext.NewBM25(s.rank), s.totals)
	if err != nil {
		return nil, nil, err
	}
	text := rank.TextCandidates(hits, func(id string) (msgItem, bool) {
		n := s.messageOf(id)
		if n == noMsg || !s.inScope(sc, n) {
			return msgItem{}, false
		}
		return s.cols.item(n), true
	})
	if len(text) <= k {
		return text, nil, nil
	}
	all := &sidSet{}
	ms := make([]textMatch, len(text))
	for i, c := range text {
		all.add(c.Rec.sid)
		ms[i] = textMatch{n: c.Rec.num, text: c.Text, matched: c.Matched}
	}
	kept := bestMatches(&s.cols, ms, k)
	out := make([]msgCandidate, len(kept))
	for i, t := range kept {
		out[i] = msgCandidate{Rec: s.cols.item(t.n), Text: t.text, Matched: t.matched, TextRank: 1}
	}
	return out, all, nil
}

// TestTextCandidatesMatchExhaustive: pages answered through the cache of
// document numbers are the pages the exhaustive stage answers, over many
// queries of a small vocabulary (so that thousands of messages match and
// many tie at the cut), with filters, in both modes that read text, and
// again after a sync changed the index under a warm cache.
func TestTextCandidatesMatchExhaustive(t *testing.T) {
	r := rand.New(rand.NewPCG(25, 1))
	words := strings.Fields("apple orchard harvest ladder basket pear cider press frost blossom root graft prune soil rain wind bee hive honey wax")
	sentence := func() string {
		n := 1 + r.IntN(8)
		ws := make([]string, n)
		for i := range ws {
			ws[i] = words[r.IntN(len(words))]
		}
		return strings.Join(ws, " ")
	}
	root := filepath.Join(t.TempDir(), "t")
	write := func(name string, from, n int, appendTo bool) {
		var ms []lineMsg
		for k := from; k < from+n; k++ {
			ms = append(ms, msgAt(fmt.Sprintf("%s-%d", name, k), []string{"user", "assistant"}[k%2], sentence(), r.IntN(5000)))
		}
		writeLines(t, filepath.Join(root, name[:1], name+".jsonl"), ms, appendTo)
	}
	for i := range 10 {
		write(fmt.Sprintf("%c%d", 'p'+i%2, i), 0, 500, false)
	}
	s := openTestSessions(t, t.TempDir(), lineSource{root})
	mustSync(t, s)
	var qs []Query
	for i := range 60 {
		q := Query{Text: sentence(), Limit: 1 + r.IntN(12), MaxHits: 1 + r.IntN(8)}
		switch i % 5 {
		case 1:
			q.Role = "user"
		case 2:
			q.Project = "/q"
		case 3:
			q.From, q.To = day.Add(time.Duration(r.IntN(2000))*time.Minute), day.Add(time.Duration(2000+r.IntN(3000))*time.Minute)
		case 4:
			q.Sort = rank.ByRecency
		}
		qs = append(qs, q)
	}
	compare := func(when string) {
		t.Helper()
		cut := 0
		for _, q := range qs {
			for _, mode := range []rank.Mode{rank.FullText, rank.Hybrid} {
				q.Mode = mode
				textStage = func(s *Corpus, ctx context.Context, terms fulltext.Terms, sc sessionScope, k int) ([]msgCandidate, *sidSet, error) {
					c, all, err := s.textCandidates(ctx, terms, sc, k)
					if all != nil {
						cut++
					}
					return c, all, err
				}
				got := search(t, s, q)
				textStage = exhaustiveText
				want := search(t, s, q)
				textStage = (*Corpus).textCandidates
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("%s, %s %q %+v:\ngot  %v\nwant %v", when, mode, q.Text, q, hitIDs(got), hitIDs(want))
				}
			}
		}
		if cut < 10 {
			t.Errorf("%s: %d searches had more text matches than go on to fusion, want 10 or more", when, cut)
		}
	}
	compare("first")
	write("p0", 500, 300, true) // new messages
	mustSync(t, s)
	compare("after a sync")
	write("q1", 0, 400, false) // a rewritten transcript: its messages again, numbered anew
	if _, err := s.Sync(context.Background(), true); err != nil {
		t.Fatal(err)
	}
	compare("after a full sync")
}

// TestFirstN: the first n of a list by a total order are a full sort's
// first n, for every n, whatever the list's order (many equal keys, broken
// by a second one).
func TestFirstN(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	type pair struct{ a, b int }
	before := func(x, y pair) bool {
		if x.a != y.a {
			return x.a > y.a
		}
		return x.b < y.b
	}
	for _, size := range []int{0, 1, 2, 7, 50, 300} {
		xs := make([]pair, size)
		for i := range xs {
			xs[i] = pair{r.IntN(5), i}
		}
		r.Shuffle(len(xs), func(i, j int) { xs[i], xs[j] = xs[j], xs[i] })
		orig := slices.Clone(xs)
		sorted := slices.Clone(xs)
		slices.SortFunc(sorted, func(x, y pair) int {
			if before(x, y) {
				return -1
			}
			return 1
		})
		for _, n := range []int{1, 2, 3, 10, 299, 300, 400} {
			if got, want := firstN(xs, n, before), sorted[:min(n, size)]; !slices.Equal(got, want) {
				t.Errorf("size %d, n %d: %v, want %v", size, n, got, want)
			}
		}
		if !slices.Equal(xs, orig) {
			t.Errorf("size %d: firstN changed its input", size)
		}
	}
}

// TestTextPassInChunks: the one pass over the text matches keeps, fed the
// index's hits in chunks of any size, the candidates (scores to the bit)
// and the sessions that the exhaustive stage finds, for cuts far below
// the matches' count (so that the pass cuts its kept matches many times,
// among many ties) as well as above it, with and without filters.
func TestTextPassInChunks(t *testing.T) {
	r := rand.New(rand.NewPCG(25, 7))
	words := strings.Fields("apple orchard harvest ladder basket pear cider press frost blossom")
	sentence := func() string {
		ws := make([]string, 1+r.IntN(6))
		for i := range ws {
			ws[i] = words[r.IntN(len(words))]
		}
		return strings.Join(ws, " ")
	}
	root := filepath.Join(t.TempDir(), "t")
	for i := range 6 {
		var ms []lineMsg
		for k := range 400 {
			ms = append(ms, msgAt(fmt.Sprintf("s%d-%d", i, k), []string{"user", "assistant"}[k%2], sentence(), r.IntN(3000)))
		}
		writeLines(t, filepath.Join(root, "p", fmt.Sprintf("s%d.jsonl", i)), ms, false)
	}
	s := openTestSessions(t, t.TempDir(), lineSource{root})
	mustSync(t, s)
	ctx := context.Background()
	byNum := func(cs []msgCandidate) []msgCandidate {
		return slices.SortedFunc(slices.Values(cs), func(a, b msgCandidate) int { return int(a.Rec.num) - int(b.Rec.num) })
	}
	cuts := 0
	for i := range 40 {
		q := Query{Text: sentence()}
		if i%3 == 1 {
			q.Role = "user"
		}
		sc := newSessionScope(q)
		terms, err := s.ft.QueryTerms(q.Text)
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range []int{1, 3, 40, 700, 5000} {
			want, wantAll, err := exhaustiveText(s, ctx, terms, sc, k)
			if err != nil {
				t.Fatal(err)
			}
			pass := &textPass{}
			pass.start(s, sc, k)
			err = s.ft.ScoreEach(ctx, terms, fulltext.NewBM25(s.rank), s.totals, func(snap fulltext.Snapshot, hits []fulltext.NumHit) error {
				for len(hits) > 0 {
					n := min(len(hits), 1+r.IntN(300))
					if err := pass.add(snap, hits[:n]); err != nil {
						return err
					}
					hits = hits[n:]
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if pass.limit > 2*k {
				cuts++
			}
			got, gotAll := pass.candidates()
			if !reflect.DeepEqual(byNum(got), byNum(want)) {
				t.Fatalf("%q, k %d: %d candidates %v,\nwant %d %v", q.Text, k, len(got), byNum(got), len(want), byNum(want))
			}
			if (gotAll == nil) != (wantAll == nil) || gotAll != nil && gotAll.len() != wantAll.len() {
				t.Fatalf("%q, k %d: sessions %v, want %v", q.Text, k, gotAll, wantAll)
			}
		}
	}
	if cuts < 20 {
		t.Errorf("the pass cut its kept matches in %d queries, want 20 or more: the case tests little", cuts)
	}
}

// TestDocCacheAcrossChanges: what the text stage resolved of the index's
// document numbers holds across an append (only the new documents'
// stored ids are read again) and is dropped when a message is rewritten,
// and every answer is what a cold cache gives.
func TestDocCacheAcrossChanges(t *testing.T) {
	root := filepath.Join(t.TempDir(), "t")
	for i := range 20 {
		var ms []lineMsg
		for k := range 30 {
			ms = append(ms, msgAt(fmt.Sprintf("m%d-%d", i, k), "user", fmt.Sprintf("the ledger entry %d of batch %d", k, i), k))
		}
		writeLines(t, filepath.Join(root, fmt.Sprintf("p/s%d.jsonl", i)), ms, false)
	}
	s := openTestSessions(t, t.TempDir(), lineSource{root})
	mustSync(t, s)
	ctx := context.Background()
	q := Query{Text: "ledger batch"}
	terms, err := s.ft.QueryTerms(q.Text)
	if err != nil {
		t.Fatal(err)
	}
	// stage is the text stage's candidates, the stored ids it read, and
	// what a cold cache gives.
	stage := func() (got []string, reads uint64, cold []string) {
		s.mu.RLock()
		defer s.mu.RUnlock()
		names := func(cs []msgCandidate) []string {
			var out []string
			for _, c := range cs {
				out = append(out, fmt.Sprintf("%s %v", docID(c.Rec.sid, c.Rec.seq), c.Text))
			}
			slices.Sort(out)
			return out
		}
		before := s.docs.reads
		cs, _, err := s.textCandidates(ctx, terms, newSessionScope(q), 5000)
		if err != nil {
			t.Fatal(err)
		}
		reads = s.docs.reads - before
		c := &s.docs
		ft, snap, layout, gen, docs := c.ft, c.snap, c.layout, c.gen, c.docs
		c.ft, c.docs = nil, nil // cold
		cold0, _, err := s.textCandidates(ctx, terms, newSessionScope(q), 5000)
		if err != nil {
			t.Fatal(err)
		}
		c.ft, c.snap, c.layout, c.gen, c.docs = ft, snap, layout, gen, docs
		return names(cs), reads, names(cold0)
	}
	got, reads, cold := stage()
	if len(got) != 600 || reads != 600 || !reflect.DeepEqual(got, cold) {
		t.Fatalf("first query: %d candidates, %d ids read, same as cold %v", len(got), reads, reflect.DeepEqual(got, cold))
	}
	if _, reads, _ = stage(); reads != 0 {
		t.Fatalf("a second query read %d ids, want 0", reads)
	}

	// Appends: five messages at the end of a session, and a session of
	// five. Scorch may merge the new segment with the others before the
	// query (a small index is all one merge tier), so they are repeated
	// until one leaves the segments before it in place.
	want, kept := 600, uint64(0)
	for round := 0; round < 20 && kept == 0; round++ {
		layout := s.docs.layout
		var ms []lineMsg
		for k := range 5 {
			ms = append(ms, msgAt(fmt.Sprintf("a%d-%d", round, k), "user", fmt.Sprintf("ledger batch appended %d", k), 100+10*round+k))
		}
		writeLines(t, filepath.Join(root, "p/s3.jsonl"), ms, true)
		writeLines(t, filepath.Join(root, fmt.Sprintf("p/new%d.jsonl", round)), ms, false)
		mustSync(t, s)
		want += 10
		got, reads, cold = stage()
		if !reflect.DeepEqual(got, cold) || len(got) != want {
			t.Fatalf("after an append: %d candidates (want %d), the same as a cold cache's: %v", len(got), want, reflect.DeepEqual(got, cold))
		}
		kept = fulltext.KeptNumbers(layout, s.docs.layout)
		if reads > uint64(want)-kept {
			t.Fatalf("after an append, %d ids read; the %d documents of the segments kept needed none", reads, kept)
		}
	}
	if kept == 0 {
		t.Fatal("no append's snapshot kept the segments before it")
	}

	// A rewrite: a message's text changes, its number is dropped; nothing is kept.
	var ms []lineMsg
	for k := range 30 {
		ms = append(ms, msgAt(fmt.Sprintf("m7-%d", k), "user", fmt.Sprintf("the ledger entry %d of batch %d", k, 7), k))
	}
	ms[4].Text = "rewritten ledger batch"
	writeLines(t, filepath.Join(root, "p/s7.jsonl"), ms, false)
	mustSync(t, s)
	got, reads, cold = stage()
	if !reflect.DeepEqual(got, cold) || reads < 600 {
		t.Errorf("after a rewrite: %d ids read (want every match's), the same as a cold cache's: %v", reads, reflect.DeepEqual(got, cold))
	}
}
