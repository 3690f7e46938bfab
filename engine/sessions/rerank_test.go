package sessions

import (
	"context"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"mnemo/engine/rank"

	bolt "go.etcd.io/bbolt"
)

func TestEachWord(t *testing.T) {
	tests := []struct{ in, want string }{
		{"It's GOOD—to be reminded.", "it s good to be reminded"},
		{"Café déjà-vu, 42x!", "café déjà vu 42x"},
		{"  ", ""},
		{"ÉTÉ\xffok", "été ok"}, // invalid UTF-8 splits
		{"snake_case lincRNA-p21", "snake case lincrna p21"},
	}
	for _, tc := range tests {
		var got []string
		var buf []byte
		eachWord([]byte(tc.in), &buf, func(w []byte) { got = append(got, string(w)) })
		if s := strings.Join(got, " "); s != tc.want {
			t.Errorf("eachWord(%q) = %q, want %q", tc.in, s, tc.want)
		}
	}
}

// evidence counts the query's distinct words a text holds and its longest
// run of them in the query's order, a repeated query word at each of its
// places.
func TestRerankEvidence(t *testing.T) {
	tests := []struct {
		query, text string
		cover       float64
		run         int
	}{
		{"channels had no effects on", "Blocking the channels had no effects on growth.", 1, 5},
		{"channels had no effects on", "No effects: the channels had moved on.", 1, 2},
		{"channels had no effects on", "Channels, effects.", 0.4, 1},
		{"channels had no effects on", "nothing here", 0, 0},
		{"to be or not to be", "To be, or not to be: that is the question", 1, 6},
		{"to be or not to be", "be to be to", 0.5, 2},
		{"in 2001 and 14 32 in", "born in 2001 and 14 32 in Boston", 1, 6},
		{"It's good", "it is good", 2.0 / 3, 1},
	}
	for _, tc := range tests {
		q := newQueryWords(tc.query)
		var buf []byte
		cover, run := q.evidence([]byte(tc.text), &buf)
		if cover != tc.cover || run != tc.run {
			t.Errorf("%q in %q: cover %v run %d, want %v %d", tc.query, tc.text, cover, run, tc.cover, tc.run)
		}
	}
}

// A message that holds the query's words as written, stop words and all,
// outranks shorter ones that share only its two stems: on BM25 alone
// every one of the fifteen shorter sessions came first, and the needle's
// session was not on the page.
func TestSessionsRerankPhrase(t *testing.T) {
	root := filepath.Join(t.TempDir(), "t")
	for i := range 15 {
		writeLines(t, filepath.Join(root, "p", fmt.Sprintf("decoy%02d.jsonl", i)), []lineMsg{
			msgAt(fmt.Sprintf("d%d", i), "user", "A good reminder, and good reminders.", i),
		}, false)
	}
	writeLines(t, filepath.Join(root, "p", "needle.jsonl"), []lineMsg{
		msgAt("n0", "user", "The garden is dry again this week and the tomatoes look tired.", 20),
		msgAt("n1", "assistant", "It's good to be reminded to water the plants before the heat, and to check the hose for leaks.", 21),
	}, false)
	s := openTestSessions(t, t.TempDir(), lineSource{root})
	mustSync(t, s)
	for _, mode := range []rank.Mode{rank.FullText, rank.Hybrid} {
		p := search(t, s, Query{Text: "It's good to be reminded to", Mode: mode})
		if len(p.Sessions) == 0 || p.Sessions[0].Hits[0].MessageID != "n1" {
			t.Errorf("%s: page %v, want n1 first", mode, hitIDs(p))
		}
	}
	// One word says no more than its BM25: the shorter messages first.
	p := search(t, s, Query{Text: "reminded", Mode: rank.FullText})
	if len(p.Sessions) == 0 || p.Sessions[0].Hits[0].MessageID == "n1" {
		t.Errorf("one word: page %v, want a decoy first", hitIDs(p))
	}
}

// eachText reads what text reads, for refs in any order, across blocks,
// from texts still kept one by one, and skips a message with no text.
func TestEachText(t *testing.T) {
	db, st := newTextStore(t)
	err := db.Update(func(tx *bolt.Tx) error {
		for _, e := range entries(0, 10, "o") {
			if err := tx.Bucket(sbTexts).Put(seqKey(3, e.seq), []byte(e.text)); err != nil {
				return err
			}
		}
		if err := putTextsTx(tx, 1, entries(0, 100, "a")); err != nil {
			return err
		}
		if err := putTextsTx(tx, 4, entries(0, 3, "x")); err != nil {
			return err
		}
		if err := putTextsTx(tx, 2, append(entries(0, 5, "b"), entries(40, 45, "b")...)); err != nil {
			return err
		}
		return tx.Bucket(sbTextBlocks).Put(seqKey(4, 0), []byte("not zstd"))
	})
	if err != nil {
		t.Fatal(err)
	}
	refs := []textRef{{1, 99}, {2, 3}, {1, 0}, {3, 7}, {1, 33}, {2, 20}, {1, 31}, {1, 32}, {2, 44}, {9, 0}}
	want := map[int]string{}
	for i, r := range refs {
		if text := st.text(r.sid, r.seq); text != "" {
			want[i] = text
		}
	}
	if len(want) != len(refs)-2 {
		t.Fatalf("fixture: %d of %d refs have a text, want all but two", len(want), len(refs))
	}
	got := map[int]string{}
	err = st.eachText(context.Background(), refs, func(i int, text []byte) { got[i] = string(text) })
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("eachText\n%v\nwant\n%v", got, want)
	}
	// A block that does not decode: its ref is skipped, the rest read, the error told.
	got = map[int]string{}
	err = st.eachText(context.Background(), append(refs, textRef{4, 1}), func(i int, text []byte) { got[i] = string(text) })
	if err == nil || !strings.Contains(err.Error(), "text block") {
		t.Errorf("a broken block: error %v, want a text block's", err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("eachText beside a broken block\n%v\nwant\n%v", got, want)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := st.eachText(ctx, refs, func(int, []byte) { t.Error("read after cancel") }); err != context.Canceled {
		t.Errorf("cancelled: %v, want context.Canceled", err)
	}
}
