package enginetest

import (
	"bufio"
	"encoding/json"
	"os"
	"regexp"
	"strings"
)

// CarefulClaude and its helpers are the careful reader: the rule docs/transcripts.md states for what a person
// reading a Claude Code transcript keeps as the conversation, written here a
// second time, plainly and apart from the production reader, so that the two
// can be measured against each other on real files.
//
//   - Lines that do not parse, lines without a uuid, sidechain lines, and
//     lines other than type "user" and "assistant" hold no prose.
//   - isMeta, isCompactSummary, isVisibleInTranscriptOnly and
//     isApiErrorMessage lines, and assistant lines of the "<synthetic>"
//     model, are the harness's.
//   - A user line's prose is its string content or its text blocks, with
//     <system-reminder>, <ide_opened_file>, <ide_selection> and
//     <ide_diagnostics> notes taken out; a tool_result is not prose. Text
//     the harness writes as the user (carefulInjected) is not prose, except
//     that a slash command's arguments are: "/cmd args" keeps "args", a bare
//     "/cmd" keeps nothing.
//   - An assistant line's prose is its text blocks.
//   - A line repeated under the same uuid counts once.
//   - A rewind: when two user lines with prose name the same parent, and
//     that parent is in the file, the earlier one and everything that
//     descends from it (by parentUuid) were abandoned. Nothing else is: a
//     parent that was never written, a second root, prose on a side branch.
type CarefulMsg struct {
	UUID string
	Role string
	Text string
}

// carefulInjected are the openings of user text the harness writes itself.
var carefulInjected = []string{
	"<task-notification>", "<local-command-stdout>", "<local-command-stderr>", "<local-command-caveat>",
	"<bash-input>", "<bash-stdout>", "<bash-stderr>", "<user-prompt-submit-hook>",
	"Caveat: The messages below were generated", "[Request interrupted by user",
	"Operation stopped by hook",
}

var (
	// carefulNotes are the notes the harness splices into a prompt: taken
	// out, the rest is the user's.
	carefulNotes = regexp.MustCompile(`(?s)<system-reminder>.*?</system-reminder>|<ide_opened_file>.*?</ide_opened_file>|<ide_selection>.*?</ide_selection>|<ide_diagnostics>.*?</ide_diagnostics>`)
	carefulArgs  = regexp.MustCompile(`(?s)<command-args>(.*?)</command-args>`)
)

// carefulText is a user text's prose under the rule ("" if none) and
// whether it was the harness's.
func carefulUserText(s string) (string, bool) {
	s = strings.TrimSpace(carefulNotes.ReplaceAllString(s, ""))
	if strings.Contains(s, "<command-name>") || strings.HasPrefix(s, "<command-message>") {
		if m := carefulArgs.FindStringSubmatch(s); m != nil {
			return strings.TrimSpace(m[1]), false
		}
		return "", true
	}
	for _, p := range carefulInjected {
		if strings.HasPrefix(s, p) {
			return "", true
		}
	}
	return s, false
}

// CarefulClaude reads one Claude Code transcript by the rule: the prose
// messages kept, and the texts of injected user lines.
func CarefulClaude(path string) ([]CarefulMsg, []string, error) {
	recs, err := carefulRecords(path)
	if err != nil {
		return nil, nil, err
	}
	var msgs []CarefulMsg
	var injected []string
	for _, r := range recs {
		m, inj := carefulProse(r)
		msgs, injected = append(msgs, m...), append(injected, inj...)
	}
	gone := carefulAbandoned(recs, msgs)
	kept := msgs[:0]
	for _, m := range msgs {
		if !gone[m.UUID] {
			kept = append(kept, m)
		}
	}
	return kept, injected, nil
}

// carefulRec is the part of a line the rule looks at.
type carefulRec struct {
	Type        string  `json:"type"`
	UUID        string  `json:"uuid"`
	Parent      *string `json:"parentUuid"`
	IsSidechain bool    `json:"isSidechain"`
	IsMeta      bool    `json:"isMeta"`
	Compact     bool    `json:"isCompactSummary"`
	Visible     bool    `json:"isVisibleInTranscriptOnly"`
	APIError    bool    `json:"isApiErrorMessage"`
	Message     *struct {
		Model   string          `json:"model"`
		Content json.RawMessage `json:"content"`
	} `json:"message"`
	// parent is Parent when that record is in the file, else "".
	parent string
}

// carefulRecords is every line that parses and has a uuid, once per uuid,
// in file order.
func carefulRecords(path string) ([]carefulRec, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var recs []carefulRec
	seen := map[string]bool{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var r carefulRec
		if json.Unmarshal(sc.Bytes(), &r) != nil || r.UUID == "" || seen[r.UUID] {
			continue
		}
		seen[r.UUID] = true
		recs = append(recs, r)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	for i, r := range recs {
		if r.Parent != nil && seen[*r.Parent] {
			recs[i].parent = *r.Parent
		}
	}
	return recs, nil
}

// carefulProse is one record's prose messages under the rule, and the
// injected user texts it holds.
func carefulProse(r carefulRec) (msgs []CarefulMsg, injected []string) {
	if r.IsSidechain || r.Message == nil || (r.Type != "user" && r.Type != "assistant") ||
		r.IsMeta || r.Compact || r.Visible || r.APIError || r.Message.Model == "<synthetic>" {
		return nil, nil
	}
	var texts []string
	var s string
	if json.Unmarshal(r.Message.Content, &s) == nil {
		texts = []string{s}
	} else {
		var blocks []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		json.Unmarshal(r.Message.Content, &blocks)
		for _, b := range blocks {
			if b.Type == "text" {
				texts = append(texts, b.Text)
			}
		}
	}
	for _, t := range texts {
		if r.Type == "user" {
			p, inj := carefulUserText(t)
			if inj {
				injected = append(injected, strings.TrimSpace(t))
			}
			t = p
		}
		if t = strings.TrimSpace(t); t != "" {
			msgs = append(msgs, CarefulMsg{UUID: r.UUID, Role: r.Type, Text: t})
		}
	}
	return msgs, injected
}

// carefulAbandoned is what rewinds abandoned: later user prose beside
// earlier user prose under one parent, and all that descends from the
// earlier.
func carefulAbandoned(recs []carefulRec, msgs []CarefulMsg) map[string]bool {
	prose := map[string]bool{}
	for _, m := range msgs {
		if m.Role == "user" {
			prose[m.UUID] = true
		}
	}
	children := map[string][]string{}
	lastProse := map[string]string{}
	var abandonedRoots []string
	for _, r := range recs {
		p := r.parent
		if p == "" {
			continue
		}
		children[p] = append(children[p], r.UUID)
		if prose[r.UUID] {
			if prev, ok := lastProse[p]; ok && prev != r.UUID {
				abandonedRoots = append(abandonedRoots, prev)
			}
			lastProse[p] = r.UUID
		}
	}
	gone := map[string]bool{}
	for len(abandonedRoots) > 0 {
		u := abandonedRoots[0]
		abandonedRoots = abandonedRoots[1:]
		if gone[u] {
			continue
		}
		gone[u] = true
		abandonedRoots = append(abandonedRoots, children[u]...)
	}
	return gone
}

// NormSpace folds runs of white space, so that a message joined from lines
// can be searched for each line's text.
func NormSpace(s string) string { return strings.Join(strings.Fields(s), " ") }
