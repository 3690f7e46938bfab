package sessions

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"mnemo/engine/store"
	"mnemo/engine/transcript"
)

// Scratch is the folder, inside the index folder indexDir, where
// transcript sources that keep many sessions in one file (a database, an
// export) hold their private snapshots and per-session extracts
// (transcript.Options.Scratch).
func Scratch(indexDir string) string { return filepath.Join(indexDir, sessionsDir, "sources") }

// pruneCopies removes from the scratch folder every copy that may keep
// the words of a session no read needs any more: the whole copy of a
// container that is gone once none of its sessions is live (a sync has
// archived them, and the store serves them), the extract of a forgotten
// session, and leftovers of an extraction a crash cut short. Syncs, watcher
// batches that archive, and a forget's purge (on its first run or on the
// open that finishes it) end with it; it runs under syncMu, so no
// extraction is under way.
func (s *Corpus) pruneCopies() error {
	xs, err := transcript.Extracts(Scratch(s.cfg.IndexDir))
	if err != nil {
		return err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	live := map[string]bool{} // containers with a session not archived
	for _, ss := range s.sessions {
		if !ss.archived() {
			live[filepath.Dir(ss.Path)] = true
		}
	}
	var errs []error
	for _, x := range xs {
		fi, statErr := os.Stat(x.Container)
		gone := x.Container == "" || statErr != nil || !fi.Mode().IsRegular()
		if gone && !live[x.Container] {
			errs = append(errs, x.Remove())
			continue
		}
		for _, p := range x.Paths {
			// A gone container is never read again: an extract whose
			// session the store does not hold (forgotten while the
			// container was gone) can only keep words.
			_, forgotten := s.forgotten[pathHash(p)]
			if forgotten || gone && s.byPath[p] == nil {
				errs = append(errs, x.Drop(p))
			}
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("scratch folder: %w", err)
	}
	return nil
}

// TranscriptSource makes one transcript root a Source: the parsers
// of package transcript (which redact every text) behind the seam the
// sessions index reads through.
func TranscriptSource(src transcript.Source, opt transcript.Options) Source {
	return transcriptSource{src: src, opt: opt}
}

type transcriptSource struct {
	src transcript.Source
	opt transcript.Options
}

func (t transcriptSource) Kind() string       { return string(t.src.Kind) }
func (t transcriptSource) Root() string       { return t.src.Root }
func (t transcriptSource) Owns(p string) bool { return t.src.Owns(p, t.opt) }

// Drop removes what the source keeps of a transcript in the index's
// scratch folder (a container session's extract).
func (t transcriptSource) Drop(path string) error { return t.src.Drop(path, t.opt) }

func (t transcriptSource) Discover(ctx context.Context) ([]string, []store.Skip, error) {
	paths, sk, err := t.src.Discover(ctx, t.opt)
	skips := make([]store.Skip, 0, len(sk))
	for _, s := range sk {
		skips = append(skips, store.Skip{Path: s.Path, Reason: s.Reason})
	}
	return paths, skips, err
}

func (t transcriptSource) Read(ctx context.Context, path string, cursor []byte, h TranscriptHandler) (TranscriptRead, error) {
	var prev transcript.Cursor
	if len(cursor) > 0 {
		if err := json.Unmarshal(cursor, &prev); err != nil {
			prev = transcript.Cursor{} // unreadable: read from the start
		}
	}
	res, err := transcript.Read(ctx, t.src, path, prev, t.opt, transcript.Handler{
		Reset: h.Reset,
		Message: func(m transcript.Message) error {
			return h.Message(TranscriptMessage{ID: m.ID, Role: m.Role, Timestamp: m.Timestamp, Text: m.Text})
		},
	})
	if err != nil {
		return TranscriptRead{}, err
	}
	c, err := json.Marshal(res.Cursor)
	if err != nil {
		return TranscriptRead{}, err
	}
	s := res.Session
	return TranscriptRead{
		Session: Info{ID: s.ID, Agent: string(s.Agent), Project: s.Project, ProjectHash: s.ProjectHash,
			Path: s.Path, Summary: s.Summary, Started: s.Started, Ended: s.Ended},
		Cursor: c, Malformed: res.Malformed + res.TooLong, Ignored: res.Ignored, Coverage: res.Coverage,
	}, nil
}
