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
