package sessions

import (
	"context"
	"math"
	"math/bits"
	"unicode"
	"unicode/utf8"

	"mnemo/engine/rank"
)

// The text stage's BM25 sees a query through the index's analysis:
// stemmed, its stop words gone. A query that is a span of a message's
// words ("channels had no effects on mechanically") or a handful of its
// exact words keeps one or two common stems that thousands of messages
// share, and the message it was taken from ranks among them by length
// and term frequency alone: the scale benchmark's needles that missed
// the page came 12th to 911th at 100k messages. SQLite FTS5, which keeps every word
// and does not stem, ranks it first. The re-rank reads the stored text
// of the best candidates and lifts those that hold the query's own
// words, stop words included, and most of all those that hold a run of
// them in the query's order.

// rerankDepth is how many of the best text candidates the re-rank reads.
// Each read decodes a block of textBlock messages (~14 KB, ~27 µs of CPU
// at 1M messages on a loaded machine), which is nearly all the re-rank
// costs; at 1M, fulltext needle recall@10 was .927 / .933 / .940 reading
// 50 / 64 / 100, against .883 without (docs/benchmarks.md).
const rerankDepth = 50

// maxQueryWords bounds the query words the re-rank tracks (one bit each).
const maxQueryWords = 64

// Weights of the re-rank's evidence: a candidate's BM25 share is
// multiplied by 1 + coverWeight·(share of the query's distinct words it
// holds) + runWeight·(its longest run of query words in the query's order,
// over the query's length, when the run has two words or more).
const (
	coverWeight = 1.0
	runWeight   = 1.0
)

// queryWords is a query's words for the re-rank: lowercased, in order,
// each by the number of its distinct word (first occurrence order).
type queryWords struct {
	ids   map[string]int
	seq   []int   // the query's words in order, by id
	posOf [][]int // by id: its positions in seq, last first
}

// newQueryWords splits text as the re-rank splits messages (eachWord).
func newQueryWords(text string) queryWords {
	q := queryWords{ids: map[string]int{}}
	var buf []byte
	eachWord([]byte(text), &buf, func(w []byte) {
		if len(q.seq) == maxQueryWords {
			return
		}
		id, ok := q.ids[string(w)]
		if !ok {
			id = len(q.ids)
			q.ids[string(w)] = id
			q.posOf = append(q.posOf, nil)
		}
		q.posOf[id] = append([]int{len(q.seq)}, q.posOf[id]...)
		q.seq = append(q.seq, id)
	})
	return q
}

// evidence is what one text holds of the query: the share of its
// distinct words, and its longest run of words in the query's order.
func (q queryWords) evidence(text []byte, buf *[]byte) (cover float64, run int) {
	var seen uint64
	var end, length [maxQueryWords]int // per query position: the text word a run ended at, and its length
	for i := range end {
		end[i] = -2
	}
	j := 0
	eachWord(text, buf, func(w []byte) {
		id, ok := q.ids[string(w)]
		if ok {
			seen |= 1 << id
			for _, i := range q.posOf[id] { // last first: a run read below is the previous word's
				l := 1
				if i > 0 && end[i-1] == j-1 {
					l = length[i-1] + 1
				}
				end[i], length[i] = j, l
				run = max(run, l)
			}
		}
		j++
	})
	return float64(bits.OnesCount64(seen)) / float64(len(q.ids)), run
}

// boost is the factor a candidate's text score is multiplied by.
func (q queryWords) boost(cover float64, run int) float64 {
	f := 1 + coverWeight*cover
	if run >= 2 {
		f += runWeight * float64(run) / float64(len(q.seq))
	}
	return f
}

// rerank multiplies the text score of the best rerankDepth candidates
// by the evidence their stored text holds of the query's words (boost),
// then divides every score by the new best, so that the best is 1 again,
// and returns what it divided by (1 when it did not). A query of one
// word has no more to say than its BM25. Candidates past the depth keep
// their score: below every one re-read, before and after.
func (s *Corpus) rerank(ctx context.Context, cands []msgCandidate, text string) (float64, error) {
	q := newQueryWords(text)
	if len(q.seq) < 2 || len(cands) == 0 {
		return 1, nil
	}
	top := firstN(indexes(len(cands)), rerankDepth, func(a, b int) bool { return textBefore(&cands[a], &cands[b]) })
	refs := make([]textRef, len(top))
	for i, c := range top {
		refs[i] = textRef{sid: cands[c].Rec.sid, seq: cands[c].Rec.seq}
	}
	var buf []byte
	// A text block that does not decode leaves its candidates as BM25
	// scored them, as it leaves their snippets empty: the rest of the
	// answer stands. A query cancelled part-way has no answer.
	if err := s.st.eachText(ctx, refs, func(i int, t []byte) {
		c := &cands[top[i]]
		c.Text *= q.boost(q.evidence(t, &buf))
	}); err != nil && ctx.Err() != nil {
		return 1, err
	}
	var best float64
	for i := range cands {
		best = math.Max(best, cands[i].Text)
	}
	if best <= 0 {
		return 1, nil
	}
	for i := range cands {
		cands[i].Text /= best
	}
	return best, nil
}

// indexes is 0 … n-1.
func indexes(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

// textBefore orders text candidates by score, ties as the page does.
func textBefore(a, b *msgCandidate) bool {
	if a.Text != b.Text {
		return a.Text > b.Text
	}
	return rank.CandidateBefore(a, b, rank.ByRelevance)
}

// eachWord calls f with each word of b, lowercased into *buf (valid during
// the call): a word is a run of letters, marks and digits, so an
// apostrophe or a hyphen splits one ("it's" is "it" and "s"), as SQLite's
// unicode61 tokenizer splits it.
func eachWord(b []byte, buf *[]byte, f func(w []byte)) {
	w := (*buf)[:0]
	for i := 0; i < len(b); {
		c := b[i]
		if c < utf8.RuneSelf {
			i++
			switch {
			case 'a' <= c && c <= 'z', '0' <= c && c <= '9':
				w = append(w, c)
				continue
			case 'A' <= c && c <= 'Z':
				w = append(w, c+'a'-'A')
				continue
			}
		} else {
			r, n := utf8.DecodeRune(b[i:])
			i += n
			if unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r) {
				w = utf8.AppendRune(w, unicode.ToLower(r))
				continue
			}
		}
		if len(w) > 0 {
			f(w)
			w = w[:0]
		}
	}
	if len(w) > 0 {
		f(w)
	}
	*buf = w
}
