package sessions

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"

	"mnemo/engine/fulltext"
	"mnemo/engine/store"
	"mnemo/engine/transcript"
)

// Forgetting a session removes every trace of it from the index folder, not
// only from answers. Deleting a document leaves its words where they were
// written: a scorch segment keeps a deleted document's terms until the
// segment is rewritten, and bbolt keeps the bytes of freed pages. So a
// forget deletes the sessions in one state-store transaction that also sets
// a purge mark, then rebuilds the full-text index from the state store into
// a fresh folder and swaps it in, compacts the state store into a fresh file
// and swaps it in, removes set-aside copies of a damaged state store and
// the scratch folder's copies of the sessions (pruneCopies), and clears
// the mark. A crash at any point leaves the mark set and the other
// sessions in the store; the next writer to open the index runs the purge
// again from there. The vector store lives in memory (its vectors are kept
// in the state store), so it holds nothing once the sessions are dropped.

// ErrNothingToForget: a forget named no session and no filter.
var ErrNothingToForget = errors.New("name the sessions to forget: session ids, or a project, sourceAgent, before or archived filter")

// metaPurge is the meta key a forget sets until every file is rewritten.
const metaPurge = "purge"

// ForgetQuery selects sessions to forget: those named by IDs (a session
// id or a transcript path; every session with that id), or, without IDs,
// every session matching all the filters given.
type ForgetQuery struct {
	IDs     []string  `json:"sessionIds,omitempty"`
	Project string    `json:"project,omitempty"`     // as Query.Project
	Agent   string    `json:"sourceAgent,omitempty"` // as Query.Agent
	Before  time.Time `json:"before,omitzero"`       // sessions whose last message is before this
	// Archived, if set, keeps only archived sessions (true) or only live ones (false).
	Archived *bool `json:"archived,omitempty"`
}

// ForgetReport says what a forget removed.
type ForgetReport struct {
	Sessions []Forgotten `json:"sessions"`
	Messages int         `json:"messages"`
	// Removed lists files under the index folder deleted because they may
	// have held a forgotten session (set-aside copies of a damaged store).
	Removed []string      `json:"removedFiles,omitempty"`
	Total   time.Duration `json:"totalNs"`
}

// Forgotten is one session a forget removed.
type Forgotten struct {
	SessionID   string `json:"sessionId"`
	SourceAgent string `json:"sourceAgent"`
	Project     string `json:"project"`
	Messages    int    `json:"messages"`
	Archived    bool   `json:"archived,omitempty"`
	// Left out of later syncs: its transcript is still there, and forgetting
	// it means it is not read again (status counts it as forgotten).
	TranscriptKept bool `json:"transcriptKept,omitempty"`
}

// pathHash is how the store remembers a forgotten transcript: by the
// SHA-256 of its path, so no trace of the path itself remains.
func pathHash(p string) [32]byte { return sha256.Sum256([]byte(p)) }

// Forget removes the sessions q selects from the index, with every trace
// of them in the index folder, and leaves their transcripts (if still
// there) out of later syncs. Unknown ids are an error and nothing is
// forgotten.
func (s *Corpus) Forget(ctx context.Context, q ForgetQuery) (ForgetReport, error) {
	if s.cfg.ReadOnly {
		return ForgetReport{}, store.ErrReadOnly
	}
	start := time.Now()
	s.syncMu.Lock()
	defer s.syncMu.Unlock()
	rep := ForgetReport{Sessions: []Forgotten{}}
	sel, err := s.selectForget(q)
	if err != nil {
		return rep, err
	}
	if len(sel) == 0 {
		rep.Total = time.Since(start)
		return rep, nil
	}
	forgotten := map[[32]byte]string{}
	s.mu.RLock()
	for _, ss := range sel {
		_, statErr := os.Stat(ss.Path)
		kept := statErr == nil || transcript.Contained(ss.Path)
		if kept {
			forgotten[pathHash(ss.Path)] = ss.Source
		}
		rep.Sessions = append(rep.Sessions, Forgotten{SessionID: ss.ID, SourceAgent: ss.Agent, Project: ss.Project,
			Messages: ss.count, Archived: ss.archived(), TranscriptKept: kept})
		rep.Messages += ss.count
	}
	s.mu.RUnlock()
	mark := "forget started " + start.UTC().Format(time.RFC3339)
	if err := s.st.forget(sel, forgotten, mark); err != nil {
		return rep, fmt.Errorf("forget sessions: %w", err)
	}
	s.mu.Lock()
	s.purging = mark
	s.mu.Unlock()
	s.dropSessions(sel, forgotten)
	if rep.Removed, err = s.purge(ctx); err != nil {
		return rep, fmt.Errorf("forget sessions: %w (the next open finishes it)", err)
	}
	rep.Total = time.Since(start)
	return rep, nil
}

// dropper is a Source that keeps copies of what it reads under the
// index folder (a container session's extract, in the scratch folder):
// Drop removes its copy of one transcript.
type dropper interface{ Drop(path string) error }

// dropCopies removes what the source keyed key keeps of the transcript at
// path: a forgotten session leaves no copy there either. A sync calls it
// for every forgotten transcript it lists, since a container read again
// extracts every session it holds; a forget's purge removes the copies
// through pruneCopies.
func (s *Corpus) dropCopies(key, path string) error {
	for _, src := range s.cfg.Sources {
		if d, ok := src.(dropper); ok && sourceKey(src.Kind(), src.Root()) == key {
			return d.Drop(path)
		}
	}
	return nil
}

// selectForget resolves q to sessions.
func (s *Corpus) selectForget(q ForgetQuery) ([]*session, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var out []*session
	if len(q.IDs) > 0 {
		seen := map[uint32]bool{}
		var unknown []string
		for _, id := range q.IDs {
			id = strings.TrimSpace(id)
			n := 0
			for _, ss := range s.sessions {
				if id != "" && (ss.ID == id || ss.Path == id) {
					n++
					if !seen[ss.SID] {
						seen[ss.SID] = true
						out = append(out, ss)
					}
				}
			}
			if n == 0 {
				unknown = append(unknown, fmt.Sprintf("%q", id))
			}
		}
		if len(unknown) > 0 {
			return nil, fmt.Errorf("%s (nothing forgotten): %w", strings.Join(unknown, ", "), ErrNoSession)
		}
	} else {
		if q.Project == "" && q.Agent == "" && q.Before.IsZero() && q.Archived == nil {
			return nil, ErrNothingToForget
		}
		sc := newSessionScope(Query{Project: strings.TrimSpace(q.Project), Agent: strings.ToLower(strings.TrimSpace(q.Agent)), Archived: q.Archived})
		for _, ss := range s.sessions {
			last := ss.Ended
			if last.IsZero() {
				last = ss.Started
			}
			if sc.session(ss) && (q.Before.IsZero() || (!last.IsZero() && last.Before(q.Before))) {
				out = append(out, ss)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].SID < out[j].SID })
	return out, nil
}

// dropSessions removes sel from the full-text index and from memory; the
// store has already dropped them.
func (s *Corpus) dropSessions(sel []*session, forgotten map[[32]byte]string) {
	fb := s.ft.NewBatch()
	for _, ss := range sel {
		ss.each(func(seq uint32, _ msgNum) { fb.Delete(docID(ss.SID, seq)) })
	}
	// A failure here is repaired by the purge, which rebuilds the index.
	s.ft.Batch(fb)
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, ss := range sel {
		s.dropMessages(ss)
		delete(s.sessions, ss.SID)
		if s.byPath[ss.Path] == ss {
			delete(s.byPath, ss.Path)
		}
	}
	for h, src := range forgotten {
		s.forgotten[h] = src
	}
}

// purge rewrites every file of the sessions index that may hold the words
// of a dropped session, and clears the purge mark.
func (s *Corpus) purge(ctx context.Context) ([]string, error) {
	if err := s.rebuildFulltext(ctx); err != nil {
		return nil, err
	}
	if err := s.compactStore(); err != nil {
		return nil, err
	}
	removed, err := s.removeSetAside()
	if err != nil {
		return removed, err
	}
	if err := s.pruneCopies(); err != nil {
		return removed, err
	}
	if err := s.st.setMeta(map[string]string{metaPurge: ""}); err != nil {
		return removed, err
	}
	s.mu.Lock()
	s.purging = ""
	s.mu.Unlock()
	return removed, nil
}

// rebuildFulltext builds a full-text index of every stored message of a
// known session in a fresh folder and swaps it in for the current one.
func (s *Corpus) rebuildFulltext(ctx context.Context) error {
	cur := filepath.Join(s.dir, fulltext.Dir)
	tmp, old := cur+".purge", cur+".old"
	if err := errors.Join(os.RemoveAll(tmp), os.RemoveAll(old)); err != nil {
		return fmt.Errorf("remove a purge's leftovers: %w", err)
	}
	ft, err := fulltext.Open(tmp, true, fulltext.DurableBatches, nil)
	if err != nil {
		return err
	}
	s.mu.RLock()
	known := make(map[uint32]bool, len(s.sessions))
	for sid := range s.sessions {
		known[sid] = true
	}
	s.mu.RUnlock()
	if err := s.reindexInto(ctx, ft, nil, known); err != nil {
		ft.Close()
		return fmt.Errorf("rebuild the sessions full-text index: %w", err)
	}
	if err := ft.Close(); err != nil {
		return fmt.Errorf("rebuild the sessions full-text index: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ft.Close()
	if err := os.Rename(cur, old); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("swap in the rebuilt full-text index: %w", err)
	}
	if err := os.Rename(tmp, cur); err != nil {
		return fmt.Errorf("swap in the rebuilt full-text index: %w", err)
	}
	syncDir(s.dir)
	if s.ft, err = fulltext.Open(cur, true, fulltext.DurableBatches, nil); err != nil {
		return err
	}
	s.damage.Clear()
	return os.RemoveAll(old)
}

// fulltextPath is the full-text index to open: its folder, or — when a
// forget's swap was cut between its two renames, the old index moved aside
// and the rebuilt one not yet in its place — the rebuilt one, complete
// since the swap begins only once it is closed. A writer finishes the swap
// (and then the purge runs again, from the purge mark); a reader, which
// must change nothing, opens it where it is.
func (s *Corpus) fulltextPath() (string, error) {
	cur := filepath.Join(s.dir, fulltext.Dir)
	tmp, old := cur+".purge", cur+".old"
	if exists(cur) || !exists(old) || !exists(tmp) {
		return cur, nil
	}
	if s.cfg.ReadOnly {
		return tmp, nil
	}
	if err := os.Rename(tmp, cur); err != nil {
		return "", fmt.Errorf("finish swapping in the rebuilt full-text index: %w", err)
	}
	syncDir(s.dir)
	return cur, nil
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

// compactStore copies the live contents of the state store into a fresh
// file and renames it over the store, so no freed page keeps old bytes.
func (s *Corpus) compactStore() error {
	path := filepath.Join(s.dir, store.StateFile)
	tmp := path + ".purge"
	os.Remove(tmp)
	dst, err := bolt.Open(tmp, 0o600, &bolt.Options{Timeout: 500 * time.Millisecond})
	if err != nil {
		return fmt.Errorf("compact the sessions state store: %w", err)
	}
	s.mu.RLock()
	err = bolt.Compact(dst, s.st.db, 64<<20)
	s.mu.RUnlock()
	if err == nil {
		err = dst.Sync()
	}
	if cerr := dst.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("compact the sessions state store: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.st.close(); err != nil {
		return fmt.Errorf("compact the sessions state store: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("swap in the compacted state store: %w", err)
	}
	syncDir(s.dir)
	db, err := store.Open(path, sessionStoreOptions(false))
	if err != nil {
		return fmt.Errorf("reopen the compacted state store: %w", err)
	}
	s.st = newSessionStore(db)
	return nil
}

// removeSetAside deletes set-aside copies of a damaged state store: they
// may hold a forgotten session, and the user asked for every trace gone.
func (s *Corpus) removeSetAside() ([]string, error) {
	aside, err := store.SetAsideCopies(filepath.Join(s.dir, store.StateFile))
	if err != nil {
		return nil, err
	}
	var removed []string
	for _, p := range aside {
		if err := os.Remove(p); err != nil {
			return removed, fmt.Errorf("remove %s: %w", p, err)
		}
		removed = append(removed, p)
	}
	return removed, nil
}

// syncDir makes renames in dir durable. Failure is not fatal: the rename
// happened, and a crash that loses it leaves the purge mark to redo it.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}

// reindexInto puts into ft every message the state store holds for sids
// (nil: every session), analysed afresh; with known, only those sessions.
func (s *Corpus) reindexInto(ctx context.Context, ft *fulltext.Index, sids []uint32, known map[uint32]bool) error {
	a := ft.NewAnalyser()
	fb := ft.NewBatch()
	n := 0
	err := s.st.forEachText(sids, func(sid, seq uint32, text string) error {
		if known != nil && !known[sid] {
			return nil
		}
		if err := fb.IndexAdvanced(fulltext.NewDoc(docID(sid, seq), a.Message(text))); err != nil {
			return err
		}
		if n++; n%s.batchMsgs == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
			if err := ft.Batch(fb); err != nil {
				return err
			}
			fb, a = ft.NewBatch(), ft.NewAnalyser()
		}
		return nil
	})
	if err != nil {
		return err
	}
	return ft.Batch(fb)
}

// forget drops sel from the store, remembers the forgotten transcripts and
// sets the purge mark, in one transaction.
func (st *sessionStore) forget(sel []*session, forgotten map[[32]byte]string, mark string) error {
	return st.db.Update(func(tx *bolt.Tx) error {
		for _, ss := range sel {
			if err := dropSessionTx(tx, ss.SID); err != nil {
				return err
			}
			if err := store.ClearPending(tx, sidKey(ss.SID)); err != nil {
				return err
			}
		}
		fb := tx.Bucket(sbForgotten)
		for h, src := range forgotten {
			if err := fb.Put(h[:], []byte(src)); err != nil {
				return err
			}
		}
		return tx.Bucket(store.BucketMeta).Put([]byte(metaPurge), []byte(mark))
	})
}

// loadForgotten reads the forgotten transcripts' path hashes and sources.
func (st *sessionStore) loadForgotten() (map[[32]byte]string, error) {
	out := map[[32]byte]string{}
	err := st.db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket(sbForgotten)
		if b == nil {
			return nil
		}
		return b.ForEach(func(k, v []byte) error {
			if len(k) == 32 {
				out[[32]byte(k)] = string(v)
			}
			return nil
		})
	})
	return out, err
}
