package transcript

import (
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// A gitleaks rule whose keyword is in a text still finds nothing in most
// texts that hold it: "key", "token", "s." and "ey" are in most prose, and
// running the rule's expression over the whole text (Go's regexp, an NFA
// over every byte, often with dozens of threads alive) is the cost of a
// redaction. A prefilter answers, cheaply, the one question that decides
// whether the rule can find anything: does its expression match anywhere
// in the text? When it says no, the rule has no finding, by gitleaks' own
// code (detectRule returns at once when the expression has no match); when
// it says maybe, the rule runs as gitleaks runs it, over the whole text.
//
// The prefilter is derived from the expression itself, not written by hand,
// so it follows the rule set when gitleaks changes it:
//
//   - The expression is a concatenation e0 e1 … en (groups looked
//     through, a lone node is one of one; an alternation of branches gets
//     a test per branch). A match of it holds consecutive matches of
//     every ei.
//   - An anchor is a suffix ei … en every match of which begins with one
//     of a few literal strings (say "ghp_", or "hvs." and "s.", or "key",
//     "api", …, cut to anchorLen bytes): any match of the expression puts
//     one of them at some position k, where the match of ei begins.
//   - From ei on, the expression is cut to a tail t that every match of
//     ei … en begins with: nodes that match a bounded number of runes are
//     kept, the first one that does not is cut to such a prefix of itself
//     (x{11,} to x{11}, x* to nothing), the rest dropped; then every
//     assertion (\b, ^, $, …) in t is dropped, which only lets t match
//     more. t matches at most maxRunes runes, and whether it matches at a
//     position depends on the bytes from there on only.
//   - So: if the expression matches, t matches at the position k of some
//     occurrence of an anchor string, within the 4·maxRunes bytes from
//     there. The prefilter looks for each occurrence (in an ASCII-lowered
//     copy, whose byte offsets are the text's) and tries \A(?:t) on that
//     window only; when none matches, the expression matches nowhere.
//
// The anchor strings are compared in ASCII lower case. The only runes
// outside ASCII that a case-insensitive expression matches for an ASCII
// letter are the Kelvin sign and the long s (K and ſ, for k and s); a text
// holding either skips the prefilters (every rule that its keywords switch
// on runs). TestPrefilterNeverMissesAMatch checks all this on random
// matches of every rule; the differential tests (redact_prefilter_test.go,
// redact_corpus_test.go) check Redact against gitleaks' full detector.

// prefilter is the test described above for one expression: a list of
// anchored tails, one per branch when the expression is an alternation of
// branches (it matches if one of them does).
type prefilter []anchoredTail

type anchoredTail struct {
	anchors  []string // lower-case ASCII, none empty
	tail     *regexp.Regexp
	maxBytes int
}

// maxAnchors bounds the literal strings an anchor may stand for.
const maxAnchors = 64

// foldOutside are the runes outside ASCII that simple case folding maps to
// or from an ASCII letter.
var foldOutside = func() string {
	var b strings.Builder
	for c := rune(0); c < utf8.RuneSelf; c++ {
		for f := unicode.SimpleFold(c); f != c; f = unicode.SimpleFold(f) {
			if f >= utf8.RuneSelf {
				b.WriteRune(f)
			}
		}
	}
	return b.String()
}()

// prefilterable reports whether the prefilters may be used on text.
func prefilterable(text string) bool {
	for _, c := range foldOutside {
		if strings.ContainsRune(text, c) {
			return false
		}
	}
	return true
}

// newPrefilter derives the prefilter of expr, or nil if it has none.
func newPrefilter(expr string) prefilter {
	re, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return nil
	}
	branches := []*syntax.Regexp{re}
	if re.Op == syntax.OpAlternate {
		branches = re.Sub
	}
	var p prefilter
	for _, b := range branches {
		t, ok := newAnchoredTail(b)
		if !ok {
			return nil
		}
		p = append(p, t)
	}
	return p
}

// newAnchoredTail is the anchor and tail of one branch.
func newAnchoredTail(re *syntax.Regexp) (anchoredTail, bool) {
	elems := flatten(nil, re)
	best, bestSet := -1, []string(nil)
	for i := range elems {
		set, ok := prefixSet(&syntax.Regexp{Op: syntax.OpConcat, Sub: elems[i:]})
		set = cutAnchors(set)
		if ok && (best < 0 || betterAnchors(set, bestSet)) {
			best, bestSet = i, set
		}
	}
	if best < 0 {
		return anchoredTail{}, false
	}
	tail, _ := cutToBudget(trimEnd(withoutAssertions(cutTail(elems[best:]))), tailRunes)
	n, ok := maxRunes(tail)
	if !ok {
		return anchoredTail{}, false
	}
	t, err := regexp.Compile(`\A(?:` + tail.String() + `)`)
	if err != nil {
		return anchoredTail{}, false
	}
	return anchoredTail{anchors: bestSet, tail: t, maxBytes: n * utf8.UTFMax}, true
}

// flatten appends the nodes re is the concatenation of, looking through
// groups (a capture matches what its contents match).
func flatten(out []*syntax.Regexp, re *syntax.Regexp) []*syntax.Regexp {
	switch {
	case re.Op == syntax.OpConcat:
		for _, sub := range re.Sub {
			out = flatten(out, sub)
		}
		return out
	case re.Op == syntax.OpCapture && re.Sub[0].Op == syntax.OpConcat:
		return flatten(out, re.Sub[0])
	}
	return append(out, re)
}

// anchorLen is the length anchor strings are cut to: longer ones are
// hardly rarer, and each string is one more search of the text.
const anchorLen = 6

// betterAnchors prefers the anchor whose shortest string is longer (up to
// anchorLen), then the one with fewer strings.
func betterAnchors(a, b []string) bool {
	ma, mb := min(minLen(a), anchorLen), min(minLen(b), anchorLen)
	if ma != mb {
		return ma > mb
	}
	return len(a) < len(b)
}

// cutAnchors cuts every string of set to anchorLen bytes: what begins
// with one begins with its start.
func cutAnchors(set []string) []string {
	var out []string
	for _, s := range set {
		if len(s) > anchorLen {
			s = s[:anchorLen]
		}
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

func minLen(set []string) int {
	m := -1
	for _, s := range set {
		if m < 0 || len(s) < m {
			m = len(s)
		}
	}
	return m
}

// prefiltered is a text as the prefilters read it: its ASCII-lowered copy,
// made on first use, once, for every rule.
type prefiltered struct {
	text, lower string
	// looked: whether the text was looked at; usable: whether the
	// prefilters may be used on it (prefilterable), lower then made.
	looked, usable bool
}

func newPrefiltered(text string) *prefiltered { return &prefiltered{text: text} }

// mayMatch reports whether the expression p was derived from may match in
// the text (always, if p is nil or the text holds a rune that folds to ASCII).
func (t *prefiltered) mayMatch(p prefilter) bool {
	if p == nil {
		return true
	}
	if !t.looked {
		t.looked = true
		if t.usable = prefilterable(t.text); t.usable {
			t.lower = asciiLower(t.text)
		}
	}
	return !t.usable || p.mayMatch(t.text, t.lower)
}

// mayMatch reports whether the expression may match in text, whose ASCII-
// lowered copy is lower (prefilterable(text) must hold).
func (p prefilter) mayMatch(text, lower string) bool {
	for _, t := range p {
		if t.mayMatch(text, lower) {
			return true
		}
	}
	return false
}

func (p *anchoredTail) mayMatch(text, lower string) bool {
	for _, a := range p.anchors {
		for i := 0; ; {
			j := strings.Index(lower[i:], a)
			if j < 0 {
				break
			}
			k := i + j
			if p.tail.MatchString(text[k:min(len(text), k+p.maxBytes)]) {
				return true
			}
			i = k + 1
		}
	}
	return false
}

// asciiLower is text with A–Z lowered, every other byte as it is.
func asciiLower(text string) string {
	i := strings.IndexFunc(text, func(c rune) bool { return 'A' <= c && c <= 'Z' })
	if i < 0 {
		return text
	}
	b := []byte(text)
	for ; i < len(b); i++ {
		if c := b[i]; 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// lits is the finite set of strings node matches, in ASCII lower case (a
// superset: case is not told apart), if it is finite, small and ASCII.
// Runes in foldOutside are left out of classes: texts holding them never
// reach a prefilter.
func lits(re *syntax.Regexp) ([]string, bool) {
	switch re.Op {
	case syntax.OpEmptyMatch:
		return []string{""}, true
	case syntax.OpLiteral:
		var b strings.Builder
		for _, c := range re.Rune {
			if c >= utf8.RuneSelf {
				return nil, false
			}
			b.WriteRune(unicode.ToLower(c))
		}
		return []string{b.String()}, true
	case syntax.OpCharClass:
		return classLits(re)
	case syntax.OpCapture:
		return lits(re.Sub[0])
	case syntax.OpQuest:
		s, ok := lits(re.Sub[0])
		if !ok {
			return nil, false
		}
		return union([]string{""}, s), true
	case syntax.OpRepeat:
		return repeatLits(re)
	case syntax.OpConcat:
		acc := []string{""}
		for _, sub := range re.Sub {
			s, ok := lits(sub)
			if !ok {
				return nil, false
			}
			if acc, ok = cross(acc, s); !ok {
				return nil, false
			}
		}
		return acc, true
	case syntax.OpAlternate:
		var out []string
		for _, sub := range re.Sub {
			s, ok := lits(sub)
			if !ok {
				return nil, false
			}
			if out = union(out, s); len(out) > maxAnchors {
				return nil, false
			}
		}
		return out, true
	}
	return nil, false
}

// classLits is lits of a character class: its characters, if at most 8.
func classLits(re *syntax.Regexp) ([]string, bool) {
	var out []string
	for i := 0; i+1 < len(re.Rune); i += 2 {
		for c := re.Rune[i]; c <= re.Rune[i+1]; c++ {
			if c >= utf8.RuneSelf {
				if strings.ContainsRune(foldOutside, c) {
					continue
				}
				return nil, false
			}
			if s := string(unicode.ToLower(c)); !slices.Contains(out, s) {
				if out = append(out, s); len(out) > 8 {
					return nil, false
				}
			}
		}
	}
	return out, len(out) > 0
}

// repeatLits is lits of x{n,m}, for m up to 4.
func repeatLits(re *syntax.Regexp) ([]string, bool) {
	if re.Max < 0 || re.Max > 4 {
		return nil, false
	}
	s, ok := lits(re.Sub[0])
	if !ok {
		return nil, false
	}
	var out []string
	acc := []string{""}
	for n := 0; n <= re.Max; n++ {
		if n >= re.Min {
			out = union(out, acc)
		}
		if acc, ok = cross(acc, s); !ok {
			return nil, false
		}
	}
	return out, len(out) <= maxAnchors
}

// prefixSet is a finite set of non-empty strings, in ASCII lower case,
// one of which begins every match of node.
func prefixSet(re *syntax.Regexp) ([]string, bool) {
	if s, ok := lits(re); ok {
		return s, !slices.Contains(s, "")
	}
	switch re.Op {
	case syntax.OpCapture, syntax.OpPlus:
		return prefixSet(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return prefixSet(re.Sub[0])
		}
	case syntax.OpAlternate:
		var out []string
		for _, sub := range re.Sub {
			s, ok := prefixSet(sub)
			if !ok {
				return nil, false
			}
			if out = union(out, s); len(out) > maxAnchors {
				return nil, false
			}
		}
		return out, true
	case syntax.OpConcat:
		acc := []string{""}
		for _, sub := range re.Sub {
			if minLen(acc) >= anchorLen {
				break
			}
			if isAssertion(sub) {
				// Consumes nothing: what follows begins where it stands.
				continue
			}
			if s, ok := lits(sub); ok {
				next, ok := cross(acc, s)
				if !ok {
					break
				}
				acc = next
				continue
			}
			if s, ok := prefixSet(sub); ok {
				if next, ok := cross(acc, s); ok {
					acc = next
				}
			}
			break
		}
		if slices.Contains(acc, "") {
			return nil, false
		}
		return acc, true
	}
	return nil, false
}

// isAssertion reports whether node is an empty-width assertion.
func isAssertion(re *syntax.Regexp) bool {
	switch re.Op {
	case syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText, syntax.OpEndText,
		syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		return true
	}
	return false
}

// bounded reports whether node matches a bounded number of runes.
func bounded(re *syntax.Regexp) bool {
	switch re.Op {
	case syntax.OpStar, syntax.OpPlus:
		return false
	case syntax.OpRepeat:
		if re.Max < 0 {
			return false
		}
	}
	for _, sub := range re.Sub {
		if !bounded(sub) {
			return false
		}
	}
	return true
}

// cutTail is a bounded node every match of the concatenation elems begins
// with.
func cutTail(elems []*syntax.Regexp) *syntax.Regexp {
	var out []*syntax.Regexp
	for _, e := range elems {
		if bounded(e) {
			out = append(out, e)
			continue
		}
		out = append(out, cutPrefix(e))
		break
	}
	return &syntax.Regexp{Op: syntax.OpConcat, Sub: out}
}

// cutPrefix is a bounded node every match of re begins with.
func cutPrefix(re *syntax.Regexp) *syntax.Regexp {
	if bounded(re) {
		return re
	}
	switch re.Op {
	case syntax.OpCapture:
		return cutPrefix(re.Sub[0])
	case syntax.OpConcat:
		return cutTail(re.Sub)
	case syntax.OpAlternate:
		out := &syntax.Regexp{Op: syntax.OpAlternate}
		for _, sub := range re.Sub {
			out.Sub = append(out.Sub, cutPrefix(sub))
		}
		return out
	case syntax.OpPlus, syntax.OpRepeat:
		n := 1
		if re.Op == syntax.OpRepeat {
			n = re.Min
		}
		if n == 0 {
			break
		}
		if bounded(re.Sub[0]) {
			return &syntax.Regexp{Op: syntax.OpRepeat, Flags: re.Flags, Min: n, Max: n, Sub: re.Sub}
		}
		return cutPrefix(re.Sub[0])
	}
	// A star, a question mark or {0,…} over what is unbounded: it may
	// match nothing.
	return &syntax.Regexp{Op: syntax.OpEmptyMatch}
}

// trimEnd is node with its end cut to what every match of it begins with,
// where that is shorter: a repetition x{n,m} that ends it becomes x{n}, an
// end that may match nothing goes. The test stays as sound (every match of
// node begins with a match of the result) and gets cheaper: x{10,150}
// compiles to 150 copies of x, and widens every window by 150 runes.
func trimEnd(re *syntax.Regexp) *syntax.Regexp {
	empty := &syntax.Regexp{Op: syntax.OpEmptyMatch}
	switch re.Op {
	case syntax.OpConcat:
		subs := slices.Clone(re.Sub)
		for len(subs) > 0 {
			last := trimEnd(subs[len(subs)-1])
			if last.Op != syntax.OpEmptyMatch {
				subs[len(subs)-1] = last
				break
			}
			subs = subs[:len(subs)-1]
		}
		return &syntax.Regexp{Op: syntax.OpConcat, Flags: re.Flags, Sub: subs}
	case syntax.OpCapture:
		return trimEnd(re.Sub[0])
	case syntax.OpQuest, syntax.OpStar:
		return empty
	case syntax.OpRepeat:
		if re.Min == 0 {
			return empty
		}
		return &syntax.Regexp{Op: syntax.OpRepeat, Flags: re.Flags, Min: re.Min, Max: re.Min, Sub: re.Sub}
	case syntax.OpAlternate:
		out := &syntax.Regexp{Op: syntax.OpAlternate, Flags: re.Flags}
		for _, sub := range re.Sub {
			t := trimEnd(sub)
			if t.Op == syntax.OpEmptyMatch {
				return empty // a branch that may match nothing: so may the whole
			}
			out.Sub = append(out.Sub, t)
		}
		return out
	}
	return re
}

// tailRunes bounds the runes a tail matches: past a few dozen it hardly
// rules out more, and each one costs instructions (x{27,300} compiles to
// 300 copies of x) and widens every window.
const tailRunes = 64

// cutToBudget is a node of at most budget runes that every match of re begins
// with (the whole of re if it fits), and the runes it may match.
func cutToBudget(re *syntax.Regexp, budget int) (*syntax.Regexp, int) {
	if n, ok := maxRunes(re); ok && n <= budget {
		return re, n
	}
	empty := &syntax.Regexp{Op: syntax.OpEmptyMatch}
	switch re.Op {
	case syntax.OpConcat:
		out, used := &syntax.Regexp{Op: syntax.OpConcat, Flags: re.Flags}, 0
		for _, sub := range re.Sub {
			w, n := cutToBudget(sub, budget-used)
			out.Sub = append(out.Sub, w)
			used += n
			if w != sub {
				break // cut: what follows it no longer follows in every match
			}
		}
		return out, used
	case syntax.OpCapture:
		return cutToBudget(re.Sub[0], budget)
	case syntax.OpAlternate:
		out, used := &syntax.Regexp{Op: syntax.OpAlternate, Flags: re.Flags}, 0
		for _, sub := range re.Sub {
			w, n := cutToBudget(sub, budget)
			out.Sub = append(out.Sub, w)
			used = max(used, n)
		}
		return out, used
	case syntax.OpRepeat:
		if n, ok := maxRunes(re.Sub[0]); ok && n > 0 && re.Min >= 1 {
			if k := min(re.Min, budget/n); k >= 1 {
				return &syntax.Regexp{Op: syntax.OpRepeat, Flags: re.Flags, Min: k, Max: k, Sub: re.Sub}, k * n
			}
		}
	}
	return empty, 0
}

// withoutAssertions is node with every assertion (\b, ^, $, …) replaced by
// the empty match: it matches wherever node does, and what it matches
// at a position depends on the text from there on only.
func withoutAssertions(re *syntax.Regexp) *syntax.Regexp {
	if isAssertion(re) {
		return &syntax.Regexp{Op: syntax.OpEmptyMatch}
	}
	if len(re.Sub) == 0 {
		return re
	}
	out := *re
	out.Sub = make([]*syntax.Regexp, len(re.Sub))
	for i, sub := range re.Sub {
		out.Sub[i] = withoutAssertions(sub)
	}
	out.Sub0 = [1]*syntax.Regexp{}
	return &out
}

// maxRunes is the most runes a plain node matches.
func maxRunes(re *syntax.Regexp) (int, bool) {
	switch re.Op {
	case syntax.OpEmptyMatch:
		return 0, true
	case syntax.OpLiteral:
		return len(re.Rune), true
	case syntax.OpCharClass, syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		return 1, true
	case syntax.OpCapture:
		return maxRunes(re.Sub[0])
	case syntax.OpQuest:
		return maxRunes(re.Sub[0])
	case syntax.OpRepeat:
		if re.Max < 0 {
			return 0, false
		}
		n, ok := maxRunes(re.Sub[0])
		return n * re.Max, ok
	case syntax.OpConcat:
		t := 0
		for _, sub := range re.Sub {
			n, ok := maxRunes(sub)
			if !ok {
				return 0, false
			}
			t += n
		}
		return t, true
	case syntax.OpAlternate:
		m := 0
		for _, sub := range re.Sub {
			n, ok := maxRunes(sub)
			if !ok {
				return 0, false
			}
			m = max(m, n)
		}
		return m, true
	}
	return 0, false
}

// cross is every string of a followed by one of b, if there are at most
// maxAnchors.
func cross(a, b []string) ([]string, bool) {
	if len(a)*len(b) > maxAnchors {
		return nil, false
	}
	var out []string
	for _, x := range a {
		for _, y := range b {
			if !slices.Contains(out, x+y) {
				out = append(out, x+y)
			}
		}
	}
	return out, true
}

// union is a and b, once each.
func union(a, b []string) []string {
	out := slices.Clone(a)
	for _, s := range b {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}
