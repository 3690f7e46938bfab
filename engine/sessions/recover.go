package sessions

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"time"

	bolt "go.etcd.io/bbolt"

	"mnemo/engine/store"
)

// Archived history survives a damaged state store. A writer sets aside a
// state store bbolt cannot read (store.OpenOrReplace) and rebuilds the
// index from the transcripts; but an archived session's transcript is gone,
// and the set-aside copy holds its only copy. So a writer that opens the
// index reads every set-aside copy it has not read yet (store.Salvage) and
// brings back into the fresh store each archived session it can read
// whole — its record, messages and texts; the rebuild indexes and embeds
// them again, as it does every archived session — and the forgotten
// transcripts it remembers, so they stay out. What each copy gave back,
// what it could not and why, is kept in the store and shown in status.
//
// A copy is read only once, never while a forget is unfinished (the purge
// removes the copies, which may hold a forgotten session), and not when
// the index mirrors the transcripts (there is no archive to recover).

// sbRecovered: a set-aside copy's file name → its Recovery (JSON).
var sbRecovered = []byte("recovered")

// Recovery is what the archived history of one set-aside copy of a
// damaged sessions state store became.
type Recovery struct {
	SetAside string    `json:"setAside"` // the copy's file name, beside the state store
	At       time.Time `json:"at"`
	// Recovered counts the archived sessions brought back whole, with
	// Messages messages; Lost those the copy holds that could not be read.
	Recovered int `json:"recovered"`
	Messages  int `json:"messages"`
	Lost      int `json:"lost"`
	// Error says why archived history was lost: the copy could not be
	// opened, or not listed whole (then how many sessions it held is not
	// known), or what the first session that could not be read failed on.
	Error string `json:"error,omitempty"`
}

// Summary says in one line what the copy gave back and what was lost.
func (r Recovery) Summary() string {
	var s string
	switch {
	case r.Recovered == 0 && r.Lost == 0 && r.Error != "":
		s = fmt.Sprintf("the archived sessions in %s are lost: %s", r.SetAside, r.Error)
	default:
		s = fmt.Sprintf("%d archived sessions (%d messages) recovered from %s", r.Recovered, r.Messages, r.SetAside)
		if r.Lost > 0 {
			s += fmt.Sprintf(", %d could not be read", r.Lost)
		}
		if r.Error != "" {
			s += ": " + r.Error
		}
	}
	return s
}

// salvagedSession is one archived session read whole from a copy.
type salvagedSession struct {
	rec  sessionRec
	msgs []storedMessage
}

// recoverArchived reads the set-aside copies not read yet into the store,
// and returns what each gave.
func (s *Corpus) recoverArchived() ([]Recovery, error) {
	copies, err := store.SetAsideCopies(filepath.Join(s.dir, store.StateFile))
	if err != nil {
		return nil, fmt.Errorf("list set-aside state stores: %w", err)
	}
	done, err := s.st.recoveries()
	if err != nil {
		return nil, fmt.Errorf("read sessions state store: %w", err)
	}
	var out []Recovery
	for _, c := range copies {
		name := filepath.Base(c)
		if _, ok := done[name]; ok {
			continue
		}
		got, forgotten, rec := salvageArchived(c)
		rec.SetAside, rec.At = name, time.Now().UTC()
		if rec.Recovered, err = s.st.putRecovered(got, forgotten, &rec); err != nil {
			return out, fmt.Errorf("recover archived sessions from %s: %w", name, err)
		}
		out = append(out, rec)
	}
	return out, nil
}

// salvageArchived reads from the copy at path every archived session it
// can read whole, and the forgotten transcripts; rec counts what was lost.
func salvageArchived(path string) (got []salvagedSession, forgotten map[[32]byte]string, rec Recovery) {
	sal, err := store.Salvage(path)
	if err != nil {
		rec.Error = "the copy could not be opened, so its archived sessions are lost: " + err.Error()
		return nil, nil, rec
	}
	defer sal.Close()
	lose := func(err error) {
		rec.Lost++
		if rec.Error == "" {
			rec.Error = err.Error()
		}
	}
	var archived []sessionRec
	listed := sal.View(func(tx *bolt.Tx) error {
		b := tx.Bucket(sbSessions)
		if b == nil {
			return errors.New("it holds no sessions bucket")
		}
		return b.ForEach(func(k, v []byte) error {
			var r sessionRec
			if err := json.Unmarshal(v, &r); err != nil {
				// Archived or not, it cannot be told: counted as lost.
				lose(fmt.Errorf("session record %x does not decode: %w", k, err))
				return nil
			}
			if r.archived() {
				archived = append(archived, r)
			}
			return nil
		})
	})
	for _, r := range archived {
		var msgs []storedMessage
		err := sal.View(func(tx *bolt.Tx) (err error) {
			msgs, err = messagesTx(tx, r.SID)
			return err
		})
		if err != nil {
			lose(fmt.Errorf("archived session %s: %w", r.ID, err))
			continue
		}
		got = append(got, salvagedSession{rec: r, msgs: msgs})
	}
	if listed != nil {
		// What was listed before the damage is recovered; how many more
		// archived sessions the copy held is not known.
		rec.Error = "the copy's session list could not be read whole, so archived sessions past that point are lost: " + listed.Error()
	}
	forgotten = map[[32]byte]string{}
	err = sal.View(func(tx *bolt.Tx) error {
		if b := tx.Bucket(sbForgotten); b != nil {
			return b.ForEach(func(k, v []byte) error {
				if len(k) == 32 {
					forgotten[[32]byte(k)] = string(v)
				}
				return nil
			})
		}
		return nil
	})
	if err != nil && rec.Error == "" {
		rec.Error = "its forgotten transcripts could not be read whole, so a transcript forgotten while still there may be indexed again: " + err.Error()
	}
	return got, forgotten, rec
}

// messagesTx reads every message of sid, with its text, in order.
func messagesTx(tx *bolt.Tx, sid uint32) ([]storedMessage, error) {
	out, err := messagesInTx(tx, sid, 0, math.MaxUint32, 0)
	for _, m := range out {
		if !m.hasText {
			return nil, fmt.Errorf("message %d has no text", m.seq)
		}
	}
	return out, err
}

// putRecovered writes, in one transaction, the salvaged sessions the store
// does not hold yet (same source, path and id) under new numbers, the
// forgotten transcripts, and rec under its copy's name. It returns how
// many sessions it wrote, and sets rec's counts.
func (st *sessionStore) putRecovered(got []salvagedSession, forgotten map[[32]byte]string, rec *Recovery) (int, error) {
	n := 0
	err := st.db.Update(func(tx *bolt.Tx) error {
		sb, ib := tx.Bucket(sbSessions), tx.Bucket(sbIDs)
		mb, _ := seqBuckets(tx)
		held := map[[3]string]bool{}
		next := uint32(1)
		err := sb.ForEach(func(k, v []byte) error {
			var r sessionRec
			if json.Unmarshal(v, &r) == nil {
				held[[3]string{r.Source, r.Path, r.ID}] = true
			}
			if len(k) == 4 {
				next = max(next, binary.BigEndian.Uint32(k)+1)
			}
			return nil
		})
		if err != nil {
			return err
		}
		fb := tx.Bucket(sbForgotten)
		for h, src := range forgotten {
			if err := fb.Put(h[:], []byte(src)); err != nil {
				return err
			}
		}
		n, rec.Messages = 0, 0
		for _, g := range got {
			r := g.rec
			if held[[3]string{r.Source, r.Path, r.ID}] || fb.Get(pathHashSlice(r.Path)) != nil {
				continue
			}
			r.SID = next
			next++
			j, err := json.Marshal(r)
			if err != nil {
				return err
			}
			if err := sb.Put(sidKey(r.SID), j); err != nil {
				return err
			}
			texts := make([]textEntry, 0, len(g.msgs))
			for _, m := range g.msgs {
				key := seqKey(r.SID, m.seq)
				j, err := json.Marshal(m.msgRec)
				if err != nil {
					return err
				}
				seq := make([]byte, 4)
				binary.BigEndian.PutUint32(seq, m.seq)
				if err := errors.Join(mb.Put(key, j), ib.Put(idKey(r.SID, m.ID), seq)); err != nil {
					return err
				}
				texts = append(texts, textEntry{seq: m.seq, text: m.Text})
			}
			if err := putTextsTx(tx, r.SID, inSeqOrder(texts)); err != nil {
				return err
			}
			n++
			rec.Messages += len(g.msgs)
		}
		rec.Recovered = n
		j, err := json.Marshal(rec)
		if err != nil {
			return err
		}
		return tx.Bucket(sbRecovered).Put([]byte(rec.SetAside), j)
	})
	return n, err
}

func pathHashSlice(p string) []byte {
	h := pathHash(p)
	return h[:]
}

// recoveries reads what every set-aside copy read so far gave, by name.
func (st *sessionStore) recoveries() (map[string]Recovery, error) {
	out := map[string]Recovery{}
	err := st.db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket(sbRecovered)
		if b == nil {
			return nil
		}
		return b.ForEach(func(k, v []byte) error {
			var r Recovery
			if json.Unmarshal(v, &r) == nil {
				out[string(k)] = r
			}
			return nil
		})
	})
	return out, err
}
