package sessions

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"mnemo/engine/rank"
	"mnemo/engine/store"
	"mnemo/engine/vectors"
)

// decodeMsgRec reads every record as json.Unmarshal does, on its fast
// path (what json.Marshal writes) and off it.
func TestDecodeMsgRec(t *testing.T) {
	at := time.Date(2025, 5, 14, 23, 18, 18, 989_000_000, time.UTC)
	marshal := func(m msgRec) string {
		j, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		return string(j)
	}
	tests := []struct {
		name string
		raw  string
		fast bool // read without encoding/json
	}{
		{"as written", marshal(msgRec{ID: "b31c6fc9-c01a-41f6", Role: "user", Time: at, Lens: [4]int32{12, 0, 3, 2147483647}}), true},
		{"no time", marshal(msgRec{ID: "m1", Role: "assistant"}), true},
		{"empty id", marshal(msgRec{Role: "user", Time: at}), true},
		{"escaped id", marshal(msgRec{ID: `a"b\c<d>é`, Role: "user", Time: at}), false},
		{"offset time", marshal(msgRec{ID: "m2", Role: "user", Time: at.In(time.FixedZone("", 2*3600))}), true},
		{"fields reordered", `{"r":"user","i":"m3","t":"2025-05-14T23:18:18Z","l":[1,2,3,4]}`, false},
		{"field missing", `{"i":"m4","r":"user","l":[1,2,3,4]}`, false},
		{"spaces", `{"i": "m5", "r": "user", "t": "2025-05-14T23:18:18Z", "l": [1, 2, 3, 4]}`, false},
		{"short lens", `{"i":"m6","r":"user","t":"2025-05-14T23:18:18Z","l":[1,2,3]}`, false},
		{"trailing field", `{"i":"m7","r":"user","t":"2025-05-14T23:18:18Z","l":[1,2,3,4],"x":1}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var want msgRec
			wantErr := json.Unmarshal([]byte(tt.raw), &want)
			got, err := decodeMsgRec([]byte(tt.raw))
			if (err != nil) != (wantErr != nil) || !reflect.DeepEqual(got, want) {
				t.Errorf("decodeMsgRec(%s) = %+v, %v; json.Unmarshal %+v, %v", tt.raw, got, err, want, wantErr)
			}
			if _, ok := scanMsgRec([]byte(tt.raw)); ok != tt.fast {
				t.Errorf("fast path %v, want %v", ok, tt.fast)
			}
		})
	}
	if _, err := decodeMsgRec([]byte(`{"i":`)); err == nil {
		t.Error("a cut record decoded without error")
	}
}

// storeFloatVectors rewrites every stored vector of s in the float32 form
// stores kept before 8-bit codes, and forgets the form's mark: the layout
// of an older store.
func storeFloatVectors(t *testing.T, s *Corpus) {
	t.Helper()
	err := s.st.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(sbVectors)
		var keys, vals [][]byte
		err := b.ForEach(func(k, v []byte) error {
			c, ok := vectors.DecodeCode(v, s.dim)
			if !ok {
				return fmt.Errorf("vector %x does not decode", k)
			}
			keys, vals = append(keys, append([]byte(nil), k...)), append(vals, vectors.Encode(c.Float()))
			return nil
		})
		for i := range keys {
			err = errors.Join(err, b.Put(keys[i], vals[i]))
		}
		return errors.Join(err, tx.Bucket(store.BucketMeta).Delete([]byte(metaVectorForm)))
	})
	if err != nil {
		t.Fatal(err)
	}
}

// vectorSizes counts the stored vectors by their length in bytes.
func vectorSizes(t *testing.T, s *Corpus) map[int]int {
	t.Helper()
	out := map[int]int{}
	s.st.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(sbVectors).ForEach(func(k, v []byte) error { out[len(v)]++; return nil })
	})
	return out
}

// A store whose vectors are float32s (written before 8-bit codes) opens:
// read-only it answers from them as they are, and a writer's open
// converts them in place, with the same answers.
func TestSessionsFloatVectorsConverted(t *testing.T) {
	ctx := context.Background()
	root, idx := sessionFixture(t), t.TempDir()
	w := openTestSessions(t, idx, lineSource{root})
	mustSync(t, w)
	queries := []Query{{Text: "ledger database", Mode: rank.Semantic}, {Text: "retry budget"}, {Text: "transactions", Agent: "test", Mode: rank.Semantic}}
	var want []Page
	for _, q := range queries {
		want = append(want, search(t, w, q))
	}
	n := w.cols.live
	storeFloatVectors(t, w)
	if err := w.st.setMeta(map[string]string{"schema": strconv.Itoa(convertibleSchema)}); err != nil {
		t.Fatal(err) // as a store written before the conversion says
	}
	if got := vectorSizes(t, w); got[4*w.dim] != n {
		t.Fatalf("float32 vectors %v, want %d of %d bytes", got, n, 4*w.dim)
	}
	w.Close()
	check := func(s *Corpus, how string) {
		t.Helper()
		for i, q := range queries {
			if got := search(t, s, q); !reflect.DeepEqual(got, want[i]) {
				t.Errorf("%s, %+v:\n%+v\nwant\n%+v", how, q, got, want[i])
			}
		}
	}
	ro, err := Open(ctx, Config{IndexDir: idx, Sources: []Source{lineSource{root}}, ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	check(ro, "read-only over float32 vectors")
	ro.Close()

	w = openTestSessions(t, idx, lineSource{root})
	defer w.Close()
	if got := vectorSizes(t, w); got[4+w.dim] != n || len(got) != 1 {
		t.Errorf("after a writer's open: vectors by size %v, want %d of %d bytes", got, n, 4+w.dim)
	}
	if f := w.st.metaAll()[metaVectorForm]; f != vectorFormCode {
		t.Errorf("vector form %q, want %q", f, vectorFormCode)
	}
	// A mnemo that reads only the memory index's schema refuses the
	// converted store instead of misreading its vectors and texts.
	if err := store.CheckSchema(idx, w.st.metaAll()["schema"]); !errors.Is(err, store.ErrIndexIncompatible) {
		t.Errorf("an older mnemo's check of the converted store: %v, want it refused", err)
	}
	check(w, "converted")
	if rep := mustSync(t, w); rep.Full {
		t.Errorf("sync after the conversion: %+v, want incremental", rep)
	}
}

// The buckets keyed sid|seq are written with full pages (appendFill),
// and an append to a session keeps them mostly full: at bbolt's default
// fill they stayed ~40 % full.
func TestSessionsStorePagesFull(t *testing.T) {
	root, idx := filepath.Join(t.TempDir(), "transcripts"), t.TempDir()
	msgs := func(from, n int) []lineMsg {
		var out []lineMsg
		for k := from; k < from+n; k++ {
			out = append(out, msgAt(fmt.Sprintf("m%05d", k), "user", fmt.Sprintf("message %d about the ledger and its retry budget", k), k))
		}
		return out
	}
	for _, p := range []string{"a", "b", "c"} {
		writeLines(t, filepath.Join(root, p, "s.jsonl"), msgs(0, 600), false)
	}
	s := openTestSessions(t, idx, lineSource{root})
	mustSync(t, s)
	fill := func(when string) {
		t.Helper()
		s.st.db.View(func(tx *bolt.Tx) error {
			for _, name := range [][]byte{sbMessages, sbTexts, sbVectors} {
				st := tx.Bucket(name).Stats()
				if f := float64(st.LeafInuse) / float64(st.LeafAlloc); f < 0.8 {
					t.Errorf("%s: %s pages %.0f %% full (%d pages), want ≥ 80 %%", when, name, 100*f, st.LeafPageN)
				}
			}
			return nil
		})
	}
	fill("first sync")
	writeLines(t, filepath.Join(root, "a", "s.jsonl"), msgs(600, 50), true)
	mustSync(t, s)
	fill("after an append to the first session")
}

// TestSessionsSchema: a sync writes the sessions store at sessionsSchema,
// which a mnemo reading only store.SchemaVersion refuses; a store newer
// than sessionsSchema is refused here, by a writer and by a reader.
func TestSessionsSchema(t *testing.T) {
	ctx := context.Background()
	root, idx := sessionFixture(t), t.TempDir()
	w := openTestSessions(t, idx, lineSource{root})
	mustSync(t, w)
	schema := w.st.metaAll()["schema"]
	if schema != strconv.Itoa(sessionsSchema) {
		t.Errorf("schema after a sync %q, want %d", schema, sessionsSchema)
	}
	if err := store.CheckSchema(idx, schema); !errors.Is(err, store.ErrIndexIncompatible) {
		t.Errorf("a mnemo reading schema %d: %v, want the store refused", store.SchemaVersion, err)
	}
	if err := w.st.setMeta(map[string]string{"schema": strconv.Itoa(sessionsSchema + 1)}); err != nil {
		t.Fatal(err)
	}
	w.Close()
	for _, ro := range []bool{false, true} {
		s, err := Open(ctx, Config{IndexDir: idx, Sources: []Source{lineSource{root}}, ReadOnly: ro})
		if err == nil {
			s.Close()
		}
		if !errors.Is(err, store.ErrIndexIncompatible) {
			t.Errorf("read-only %v, a store of schema %d: %v, want it refused", ro, sessionsSchema+1, err)
		}
	}
}

// parseMsgTime reads every time as time.Time.UnmarshalText does, on its
// fast path (UTC, as json.Marshal writes it) and off it, and refuses what
// UnmarshalText refuses.
func TestParseMsgTime(t *testing.T) {
	inputs := []string{
		"2025-06-03T04:27:18.526Z", "2025-06-03T04:27:18Z", "0001-01-01T00:00:00Z", "1970-01-01T00:00:00Z",
		"1969-12-31T23:59:59.999999999Z", "2000-02-29T12:00:00.5Z", "2024-12-31T23:59:59.000000001Z",
		"0000-01-01T00:00:00Z", "0000-03-01T00:00:00Z", "9999-12-31T23:59:59.123456789Z",
		"2025-06-03T06:27:18.526+02:00", "2025-06-03T04:27:18,5Z", "2025-06-03T04:27:18.1234567891Z",
		"2023-02-29T00:00:00Z", "2025-04-31T00:00:00Z", "2025-13-01T00:00:00Z", "2025-06-03T24:00:00Z",
		"2025-06-03T04:60:00Z", "2025-06-03T04:27:60Z", "2025-06-03T04:27:18.Z", "2025-06-03 04:27:18Z",
		"2025-6-03T04:27:18Z", "2025-06-03T04:27:1xZ", "", "Z",
	}
	x := uint64(7)
	for range 2000 {
		x = x*6364136223846793005 + 1442695040888963407
		at := time.Unix(int64(x>>33)%(1<<35)-(1<<34), int64(x%1e9)).UTC()
		if x&1 == 0 {
			at = at.Truncate(time.Millisecond)
		}
		inputs = append(inputs, at.Format(time.RFC3339Nano))
	}
	for _, in := range inputs {
		var want time.Time
		wantErr := want.UnmarshalText([]byte(in))
		got, ok := parseMsgTime([]byte(in))
		if ok != (wantErr == nil) || (ok && got != toMsgTime(want)) {
			t.Errorf("%q: %+v, %v; UnmarshalText %v (%+v)", in, got, ok, wantErr, toMsgTime(want))
		}
		if _, fast := parseUTC([]byte(in)); fast != (wantErr == nil && strings.HasSuffix(in, "Z") && !strings.Contains(in, ",") && len(in) <= 30) {
			t.Errorf("%q: fast path taken %v", in, fast)
		}
	}
}
