package transcript

import (
	"slices"
	"strconv"
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
// together; gitleaks then sees only the rules the text switches on (a
// detector over that subset, kept for the next text that switches on the
// same ones), and a text that switches on none skips gitleaks entirely.
//
// Nothing is decided differently: a gitleaks rule with keywords runs, in
// gitleaks as here, exactly when one of its (lower-case) keywords occurs
// in the lower-cased text; a rule without keywords is in every subset; and
// the subset detector applies gitleaks' own keyword test and finding
// filter to the same rules with the same allowlists.

// keywordSet finds which of a fixed list of lower-case keywords occur in a
// lower-cased text, in one pass over it.
type keywordSet struct {
	words []string
	// pairs has the bit of every keyword's first two bytes set; byPair
	// lists the keywords that start with them.
	pairs  [1 << 16 / 64]uint64
	byPair map[uint16][]int
	// single are the one-byte keywords, looked for with strings.Contains.
	single []int
}

func newKeywordSet(words []string) *keywordSet {
	ks := &keywordSet{words: words, byPair: map[uint16][]int{}}
	for i, w := range words {
		if len(w) < 2 {
			if len(w) == 1 {
				ks.single = append(ks.single, i)
			}
			continue
		}
		p := uint16(w[0])<<8 | uint16(w[1])
		ks.pairs[p/64] |= 1 << (p % 64)
		ks.byPair[p] = append(ks.byPair[p], i)
	}
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

// find reports which keywords occur in lower.
func (ks *keywordSet) find(lower string) hits {
	h := make(hits, (len(ks.words)+63)/64)
	for i := 0; i+1 < len(lower); i++ {
		p := uint16(lower[i])<<8 | uint16(lower[i+1])
		if ks.pairs[p/64]&(1<<(p%64)) == 0 {
			continue
		}
		for _, k := range ks.byPair[p] {
			if strings.HasPrefix(lower[i:], ks.words[k]) {
				h[k/64] |= 1 << (k % 64)
			}
		}
	}
	for _, k := range ks.single {
		if strings.Contains(lower, ks.words[k]) {
			h[k/64] |= 1 << (k % 64)
		}
	}
	return h
}

// scanner is the keyword pass over our rules and gitleaks', and the
// gitleaks detectors over the rule subsets texts switch on.
type scanner struct {
	kw *keywordSet
	// extra[i] are the keyword indices of extraRules[i].
	extra [][]int
	// rules are gitleaks' rule ids in a fixed order; byWord[k] the indices
	// of the rules keyword k switches on; always those without keywords.
	rules  []string
	byWord [][]int
	always []int
	full   *detect.Detector
	// subsets holds a detector per rule subset seen, up to maxSubsets.
	mu      sync.Mutex
	subsets map[string]*detect.Detector
}

// maxSubsets bounds the detectors kept; a text switching on a subset past
// it is scanned by the full detector, with the same findings.
const maxSubsets = 512

func newScanner(full *detect.Detector) *scanner {
	s := &scanner{full: full, subsets: map[string]*detect.Detector{}}
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
	}
	if full != nil {
		for id := range full.Config.Rules {
			s.rules = append(s.rules, id)
		}
		slices.Sort(s.rules)
		for i, id := range s.rules {
			r := full.Config.Rules[id]
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
// keywords h.
func (s *scanner) detect(text string, h hits) []report.Finding {
	on := slices.Clone(s.always)
	for w, rules := range s.byWord {
		if len(rules) > 0 && h.has(w) {
			on = append(on, rules...)
		}
	}
	if len(on) == len(s.always) {
		return nil // every rule with keywords is off
	}
	slices.Sort(on)
	on = slices.Compact(on)
	return s.subset(on).DetectString(text)
}

// subset is the detector over the rules on (indices into s.rules).
func (s *scanner) subset(on []int) *detect.Detector {
	var key strings.Builder
	for _, i := range on {
		key.WriteString(strconv.Itoa(i))
		key.WriteByte(',')
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if d, ok := s.subsets[key.String()]; ok {
		return d
	}
	if len(s.subsets) >= maxSubsets {
		return s.full
	}
	cfg := s.full.Config
	cfg.Rules = make(map[string]config.Rule, len(on))
	cfg.Keywords = map[string]struct{}{}
	add := func(id string) {
		r, ok := s.full.Config.Rules[id]
		if !ok {
			return
		}
		cfg.Rules[id] = r
		for _, k := range r.Keywords {
			cfg.Keywords[strings.ToLower(k)] = struct{}{}
		}
	}
	for _, i := range on {
		add(s.rules[i])
		// A rule's required rules are looked up in the detector's set;
		// present, they still run on their own only when switched on.
		for _, req := range s.full.Config.Rules[s.rules[i]].RequiredRules {
			add(req.RuleID)
		}
	}
	d := detect.NewDetector(cfg)
	d.MaxDecodeDepth, d.Redact, d.MaxTargetMegaBytes = s.full.MaxDecodeDepth, s.full.Redact, s.full.MaxTargetMegaBytes
	s.subsets[key.String()] = d
	return d
}
