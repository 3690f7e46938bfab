package transcript

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"os"
	"slices"
	"strings"
	"time"
)

// Claude Code and OpenClaw write a conversation as a tree in an append-only
// JSONL file: every record names its parent, and going back to an earlier
// point (a rewind, a branch) adds a second child there. The conversation is
// the path from the root to the last record: the active branch. treeRead
// finds it without holding the text: a first pass maps ids to parents, a
// second delivers the records on the branch.

// treeFormat is what a tree-shaped format tells treeRead about its lines.
type treeFormat struct {
	// node reads a record's id and parent. ok is false for records outside
	// the tree; node counts malformed and unknown ones in r.res.
	node func(r *run, line []byte) (id, parent string, ok bool)
	// entry reads a record (its ID empty if none), filling the session fields
	// it carries into r.next.Session.
	entry func(r *run, line []byte) treeEntry
}

// treeEntry is one record on the branch.
type treeEntry struct {
	ID string
	// Msg is set for user and assistant records, which close an open reply
	// even when they hold no prose (a tool result, say).
	Msg  bool
	Role string
	// Reply groups consecutive lines of one reply (Claude Code's message.id);
	// empty means the record stands alone.
	Reply string
	Text  string
	TS    time.Time
	// Why is the reason the record gives no text: for a record outside the
	// tree (ID empty: a header, a malformed or unknown line, a sidechain), or
	// one in it that holds no prose (a tool result, a progress record).
	Why Reason
}

// why is the reason a record left out of the delivered text is counted
// under: onBranch says whether it lies on the conversation.
func (e treeEntry) why(onBranch bool) Reason {
	switch {
	case e.ID != "" && !onBranch && e.Text != "":
		return Abandoned
	case e.Why != "":
		return e.Why
	case e.Msg:
		return Empty
	}
	return Meta
}

// treeDescMax bounds the remembered descendants of the last delivered record.
const treeDescMax = 256

// treeExtra is the tree part of a cursor's state.
type treeExtra struct {
	// Desc holds the last record whose text was delivered and the records
	// seen since that descend from it, oldest first (at most treeDescMax):
	// a later line whose parent is one of them keeps every delivered message
	// on the branch. (Records hanging off the branch, such as progress
	// records beside a tool call, count: a line may attach to them.)
	Desc []string `json:"desc,omitempty"`
	// Leaf is the last record read: a line attaching there continues it.
	Leaf  string    `json:"leaf,omitempty"`
	Reply treeReply `json:"reply"`
}

// treeReply is the message being assembled from one or more lines.
type treeReply struct {
	Key     string    `json:"key,omitempty"` // the Reply key (or the id)
	ID      string    `json:"id,omitempty"`  // the message id: its first line's id
	Role    string    `json:"role,omitempty"`
	TS      time.Time `json:"ts"`
	Offsets []int64   `json:"offsets,omitempty"` // the lines holding its text
	Last    string    `json:"last,omitempty"`    // the id of its last line with text
	// Open: the branch ended in this reply, so a later line may continue it.
	Open bool `json:"open,omitempty"`
}

// readTree reads a tree-shaped transcript, resuming when the file only grew
// and the new lines continue the delivered branch, else from the start after
// Reset.
func readTree(r *run, f treeFormat) error {
	from, err := r.begin()
	if err != nil || from < 0 {
		return err
	}
	var ex treeExtra
	if from > 0 && json.Unmarshal(r.prev.Extra, &ex) != nil {
		if err := r.restart(); err != nil { // a cursor we cannot read
			return err
		}
		from = 0
	}
	if from > 0 {
		ok, err := treeRead(r, f, from, &ex, true)
		if err != nil || ok {
			return err
		}
		// The new lines leave the delivered branch (a rewind): start over.
		if err := r.restart(); err != nil {
			return err
		}
		r.tooLong = nil
	}
	ex = treeExtra{}
	_, err = treeRead(r, f, 0, &ex, false)
	return err
}

// treeRead reads the lines from `from`. When resuming, it returns false,
// having delivered nothing, if the branch does not continue the delivered one.
func treeRead(r *run, f treeFormat, from int64, ex *treeExtra, resuming bool) (bool, error) {
	parents := map[string]string{}
	var order []string // the region's records in file order
	var leaf string
	end, err := r.lines(from, func(line []byte, at int64) error {
		id, parent, ok := f.node(r, line)
		if ok && id != "" {
			if _, dup := parents[id]; !dup {
				order = append(order, id)
			}
			parents[id] = parent
			leaf = id
		}
		return nil
	})
	if err != nil {
		return false, err
	}
	// The active branch within the region, and where it leaves the region.
	branch := map[string]bool{}
	exit := ""
	for u := leaf; u != ""; {
		if branch[u] {
			break // a cycle: the file is damaged; keep what we have
		}
		p, ok := parents[u]
		if !ok {
			exit = u
			break
		}
		branch[u] = true
		u = p
	}
	if resuming && leaf != "" {
		// Nothing delivered yet: any attachment is fine.
		if r.prev.Messages > 0 && !slices.Contains(ex.Desc, exit) {
			return false, nil
		}
		if exit != ex.Leaf {
			ex.Reply.Open = false // attached before the open reply's end
		}
	}

	// Second pass: deliver. g is the message being assembled; dirty means it
	// holds text this read has not delivered yet.
	g := ex.Reply
	var text []string
	switch {
	case leaf == "":
		// Nothing joined the branch: keep the state as it was.
	case resuming && g.Open:
		// The open reply may continue: re-read its text, so that it is
		// delivered whole again, under the same id, if it grows.
		for _, off := range g.Offsets {
			line, err := lineAt(r.path, off, r.opt.MaxLineBytes)
			if err != nil {
				return false, nil // the file changed under us: start over
			}
			if e := f.entry(r, line); e.Text != "" {
				text = append(text, e.Text)
			}
		}
	default:
		g = treeReply{}
	}
	dirty, inReply := false, g.Open
	lastDelivered := ""
	flush := func() error {
		if !dirty {
			return nil
		}
		dirty = false
		lastDelivered = g.Last
		return r.emit(Message{ID: g.ID, Role: g.Role, Timestamp: g.TS, Text: strings.Join(text, "\n\n")})
	}
	r.startCount(from)
	if end > from {
		_, err = r.lines(from, func(line []byte, at int64) error {
			e := f.entry(r, line)
			if e.ID == "" || !branch[e.ID] {
				r.count(e.why(false))
				return nil
			}
			if !e.Msg {
				inReply = false
				r.count(e.why(true))
				return nil
			}
			key := e.Reply
			if key == "" {
				key = e.ID
			}
			if g.ID == "" || key != g.Key || e.Role != g.Role {
				// A new message closes the one being assembled.
				if err := flush(); err != nil {
					return err
				}
				g, text = treeReply{Key: key, ID: e.ID, Role: e.Role, TS: e.TS}, nil
			}
			inReply = true
			if e.Text == "" {
				r.count(e.why(true))
				return nil
			}
			text = append(text, e.Text)
			g.Offsets = append(g.Offsets, at)
			g.Last = e.ID
			dirty = true
			r.countIndexed()
			return nil
		})
		if err != nil {
			return true, err
		}
	}
	if err := flush(); err != nil {
		return true, err
	}
	if leaf != "" {
		g.Open = inReply && g.ID != ""
	}
	ex.Reply = g

	// Remember the last delivered record and what descends from it.
	desc := map[string]bool{}
	var kept []string
	if lastDelivered == "" {
		kept = ex.Desc
		for _, u := range kept {
			desc[u] = true
		}
	}
	for _, u := range order {
		if u == lastDelivered || desc[parents[u]] {
			desc[u] = true
			kept = append(kept, u)
		}
	}
	if len(kept) > treeDescMax {
		kept = kept[len(kept)-treeDescMax:]
	}
	ex.Desc = slices.Clone(kept)
	if leaf != "" {
		ex.Leaf = leaf
	}
	raw, err := json.Marshal(ex)
	if err != nil {
		return true, err
	}
	r.next.Extra = raw
	return true, r.settle(end)
}

// lineAt reads the line starting at off (at most max bytes).
func lineAt(path string, off int64, max int) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if _, err := f.Seek(off, io.SeekStart); err != nil {
		return nil, err
	}
	line, err := bufio.NewReader(io.LimitReader(f, int64(max)+1)).ReadBytes('\n')
	if err != nil && err != io.EOF {
		return nil, err
	}
	if len(line) > max {
		return nil, errors.New("line too long")
	}
	return line, nil
}
