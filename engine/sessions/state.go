package sessions

import (
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"

	bolt "go.etcd.io/bbolt"

	"mnemo/engine/fulltext"
	"mnemo/engine/store"
	"mnemo/engine/transcript"
	"mnemo/engine/vectors"
)

// The sessions state store: one bbolt file in INDEX/sessions, kept by the
// discipline of engine/store, as the memory store is: a batch's sessions
// are marked pending (sid → the highest seq the batch may have written)
// before Bleve is written and unmarked in the transaction that records
// them, so a crash in between is undone at the next open (repairPending).
var (
	sbSessions = []byte("sessions") // sid → sessionRec
	sbMessages = []byte("messages") // sid|seq → msgRec (no text)
	sbTexts    = []byte("texts")    // sid|seq → the redacted text, in stores written before sbTextBlocks
	sbIDs      = []byte("ids")      // sid|message id → seq
	sbVectors  = []byte("vectors")  // sid|seq → vector
	sbSkips    = []byte("skips")    // source key → []Skip
	// sbForgotten: SHA-256 of a forgotten transcript's path → its source
	// key. A full rebuild keeps it: a forgotten transcript stays out.
	sbForgotten = []byte("forgotten")
)

// appendFill is how full a write leaves the pages of the buckets keyed
// sid|seq (messages, vectors, text blocks). A batch appends their keys in order,
// past all but its own sessions' keys, so pages filled to bbolt's default
// half (FillPercent 0.5) stay ~40 % full: 2.3× the pages at 100k
// messages. Full pages cost an append in the middle of the key space a
// split into a full page and a small one; measured on 1,000 sessions of
// 100 appended to 5 at a time, the pages stay fewer than at 0.5
// (docs/design.md). ids (sid|message id, in no order) keeps the default.
const appendFill = 1.0

// seqBuckets returns the buckets keyed sid|seq, filled to appendFill
// (putTextsTx fills sbTextBlocks so too).
func seqBuckets(tx *bolt.Tx) (messages, vecs *bolt.Bucket) {
	messages, vecs = tx.Bucket(sbMessages), tx.Bucket(sbVectors)
	for _, b := range []*bolt.Bucket{messages, vecs} {
		if b != nil {
			b.FillPercent = appendFill
		}
	}
	return messages, vecs
}

var sessionBuckets = [][]byte{sbSessions, sbMessages, sbTexts, sbTextBlocks, sbIDs, sbVectors, sbSkips, sbForgotten, sbRecovered}

// rebuiltBuckets are the buckets a full rebuild empties.
var rebuiltBuckets = [][]byte{sbSessions, sbMessages, sbTexts, sbTextBlocks, sbIDs, sbVectors, store.BucketPending, sbSkips}

// sessionRec is what the store keeps of one transcript and its session.
type sessionRec struct {
	SID         uint32     `json:"n"`
	Source      string     `json:"src"` // sourceKey of the source that owns it
	ID          string     `json:"id"`
	Agent       string     `json:"a"`
	Project     string     `json:"p"`
	ProjectHash string     `json:"ph,omitempty"`
	Path        string     `json:"f"`
	Summary     string     `json:"sum,omitempty"`
	Started     time.Time  `json:"s"`
	Ended       time.Time  `json:"e"`
	NextSeq     uint32     `json:"q"`
	Size        int64      `json:"z"`
	MtimeNs     int64      `json:"m"`
	Cursor      cursorJSON `json:"c,omitempty"`
	Malformed   int        `json:"x,omitempty"`
	// Archived is when a sync found the transcript gone (zero: it is
	// there). An archived session is served from what the store holds.
	Archived time.Time `json:"ar,omitzero"`
	// Coverage is what the reads of this transcript accounted for, line by
	// line, summed since its last whole read.
	Coverage transcript.Coverage `json:"cov,omitzero"`
	// Partial: the messages of a read committed in slices whose last slice
	// is not (Corpus.slice); the fields above are those of the last
	// complete read, so the next sync reads it again.
	Partial bool `json:"pt,omitempty"`
}

func (r sessionRec) archived() bool { return !r.Archived.IsZero() }

// msgRec is one message without its text.
type msgRec struct {
	ID   string                    `json:"i"`
	Role string                    `json:"r"`
	Time time.Time                 `json:"t"`
	Lens [fulltext.NumFields]int32 `json:"l"`
}

type sessionStore struct {
	db     *bolt.DB
	blocks blockCache        // text blocks decoded for snippets
	pages  *store.PageTender // lets go of the pages searches map
}

// newSessionStore is the sessions state store over db.
func newSessionStore(db *bolt.DB) *sessionStore {
	return &sessionStore{db: db, pages: store.NewPageTender(db, searchPages)}
}

// searchPages is how many bytes of pages searches may map before they are
// let go (store.PageTender): at 1M messages, ~85 searches' worth. Every
// 16 searches whatever they had mapped (~25 MB) cost a hybrid search 18 %
// more CPU than never releasing; at this allowance a serve's RSS grows by
// at most this much over what its open left mapped (docs/benchmarks.md).
const searchPages = 128 << 20

// sessionStoreOptions opens the sessions corpus's state store.
func sessionStoreOptions(readOnly bool) store.Options {
	return store.Options{What: "sessions state store", ReadOnly: readOnly, Buckets: sessionBuckets, Schema: sessionsSchema,
		NotReady: fmt.Errorf("sessions %w", store.ErrIndexNotReady), Rebuild: "rebuilding from the transcripts"}
}

// markConverting moves a store of convertibleSchema to sessionsSchema
// before its texts or vectors are converted (a writer's open), so that an
// older mnemo refuses it from the first converted entry on rather than
// misreading it. Other stores are left as they are: a fresh one gets its
// schema from its first sync, an outdated one is rebuilt.
func (s *sessionStore) markConverting(meta map[string]string) error {
	if meta["schema"] != strconv.Itoa(convertibleSchema) {
		return nil
	}
	if err := s.setMeta(map[string]string{"schema": strconv.Itoa(sessionsSchema)}); err != nil {
		return fmt.Errorf("mark the sessions state store for conversion: %w", err)
	}
	return nil
}

func (s *sessionStore) close() error { return s.db.Close() }

func (s *sessionStore) size() int64 { return store.Size(s.db) }

func (s *sessionStore) metaAll() map[string]string { return store.MetaAll(s.db) }

func (s *sessionStore) setMeta(kv map[string]string) error { return store.SetMeta(s.db, kv) }

func sidKey(sid uint32) []byte {
	k := make([]byte, 4)
	binary.BigEndian.PutUint32(k, sid)
	return k
}

func seqKey(sid, seq uint32) []byte {
	k := make([]byte, 8)
	binary.BigEndian.PutUint32(k, sid)
	binary.BigEndian.PutUint32(k[4:], seq)
	return k
}

func idKey(sid uint32, id string) []byte {
	return append(binary.BigEndian.AppendUint32(make([]byte, 0, 4+len(id)), sid), id...)
}

func (s *sessionStore) forEachSession(fn func(sessionRec) error) error {
	return s.db.View(func(tx *bolt.Tx) error { return sessionsIn(tx, fn) })
}

// sessionsIn calls fn with every session record tx holds.
func sessionsIn(tx *bolt.Tx, fn func(sessionRec) error) error {
	b := tx.Bucket(sbSessions)
	if b == nil {
		return nil
	}
	var buf []byte
	return b.ForEach(func(k, v []byte) error {
		r, err := decodeSessionRec(v, &buf)
		if err != nil {
			return fmt.Errorf("session record %x: %w", k, err)
		}
		return fn(r)
	})
}

// decodeMsgRec decodes a message record. Every open decodes them all, and
// encoding/json spends most of an open's time on them (a third of a cold
// CLI query at 100k messages), so the shape json.Marshal writes,
// {"i":"…","r":"…","t":"…","l":[…]} with no escape in its strings, is
// read here directly; anything else goes through json.Unmarshal, and
// either way the record is the same.
func decodeMsgRec(v []byte) (msgRec, error) {
	if m, ok := scanMsgRec(v); ok {
		return m, nil
	}
	var m msgRec
	err := json.Unmarshal(v, &m)
	return m, err
}

// scanMsgRec reads what json.Marshal writes of a msgRec; false when v is
// anything else.
func scanMsgRec(v []byte) (m msgRec, ok bool) {
	f, ok := scanMsgFields(v)
	if !ok || m.Time.UnmarshalText(f.time) != nil {
		return m, false
	}
	m.ID, m.Role, m.Lens = string(f.id), string(f.role), f.lens
	return m, true
}

// msgFields are a message record's fields as its bytes hold them.
type msgFields struct {
	id, role, time []byte
	lens           [fulltext.NumFields]int32
}

// scanMsgFields splits what json.Marshal writes of a msgRec,
// {"i":"…","r":"…","t":"…","l":[…]} with no escape in its strings, into
// its fields without copying them; false when v is anything else.
func scanMsgFields(v []byte) (f msgFields, ok bool) {
	str := func(key string) ([]byte, bool) {
		if !bytes.HasPrefix(v, []byte(key)) {
			return nil, false
		}
		v = v[len(key):]
		end := bytes.IndexByte(v, '"')
		if end < 0 || bytes.IndexByte(v[:end], '\\') >= 0 {
			return nil, false
		}
		s := v[:end]
		v = v[end+1:]
		return s, true
	}
	if f.id, ok = str(`{"i":"`); !ok {
		return f, false
	}
	if f.role, ok = str(`,"r":"`); !ok {
		return f, false
	}
	if f.time, ok = str(`,"t":"`); !ok {
		return f, false
	}
	if !bytes.HasPrefix(v, []byte(`,"l":[`)) {
		return f, false
	}
	v = v[len(`,"l":[`):]
	for i := range f.lens {
		end := bytes.IndexByte(v, ',')
		if i == len(f.lens)-1 {
			end = bytes.IndexByte(v, ']')
		}
		if end < 0 {
			return f, false
		}
		if f.lens[i], ok = atoi32(v[:end]); !ok {
			return f, false
		}
		v = v[end+1:]
	}
	return f, string(v) == "}"
}

// atoi32 reads a decimal int32 as json.Marshal writes one, without the
// string strconv would take (an open reads four a message).
func atoi32(b []byte) (int32, bool) {
	neg := len(b) > 0 && b[0] == '-'
	if neg {
		b = b[1:]
	}
	if len(b) == 0 || len(b) > 10 {
		return 0, false
	}
	var n int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	if neg {
		n = -n
	}
	if n < math.MinInt32 || n > math.MaxInt32 {
		return 0, false
	}
	return int32(n), true
}

// colRec is what the columns hold of a message record.
type colRec struct {
	role uint8
	time msgTime
	lens [fulltext.NumFields]int32
}

// messageColsIn calls fn with every message record of tx as the columns
// hold it, its role interned in cols: the record's bytes are read in
// place (scanMsgFields), its id not even copied, so an open of a million
// messages allocates nothing for each. A record of another shape goes
// through decodeMsgRec.
func messageColsIn(tx *bolt.Tx, cols *msgCols, fn func(sid, seq uint32, m colRec) error) error {
	b := tx.Bucket(sbMessages)
	if b == nil {
		return nil
	}
	return b.ForEach(func(k, v []byte) error {
		if len(k) != 8 {
			return nil
		}
		m, err := decodeColRec(cols, v)
		if err != nil {
			return fmt.Errorf("message record %x: %w", k, err)
		}
		return fn(binary.BigEndian.Uint32(k), binary.BigEndian.Uint32(k[4:]), m)
	})
}

// decodeColRec decodes a message record into what the columns hold.
func decodeColRec(cols *msgCols, v []byte) (colRec, error) {
	var c colRec
	f, ok := scanMsgFields(v)
	if ok {
		c.time, ok = parseMsgTime(f.time)
	}
	if ok {
		c.lens = f.lens
	} else {
		m, err := decodeMsgRec(v)
		if err != nil {
			return c, err
		}
		f.role, c.time, c.lens = []byte(m.Role), toMsgTime(m.Time), m.Lens
	}
	var err error
	c.role, err = cols.roleID(f.role)
	return c, err
}

// parseMsgTime reads a message record's time as time.Time.UnmarshalText
// does; false for what it cannot. The times json.Marshal writes in UTC
// (2025-06-03T04:27:18.526Z) are read here directly, in a quarter of
// UnmarshalText's time (~40 ms of an open's CPU at 1M messages), and
// any other goes to UnmarshalText.
func parseMsgTime(b []byte) (msgTime, bool) {
	if t, ok := parseUTC(b); ok {
		return t, true
	}
	var t time.Time
	if t.UnmarshalText(b) != nil {
		return msgTime{}, false
	}
	return toMsgTime(t), true
}

// parseUTC reads YYYY-MM-DDTHH:MM:SS[.F{1,9}]Z, the form RFC 3339 takes in
// UTC; false for anything else, a date that does not exist included.
func parseUTC(b []byte) (msgTime, bool) {
	if len(b) < 20 || b[4] != '-' || b[7] != '-' || b[10] != 'T' || b[13] != ':' || b[16] != ':' || b[len(b)-1] != 'Z' {
		return msgTime{}, false
	}
	num := func(s []byte) (int, bool) {
		n := 0
		for _, c := range s {
			if c < '0' || c > '9' {
				return 0, false
			}
			n = n*10 + int(c-'0')
		}
		return n, true
	}
	y, ok1 := num(b[0:4])
	mo, ok2 := num(b[5:7])
	d, ok3 := num(b[8:10])
	h, ok4 := num(b[11:13])
	mi, ok5 := num(b[14:16])
	s, ok6 := num(b[17:19])
	if !(ok1 && ok2 && ok3 && ok4 && ok5 && ok6) || mo < 1 || mo > 12 || d < 1 || d > daysIn(mo, y) || h > 23 || mi > 59 || s > 59 {
		return msgTime{}, false
	}
	var nsec int
	if frac := b[19 : len(b)-1]; len(frac) > 0 {
		if len(frac) < 2 || len(frac) > 10 || frac[0] != '.' {
			return msgTime{}, false
		}
		n, ok := num(frac[1:])
		if !ok {
			return msgTime{}, false
		}
		for range 10 - len(frac) {
			n *= 10
		}
		nsec = n
	}
	sec := daysFromCivil(y, mo, d)*86400 + int64(h*3600+mi*60+s)
	return msgTime{sec: sec, nsec: int32(nsec)}, true
}

// daysIn is the number of days of month mo (1–12) of year y.
func daysIn(mo, y int) int {
	if mo == 2 {
		if y%4 == 0 && (y%100 != 0 || y%400 == 0) {
			return 29
		}
		return 28
	}
	return 30 + (mo+mo/8)%2
}

// daysFromCivil is the number of days from 1970-01-01 to y-mo-d in the
// proleptic Gregorian calendar (Howard Hinnant's days_from_civil).
func daysFromCivil(y, mo, d int) int64 {
	if mo <= 2 {
		y--
	}
	era := y / 400 // y ≥ -1 here: the years of a record are 0–9999
	if y < 0 {
		era = (y - 399) / 400
	}
	yoe := y - era*400
	mp := (mo + 9) % 12
	doy := (153*mp+2)/5 + d - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return int64(era)*146097 + int64(doe) - 719468
}

// forEachVector calls fn with every stored vector of dim dimensions, in
// either stored form (vectors.DecodeCode); one of another length or no
// direction is passed over, as the vector store would leave it out. The
// code's dimensions are valid only during the call (one buffer for all).
func (s *sessionStore) forEachVector(dim int, fn func(sid, seq uint32, c vectors.Code) error) error {
	buf := make([]int8, dim)
	return s.db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket(sbVectors)
		if b == nil {
			return nil
		}
		return b.ForEach(func(k, v []byte) error {
			if len(k) != 8 {
				return nil
			}
			c, ok := vectors.DecodeCodeInto(buf, v, dim)
			if !ok {
				return nil
			}
			return fn(binary.BigEndian.Uint32(k), binary.BigEndian.Uint32(k[4:]), c)
		})
	})
}

// similarities is q's similarity to the stored vector of each of refs,
// read in key order from one read transaction; -2 for a message without
// one (as Flat.Nearest has none). What a query needs of a few thousand
// candidates' vectors when the vector store is not loaded: a few
// milliseconds, where loading all of 1M takes half a second and ~100 MB.
func (s *sessionStore) similarities(ctx context.Context, q []float32, refs []textRef) ([]float32, error) {
	sims := make([]float32, len(refs))
	for i := range sims {
		sims[i] = -2
	}
	order := keyOrder(refs)
	buf := make([]int8, len(q))
	var k [8]byte
	err := s.db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket(sbVectors)
		if b == nil {
			return nil
		}
		for _, i := range order {
			if err := ctx.Err(); err != nil {
				return err
			}
			binary.BigEndian.PutUint32(k[:], refs[i].sid)
			binary.BigEndian.PutUint32(k[4:], refs[i].seq)
			if c, ok := vectors.DecodeCodeInto(buf, b.Get(k[:]), len(q)); ok {
				sims[i], _ = c.Similarity(q)
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read candidates' vectors: %w", err)
	}
	return sims, nil
}

// skipsIn reads what each source skipped, by source key; a record that
// does not decode is left out.
func skipsIn(tx *bolt.Tx) map[string][]store.Skip {
	out := map[string][]store.Skip{}
	b := tx.Bucket(sbSkips)
	if b == nil {
		return out
	}
	_ = b.ForEach(func(k, v []byte) error { // fn never fails
		var sk []store.Skip
		if json.Unmarshal(v, &sk) == nil {
			out[string(k)] = sk
		}
		return nil
	})
	return out
}

// storedMessage is one message as read back for display.
type storedMessage struct {
	seq uint32
	msgRec
	Text    string
	hasText bool
}

// messages reads the messages of sid with seq in [from, to), in order.
func (s *sessionStore) messages(sid, from, to uint32) ([]storedMessage, error) {
	return s.firstMessages(sid, from, to, 0)
}

// firstMessages is messages, up to the first n of them (0: all).
func (s *sessionStore) firstMessages(sid, from, to uint32, n int) ([]storedMessage, error) {
	var out []storedMessage
	err := s.db.View(func(tx *bolt.Tx) error {
		var err error
		out, err = messagesInTx(tx, sid, from, to, n)
		return err
	})
	return out, err
}

// messagesInTx reads the messages of sid with seq in [from, to), up to
// the first n (0: all), with their texts (hasText false: none stored).
func messagesInTx(tx *bolt.Tx, sid, from, to uint32, n int) ([]storedMessage, error) {
	mb := tx.Bucket(sbMessages)
	if mb == nil {
		return nil, nil
	}
	var out []storedMessage
	c := mb.Cursor()
	for k, v := c.Seek(seqKey(sid, from)); len(k) == 8 && binary.BigEndian.Uint32(k) == sid; k, v = c.Next() {
		seq := binary.BigEndian.Uint32(k[4:])
		if seq >= to || (n > 0 && len(out) == n) {
			break
		}
		m, err := decodeMsgRec(v)
		if err != nil {
			return nil, fmt.Errorf("message %d does not decode: %w", seq, err)
		}
		out = append(out, storedMessage{seq: seq, msgRec: m})
	}
	if len(out) == 0 {
		return out, nil
	}
	i := 0
	for e, err := range textsTx(tx, sid, out[0].seq, out[len(out)-1].seq+1) {
		if err != nil {
			return nil, err
		}
		for i < len(out) && out[i].seq < e.seq {
			i++
		}
		if i < len(out) && out[i].seq == e.seq {
			out[i].Text, out[i].hasText = e.text, true
		}
	}
	return out, nil
}

// text reads the stored text of one message.
func (s *sessionStore) text(sid, seq uint32) string {
	var t string
	s.db.View(func(tx *bolt.Tx) error {
		t, _, _ = textTx(tx, &s.blocks, sid, seq)
		return nil
	})
	return t
}

// hit reads what a search result shows of message seq of sid: its
// record and its text (the columns hold neither its id nor its exact
// timestamp).
func (s *sessionStore) hit(sid, seq uint32) (msgRec, string, error) {
	var m msgRec
	var text string
	err := s.db.View(func(tx *bolt.Tx) error {
		var v []byte
		if b := tx.Bucket(sbMessages); b != nil {
			v = b.Get(seqKey(sid, seq))
		}
		if v == nil {
			return fmt.Errorf("message %s is not in the state store", docID(sid, seq))
		}
		var err error
		if m, err = decodeMsgRec(v); err != nil {
			return fmt.Errorf("message %s does not decode: %w", docID(sid, seq), err)
		}
		text, _, _ = textTx(tx, &s.blocks, sid, seq)
		return nil
	})
	return m, text, err
}

// firstSeqWithID is the first message of sid in seq order, among those
// live says are, whose id is id.
func (s *sessionStore) firstSeqWithID(sid uint32, id string, live func(seq uint32) bool) (uint32, bool, error) {
	var seq uint32
	found := false
	err := s.db.View(func(tx *bolt.Tx) error {
		mb := tx.Bucket(sbMessages)
		if mb == nil {
			return nil
		}
		c := mb.Cursor()
		for k, v := c.Seek(sidKey(sid)); len(k) == 8 && binary.BigEndian.Uint32(k) == sid; k, v = c.Next() {
			at := binary.BigEndian.Uint32(k[4:])
			if !live(at) {
				continue
			}
			m, err := decodeMsgRec(v)
			if err != nil {
				return fmt.Errorf("message %d does not decode: %w", at, err)
			}
			if m.ID == id {
				seq, found = at, true
				return nil
			}
		}
		return nil
	})
	return seq, found, err
}

// seqOf finds the sequence number of a message id within a session.
func (s *sessionStore) seqOf(sid uint32, id string) (uint32, bool) {
	var seq uint32
	ok := false
	s.db.View(func(tx *bolt.Tx) error {
		if b := tx.Bucket(sbIDs); b != nil {
			if v := b.Get(idKey(sid, id)); len(v) == 4 {
				seq, ok = binary.BigEndian.Uint32(v), true
			}
		}
		return nil
	})
	return seq, ok
}

func (s *sessionStore) markPending(p map[uint32]uint32) error {
	return s.db.Update(func(tx *bolt.Tx) error {
		for sid, top := range p {
			v := make([]byte, 4)
			if old := store.PendingMark(tx, sidKey(sid)); len(old) == 4 {
				top = max(top, binary.BigEndian.Uint32(old))
			}
			binary.BigEndian.PutUint32(v, top)
			if err := store.MarkPending(tx, sidKey(sid), v); err != nil {
				return err
			}
		}
		return nil
	})
}

func (s *sessionStore) pending() (map[uint32]uint32, error) {
	out := map[uint32]uint32{}
	err := s.db.View(func(tx *bolt.Tx) error {
		return store.ForEachPending(tx, func(k, v []byte) error {
			if len(k) == 4 && len(v) == 4 {
				out[binary.BigEndian.Uint32(k)] = binary.BigEndian.Uint32(v)
			}
			return nil
		})
	})
	return out, err
}

// dropSessionTx deletes everything of sid but its pending mark.
func dropSessionTx(tx *bolt.Tx, sid uint32) error {
	if err := tx.Bucket(sbSessions).Delete(sidKey(sid)); err != nil {
		return err
	}
	prefix := sidKey(sid)
	for _, name := range [][]byte{sbMessages, sbTexts, sbTextBlocks, sbIDs, sbVectors} {
		b := tx.Bucket(name)
		if b == nil {
			continue
		}
		c := b.Cursor()
		var keys [][]byte
		for k, _ := c.Seek(prefix); len(k) >= 4 && string(k[:4]) == string(prefix); k, _ = c.Next() {
			keys = append(keys, append([]byte(nil), k...))
		}
		for _, k := range keys {
			if err := b.Delete(k); err != nil {
				return err
			}
		}
	}
	return nil
}

// sessionWrite is one session's part of a committed batch.
type sessionWrite struct {
	rec     *sessionRec // nil: the session is gone
	reset   bool        // drop its messages before adding these
	msgs    []pendingMsg
	vectors [][]float32 // one per msgs entry; nil where there is none
}

// pendingMsg is a message waiting for its batch.
type pendingMsg struct {
	seq  uint32
	rec  msgRec
	text string
	doc  *fulltext.Doc // its full-text document, pre-analysed
}

// commit writes a batch and clears its pending marks in one transaction.
func (s *sessionStore) commit(writes []sessionWrite, sids []uint32, skips map[string][]store.Skip) error {
	return s.db.Update(func(tx *bolt.Tx) error {
		sb, ib := tx.Bucket(sbSessions), tx.Bucket(sbIDs)
		mb, vb := seqBuckets(tx)
		for i, w := range writes {
			sid := sids[i]
			if w.rec == nil || w.reset {
				if err := dropSessionTx(tx, sid); err != nil {
					return err
				}
			}
			if w.rec == nil {
				continue
			}
			j, err := json.Marshal(w.rec)
			if err != nil {
				return err
			}
			if err := sb.Put(sidKey(sid), j); err != nil {
				return err
			}
			texts := make([]textEntry, 0, len(w.msgs))
			// The records and sequence numbers of the session's messages
			// are cut from one buffer: bbolt keeps what Put is given until
			// the commit, and a buffer that grows leaves the slices cut
			// before on the array they were cut from.
			var recs []byte
			for k, m := range w.msgs {
				key := seqKey(sid, m.seq)
				n := len(recs)
				if recs, err = appendMsgRec(recs, m.rec); err != nil {
					return err
				}
				j := recs[n:len(recs):len(recs)]
				recs = binary.BigEndian.AppendUint32(recs, m.seq)
				seq := recs[len(recs)-4 : len(recs) : len(recs)]
				if err := errors.Join(mb.Put(key, j), ib.Put(idKey(sid, m.rec.ID), seq)); err != nil {
					return err
				}
				texts = append(texts, textEntry{seq: m.seq, text: m.text})
				if c, ok := vectors.Quantize(w.vectors[k]); ok {
					if err := vb.Put(key, vectors.EncodeCode(c)); err != nil {
						return err
					}
				} else if err := vb.Delete(key); err != nil {
					return err
				}
			}
			if err := putTextsTx(tx, sid, inSeqOrder(texts)); err != nil {
				return err
			}
		}
		if err := clearPendingTx(tx, sids); err != nil {
			return err
		}
		kb := tx.Bucket(sbSkips)
		for k, sk := range skips {
			j, err := json.Marshal(sk)
			if err != nil {
				return err
			}
			if err := kb.Put([]byte(k), j); err != nil {
				return err
			}
		}
		return nil
	})
}

// clearPending removes the pending marks of sids.
func (s *sessionStore) clearPending(sids []uint32) error {
	return s.db.Update(func(tx *bolt.Tx) error { return clearPendingTx(tx, sids) })
}

func clearPendingTx(tx *bolt.Tx, sids []uint32) error {
	for _, sid := range sids {
		if err := store.ClearPending(tx, sidKey(sid)); err != nil {
			return err
		}
	}
	return nil
}

// forEachText calls fn with the stored text of every message of sids (nil:
// of every session), in key order.
func (s *sessionStore) forEachText(sids []uint32, fn func(sid, seq uint32, text string) error) error {
	return s.db.View(func(tx *bolt.Tx) error {
		if sids == nil {
			sids = textSIDs(tx)
		}
		for _, sid := range sids {
			for e, err := range textsTx(tx, sid, 0, math.MaxUint32) {
				if err == nil {
					err = fn(sid, e.seq, e.text)
				}
				if err != nil {
					return err
				}
			}
		}
		return nil
	})
}

// textSIDs lists, in order, every session with a stored text.
func textSIDs(tx *bolt.Tx) []uint32 {
	seen := map[uint32]bool{}
	for _, name := range [][]byte{sbTextBlocks, sbTexts} {
		b := tx.Bucket(name)
		if b == nil {
			continue
		}
		c := b.Cursor()
		for k, _ := c.First(); k != nil; {
			if len(k) != 8 {
				k, _ = c.Next()
				continue
			}
			sid := binary.BigEndian.Uint32(k)
			seen[sid] = true
			if sid == math.MaxUint32 {
				break
			}
			k, _ = c.Seek(sidKey(sid + 1))
		}
	}
	out := make([]uint32, 0, len(seen))
	for sid := range seen {
		out = append(out, sid)
	}
	slices.Sort(out)
	return out
}

// inSeqOrder sorts es by seq, keeping the last of equal seqs (the later
// write).
func inSeqOrder(es []textEntry) []textEntry {
	slices.SortStableFunc(es, func(a, b textEntry) int { return cmp.Compare(a.seq, b.seq) })
	out := es[:0]
	for i, e := range es {
		if i+1 < len(es) && es[i+1].seq == e.seq {
			continue
		}
		out = append(out, e)
	}
	return out
}

// resetLive forgets every session but the archived ones (all of them when
// keepArchived is false), and every pending mark and skip.
func (s *sessionStore) resetLive(keepArchived bool) error {
	if !keepArchived {
		return s.resetAll()
	}
	return s.db.Update(func(tx *bolt.Tx) error {
		var drop []uint32
		err := tx.Bucket(sbSessions).ForEach(func(k, v []byte) error {
			var r sessionRec
			if len(k) == 4 && (json.Unmarshal(v, &r) != nil || !r.archived()) {
				drop = append(drop, binary.BigEndian.Uint32(k))
			}
			return nil
		})
		if err != nil {
			return err
		}
		for _, sid := range drop {
			if err := dropSessionTx(tx, sid); err != nil {
				return err
			}
		}
		return store.Recreate(tx, store.BucketPending, sbSkips)
	})
}

// resetAll forgets every session, message and vector.
func (s *sessionStore) resetAll() error {
	return s.db.Update(func(tx *bolt.Tx) error { return store.Recreate(tx, rebuiltBuckets...) })
}

// metaVectorForm records that every stored vector is a vectors.Code
// (vectorFormCode). Stores written before hold float32s (vectors.Encode):
// readers take either form (vectors.DecodeCode), and a writer's open
// converts them (convertVectors).
const (
	metaVectorForm = "vectorForm"
	vectorFormCode = "code8"
)

// convertBatch is how many vectors one transaction of convertVectors
// rewrites: bounded, whatever the store holds.
const convertBatch = 20_000

// convertVectors rewrites every float32 vector of dim dimensions as a
// code, convertBatch at a time, then records the form; it returns how
// many it rewrote. A crash in between leaves vectors of both forms,
// which every reader takes, and the next writer's open goes on.
func (s *sessionStore) convertVectors(dim int) (int, error) {
	n := 0
	for after := []byte(nil); ; {
		var done bool
		err := s.db.Update(func(tx *bolt.Tx) error {
			_, vb := seqBuckets(tx)
			type conv struct{ k, v []byte }
			var batch []conv
			c := vb.Cursor()
			k, v := c.First()
			if after != nil {
				if k, v = c.Seek(after); k != nil && bytes.Equal(k, after) {
					k, v = c.Next()
				}
			}
			for ; k != nil && len(batch) < convertBatch; k, v = c.Next() {
				after = append(after[:0], k...)
				if len(v) != 4*dim {
					continue
				}
				code, ok := vectors.DecodeCode(v, dim)
				if !ok {
					continue // no direction: no reader takes it either
				}
				batch = append(batch, conv{append([]byte(nil), k...), vectors.EncodeCode(code)})
			}
			done = k == nil
			for _, b := range batch {
				// Deleted first: a node a Put only shrinks is never
				// merged with its siblings, and would stay ~13 % full.
				if err := errors.Join(vb.Delete(b.k), vb.Put(b.k, b.v)); err != nil {
					return err
				}
			}
			n += len(batch)
			return nil
		})
		if err != nil {
			return n, fmt.Errorf("convert stored vectors to 8 bits: %w", err)
		}
		if done {
			break
		}
	}
	return n, s.setMeta(map[string]string{metaVectorForm: vectorFormCode})
}
