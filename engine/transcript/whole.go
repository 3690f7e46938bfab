package transcript

import (
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// The readers added beside the first six share two delivery paths: a
// whole-document one (a JSON file rewritten on every turn, a task folder, a
// session extracted from a database or an export) and an append-only JSONL
// one. Both account for every record in Result.Coverage.

// item is one record of a transcript, in order: a message with text (indexed)
// or a record left out for Why.
type item struct {
	Msg Message `json:"m"`
	Why Reason  `json:"why,omitempty"`
}

// keep is an item that delivers m when it has text, else one left out as empty.
func keep(m Message) item {
	if strings.TrimSpace(m.Text) == "" {
		return item{Why: Empty}
	}
	m.Text = strings.TrimSpace(m.Text)
	return item{Msg: m}
}

// drop is an item left out for why.
func drop(why Reason) item { return item{Why: why} }

// wholeExtra is what a whole-document transcript's cursor keeps beyond state.
type wholeExtra struct {
	Stamp string `json:"stamp"` // what the source looked like when read
	Items int    `json:"items"` // records the document held
}

// wholeDoc is a transcript read whole: its session and its records.
type wholeDoc struct {
	Session Session `json:"session"`
	Items   []item  `json:"items"`
	// Subagent marks a sub-agent's session inside a container: listed
	// only under Options.IncludeSubagents, else counted as skipped.
	Subagent bool `json:"subagent,omitempty"`
}

// wholeUnchanged reports whether the source is as the cursor left it (same
// stamp), carrying the previous state over; callers stamp the files they
// read (size and mtime) so that a no-op read opens nothing.
func (r *run) wholeUnchanged(stamp string) bool {
	var ex wholeExtra
	if r.prev.V != stateVersion || len(r.prev.Extra) == 0 || json.Unmarshal(r.prev.Extra, &ex) != nil || ex.Stamp != stamp {
		return false
	}
	r.next = r.prev
	return true
}

// deliverWhole hands a whole-document transcript to the handler: when the
// messages delivered before are still its first ones (same ids, roles and
// text), only the rest; otherwise Reset and everything. Coverage counts
// every record of the document, Whole.
func (r *run) deliverWhole(doc wholeDoc, stamp string) error {
	var ex wholeExtra
	resuming := r.prev.V == stateVersion && len(r.prev.Extra) > 0 && json.Unmarshal(r.prev.Extra, &ex) == nil
	count, prefix, boundary := 0, "", 0
	for i, it := range doc.Items {
		if it.Msg.Text == "" {
			continue
		}
		prefix = prefixHash(prefix, it.Msg)
		count++
		if resuming && count == r.prev.Count {
			resuming = prefix == r.prev.Prefix
			boundary = i + 1
		}
	}
	if resuming && (count < r.prev.Count || ex.Items > len(doc.Items)) {
		resuming = false
	}
	if resuming {
		r.next = state{Messages: r.prev.Messages}
	} else {
		if err := r.restart(); err != nil {
			return err
		}
		ex.Items, boundary = 0, 0
	}
	// Every changed read of a whole document counts all of it (Whole).
	r.startCount(0)
	for i, it := range doc.Items {
		if it.Msg.Text == "" {
			r.count(it.Why)
		} else {
			r.countIndexed()
		}
		if i < boundary || it.Msg.Text == "" {
			continue
		}
		if err := r.emit(it.Msg); err != nil {
			return err
		}
	}
	r.next.Session = mergeSpan(doc.Session, r.next.Session)
	r.next.Count, r.next.Prefix = count, prefix
	b, err := json.Marshal(wholeExtra{Stamp: stamp, Items: len(doc.Items)})
	if err != nil {
		return err
	}
	r.next.Extra = b
	if r.fi != nil {
		r.cur = Cursor{Size: r.fi.Size(), ModTime: r.fi.ModTime(), Offset: r.fi.Size()}
	}
	return nil
}

// mergeSpan is s with the message time span emit kept (in got) where s
// has none of its own.
func mergeSpan(s, got Session) Session {
	if s.Started.IsZero() || (!got.Started.IsZero() && got.Started.Before(s.Started)) {
		s.Started = got.Started
	}
	if got.Ended.After(s.Ended) {
		s.Ended = got.Ended
	}
	return s
}

// fileStamp is a file's size and mtime as a string ("" if it is missing).
func fileStamp(path string) string {
	fi, err := os.Stat(path)
	if err != nil {
		return ""
	}
	return strconv.FormatInt(fi.Size(), 10) + "@" + strconv.FormatInt(fi.ModTime().UnixNano(), 10)
}

// stamps joins the stamps of several files.
func stamps(paths ...string) string {
	parts := make([]string, len(paths))
	for i, p := range paths {
		parts[i] = fileStamp(p)
	}
	return strings.Join(parts, ";")
}

// readJSONLines is the append-only JSONL path: each complete line after the
// cursor goes to fn, which returns the record it makes (a message, or a line
// left out and why). Message ids default to the line's offset.
func (r *run) readJSONLines(fn func(line []byte, at int64) item) error {
	from, err := r.begin()
	if err != nil || from < 0 {
		return err
	}
	r.startCount(from)
	end, err := r.lines(from, func(line []byte, at int64) error {
		it := fn(line, at)
		if it.Msg.ID == "" {
			it.Msg.ID = "L" + strconv.FormatInt(at, 10)
		}
		return r.countMessage(it.Msg, it.Why)
	})
	if err != nil {
		return err
	}
	return r.settle(end)
}

// readJSONDoc decodes a whole JSON document of at most max bytes into v.
func readJSONDoc(path string, max int64, v any) error {
	f, fi, err := openRegular("", path) // the file rule (open.go): no links, FIFOs or devices
	if err != nil {
		return err
	}
	defer f.Close()
	if fi.Size() > max {
		return fmt.Errorf("%s: %d bytes, over the %d-byte limit for one JSON document", path, fi.Size(), max)
	}
	return json.NewDecoder(f).Decode(v)
}

// maxDoc bounds one JSON document a reader loads whole.
const maxDoc = 256 << 20
