package rank

import (
	"errors"
	"testing"
	"time"
)

func TestParseModeAndSort(t *testing.T) {
	modes := []struct {
		in   Mode
		want Mode
		err  error
	}{
		{"", Hybrid, nil}, {" Semantic ", Semantic, nil}, {"full-text", FullText, nil}, {"text", FullText, nil},
		{"fuzzy", "fuzzy", ErrBadMode},
	}
	for _, tc := range modes {
		got, err := ParseMode(tc.in)
		if !errors.Is(err, tc.err) || (err == nil && got != tc.want) {
			t.Errorf("ParseMode(%q) = %q, %v; want %q, %v", tc.in, got, err, tc.want, tc.err)
		}
	}
	if _, err := ParseMode(" Fuzzy"); err == nil || err.Error() != `" Fuzzy": `+ErrBadMode.Error() {
		t.Errorf("ParseMode error %v: want the mode as given", err)
	}
	sorts := []struct {
		in   Sort
		want Sort
		err  error
	}{
		{"", ByRelevance, nil}, {"RECENCY", ByRecency, nil}, {"oldest", "oldest", ErrBadSort},
	}
	for _, tc := range sorts {
		got, err := ParseSort(tc.in)
		if !errors.Is(err, tc.err) || (err == nil && got != tc.want) {
			t.Errorf("ParseSort(%q) = %q, %v; want %q, %v", tc.in, got, err, tc.want, tc.err)
		}
	}
}

func TestCheckRangeAndCount(t *testing.T) {
	a, b := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2025, 2, 1, 0, 0, 0, 0, time.UTC)
	if CheckRange(a, b) != nil || CheckRange(time.Time{}, a) != nil || CheckRange(a, time.Time{}) != nil {
		t.Error("a range in order, or open at one end, is refused")
	}
	if err := CheckRange(b, a); !errors.Is(err, ErrBadRange) {
		t.Errorf("CheckRange(b, a) = %v, want ErrBadRange", err)
	}
	bad := errors.New("bad")
	for _, tc := range []struct{ v, want int }{{0, 10}, {1, 1}, {200, 200}} {
		if got, err := Count("n", tc.v, 10, 200, bad); err != nil || got != tc.want {
			t.Errorf("Count(%d) = %d, %v; want %d", tc.v, got, err, tc.want)
		}
	}
	for _, v := range []int{-1, 201} {
		if _, err := Count("n", v, 10, 200, bad); !errors.Is(err, bad) {
			t.Errorf("Count(%d) = %v, want bad", v, err)
		}
	}
}

func TestPageBounds(t *testing.T) {
	for _, tc := range []struct{ page, size, n, lo, hi int }{
		{1, 10, 25, 0, 10}, {3, 10, 25, 20, 25}, {4, 10, 25, 25, 25}, {1, 10, 0, 0, 0},
	} {
		if lo, hi := PageBounds(tc.page, tc.size, tc.n); lo != tc.lo || hi != tc.hi {
			t.Errorf("PageBounds(%d, %d, %d) = %d, %d; want %d, %d", tc.page, tc.size, tc.n, lo, hi, tc.lo, tc.hi)
		}
	}
}

func TestSortCandidates(t *testing.T) {
	d := func(day int) time.Time { return time.Date(2025, 1, day, 0, 0, 0, 0, time.UTC) }
	cs := []*Candidate[item]{
		{Rec: item{key: "b", dated: d(1), upd: d(9)}, Score: 0.5},
		{Rec: item{key: "a", dated: d(1), upd: d(2)}, Score: 0.5},
		{Rec: item{key: "c", dated: d(5), upd: d(3)}, Score: 0.5},
		{Rec: item{key: "d", dated: d(1), upd: d(1)}, Score: 0.9},
	}
	keys := func() (s string) {
		for _, c := range cs {
			s += c.Rec.key
		}
		return s
	}
	SortCandidates(cs, ByRelevance)
	if got := keys(); got != "dcab" {
		t.Errorf("by relevance %s, want dcab (score, then newer, then key)", got)
	}
	SortCandidates(cs, ByRecency)
	if got := keys(); got != "bcad" {
		t.Errorf("by recency %s, want bcad", got)
	}
}

func TestFuseAll(t *testing.T) {
	r := DefaultRanking()
	cs := []Candidate[item]{{Text: 1, Sem: 0.4, TextRank: 1, SemRank: 1}, {Sem: 0.8, SemRank: 1}, {Text: 0.5, TextRank: 1}}
	FuseAll(NewFuser(WeightedSum, r), cs, Hybrid)
	for i, want := range []float64{(1 + 0.5*0.4) / 1.5, 0.5 * 0.8 / 1.5, 0.5 / 1.5} {
		if d := cs[i].Fused - want; d > 1e-12 || d < -1e-12 {
			t.Errorf("weighted %d: fused %v, want %v", i, cs[i].Fused, want)
		}
	}
	FuseAll(NewFuser(RRF, r), cs, Hybrid)
	if cs[0].TextRank != 1 || cs[2].TextRank != 2 || cs[1].TextRank != 0 || cs[1].SemRank != 1 || cs[0].SemRank != 2 {
		t.Errorf("RRF ranks %+v", cs)
	}
	if cs[0].Fused <= cs[1].Fused || cs[0].Fused > 1 {
		t.Errorf("RRF: in both lists %v, in one %v: want the first higher and at most 1", cs[0].Fused, cs[1].Fused)
	}
	FuseAll(NewFuser(WeightedSum, r), cs, Semantic)
	if cs[2].Fused != 0 || cs[1].Fused != 0.8 {
		t.Errorf("semantic fused %v and %v, want the similarity", cs[2].Fused, cs[1].Fused)
	}
}

func TestDecayAndCut(t *testing.T) {
	var cs []Candidate[item]
	for i := range 10 {
		cs = append(cs, Candidate[item]{Rec: item{key: string(rune('a' + i))}, Fused: 1 - float64(i)/20, Text: 1, TextRank: 1})
	}
	cs = append(cs, Candidate[item]{Fused: 0})
	decayed := 0
	list, n := DecayAndCut(Plan{Need: 3, Strength: 0.1}, cs, func(item) float64 { decayed++; return 0.95 })
	if n.Total != 10 || n.Text != 10 || n.Semantic != 0 {
		t.Errorf("counts %+v, want 10 in all, all by text", n)
	}
	if len(list) != decayed || len(list) < 3 || len(list) == 10 {
		t.Errorf("%d scored, %d decayed: want the page's contenders only", len(list), decayed)
	}
	for _, c := range list {
		if c.Score != c.Fused*0.95 || c.Decay != 0.95 {
			t.Errorf("%s: score %v decay %v", c.Rec.key, c.Score, c.Decay)
		}
	}
}

func TestReady(t *testing.T) {
	errNotReady := errors.New("not built yet")
	errDamaged := errors.New("damaged")
	tests := []struct {
		name            string
		mode            Mode
		indexing, empty bool
		damage          error
		done            bool
		err             error
	}{
		{"sound", Hybrid, false, false, nil, false, nil},
		{"being built, nothing stored yet: an empty page", Hybrid, true, true, nil, true, nil},
		{"nothing stored, nothing building", Hybrid, false, true, nil, false, errNotReady},
		{"empty before damaged", FullText, false, true, errDamaged, false, errNotReady},
		{"damaged", Hybrid, false, false, errDamaged, false, errDamaged},
		{"damaged, full text", FullText, false, false, errDamaged, false, errDamaged},
		{"damaged, but semantic needs no words", Semantic, false, false, errDamaged, false, nil},
		{"damaged and being rebuilt: partial answers", FullText, true, false, errDamaged, false, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			done, err := Ready(tc.mode, tc.indexing, tc.empty, tc.damage, errNotReady)
			if done != tc.done || err != tc.err {
				t.Errorf("Ready = %v, %v; want %v, %v", done, err, tc.done, tc.err)
			}
		})
	}
}

// TestSettings: what both corpora's Opens accept and refuse, in their words.
func TestSettings(t *testing.T) {
	bad := DefaultRanking()
	bad.TextWeight = -1
	tests := []struct {
		name    string
		f       Fusion
		r       *Ranking
		want    Fusion
		wantErr string
	}{
		{"defaults", "", nil, WeightedSum, ""},
		{"rrf", RRF, nil, RRF, ""},
		{"unknown fusion", "max", nil, "max", `unknown fusion "max" (want weighted or rrf)`},
		{"bad ranking", "", &bad, WeightedSum, bad.Validate().Error()},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f, rk, err := Settings(tc.f, tc.r)
			if f != tc.want {
				t.Errorf("fusion %q, want %q", f, tc.want)
			}
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Errorf("error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || rk != DefaultRanking() {
				t.Errorf("ranking %+v, %v: want the defaults", rk, err)
			}
		})
	}
}
