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
//     <ide_diagnostics> notes taken out. Text the harness writes as the
//     user (carefulInjected) is not prose, except that a slash command's
//     arguments are: "/cmd args" keeps "args", a bare "/cmd" keeps nothing.
//   - A tool result is not prose, except the words the user gave when
//     rejecting the tool call ("The user doesn't want to proceed with this
//     tool use. … To tell you how to proceed, the user said:" and the
//     words); those are not a prompt a rewind repeats.
//   - An assistant line's prose is its text blocks.
//   - A line repeated under the same uuid counts once.
//   - A rewind: when two user lines with a prompt name the same parent, and
//     that parent is in the file, the earlier one and everything that
//     descends from it (by parentUuid) were abandoned. Nothing else is: a
//     parent that was never written, a second root, prose on a side branch.
//   - A message typed while the agent works waits in a queue, written as
//     "queue-operation" lines: "enqueue" with its text; "remove" sends the
//     oldest queued text to the model, and it is a user message (under the
//     rule for user text; a slash command keeps its arguments); "popAll"
//     takes every queued text back, "dequeue" takes the oldest for the next
//     prompt; a queued text that a later user line holds was sent as that
//     line.
type CarefulMsg struct {
	UUID string
	Role string
	Text string
	// Rejection: the words the user gave when rejecting a tool call.
	Rejection bool
}

// carefulRejectionSaid is what the result of a tool call the user rejected
// with words of their own says before the words.
const carefulRejectionSaid = "To tell you how to proceed, the user said:\n"

// carefulRejection is the words a tool result holds when it is a rejection
// with words ("" if it is not).
func carefulRejection(content json.RawMessage) string {
	var t string
	if json.Unmarshal(content, &t) != nil {
		var blocks []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		json.Unmarshal(content, &blocks)
		var parts []string
		for _, b := range blocks {
			if b.Type == "text" {
				parts = append(parts, b.Text)
			}
		}
		t = strings.Join(parts, "\n")
	}
	t = strings.TrimSpace(t)
	i := strings.Index(t, carefulRejectionSaid)
	if !strings.HasPrefix(t, "The user doesn't want to proceed with this tool use.") || i < 0 {
		return ""
	}
	return strings.TrimSpace(t[i+len(carefulRejectionSaid):])
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

// carefulSlash is a slash command typed into the queue, and its arguments.
var carefulSlash = regexp.MustCompile(`(?s)^/[A-Za-z0-9:_-]+(?:\s+(.*))?$`)

// CarefulClaude reads one Claude Code transcript by the rule: the prose
// messages kept, and the texts of injected user lines.
func CarefulClaude(path string) ([]CarefulMsg, []string, error) {
	recs, err := carefulRecords(path)
	if err != nil {
		return nil, nil, err
	}
	var msgs []CarefulMsg
	var injected []string
	var queued []string
	for _, r := range recs {
		if r.Type == "queue-operation" {
			switch r.Operation {
			case "enqueue":
				queued = append(queued, r.Content)
			case "popAll":
				queued = nil
			case "dequeue":
				if len(queued) > 0 {
					queued = queued[1:]
				}
			case "remove":
				if len(queued) == 0 {
					break
				}
				t := strings.TrimSpace(queued[0])
				queued = queued[1:]
				if m := carefulSlash.FindStringSubmatch(t); m != nil {
					t = strings.TrimSpace(m[1])
				} else if p, inj := carefulUserText(t); inj {
					injected = append(injected, t)
					t = ""
				} else {
					t = p
				}
				if t != "" {
					msgs = append(msgs, CarefulMsg{UUID: "queued-" + r.Timestamp, Role: "user", Text: t})
				}
			}
			continue
		}
		if r.Type == "user" && len(queued) > 0 && r.Message != nil {
			queued = carefulUnqueue(queued, r.Message.Content)
		}
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

// carefulUnqueue is queued without the texts a user line's content holds.
func carefulUnqueue(queued []string, content json.RawMessage) []string {
	var texts []string
	var s string
	if json.Unmarshal(content, &s) == nil {
		texts = []string{s}
	} else {
		var blocks []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		json.Unmarshal(content, &blocks)
		for _, b := range blocks {
			if b.Type == "text" {
				texts = append(texts, b.Text)
			}
		}
	}
	for _, t := range texts {
		for i, q := range queued {
			if q == t {
				queued = append(queued[:i:i], queued[i+1:]...)
				break
			}
		}
	}
	return queued
}

// carefulRec is the part of a line the rule looks at.
type carefulRec struct {
	Type string `json:"type"`
	// Operation, Content and Timestamp are a queue-operation's (read apart:
	// other lines' content is not always a string).
	Operation, Content, Timestamp string  `json:"-"`
	UUID                          string  `json:"uuid"`
	Parent                        *string `json:"parentUuid"`
	IsSidechain                   bool    `json:"isSidechain"`
	IsMeta                        bool    `json:"isMeta"`
	Compact                       bool    `json:"isCompactSummary"`
	Visible                       bool    `json:"isVisibleInTranscriptOnly"`
	APIError                      bool    `json:"isApiErrorMessage"`
	Message                       *struct {
		Model   string          `json:"model"`
		Content json.RawMessage `json:"content"`
	} `json:"message"`
	// parent is Parent when that record is in the file, else "".
	parent string
}

// carefulRecords is every line that parses and has a uuid, once per uuid,
// and every queue-operation line, in file order.
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
		var q struct {
			Type, Operation, Content, Timestamp string
		}
		if json.Unmarshal(sc.Bytes(), &q) == nil && q.Type == "queue-operation" {
			recs = append(recs, carefulRec{Type: q.Type, Operation: q.Operation, Content: q.Content, Timestamp: q.Timestamp})
			continue
		}
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
	var texts, words []string
	var s string
	if json.Unmarshal(r.Message.Content, &s) == nil {
		texts = []string{s}
	} else {
		var blocks []struct {
			Type    string          `json:"type"`
			Text    string          `json:"text"`
			Content json.RawMessage `json:"content"`
		}
		json.Unmarshal(r.Message.Content, &blocks)
		for _, b := range blocks {
			switch {
			case b.Type == "text":
				texts = append(texts, b.Text)
			case b.Type == "tool_result" && r.Type == "user":
				if w := carefulRejection(b.Content); w != "" {
					words = append(words, w)
				}
			}
		}
	}
	for _, w := range words {
		msgs = append(msgs, CarefulMsg{UUID: r.UUID, Role: r.Type, Text: w, Rejection: true})
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
		if m.Role == "user" && !m.Rejection {
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
