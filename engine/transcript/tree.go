package transcript

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"slices"
	"strings"
	"time"
)

// Claude Code, pi and OpenClaw write a conversation as a tree in an
// append-only JSONL file: every record names its parent, and going back to
// an earlier point (a rewind, a branch) adds a second child there. treeRead
// finds the conversation in two passes: the first decodes each line once,
// mapping ids to parents and holding what the line gives (up to a bound);
// the second delivers the records of the conversation from what was held,
// reading again only the lines past the bound.
//
// Two repairs make real files read as their agent shows them. A parent that
// was never written (Claude Code since 2.1.1x names lines it did not write)
// is taken to be the previous record in file order, and so is the missing
// parent of a later root (plan mode's "clear context and implement", a
// compaction whose summarised records are gone, pi's version 1 files that
// have no ids at all): the conversation goes on across them.
//
// What the conversation is differs by format. For pi and OpenClaw, whose
// users move about the tree on purpose, it is the path from the last record
// back to the root. Claude Code's users only rewind (a second user message
// under an earlier parent), while parallel tool calls and hooks leave side
// branches that the user saw: there the conversation is every record except
// those a rewind abandoned — the earlier of two user messages with prose
// under one parent, and what descends from it.

// treeFormat is what a tree-shaped format tells treeRead about its lines.
type treeFormat struct {
	// record reads a line once: its place in the tree (OK false for records
	// outside it) and what it holds (ID empty if none).
	record func(r *run, line []byte, at int64) (treeNode, treeEntry)
	// idKey is how a line names its own id (`"uuid":"`), and parentKey its
	// parent's: the delivered part of a file is searched for them, unparsed.
	idKey, parentKey string
	// rewinds: the conversation is every record but those a rewind abandoned
	// (Claude Code), not the path from the last record (pi, OpenClaw).
	rewinds bool
	// retries: a user message repeating the previous one, with no reply
	// between, is a retried prompt (OpenClaw writes it again), a duplicate.
	retries bool
	// start, if set, is called as a read of the lines from `from` begins,
	// with the cursor state it resumes (Claude Code's queue of typed
	// messages).
	start func(r *run, from int64, ex *treeExtra)
}

// treeNode is the little of a record the first pass keeps.
type treeNode struct {
	ID, Parent string
	// Prose: a user message with text of the user's own.
	Prose bool
	// Assistant: an assistant record (any content).
	Assistant bool
	OK        bool
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
	// SessionID and Project are the session fields the record names, taken
	// where the session has none yet.
	SessionID, Project string
}

// fill gives s the fields e names that s lacks.
func (e treeEntry) fill(s *Session) {
	if s.ID == "" && e.SessionID != "" {
		s.ID = e.SessionID
	}
	if s.Project == "" && e.Project != "" {
		s.Project = e.Project
	}
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

// treeRecent is how many of the last ids read a cursor keeps, so that the
// usual parent of a new line is known without searching the file.
const treeRecent = 64

// treeExtra is the tree part of a cursor's state.
type treeExtra struct {
	// Desc holds the last record whose text was delivered and the records
	// seen since that descend from it, oldest first (at most treeDescMax):
	// a later line whose parent is one of them keeps every delivered message
	// on the branch. (Records hanging off the branch, such as progress
	// records beside a tool call, count: a line may attach to them.)
	Desc []string `json:"desc,omitempty"`
	// Leaf is the last record read: a line attaching there continues it.
	Leaf string `json:"leaf,omitempty"`
	// Recent holds the last ids read, oldest first (at most treeRecent).
	Recent []string `json:"recent,omitempty"`
	// Prompt is the hash of the last user text delivered with no reply
	// after it (treeFormat.retries).
	Prompt string `json:"prompt,omitempty"`
	// Queued holds the messages the user typed while Claude Code was busy
	// that were neither delivered nor taken back by the last line read.
	Queued []string  `json:"queued,omitempty"`
	Reply  treeReply `json:"reply"`
}

// treeReply is the message being assembled from one or more lines.
type treeReply struct {
	Key     string    `json:"key,omitempty"` // the Reply key (or the id)
	ID      string    `json:"id,omitempty"`  // the message id: its first line's id
	Role    string    `json:"role,omitempty"`
	TS      time.Time `json:"ts"`
	Offsets []int64   `json:"offsets,omitempty"` // the lines holding its text
	Last    string    `json:"last,omitempty"`    // the id of its last line with text
	// Open: the conversation ended in this reply, so a later line may continue it.
	Open bool `json:"open,omitempty"`
}

// readTree reads a tree-shaped transcript, resuming when the file only grew
// and the new lines continue what was delivered, else from the start after
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
		// The new lines leave what was delivered (a rewind): start over.
		if err := r.restart(); err != nil {
			return err
		}
		r.tooLong = nil
	}
	ex = treeExtra{}
	_, err = treeRead(r, f, 0, &ex, false)
	return err
}

// treeRegion is what the first pass learns of the lines from `from`. Its
// records are numbered in file order, and the ids they name that lie before
// the region (parents, the last record read before it) after them, so that
// what the passes keep of a record is a few numbers beside its id.
type treeRegion struct {
	// arena holds ids' and explicit's arrays until free.
	arena *treeArena
	// ids numbers the region's records in file order (n of them), then
	// the ids before the region that they name.
	ids *treeIDs
	n   int32
	// explicit is each record's parent as it names it when that parent was
	// written (-1: none). Where there is none, its parent as repaired is the
	// record before it (first, for the region's first record): see parent.
	explicit treeInts
	first    int32   // the last record read before the region (-1: none)
	flags    []uint8 // treeProse, treeAssistant
	leaf     int32   // the last record read (-1: none)
	end      int64
	repaired int
	// lines are the region's lines as the first pass read them, for the
	// second, up to treeHoldBytes; from spill on (-1: none) the second pass
	// reads the lines again.
	lines []treeLine
	held  int
	spill int64
}

// What a region's flags say of a record.
const (
	// treeProse: a user message with text of the user's own.
	treeProse = 1 << iota
	// treeAssistant: an assistant record.
	treeAssistant
)

// node is the number of id, which is numbered as lying before the region
// if it is new; -1 for "".
func (rg *treeRegion) node(id string) int32 {
	if id == "" {
		return -1
	}
	k, ok := rg.ids.lookup(id)
	if !ok {
		k = rg.ids.add(id)
	}
	return k
}

// parent is record k's parent as repaired: the one it names when that was
// written, else the previous record in file order. (Derived, not held: a
// long session's first read is millions of records.)
func (rg *treeRegion) parent(k int32) int32 {
	switch {
	case rg.explicit.at(k) >= 0:
		return rg.explicit.at(k)
	case k == 0:
		return rg.first
	}
	return k - 1
}

// free gives back what the region holds outside the heap; it is not used
// after.
func (rg *treeRegion) free() { rg.arena.free() }

// record is the number of the region's record id.
func (rg *treeRegion) record(id string) (int32, bool) {
	k, ok := rg.ids.lookup(id)
	return k, ok && k < rg.n
}

// treeLine is one line's entry and where it starts.
type treeLine struct {
	at int64
	e  treeEntry
}

// treeHoldBytes bounds what a region holds of its lines' entries, so that
// a session of any length is read in bounded memory. A variable so that
// tests can make the second pass read lines again.
var treeHoldBytes = 64 << 20

// treeLineBytes is what holding a line costs besides its strings.
const treeLineBytes = 160

// hold keeps a line's entry for the second pass while what is held stays
// within treeHoldBytes.
func (rg *treeRegion) hold(at int64, e treeEntry) {
	if rg.spill >= 0 {
		return
	}
	if rg.held += treeLineBytes + len(e.ID) + len(e.Reply) + len(e.Text); rg.held > treeHoldBytes {
		rg.spill = at
		rg.lines = slices.Clip(rg.lines)
		return
	}
	rg.lines = append(rg.lines, treeLine{at, e})
}

// each gives fn every line of the region in file order, once: those held,
// then those past the spill read again. A held line is let go as it is
// given, so that what was held (up to treeHoldBytes) does not stay for the
// rest of a long read.
func (rg *treeRegion) each(r *run, f treeFormat, fn func(e treeEntry, at int64) error) error {
	lines := rg.lines
	rg.lines = nil
	for i := range lines {
		l := lines[i]
		lines[i] = treeLine{}
		if err := fn(l.e, l.at); err != nil {
			return err
		}
	}
	if rg.spill < 0 {
		return nil
	}
	_, err := r.lines(rg.spill, func(line []byte, at int64) error {
		_, e := f.record(r, line, at)
		return fn(e, at)
	})
	return err
}

// treeRead reads the lines from `from`. When resuming, it returns false,
// having delivered nothing, if they do not continue what was delivered.
func treeRead(r *run, f treeFormat, from int64, ex *treeExtra, resuming bool) (bool, error) {
	if f.start != nil {
		f.start(r, from, ex)
	}
	rg, err := treeScan(r, f, from, ex)
	if err != nil {
		return false, err
	}
	defer rg.free()
	var keep []bool // by record number
	if f.rewinds {
		var ok bool
		if keep, ok, err = treeUnrewound(r, f, rg, from, resuming); err != nil || !ok {
			return false, err
		}
	} else {
		var exit string
		keep, exit = treeBranch(rg)
		if resuming && rg.leaf >= 0 {
			// Nothing delivered yet: any attachment is fine.
			if r.prev.Messages > 0 && !slices.Contains(ex.Desc, exit) {
				return false, nil
			}
			if exit != ex.Leaf {
				ex.Reply.Open = false // attached before the open reply's end
			}
		}
	}
	lastDelivered, err := treeDeliver(r, f, rg, from, keep, ex, resuming)
	if err != nil {
		return true, err
	}
	treeRemember(rg, ex, lastDelivered)
	raw, err := json.Marshal(ex)
	if err != nil {
		return true, err
	}
	r.next.Extra = raw
	return true, r.settle(rg.end)
}

// treeScan is the first pass: the region's records, their parents as
// written and as repaired.
func treeScan(r *run, f treeFormat, from int64, ex *treeExtra) (*treeRegion, error) {
	a := &treeArena{}
	rg := &treeRegion{arena: a, ids: newTreeIDs(a), explicit: treeInts{a: a}, leaf: -1, spill: -1}
	// rg.explicit is, until repair, the parent each record names: a record's
	// number, treeNoParent, or treeParentLater with the id in later (not a
	// record when it was read).
	later := map[int32]string{}
	end, err := r.lines(from, func(line []byte, at int64) error {
		n, e := f.record(r, line, at)
		rg.hold(at, e)
		if !n.OK || n.ID == "" {
			return nil
		}
		k, dup := rg.ids.lookup(n.ID)
		if !dup {
			k = rg.ids.add(n.ID)
			rg.explicit.push(treeNoParent)
			if n.Parent != "" {
				if p, ok := rg.ids.lookup(n.Parent); ok {
					rg.explicit.set(k, p)
				} else {
					rg.explicit.set(k, treeParentLater)
					later[k] = n.Parent
				}
			}
			rg.flags = append(rg.flags, 0)
		}
		if n.Prose {
			rg.flags[k] |= treeProse
		}
		if n.Assistant {
			rg.flags[k] |= treeAssistant
		}
		rg.leaf = k
		return nil
	})
	if err != nil {
		rg.free()
		return nil, err
	}
	rg.end = end
	rg.n = rg.ids.len()
	rg.link(later)
	written, err := treeWritten(r, f, from, rg.outside(ex, later))
	if err != nil {
		rg.free()
		return nil, err
	}
	rg.repair(ex, later, written)
	return rg, nil
}

// What explicit holds, until repair, for a record whose parent is not a record's number.
const (
	treeNoParent    = -1 // it names none
	treeParentLater = -2 // its id is in later
)

// link numbers the parents named before their record was read.
func (rg *treeRegion) link(later map[int32]string) {
	for k, p := range later {
		if num, in := rg.record(p); in {
			rg.explicit.set(k, num)
			delete(later, k)
		}
	}
}

// outside is the parents named that lie outside the region and that the
// cursor does not know: those to search for in the lines delivered before.
func (rg *treeRegion) outside(ex *treeExtra, later map[int32]string) []string {
	var out []string
	for _, p := range later { // those link left: not the region's records
		if !slices.Contains(ex.Recent, p) {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// repair leaves in explicit the parent each record names when that was
// written, else -1 (see parent). It numbers the parents written before
// the region in the order of the records that name them.
func (rg *treeRegion) repair(ex *treeExtra, later map[int32]string, written map[string]bool) {
	rg.first = rg.node(ex.Leaf)
	for k := range rg.n {
		switch p := rg.explicit.at(k); {
		case p >= 0:
		case p == treeParentLater && (slices.Contains(ex.Recent, later[k]) || written[later[k]]):
			rg.explicit.set(k, rg.node(later[k]))
		case p == treeParentLater:
			rg.repaired++ // named a record never written
			rg.explicit.set(k, -1)
		default:
			rg.explicit.set(k, -1) // a later root continues the conversation
		}
	}
}

// treeWritten reports which of ids are records written before `from`,
// searching those lines for their id without parsing them.
func treeWritten(r *run, f treeFormat, from int64, ids []string) (map[string]bool, error) {
	found := map[string]bool{}
	if from == 0 || len(ids) == 0 {
		return found, nil
	}
	want := map[string]bool{}
	for _, id := range ids {
		want[id] = true
	}
	key := []byte(f.idKey)
	_, err := r.linesIn(0, from, func(line []byte, _ int64) error {
		i := bytes.Index(line, key)
		if i < 0 {
			return nil
		}
		rest := line[i+len(key):]
		if j := bytes.IndexByte(rest, '"'); j > 0 && want[string(rest[:j])] {
			found[string(rest[:j])] = true
		}
		return nil
	})
	return found, err
}

// treeBranch is the path from the region's last record back to where it
// leaves the region (exit: the record outside it, "" at a root), as the
// region's records it holds.
func treeBranch(rg *treeRegion) ([]bool, string) {
	branch := make([]bool, rg.n)
	for u := rg.leaf; u >= 0; {
		if u >= rg.n {
			return branch, rg.ids.id(u)
		}
		if branch[u] {
			break // a cycle: the file is damaged; keep what we have
		}
		branch[u] = true
		u = rg.parent(u)
	}
	return branch, ""
}

// treeUnrewound is every record of the region except those a rewind
// abandoned: a user prompt is abandoned when a later user prompt, or a later
// reply while it had one of its own, hangs under the same parent. ok is false when a new line rewinds to before a message
// delivered by an earlier read.
func treeUnrewound(r *run, f treeFormat, rg *treeRegion, from int64, resuming bool) ([]bool, bool, error) {
	answered := make([]bool, rg.ids.len()) // has a child so far
	last := make([]int32, rg.ids.len())    // parent -> its latest user child with prose
	for i := range last {
		last[i] = -1
	}
	var gone []int32
	outside := map[string]bool{}
	for k := range rg.n {
		p := rg.explicit.at(k)
		if p < 0 {
			continue
		}
		answered[p] = true
		if rg.flags[k]&treeAssistant != 0 {
			// A reply under a parent whose user prompt already got one: the
			// user rewound to that parent and had it answered again.
			if prev := last[p]; prev >= 0 && answered[prev] {
				gone = append(gone, prev)
				last[p] = -1
			}
		}
		if rg.flags[k]&treeProse == 0 {
			continue
		}
		if prev := last[p]; prev >= 0 {
			gone = append(gone, prev)
		} else if p >= rg.n && resuming {
			outside[rg.ids.id(p)] = true
		}
		last[p] = k
	}
	if len(outside) > 0 {
		// A user message under a parent read before: a rewind if that parent
		// already has one.
		rewound, err := treeHasProseChild(r, f, from, outside)
		if err != nil || rewound {
			return nil, false, err
		}
	}
	return treeAbandon(rg, gone), true, nil
}

// treeAbandon is every record of the region but those of gone and what
// descends from them.
func treeAbandon(rg *treeRegion, gone []int32) []bool {
	keep := make([]bool, rg.n)
	for k := range keep {
		keep[k] = true
	}
	if len(gone) == 0 {
		return keep
	}
	// The region's records by parent: kids[at[p]:at[p+1]] are p's children.
	at := make([]int32, rg.n+1)
	for k := range rg.n {
		if p := rg.explicit.at(k); p >= 0 && p < rg.n {
			at[p+1]++
		}
	}
	for p := range rg.n {
		at[p+1] += at[p]
	}
	kids := make([]int32, at[rg.n])
	next := slices.Clone(at[:rg.n])
	for k := range rg.n {
		if p := rg.explicit.at(k); p >= 0 && p < rg.n {
			kids[next[p]] = k
			next[p]++
		}
	}
	for len(gone) > 0 {
		u := gone[len(gone)-1]
		gone = gone[:len(gone)-1]
		if keep[u] {
			keep[u] = false
			gone = append(gone, kids[at[u]:at[u+1]]...)
		}
	}
	return keep
}

// treeHasProseChild reports whether a line before `from` is a user message
// with prose under one of parents.
func treeHasProseChild(r *run, f treeFormat, from int64, parents map[string]bool) (bool, error) {
	key := []byte(f.parentKey)
	found := false
	_, err := r.linesIn(0, from, func(line []byte, at int64) error {
		i := bytes.Index(line, key)
		if found || i < 0 {
			return nil
		}
		rest := line[i+len(key):]
		j := bytes.IndexByte(rest, '"')
		if j <= 0 || !parents[string(rest[:j])] {
			return nil
		}
		n, _ := f.record(r, line, at)
		found = n.Prose
		return nil
	})
	return found, err
}

// treeDeliver is the second pass: it delivers the records in keep, in file
// order, joining the lines of one reply, and counts every line. It returns
// the id of the last record whose text it delivered.
func treeDeliver(r *run, f treeFormat, rg *treeRegion, from int64, keep []bool, ex *treeExtra, resuming bool) (string, error) {
	a := &treeAssembly{r: r, f: f, rg: rg, keep: keep, ex: ex, seen: make([]bool, rg.n)}
	var ok bool
	if a.g, a.text, ok = treeOpenReply(r, f, rg, ex, resuming); !ok {
		return "", nil // the file changed under us: the next read starts over
	}
	a.inReply = a.g.Open
	r.startCount(from)
	r.cov.Repaired = rg.repaired
	if rg.end > from {
		if err := rg.each(r, f, a.line); err != nil {
			return "", err
		}
	}
	if err := a.flush(); err != nil {
		return "", err
	}
	if rg.leaf >= 0 {
		a.g.Open = a.inReply && a.g.ID != ""
	}
	ex.Reply = a.g
	return a.lastDelivered, nil
}

// treeOpenReply is the message the second pass starts with, and its text;
// ok is false if its lines can no longer be read.
func treeOpenReply(r *run, f treeFormat, rg *treeRegion, ex *treeExtra, resuming bool) (_ treeReply, _ []string, ok bool) {
	g := ex.Reply
	var text []string
	switch {
	case rg.leaf < 0:
		// Nothing joined the conversation: keep the state as it was.
	case resuming && g.Open:
		// The open reply may continue: re-read its text, so that it is
		// delivered whole again, under the same id, if it grows.
		for _, off := range g.Offsets {
			line, err := r.lineAt(off)
			if err != nil {
				return g, text, false
			}
			_, e := f.record(r, line, off)
			e.fill(&r.next.Session)
			if e.Text != "" {
				text = append(text, e.Text)
			}
		}
	default:
		g = treeReply{}
	}
	return g, text, true
}

// treeAssembly is the state of the second pass: g is the message being
// assembled; dirty means it holds text this read has not delivered yet.
type treeAssembly struct {
	r             *run
	f             treeFormat
	rg            *treeRegion
	keep          []bool // by record number
	ex            *treeExtra
	g             treeReply
	text          []string
	dirty         bool
	inReply       bool
	lastDelivered string
	seen          []bool // by record number
}

func (a *treeAssembly) flush() error {
	if !a.dirty {
		return nil
	}
	a.dirty = false
	a.lastDelivered = a.g.Last
	return a.r.emit(Message{ID: a.g.ID, Role: a.g.Role, Timestamp: a.g.TS, Text: strings.Join(a.text, "\n\n")})
}

// line takes one line's entry: counted, and its text joined to the message.
func (a *treeAssembly) line(e treeEntry, at int64) error {
	r := a.r
	e.fill(&r.next.Session)
	k, in := a.rg.record(e.ID)
	switch {
	case e.ID == "" || !in || !a.keep[k]:
		r.count(e.why(false))
		return nil
	case a.seen[k]:
		r.count(Duplicate) // the same record written again
		return nil
	case !e.Msg:
		a.seen[k] = true
		a.inReply = false
		r.count(e.why(true))
		return nil
	}
	a.seen[k] = true
	key := e.Reply
	if key == "" {
		key = e.ID
	}
	if a.g.ID == "" || key != a.g.Key || e.Role != a.g.Role {
		// A new message closes the one being assembled.
		if err := a.flush(); err != nil {
			return err
		}
		a.g, a.text = treeReply{Key: key, ID: e.ID, Role: e.Role, TS: e.TS}, nil
	}
	a.inReply = true
	if e.Text == "" {
		r.count(e.why(true))
		return nil
	}
	if a.f.retries && a.retried(e) {
		r.count(Duplicate) // the same prompt sent again
		return nil
	}
	a.text = append(a.text, e.Text)
	a.g.Offsets = append(a.g.Offsets, at)
	a.g.Last = e.ID
	a.dirty = true
	r.countIndexed()
	return nil
}

// retried reports whether e repeats the last user prompt with no reply
// between, remembering the prompt otherwise.
func (a *treeAssembly) retried(e treeEntry) bool {
	h := textHash(e.Text)
	switch {
	case e.Role == RoleUser && h == a.ex.Prompt:
		return true
	case e.Role == RoleUser:
		a.ex.Prompt = h
	default:
		a.ex.Prompt = ""
	}
	return false
}

// textHash is a short hash of a message's text, for the cursor.
func textHash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:8])
}

// treeRemember keeps, for the next read, the last delivered record and what
// descends from it, the last record read and the last ids.
func treeRemember(rg *treeRegion, ex *treeExtra, lastDelivered string) {
	desc := make([]bool, rg.ids.len())
	var kept []string
	if lastDelivered == "" {
		kept = ex.Desc
		for _, u := range kept {
			if k, ok := rg.ids.lookup(u); ok {
				desc[k] = true
			}
		}
	}
	last, ok := rg.record(lastDelivered)
	if !ok {
		last = -1
	}
	for k := range rg.n {
		if p := rg.parent(k); k == last || p >= 0 && desc[p] {
			desc[k] = true
			kept = append(kept, rg.ids.id(k))
		}
	}
	if len(kept) > treeDescMax {
		kept = kept[len(kept)-treeDescMax:]
	}
	ex.Desc = slices.Clone(kept)
	if rg.leaf >= 0 {
		ex.Leaf = rg.ids.id(rg.leaf)
	}
	recent := slices.Clone(ex.Recent)
	for k := max(0, rg.n-treeRecent); k < rg.n; k++ {
		recent = append(recent, rg.ids.id(k))
	}
	if len(recent) > treeRecent {
		recent = recent[len(recent)-treeRecent:]
	}
	ex.Recent = recent
}

// lineAt reads the transcript's line starting at off (at most
// Options.MaxLineBytes).
func (r *run) lineAt(off int64) ([]byte, error) {
	max := r.opt.MaxLineBytes
	f, err := r.openAt(off)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	line, err := bufio.NewReader(io.LimitReader(f, int64(max)+1)).ReadBytes('\n')
	if err != nil && err != io.EOF {
		return nil, err
	}
	if len(line) > max {
		return nil, errors.New("line too long")
	}
	return line, nil
}
