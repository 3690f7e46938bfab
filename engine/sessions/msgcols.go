package sessions

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"mnemo/engine/fulltext"
	"mnemo/engine/rank"
)

// The messages held in memory, as columns.
//
// Every open reads every message record, and a corpus holds every
// message between queries: at a million messages a *message struct with
// its document id and message id strings and its two map entries came to
// ~220 MB of a 422 MB live heap, most of an open's time went into
// allocating them, and the collector scanned their pointers at every
// cycle. A message is now a number (msgNum) into columns that hold what
// search and scoring read of it, with no pointer and no string; its
// message id, its exact timestamp and its text stay in the state store,
// read for the few messages a page shows (resultHits) or a view opens.

// msgNum is a message's number in the corpus's columns.
type msgNum = uint32

// noMsg stands for no message: a seq with none in a session, a document
// the corpus no longer holds.
const noMsg msgNum = math.MaxUint32

// maxSeqGap bounds how far past a session's messages a stored seq may lie:
// a session's messages are found by seq in a slice, and seqs are dense
// (a transcript's messages are numbered 0, 1, …), so a seq beyond this is
// a damaged record, not a slice of millions of empty places.
const maxSeqGap = 1 << 20

// msgTime is a message's time as columns hold it: Unix seconds and
// nanoseconds, the zero time.Time included, so that comparing two is
// comparing the instants time.Time compares.
type msgTime struct {
	sec  int64
	nsec int32
}

func toMsgTime(t time.Time) msgTime { return msgTime{sec: t.Unix(), nsec: int32(t.Nanosecond())} }

// zeroMsgTime is the zero time.Time (a message whose transcript gives none).
var zeroMsgTime = toMsgTime(time.Time{})

func (t msgTime) isZero() bool { return t == zeroMsgTime }

// Time is t as a time.Time, in UTC (what comparisons need; the message's
// own location is in its stored record).
func (t msgTime) Time() time.Time {
	if t.isZero() {
		return time.Time{}
	}
	return time.Unix(t.sec, int64(t.nsec)).UTC()
}

func (t msgTime) before(u msgTime) bool {
	return t.sec < u.sec || (t.sec == u.sec && t.nsec < u.nsec)
}

// msgCols are the corpus's messages by number. A number whose sid is 0 is
// free (session numbers start at 1), kept in free for the next message.
type msgCols struct {
	sid  []uint32
	seq  []uint32
	role []uint8 // an index into roles
	time []msgTime
	lens [][fulltext.NumFields]int32
	free []msgNum
	live int
	// roles are the roles met, interned: "user", "assistant".
	roles  []string
	roleOf map[string]uint8
}

func newMsgCols() msgCols { return msgCols{roleOf: map[string]uint8{}} }

// reserve makes room for n more messages.
func (c *msgCols) reserve(n int) {
	c.sid = slices.Grow(c.sid, n)
	c.seq = slices.Grow(c.seq, n)
	c.role = slices.Grow(c.role, n)
	c.time = slices.Grow(c.time, n)
	c.lens = slices.Grow(c.lens, n)
}

// roleID interns role; an error past 256 distinct roles (the readers
// deliver two).
func (c *msgCols) roleID(role []byte) (uint8, error) {
	if r, ok := c.roleOf[string(role)]; ok {
		return r, nil
	}
	if len(c.roles) > math.MaxUint8 {
		return 0, fmt.Errorf("role %q: more than %d distinct roles", role, math.MaxUint8+1)
	}
	r := uint8(len(c.roles))
	c.roles = append(c.roles, string(role))
	c.roleOf[string(role)] = r
	return r, nil
}

// add stores one message and returns its number.
func (c *msgCols) add(sid, seq uint32, role uint8, t msgTime, lens [fulltext.NumFields]int32) msgNum {
	c.live++
	if k := len(c.free); k > 0 {
		n := c.free[k-1]
		c.free = c.free[:k-1]
		c.sid[n], c.seq[n], c.role[n], c.time[n], c.lens[n] = sid, seq, role, t, lens
		return n
	}
	c.sid = append(c.sid, sid)
	c.seq = append(c.seq, seq)
	c.role = append(c.role, role)
	c.time = append(c.time, t)
	c.lens = append(c.lens, lens)
	return msgNum(len(c.sid) - 1)
}

// remove frees message n.
func (c *msgCols) remove(n msgNum) {
	c.sid[n], c.seq[n] = 0, 0
	c.free = append(c.free, n)
	c.live--
}

// roleName is message n's role.
func (c *msgCols) roleName(n msgNum) string { return c.roles[c.role[n]] }

// item is message n as the ranking stages take it.
func (c *msgCols) item(n msgNum) msgItem {
	return msgItem{num: n, sid: c.sid[n], seq: c.seq[n], time: c.time[n]}
}

// msgItem is a message as the ranking stages take it (rank.Item): small,
// with no pointer, its document id made only when two equal scores and
// dates need it.
type msgItem struct {
	num      msgNum
	sid, seq uint32
	time     msgTime
}

// msgCandidate is one message that matched, with its evidence.
type msgCandidate = rank.Candidate[msgItem]

// Key is the message's document id: equal scores are ordered by it.
func (m msgItem) Key() string { return docID(m.sid, m.seq) }

// Dated is the message's time; one with none sorts as of 1970, as a
// memory with no date does.
func (m msgItem) Dated() time.Time {
	if !m.time.isZero() {
		return m.time.Time()
	}
	return time.Unix(0, 0).UTC()
}

// Updated is Dated: a message does not change once written.
func (m msgItem) Updated() time.Time { return m.Dated() }

func docID(sid, seq uint32) string { return string(appendDocID(nil, sid, seq)) }

// appendDocID appends the Bleve document id of message seq of session
// sid to buf: both numbers in base 36, joined by a dot.
func appendDocID(buf []byte, sid, seq uint32) []byte {
	buf = strconv.AppendUint(buf, uint64(sid), 36)
	buf = append(buf, '.')
	return strconv.AppendUint(buf, uint64(seq), 36)
}

// parseDocID reads a document id docID wrote; false for anything else.
func parseDocID(id string) (sid, seq uint32, ok bool) {
	a, b, found := strings.Cut(id, ".")
	if !found {
		return 0, 0, false
	}
	x, err1 := strconv.ParseUint(a, 36, 32)
	y, err2 := strconv.ParseUint(b, 36, 32)
	if err1 != nil || err2 != nil {
		return 0, 0, false
	}
	return uint32(x), uint32(y), true
}

// session is one indexed transcript and its live messages.
type session struct {
	sessionRec
	nums  []msgNum // message number by seq; noMsg where none
	count int      // live messages
}

// num is the number of the session's message seq; noMsg when none.
func (ss *session) num(seq uint32) msgNum {
	if int64(seq) >= int64(len(ss.nums)) {
		return noMsg
	}
	return ss.nums[seq]
}

// setNum records n as message seq's number; an error for a seq too far
// past the session's messages (maxSeqGap).
func (ss *session) setNum(seq uint32, n msgNum) error {
	if int64(seq) >= int64(len(ss.nums)) {
		if int64(seq) >= int64(len(ss.nums))+maxSeqGap {
			return fmt.Errorf("session %d: message seq %d is %d past its last", ss.SID, seq, int64(seq)-int64(len(ss.nums)))
		}
		for int64(len(ss.nums)) <= int64(seq) {
			ss.nums = append(ss.nums, noMsg)
		}
	}
	if ss.nums[seq] == noMsg {
		ss.count++
	}
	ss.nums[seq] = n
	return nil
}

// clearNum forgets message seq.
func (ss *session) clearNum(seq uint32) {
	if int64(seq) < int64(len(ss.nums)) && ss.nums[seq] != noMsg {
		ss.nums[seq] = noMsg
		ss.count--
	}
}

// each calls fn with every live message of the session, in seq order.
func (ss *session) each(fn func(seq uint32, n msgNum)) {
	for seq, n := range ss.nums {
		if n != noMsg {
			fn(uint32(seq), n)
		}
	}
}

// orderedSeqs lists a session's live sequence numbers in order.
func (ss *session) orderedSeqs() []uint32 {
	out := make([]uint32, 0, ss.count)
	ss.each(func(seq uint32, _ msgNum) { out = append(out, seq) })
	return out
}
