package transcript

import (
	"encoding/json"
	"regexp"
	"strings"
)

// A message the user types while Claude Code is busy waits in a queue. In
// 2.1.4x it is written only as "queue-operation" lines, without a uuid:
// "enqueue" with its text when typed; "remove" when it went to the model
// with the next tool result (the reply answers it, the user saw it in the
// conversation); "popAll" when the user took the queue back into the input
// box (nothing was sent); "dequeue" when it became the next prompt, which is
// then written as a user record. A queued text that turns up as a user
// record's content (a task notification delivered after an interrupt) was
// sent that way. So a "remove" line is a user message: the oldest text
// still queued, put through the harness table like any user text.

// claudeQueue is the queue as the lines read so far left it. Pending is
// the cursor's (treeExtra.Queued), so that a read resumes with it. Only the
// first pass moves the queue, line by line from the read's start; a line
// read again (the second pass past its bound, an open reply re-read, a
// search of earlier lines) finds what its first reading gave.
type claudeQueue struct {
	pending *[]string
	last    int64            // the offset of the last line that moved the queue
	sent    map[int64]string // the text each "remove" line delivered
}

// claudeQueueStart begins a read of the lines from `from` with the queue
// the cursor kept.
func claudeQueueStart(r *run, from int64, ex *treeExtra) {
	r.queue = &claudeQueue{pending: &ex.Queued, last: from - 1, sent: map[int64]string{}}
}

// claudeQueueOp is a queue-operation line.
type claudeQueueOp struct {
	Operation string `json:"operation"`
	Content   string `json:"content"`
	Timestamp string `json:"timestamp"`
}

// queueOp moves the queue by one queue-operation line at `at` and returns
// the text it delivered ("" if none; ok false if it delivered nothing).
func (q *claudeQueue) queueOp(line []byte, at int64) (text string, ok bool) {
	if at <= q.last {
		text, ok = q.sent[at]
		return text, ok
	}
	q.last = at
	var op claudeQueueOp
	if json.Unmarshal(line, &op) != nil {
		return "", false
	}
	p := q.pending
	switch op.Operation {
	case "enqueue":
		*p = append(*p, op.Content)
	case "popAll":
		*p = nil
	case "dequeue":
		if len(*p) > 0 {
			*p = (*p)[1:]
		}
	case "remove":
		if len(*p) == 0 {
			return "", false
		}
		text = (*p)[0]
		*p = (*p)[1:]
		q.sent[at] = text
		return text, true
	}
	return "", false
}

// sentAsRecord takes off the queue a text that a user record at `at`
// holds: it was sent as that record.
func (q *claudeQueue) sentAsRecord(c claudeContent, at int64) {
	if at <= q.last {
		return
	}
	q.last = at
	if len(*q.pending) == 0 {
		return
	}
	texts := []string{c.str}
	if !c.isStr {
		texts = texts[:0]
		for _, b := range c.blocks {
			if b.Type == "text" {
				texts = append(texts, b.Text)
			}
		}
	}
	p := q.pending
	for _, text := range texts {
		for i, t := range *p {
			if t == text {
				*p = append((*p)[:i:i], (*p)[i+1:]...)
				break
			}
		}
	}
}

// claudeSlashCommand is a slash command typed into the queue: "/name" and
// its arguments.
var claudeSlashCommand = regexp.MustCompile(`(?s)^/[A-Za-z0-9:_-]+(?:\s+(.*))?$`)

// claudeQueuedText is the prose of a queued text: the harness table's,
// except that a slash command keeps only its arguments (a bare one
// nothing).
func claudeQueuedText(s string) (string, Reason) {
	if m := claudeSlashCommand.FindStringSubmatch(strings.TrimSpace(s)); m != nil {
		if a := strings.TrimSpace(m[1]); a != "" {
			return a, ""
		}
		return "", Injected
	}
	t, harnessed := cleanText(ClaudeCode, RoleUser, s)
	switch {
	case t != "":
		return t, ""
	case harnessed:
		return "", Injected
	}
	return "", Empty
}

// claudeQueueRecord is a queue-operation line's place in the tree: a
// "remove" that delivered a text is a user message, its id made from the
// line's time and the text (several may go at once), hung (as a root)
// after the record before it.
func claudeQueueRecord(r *run, line []byte, at int64, ts string) (treeNode, treeEntry) {
	if r.queue == nil {
		return treeNode{}, treeEntry{Why: Meta}
	}
	text, ok := r.queue.queueOp(line, at)
	if !ok {
		return treeNode{}, treeEntry{Why: Meta}
	}
	id := "queued-" + ts + "-" + textHash(text)
	e := treeEntry{ID: id, Msg: true, Role: RoleUser, TS: parseTime(ts)}
	e.Text, e.Why = claudeQueuedText(text)
	return treeNode{ID: id, OK: true, Prose: e.Text != ""}, e
}
