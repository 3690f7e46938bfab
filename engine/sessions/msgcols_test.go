package sessions

import (
	"context"
	"encoding/json"
	"math"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"mnemo/engine/rank"
)

// The columns order times as time.Time does, the zero time and times
// before 1970 included, and give back the same instant.
func TestMsgTimeOrder(t *testing.T) {
	times := []time.Time{
		{},
		time.Time{}.Add(time.Nanosecond),
		time.Date(1969, 12, 31, 23, 59, 59, 999_999_999, time.UTC),
		time.Unix(0, 0),
		time.Date(2026, 5, 1, 10, 0, 0, 1, time.FixedZone("x", 3600)),
		time.Date(2026, 5, 1, 9, 0, 0, 1, time.UTC), // the same instant
		time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC),
	}
	for _, a := range times {
		ma := toMsgTime(a)
		if ma.isZero() != a.IsZero() || !ma.Time().Equal(a) {
			t.Errorf("%v: isZero %v, back %v", a, ma.isZero(), ma.Time())
		}
		for _, b := range times {
			if got, want := ma.before(toMsgTime(b)), a.Before(b); got != want {
				t.Errorf("%v before %v = %v, want %v", a, b, got, want)
			}
			if got, want := ma == toMsgTime(b), a.Equal(b); got != want {
				t.Errorf("%v == %v: %v, want %v", a, b, got, want)
			}
		}
	}
}

func TestDocIDRoundTrip(t *testing.T) {
	for _, c := range [][2]uint32{{1, 0}, {35, 36}, {5000, 199}, {math.MaxUint32, math.MaxUint32}} {
		id := docID(c[0], c[1])
		sid, seq, ok := parseDocID(id)
		if !ok || sid != c[0] || seq != c[1] {
			t.Errorf("%v → %q → %d %d %v", c, id, sid, seq, ok)
		}
	}
	for _, bad := range []string{"", "1", "1.", ".1", "1.2.3", "-1.2", "zzzzzzzz.1", "1.zzzzzzzz", "a b.1"} {
		if sid, seq, ok := parseDocID(bad); ok {
			t.Errorf("%q read as %d.%d", bad, sid, seq)
		}
	}
}

// A record is read into the columns as json.Unmarshal reads it, in place
// when it has the shape json.Marshal writes and through json otherwise.
func TestDecodeColRecAsJSON(t *testing.T) {
	recs := []string{
		`{"i":"a1","r":"user","t":"2026-05-01T10:00:00Z","l":[1,2,3,4]}`,
		`{"i":"","r":"assistant","t":"0001-01-01T00:00:00Z","l":[0,0,0,0]}`,
		`{"i":"ü-ß","r":"user","t":"2026-05-01T10:00:00.123456789+02:00","l":[2147483647,-5,0,7]}`,
		`{"i":"a\"b","r":"user","t":"2026-05-01T10:00:00Z","l":[1,2,3,4]}`,            // an escape: through json
		`{"r":"tool","i":"x","l":[9,8,7,6],"t":"2026-05-01T10:00:00Z"}`,               // another order
		`{"i":"a1","r":"user","t":"2026-05-01T10:00:00Z","l":[1,2,3,4],"extra":true}`, // a field more
		`{"i":"a1","r":"user","t":"2026-05-01T10:00:00Z","l":[1,2]}`,                  // fewer lengths
		`{"i":"a1","r":"user","t":"2026-05-01T10:00:00Z","l":[1,2,3,2147483648]}`,     // out of range
		`{"i":"a1","r":"user","t":"yesterday","l":[1,2,3,4]}`,                         // no time
		`not json`,
	}
	for _, v := range recs {
		cols := newMsgCols()
		got, err := decodeColRec(&cols, []byte(v))
		var m msgRec
		wantErr := json.Unmarshal([]byte(v), &m)
		if (err != nil) != (wantErr != nil) {
			t.Errorf("%s: error %v, json's %v", v, err, wantErr)
			continue
		}
		if err != nil {
			continue
		}
		want := colRec{role: 0, time: toMsgTime(m.Time), lens: m.Lens}
		if got != want || cols.roles[0] != m.Role {
			t.Errorf("%s: %+v role %q, want %+v role %q", v, got, cols.roles[0], want, m.Role)
		}
		if fast, ok := scanMsgRec([]byte(v)); ok && !reflect.DeepEqual(fast, m) {
			t.Errorf("%s: scanMsgRec %+v, json %+v", v, fast, m)
		}
	}
}

func TestSessionNums(t *testing.T) {
	ss := &session{sessionRec: sessionRec{SID: 1}}
	for _, seq := range []uint32{0, 2, 2, 5} {
		if err := ss.setNum(seq, msgNum(seq+10)); err != nil {
			t.Fatal(err)
		}
	}
	ss.clearNum(0)
	ss.clearNum(3) // none there
	ss.clearNum(99)
	if got := ss.orderedSeqs(); !reflect.DeepEqual(got, []uint32{2, 5}) || ss.count != 2 {
		t.Errorf("seqs %v count %d, want [2 5] and 2", got, ss.count)
	}
	if ss.num(5) != 15 || ss.num(4) != noMsg || ss.num(math.MaxUint32) != noMsg {
		t.Errorf("num(5) %d num(4) %d", ss.num(5), ss.num(4))
	}
	if err := ss.setNum(math.MaxUint32, 1); err == nil {
		t.Error("a seq four billion past the last was taken")
	}
}

// Message numbers freed by a rewrite and a forgotten session are given to
// new messages: the corpus that synced them answers as one that loads the
// same store afresh, vectors and all.
func TestSessionsLiveMatchesReopened(t *testing.T) {
	ctx := context.Background()
	root, idx := sessionFixture(t), t.TempDir()
	s := openTestSessions(t, idx, lineSource{root})
	mustSync(t, s)
	p1 := filepath.Join(root, "alpha", "s1.jsonl")
	writeLines(t, p1, []lineMsg{
		msgAt("r1", "user", "A quince budget instead of the retry budget.", 0),
		msgAt("r2", "assistant", "The ledger keeps the quince in Postgres.", 1),
	}, false)
	mustSync(t, s)
	writeLines(t, filepath.Join(root, "gamma", "s3.jsonl"), []lineMsg{
		msgAt("c1", "user", "Which database holds the retry ledger?", 20),
		msgAt("c2", "assistant", "Postgres holds it, with a retry budget of five.", 21),
		msgAt("c3", "user", "And the quince?", 22),
	}, false)
	mustSync(t, s)
	if _, err := s.Forget(ctx, ForgetQuery{IDs: []string{"s2"}}); err != nil {
		t.Fatal(err)
	}
	writeLines(t, p1, []lineMsg{msgAt("r3", "user", "Postgres for the quince ledger, five retries.", 2)}, true)
	mustSync(t, s)
	queries := []Query{
		{Text: "quince ledger"}, {Text: "retry budget database", Mode: rank.Semantic},
		{Text: "postgres retry", Role: "assistant"}, {Text: "ledger", Mode: rank.FullText, Sort: rank.ByRecency},
	}
	var live []Page
	for _, q := range queries {
		live = append(live, search(t, s, q))
	}
	for i, p := range live {
		if len(p.Sessions) == 0 {
			t.Errorf("%+v: no answer", queries[i])
		}
	}
	if n := len(s.cols.sid); n >= 11 { // 11 messages were added in all
		t.Errorf("%d message numbers for 11 messages added: none was reused", n)
	}
	st, _ := s.Status(ctx)
	s.Close()
	r := openTestSessions(t, idx, lineSource{root})
	for i, q := range queries {
		if got := search(t, r, q); !reflect.DeepEqual(got, live[i]) {
			t.Errorf("%+v: reopened %+v\nlive %+v", q, got, live[i])
		}
	}
	if st.Messages != 6 || st.Vectors != st.Messages {
		t.Errorf("status %d messages, %d vectors; want 6 of each", st.Messages, st.Vectors)
	}
	if got := r.cols.live; got != st.Messages || len(r.cols.sid)-len(r.cols.free) != got {
		t.Errorf("reopened columns hold %d live of %d (%d free), want %d", got, len(r.cols.sid), len(r.cols.free), st.Messages)
	}
}
