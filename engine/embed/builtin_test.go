package embed

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"mnemo/engine/embed/internal/table"
)

func builtinT(tb testing.TB) *Static {
	tb.Helper()
	s, err := Builtin()
	if err != nil {
		tb.Fatalf("Builtin: %v", err)
	}
	return s
}

func embedOne(tb testing.TB, s *Static, text string) []float32 {
	tb.Helper()
	v, err := s.Embed(context.Background(), []string{text})
	if err != nil {
		tb.Fatalf("Embed(%q): %v", text, err)
	}
	return v[0]
}

func cosine(x, y []float32) float64 {
	var d float64
	for i := range x {
		d += float64(x[i]) * float64(y[i])
	}
	return d // both unit length
}

func norm(v []float32) float64 {
	var n float64
	for _, x := range v {
		n += float64(x) * float64(x)
	}
	return math.Sqrt(n)
}

func TestBuiltinIdentity(t *testing.T) {
	s := builtinT(t)
	var _ Embedder = s
	if got := s.Name(); got != "builtin:glove-6b-100d-sif-v2" {
		t.Errorf("Name() = %q", got)
	}
	if got := s.Dim(); got != 100 {
		t.Errorf("Dim() = %d, want 100", got)
	}
	if s2, _ := Builtin(); s2 != s {
		t.Error("Builtin() returned a different value on the second call")
	}
}

func TestEmbedVectors(t *testing.T) {
	s := builtinT(t)
	tests := []struct {
		name     string
		text     string
		wantZero bool
	}{
		{"sentence", "The cat sat on the mat.", false},
		{"single frequent word", "the", false},
		{"single rare word", "postgresql", false},
		{"code identifier", "parseHTTPRequest", false},
		{"markdown chunk", chunk, false},
		{"empty", "", true},
		{"punctuation only", "?!… --- ***", true},
		{"unknown words only", "zxqvw blorptastic qwzzkx", false},
		{"non-Latin script", "日本語のテキスト", false},
		{"numbers and initials only", "12 345 6789 a b", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := embedOne(t, s, tt.text)
			if len(v) != s.Dim() {
				t.Fatalf("len = %d, want %d", len(v), s.Dim())
			}
			for i, x := range v {
				if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
					t.Fatalf("component %d is %v", i, x)
				}
			}
			n := norm(v)
			switch {
			case tt.wantZero && n != 0:
				t.Errorf("norm = %v, want an all-zero vector", n)
			case !tt.wantZero && math.Abs(n-1) > 1e-5:
				t.Errorf("norm = %v, want 1", n)
			}
		})
	}
}

func TestEmbedDeterministic(t *testing.T) {
	s := builtinT(t)
	// Unknown words repeat within and across texts: their stand-ins are
	// built once per call, and must not differ for it.
	texts := []string{"the cat sat on the mat", "database migration failed", "the cat sat on the mat", "",
		"oligoclonal banding, oligoclonal bands", "qwzzkxvum oligoclonal blorptastic", "blorptastic", "x9 ab blorptastic"}
	a, err := s.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(a[0], a[2]) {
		t.Error("identical texts in one batch got different vectors")
	}
	// A vector must not depend on its batch neighbours or on earlier calls.
	for i, text := range texts {
		if b := embedOne(t, s, text); !slices.Equal(a[i], b) {
			t.Errorf("%q: batch and single embeddings differ", text)
		}
	}
	fresh, err := newStatic(gloveTable)
	if err != nil {
		t.Fatal(err)
	}
	if b := embedOne(t, fresh, texts[1]); !slices.Equal(a[1], b) {
		t.Error("a freshly decoded table gives a different vector")
	}
	// Each token counts each time it occurs.
	if slices.Equal(embedOne(t, s, "cat dog"), embedOne(t, s, "cat dog dog")) {
		t.Error(`"cat dog" and "cat dog dog" got the same vector`)
	}
	// Case and punctuation are not part of the meaning.
	if !slices.Equal(embedOne(t, s, "The Cat, sat!"), embedOne(t, s, "the cat sat")) {
		t.Error("case or punctuation changed the vector")
	}
}

func TestEmbedSemantics(t *testing.T) {
	s := builtinT(t)
	tests := []struct {
		anchor, near, far string
	}{
		{"the cat sat on the mat", "a kitten rested on the rug", "quarterly revenue grew in europe"},
		{"database migration failed", "postgres schema upgrade error", "birthday party cake"},
		{"fixed a bug in the login handler", "authentication code crashed for some users", "we hiked up the mountain trail"},
		{"the user prefers dark mode in the editor", "UI theme preference: darkTheme", "the invoice is due next month"},
	}
	for _, tt := range tests {
		t.Run(tt.anchor, func(t *testing.T) {
			a, n, f := embedOne(t, s, tt.anchor), embedOne(t, s, tt.near), embedOne(t, s, tt.far)
			if cn, cf := cosine(a, n), cosine(a, f); cn <= cf {
				t.Errorf("cos(near) = %.3f <= cos(far) = %.3f", cn, cf)
			} else {
				t.Logf("cos(near) = %.3f, cos(far) = %.3f", cn, cf)
			}
		})
	}
}

func TestEmbedUnknownWords(t *testing.T) {
	s := builtinT(t)
	if _, ok := s.index.Row([]byte("oligoclonal")); ok {
		t.Fatal("test premise: oligoclonal should be missing from the table")
	}
	// The same unknown word on both sides is evidence; a different one is not.
	a := embedOne(t, s, "oligoclonal banding in the spinal fluid")
	same := embedOne(t, s, "oligoclonal bands were found")
	other := embedOne(t, s, "axisymmetric bands were found")
	if cs, co := cosine(a, same), cosine(a, other); cs <= co+0.1 {
		t.Errorf("cos(same unknown word) = %.3f, cos(other unknown word) = %.3f; want the first clearly higher", cs, co)
	}
	// Spellings that share most trigrams are near; unrelated ones are not.
	x, near, far := embedOne(t, s, "blorptastic"), embedOne(t, s, "blorptastical"), embedOne(t, s, "qwzzkxvum")
	if cn, cf := cosine(x, near), cosine(x, far); cn < 0.5 || cf > 0.3 {
		t.Errorf("cos(blorptastic, blorptastical) = %.3f, want >= 0.5; cos(blorptastic, qwzzkxvum) = %.3f, want <= 0.3", cn, cf)
	}
	// A known word keeps its own vector: the fallback is for unknown words only.
	if !slices.Equal(embedOne(t, s, "cat"), embedOne(t, s, "cat 42")) {
		t.Error("a number changed the vector of a known word")
	}
}

func TestEmbedCancelled(t *testing.T) {
	s := builtinT(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	v, err := s.Embed(ctx, []string{"the cat sat on the mat"})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
	if v != nil {
		t.Errorf("got vectors %v alongside the error", v)
	}
	ctx, cancel = context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel()
	if _, err := s.Embed(ctx, []string{"x"}); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err = %v, want context.DeadlineExceeded", err)
	}
}

func TestNewStaticCorrupt(t *testing.T) {
	mutate := func(f func(b []byte) []byte) []byte { return f(slices.Clone(gloveTable)) }
	tests := []struct {
		name string
		data []byte
		want string
	}{
		{"empty", nil, "shorter than"},
		{"truncated", gloveTable[:len(gloveTable)/2], "checksum"},
		{"bad magic", mutate(func(b []byte) []byte { b[0] = 'X'; return b }), "magic"},
		{"flipped vector byte", mutate(func(b []byte) []byte { b[len(b)-1000] ^= 0x40; return b }), "checksum"},
		{"flipped word byte", mutate(func(b []byte) []byte { b[500] ^= 1; return b }), "checksum"},
		{"future version", mutate(func(b []byte) []byte { b[8] = 9; return b }), "version"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := newStatic(tt.data)
			if err == nil {
				t.Fatalf("decoded a corrupt table: %v", s)
			}
			if !errors.Is(err, table.ErrCorrupt) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want ErrCorrupt mentioning %q", err, tt.want)
			}
		})
	}
}

// TestLoadFootprint keeps the decoded table within the memory it is
// documented to use: the embedded bytes are aliased, not copied.
func TestLoadFootprint(t *testing.T) {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	if _, err := newStatic(gloveTable); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 16<<20 {
		t.Errorf("decoding allocated %d MB, want at most 16", alloc>>20)
	} else {
		t.Logf("decoding allocated %.1f MB", float64(alloc)/(1<<20))
	}
}

// chunk is a 200-word memory note, the size the indexer embeds.
var chunk = func() string {
	const para = `## Deploy notes
The staging database migration failed again on Tuesday because the schema
upgrade script assumed PostgreSQL 14. We rolled back, pinned the driver
version and added a check to parseHTTPRequest so that malformed headers no
longer crash the gateway. Sarah prefers short commit messages and wants the
release checklist kept in docs/release.md; remember to update the changelog
before tagging. `
	words := strings.Fields(strings.Repeat(para, 5))
	return strings.Join(words[:200], " ")
}()

func BenchmarkEmbedChunk(b *testing.B) {
	s := builtinT(b)
	ctx := context.Background()
	texts := []string{chunk}
	b.SetBytes(int64(len(chunk)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.Embed(ctx, texts); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "chunks/s")
}

func BenchmarkLoad(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := newStatic(gloveTable); err != nil {
			b.Fatal(err)
		}
	}
}

// TestEmbedConcurrent backs the claim that a Static is safe for concurrent
// use (run it with -race).
func TestEmbedConcurrent(t *testing.T) {
	s := builtinT(t)
	texts := []string{"the cat sat on the mat", chunk, "parseHTTPRequest failed", "zzzq"}
	want, err := s.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, 8)
	for range 8 {
		go func() {
			got, err := s.Embed(context.Background(), texts)
			if err == nil {
				for i := range got {
					if !slices.Equal(got[i], want[i]) {
						err = errors.New("concurrent Embed gave a different vector")
					}
				}
			}
			errs <- err
		}()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}

// TestStandInSumsExact checks the counted sums of the stand-ins against
// the float additions they replace, bit for bit, up to tokens long enough
// to need 17 bit planes.
func TestStandInSumsExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, n := range []int{1, 2, 3, 4, 5, 10, 63, 64, 65, 255, 1000, 100000} {
		tok := make([]byte, n)
		for i := range tok {
			tok[i] = byte('a' + rng.IntN(3)) // few trigrams: many repeat, counts grow
		}
		var got, want [builtinDim]float32
		standInSums(tok, &got)
		standInSumsFloat(tok, &want)
		for k := range want {
			if math.Float32bits(got[k]) != math.Float32bits(want[k]) {
				t.Fatalf("%d-byte token, component %d: counted %v, added %v", n, k, got[k], want[k])
			}
		}
	}
}

// TestAxpy2 checks the two-row step against two axpy calls, bit for bit,
// over lengths with and without a remainder.
func TestAxpy2(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for _, n := range []int{0, 1, 3, 4, 7, 100, 101} {
		q1, q2 := make([]byte, n), make([]byte, n)
		want, got := make([]float32, n), make([]float32, n)
		for i := range n {
			q1[i], q2[i] = byte(rng.Uint32()), byte(rng.Uint32())
			want[i] = rng.Float32()*2 - 1
		}
		copy(got, want)
		c1, c2 := rng.Float32(), rng.Float32()*1e-3
		axpy(want, q1, c1)
		axpy(want, q2, c2)
		axpy2(got, q1, c1, q2, c2)
		for i := range want {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
				t.Fatalf("n = %d, component %d: axpy2 gives %v, two axpy calls %v", n, i, got[i], want[i])
			}
		}
	}
}
