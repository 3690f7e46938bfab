package store

import (
	"cmp"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

var now0 = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

func opts(readOnly bool) Options {
	return Options{What: "test store", ReadOnly: readOnly, Buckets: [][]byte{[]byte("things")}}
}

// TestOpenOrReplace: a file bbolt cannot read is set aside and replaced
// for a writer, refused (ErrCorrupt) for a reader, and a good one is
// opened as it is.
func TestOpenOrReplace(t *testing.T) {
	for _, tc := range []struct {
		name     string
		content  []byte // nil: a fresh store
		readOnly bool
		wantErr  error
		replaced bool
	}{
		{name: "fresh writer"},
		{name: "garbage, writer", content: []byte(strings.Repeat("not bbolt ", 1000)), replaced: true},
		{name: "garbage, reader", content: []byte(strings.Repeat("not bbolt ", 1000)), readOnly: true, wantErr: ErrCorrupt},
		{name: "too short, writer", content: []byte("x"), replaced: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), StateFile)
			if tc.content != nil {
				if err := os.WriteFile(path, tc.content, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			db, replaced, err := OpenOrReplace(path, opts(tc.readOnly), func() time.Time { return now0 })
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("err %v, want %v", err, tc.wantErr)
			}
			if err != nil {
				return
			}
			defer db.Close()
			if got := replaced != ""; got != tc.replaced {
				t.Fatalf("replaced %q, want replaced %v", replaced, tc.replaced)
			}
			if tc.replaced {
				aside := path + ".corrupt-20250601T120000.000Z"
				if _, err := os.Stat(aside); err != nil || !strings.Contains(replaced, filepath.Base(aside)) {
					t.Errorf("set aside: %v; replaced %q, want it to name %s", err, replaced, filepath.Base(aside))
				}
			}
			db.View(func(tx *bolt.Tx) error {
				for _, b := range []string{"meta", "pending", "things"} {
					if tx.Bucket([]byte(b)) == nil {
						t.Errorf("bucket %s missing", b)
					}
				}
				return nil
			})
		})
	}
}

// TestOpenCorpus: a reader of a folder with no state store gets the
// corpus's not-ready error and no stages run; a writer gets the folder
// made, its PID written and the stages run on the store (told what a
// damaged one was set aside as); stages that fail close the corpus.
func TestOpenCorpus(t *testing.T) {
	notReady := errors.New("corpus index is not ready")
	for _, tc := range []struct {
		name      string
		readOnly  bool
		garbage   bool  // a state store bbolt cannot read is there
		stagesErr error // what the stages answer
		wantErr   error
	}{
		{name: "reader, no store", readOnly: true, wantErr: notReady},
		{name: "writer, no folder"},
		{name: "writer, damaged store", garbage: true},
		{name: "writer, stages fail", stagesErr: errors.New("stage failed")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "index", "corpus")
			if tc.garbage {
				os.MkdirAll(dir, 0o755)
				if err := os.WriteFile(filepath.Join(dir, StateFile), []byte(strings.Repeat("not bbolt ", 1000)), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			o := opts(tc.readOnly)
			o.NotReady = notReady
			var db *bolt.DB
			var replaced string
			staged, closed := false, false
			o.Rebuild = "rebuilding it all"
			err := OpenCorpus(t.Context(), dir, o, func() time.Time { return now0 }, func(_ context.Context, d *bolt.DB, r string) error {
				db, replaced, staged = d, r, true
				return tc.stagesErr
			}, func() error {
				closed = true
				return db.Close()
			})
			want := cmp.Or(tc.wantErr, tc.stagesErr)
			if !errors.Is(err, want) || (want == nil) != (err == nil) {
				t.Fatalf("err %v, want %v", err, want)
			}
			if staged != (tc.wantErr == nil) || closed != (tc.stagesErr != nil) {
				t.Errorf("stages ran %v, corpus closed %v", staged, closed)
			}
			if err != nil {
				return
			}
			defer db.Close()
			if tc.garbage != strings.HasSuffix(replaced, ", rebuilding it all") || tc.garbage != strings.Contains(replaced, "set aside as") {
				t.Errorf("rebuild %q with a damaged store %v", replaced, tc.garbage)
			}
			if _, err := os.Stat(filepath.Join(dir, PIDFile)); err != nil {
				t.Errorf("the writer's PID: %v", err)
			}
		})
	}
}

// TestNewerSchemaRefused: a writer refuses a store of a newer schema
// before writing to it (the corpus's buckets are not created).
func TestNewerSchemaRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), StateFile)
	db, err := Open(path, Options{What: "test store"})
	if err != nil {
		t.Fatal(err)
	}
	SetMeta(db, map[string]string{"schema": "99"})
	db.Close()
	if _, err := Open(path, opts(false)); !errors.Is(err, ErrIndexIncompatible) {
		t.Fatalf("open: %v, want ErrIndexIncompatible", err)
	}
	db, err = Open(path, opts(true))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.View(func(tx *bolt.Tx) error {
		if tx.Bucket([]byte("things")) != nil {
			t.Error("the refused writer created a bucket")
		}
		return nil
	})
	if v, older := OlderSchema("5"); !older || v != 5 {
		t.Errorf("OlderSchema(5) = %d, %v", v, older)
	}
	for _, s := range []string{"", "0", "6"} {
		if _, older := OlderSchema(s); older {
			t.Errorf("OlderSchema(%q) is older", s)
		}
	}
}

// TestMarks: the unfinished mark names its sync and start; pending marks
// are set, read and cleared by key.
func TestMarks(t *testing.T) {
	db, err := Open(filepath.Join(t.TempDir(), StateFile), opts(false))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	v, err := MarkUnfinished(db, "sessions sync", now0)
	if err != nil {
		t.Fatal(err)
	}
	if want := "sessions sync started 2025-06-01T12:00:00Z has not completed"; v != want || Meta(db, MetaUnfinished) != want {
		t.Errorf("mark %q, stored %q, want %q", v, Meta(db, MetaUnfinished), want)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		return errors.Join(MarkPending(tx, []byte("a"), []byte("1")), MarkPending(tx, []byte("b"), nil), ClearPending(tx, []byte("a")))
	})
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	db.View(func(tx *bolt.Tx) error {
		return ForEachPending(tx, func(k, _ []byte) error { keys = append(keys, string(k)); return nil })
	})
	if strings.Join(keys, ",") != "b" {
		t.Errorf("pending %v, want [b]", keys)
	}
}

// TestInUseNamesTheWriter: a second open while a writer holds the store
// fails with ErrInUse naming the PID the writer recorded.
func TestInUseNamesTheWriter(t *testing.T) {
	dir := t.TempDir()
	db, err := Open(filepath.Join(dir, StateFile), opts(false))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	WritePID(dir)
	_, err = Open(filepath.Join(dir, StateFile), opts(true))
	if !errors.Is(err, ErrInUse) || !strings.Contains(err.Error(), "PID ") {
		t.Fatalf("second open: %v, want ErrInUse naming a PID", err)
	}
}

func TestDamageMark(t *testing.T) {
	var d DamageMark
	d.Note(errors.New("not damage"))
	if d.Get() != nil {
		t.Fatal("kept an error that is not damage")
	}
	first := Damaged("segment %s fails its checksum", "a.zap")
	d.Note(first)
	d.Note(Damaged("later"))
	if d.Get() != first || !errors.Is(d.Get(), ErrIndexDamaged) {
		t.Fatalf("kept %v, want the first damage", d.Get())
	}
	if got := DamageDetail(first); got != "full-text index was damaged: segment a.zap fails its checksum" {
		t.Errorf("detail %q", got)
	}
	d.Clear()
	if d.Get() != nil {
		t.Error("Clear kept the damage")
	}
}
