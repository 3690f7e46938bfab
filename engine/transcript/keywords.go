package transcript

import (
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/zricethezav/gitleaks/v8/config"
	"github.com/zricethezav/gitleaks/v8/detect"
	"github.com/zricethezav/gitleaks/v8/report"
)

// Most messages hold no secret, and what a redaction costs them is the
// looking, not the replacing: gitleaks lower-cases the text, runs its
// keyword automaton and then walks all of its rules to see which of them
// the keywords found switch on, for every message, however short. The
// keyword pass below does that looking once for our rules and gitleaks'
// together; gitleaks' rules then run one by one, only those the text
// switches on, and of those only the ones whose prefilter
// (redact_prefilter.go) does not rule a match out.
//
// Nothing is decided differently: a gitleaks rule with keywords runs, in
// gitleaks as here, exactly when one of its (lower-case) keywords occurs
// in the lower-cased text; a rule without keywords runs on every text; a
// rule a prefilter skips has no match, so no finding; and each rule runs
// in a detector of its own, with gitleaks' own matching, entropy test,
// allowlists and secret groups, its findings then filtered across rules
// as gitleaks filters them.

// keywordSet finds which of a fixed list of lower-case keywords occur in
// the lower-cased form of a text, in one pass over it: an Aho-Corasick
// automaton over classes of bytes (the bytes no keyword holds are one
// class), its transitions a table of states × classes.
type keywordSet struct {
	words []string
	// class[b] is the class of byte b; upper[b] that of b lowered when b
	// is an ASCII capital (the text is lowered on the fly when it is all
	// ASCII), of b otherwise.
	class, upper [256]uint8
	nclass       int
	// next[state*nclass+class] is the state after reading a byte of class.
	next []uint16
	// out[state] is the start of the keywords state ends, in outs (up to
	// out[state+1]): its own and those of its suffixes.
	out  []uint32
	outs []uint16
}

func newKeywordSet(words []string) *keywordSet {
	ks := &keywordSet{words: words}
	// Byte classes: 0 for bytes no keyword holds.
	for _, w := range words {
		for i := 0; i < len(w); i++ {
			if ks.class[w[i]] == 0 {
				ks.nclass++
				ks.class[w[i]] = uint8(ks.nclass)
			}
		}
	}
	ks.nclass++
	ks.upper = ks.class
	for c := 'A'; c <= 'Z'; c++ {
		ks.upper[c] = ks.class[c+'a'-'A']
	}
	// The trie.
	type node struct {
		child map[uint8]int
		fail  int
		ends  []uint16
	}
	nodes := []node{{child: map[uint8]int{}}}
	for i, w := range words {
		if w == "" {
			continue
		}
		n := 0
		for j := 0; j < len(w); j++ {
			c := ks.class[w[j]]
			next, ok := nodes[n].child[c]
			if !ok {
				next = len(nodes)
				nodes = append(nodes, node{child: map[uint8]int{}})
				nodes[n].child[c] = next
			}
			n = next
		}
		nodes[n].ends = append(nodes[n].ends, uint16(i))
	}
	// Breadth first: each node's failure link and full transitions, and
	// its outputs with those of its failure link.
	ks.next = make([]uint16, len(nodes)*ks.nclass)
	queue := []int{0}
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		if n != 0 {
			nodes[n].ends = append(nodes[n].ends, nodes[nodes[n].fail].ends...)
		}
		for c := 0; c < ks.nclass; c++ {
			if child, ok := nodes[n].child[uint8(c)]; ok && c != 0 {
				if n != 0 {
					nodes[child].fail = int(ks.next[nodes[n].fail*ks.nclass+c])
				}
				ks.next[n*ks.nclass+c] = uint16(child)
				queue = append(queue, child)
			} else if n != 0 {
				ks.next[n*ks.nclass+c] = ks.next[nodes[n].fail*ks.nclass+c]
			}
		}
	}
	ks.out = make([]uint32, len(nodes)+1)
	for n := range nodes {
		ks.out[n] = uint32(len(ks.outs))
		ks.outs = append(ks.outs, nodes[n].ends...)
	}
	ks.out[len(nodes)] = uint32(len(ks.outs))
	return ks
}

// hits is the set of keywords found in a text, one bit each.
type hits []uint64

func (h hits) has(i int) bool { return h[i/64]&(1<<(i%64)) != 0 }

func (h hits) empty() bool {
	for _, w := range h {
		if w != 0 {
			return false
		}
	}
	return true
}

// find reports which keywords occur in strings.ToLower(text).
func (ks *keywordSet) find(text string) hits {
	h := make(hits, (len(ks.words)+63)/64)
	// All ASCII, text is lowered byte by byte as it is read (what
	// strings.ToLower does to such a text); otherwise it is lowered first.
	state := 0
	for i := 0; i < len(text); i++ {
		b := text[i]
		if b >= 0x80 {
			ks.walk(strings.ToLower(text), h)
			return h
		}
		state = int(ks.next[state*ks.nclass+int(ks.upper[b])])
		if o, e := ks.out[state], ks.out[state+1]; o != e {
			ks.mark(h, o, e)
		}
	}
	return h
}

// walk marks in h the keywords found in lower.
func (ks *keywordSet) walk(lower string, h hits) {
	state := 0
	for i := 0; i < len(lower); i++ {
		state = int(ks.next[state*ks.nclass+int(ks.class[lower[i]])])
		if o, e := ks.out[state], ks.out[state+1]; o != e {
			ks.mark(h, o, e)
		}
	}
}

func (ks *keywordSet) mark(h hits, o, e uint32) {
	for _, k := range ks.outs[o:e] {
		h[k/64] |= 1 << (k % 64)
	}
}

// scanner is the keyword pass over our rules and gitleaks', and gitleaks'
// rules one by one. It is built once and only read after (a rule's
// detector is made the first time the rule runs, once): safe for
// concurrent use.
type scanner struct {
	kw *keywordSet
	// extra[i] are the keyword indices of extraRules[i], extraPre[i] its
	// prefilter (see gitleaksRule.pre).
	extra    [][]int
	extraPre []prefilter
	// rules are gitleaks' rules in the order of their ids; byWord[k] the
	// indices of the rules keyword k switches on; always those without
	// keywords.
	rules  []*gitleaksRule
	byWord [][]int
	always []int
	// set is gitleaks' rule set the detectors are made from.
	set *ruleSet
}

// gitleaksRule is one rule of gitleaks' set, ready to run alone.
type gitleaksRule struct {
	id string
	// pre, if set, tells texts the rule's expression cannot match in.
	pre prefilter
	// det is a detector over this rule alone (and the rules it requires,
	// which run there only on its behalf): gitleaks' own matching, entropy,
	// allowlists and secret groups. The rule's keywords are left out of it:
	// the keyword pass has tested them, with gitleaks' semantics. Most
	// rules never run on prose; det is made the first time the rule does.
	once sync.Once
	det  *detect.Detector
}

func newScanner(full *detect.Detector) *scanner {
	s := &scanner{}
	index := map[string]int{}
	word := func(w string) int {
		if i, ok := index[w]; ok {
			return i
		}
		index[w] = len(index)
		s.byWord = append(s.byWord, nil)
		return index[w]
	}
	for _, r := range extraRules {
		var ks []int
		for _, k := range r.keywords {
			ks = append(ks, word(strings.ToLower(k)))
		}
		s.extra = append(s.extra, ks)
		s.extraPre = append(s.extraPre, newPrefilter(r.re.String()))
	}
	if full != nil {
		s.set = newRuleSet(full)
		for _, id := range slices.Sorted(maps.Keys(s.set.cfg.Rules)) {
			r := s.set.cfg.Rules[id]
			if r.Path != nil && !r.Path.MatchString("") || r.Regex == nil && r.Path == nil {
				// A rule on file paths (alone or with an expression) that
				// no empty path matches: a text has no path, so gitleaks'
				// detectRule returns before looking at it. Nor does a rule
				// with nothing to match find anything.
				continue
			}
			g := &gitleaksRule{id: id}
			if r.Regex != nil {
				g.pre = newPrefilter(r.Regex.String())
			}
			i := len(s.rules)
			s.rules = append(s.rules, g)
			if len(r.Keywords) == 0 {
				s.always = append(s.always, i)
			}
			for _, k := range r.Keywords {
				w := word(strings.ToLower(k))
				s.byWord[w] = append(s.byWord[w], i)
			}
		}
	}
	words := make([]string, len(index))
	for w, i := range index {
		words[i] = w
	}
	s.kw = newKeywordSet(words)
	return s
}

// detector is rule i's detector (gitleaksRule.det), made on first use.
func (s *scanner) detector(i int) *detect.Detector {
	r := s.rules[i]
	r.once.Do(func() { r.det = s.set.detector(r.id) })
	return r.det
}

// ruleSet is gitleaks' rule set as the redactor keeps it: its rules and
// global allowlists, the allowlists without their stop-word automata (see
// lean), and the detector's settings.
type ruleSet struct {
	cfg                                config.Config
	maxDecodeDepth, maxTargetMegaBytes int
	redact                             uint
}

func newRuleSet(full *detect.Detector) *ruleSet {
	rs := &ruleSet{cfg: full.Config, maxDecodeDepth: full.MaxDecodeDepth,
		maxTargetMegaBytes: full.MaxTargetMegaBytes, redact: full.Redact}
	rs.cfg.Keywords = nil
	rs.cfg.Allowlists = lean(full.Config.Allowlists)
	rs.cfg.Rules = make(map[string]config.Rule, len(full.Config.Rules))
	for id, r := range full.Config.Rules {
		r.Allowlists = lean(r.Allowlists)
		rs.cfg.Rules[id] = r
	}
	return rs
}

// detector is a detector over rule id alone, as described at
// gitleaksRule.det.
func (rs *ruleSet) detector(id string) *detect.Detector {
	cfg := rs.cfg
	cfg.Rules = map[string]config.Rule{}
	cfg.Keywords = map[string]struct{}{}
	r := rs.cfg.Rules[id]
	r.Keywords = nil // always run: the caller decides when
	cfg.Rules[id] = r
	for _, req := range r.RequiredRules {
		q, ok := rs.cfg.Rules[req.RuleID]
		if !ok || req.RuleID == id {
			continue
		}
		// A keyword no text is searched for: present only to be looked up
		// when rule id finds something.
		q.Keywords = []string{"\x00"}
		cfg.Rules[req.RuleID] = q
	}
	d := detect.NewDetector(cfg)
	d.MaxDecodeDepth, d.Redact, d.MaxTargetMegaBytes = rs.maxDecodeDepth, rs.redact, rs.maxTargetMegaBytes
	return d
}

// lean copies allowlists without their stop-word automata, which hold most
// of the rule set's memory (8.5 MB: an Aho-Corasick trie over gitleaks'
// 1,500 stop words of the generic rule, and another of the global list).
// Without one, an allowlist looks for its stop words one by one — the same
// answer (is one of them in the lower-cased secret?), asked only of the
// rare candidate findings.
func lean(lists []*config.Allowlist) []*config.Allowlist {
	var out []*config.Allowlist
	for _, a := range lists {
		c := &config.Allowlist{
			Description:    a.Description,
			MatchCondition: a.MatchCondition,
			Commits:        a.Commits,
			Paths:          a.Paths,
			RegexTarget:    a.RegexTarget,
			Regexes:        a.Regexes,
		}
		placeholder := len(c.Commits) == 0 && len(c.Paths) == 0 && len(c.Regexes) == 0
		if placeholder {
			// Validate wants one check besides the stop words; a commit
			// no text has (texts have none), taken out again below.
			c.Commits = []string{"-"}
		}
		if err := c.Validate(); err != nil {
			out = append(out, a)
			continue
		}
		if placeholder {
			c.Commits = nil
		}
		c.StopWords = a.StopWords // lower case and unique: a was validated
		out = append(out, c)
	}
	return out
}

// applies is extraRule r's cheap test (the rule at index i of extraRules)
// on text, whose lower-cased form holds the keywords h.
func (s *scanner) applies(i int, text string, h hits) bool {
	r := extraRules[i]
	if r.after != "" {
		return strings.Contains(text, r.after)
	}
	for j, k := range r.keywords {
		// A keyword with capitals must occur as written; its lower-case
		// form occurring is only the cheap half of that test.
		if h.has(s.extra[i][j]) && (k == strings.ToLower(k) || strings.Contains(text, k)) {
			return true
		}
	}
	return false
}

// detect is gitleaks' findings in text, whose lower-cased form holds the
// keywords h (pre is text as the prefilters read it): the findings of each
// rule the keywords switch on, unless its prefilter shows its expression
// matches nowhere in text, then gitleaks' filter across rules.
func (s *scanner) detect(text string, h hits, pre *prefiltered) []report.Finding {
	// Rules in the order of their ids; gitleaks walks them in map order,
	// which only the order of its findings shows, and replaceFindings
	// orders them itself.
	on := slices.Clone(s.always)
	for w, rules := range s.byWord {
		if len(rules) > 0 && h.has(w) {
			on = append(on, rules...)
		}
	}
	slices.Sort(on)
	on = slices.Compact(on)
	var findings []report.Finding
	for _, i := range on {
		if pre.mayMatch(s.rules[i].pre) {
			findings = append(findings, s.detector(i).DetectString(text)...)
		}
	}
	return filterGeneric(findings)
}

// filterGeneric drops, as gitleaks does among the findings of one text, a
// finding of a generic rule whose secret a finding of another, non-generic
// rule on the same line holds.
func filterGeneric(findings []report.Finding) []report.Finding {
	var out []report.Finding
	for _, f := range findings {
		include := true
		if strings.Contains(strings.ToLower(f.RuleID), "generic") {
			for _, g := range findings {
				if f.StartLine == g.StartLine && f.Commit == g.Commit && f.RuleID != g.RuleID &&
					strings.Contains(g.Secret, f.Secret) && !strings.Contains(strings.ToLower(g.RuleID), "generic") {
					include = false
					break
				}
			}
		}
		if include {
			out = append(out, f)
		}
	}
	return out
}
