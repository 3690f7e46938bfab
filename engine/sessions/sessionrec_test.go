package sessions

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"mnemo/engine/transcript"
)

// decodeSessionRec reads every record as json.Unmarshal does, whether it
// cuts the cursor out or not, and fails where json.Unmarshal fails.
func TestDecodeSessionRec(t *testing.T) {
	base := sessionRec{SID: 7, Source: "claude-code=/h/.claude/projects", ID: "0854bf30", Agent: "claude-code",
		Project: "/Users/alex/work", Path: "/h/.claude/projects/p/0854bf30.jsonl",
		Started: time.Date(2025, 5, 6, 7, 40, 30, 682_000_000, time.UTC), Ended: time.Date(2025, 5, 6, 10, 16, 30, 0, time.UTC),
		NextSeq: 257, Size: 1408652, MtimeNs: 1796180788919120506, Malformed: 2,
		Coverage: transcript.Coverage{Whole: true}}
	with := func(cursor, summary string) string {
		r := base
		r.Cursor, r.Summary = cursorJSON(cursor), summary
		j, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		return string(j)
	}
	cases := []struct {
		name, rec string
	}{
		{"a reader's cursor", with(`{"size":1408652,"modTime":"2026-12-02T03:06:28Z","offset":1408652,"state":"eyJ2IjoyfQ=="}`, "")},
		{"brackets and escaped quotes in the cursor's strings", with(`{"a":"}]{\"","b":["\\",{"c":"\\\"}"}],"d":{}}`, "x")},
		{"the cursor's key in the summary", with(`{"o":1}`, `,"c":{"o":2}`)},
		{"a cursor that is a number", with(`123`, "")},
		{"no cursor", with(``, "")},
		{"a cursor that is not JSON but ends", `{"n":7,"c":{"a":tru},"q":3}`},
		{"a cursor that does not end", `{"n":7,"c":{"a":"}`},
		{"a string that does not end before the cursor", `{"n":7,"p":"x,"c":{}}`},
		{"not a record", `[1,2]`},
		{"garbage after the cursor", `{"n":7,"c":{},"q":}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var want sessionRec
			wantErr := json.Unmarshal([]byte(c.rec), &want)
			var buf []byte
			got, err := decodeSessionRec([]byte(c.rec), &buf)
			if c.name == "a cursor that is not JSON but ends" {
				// Kept, unchecked: Read and MarshalJSON check it.
				if err != nil || string(got.Cursor) != `{"a":tru}` || got.NextSeq != 3 {
					t.Fatalf("got %+v, %v", got, err)
				}
				return
			}
			if (err != nil) != (wantErr != nil) {
				t.Fatalf("error %v, json.Unmarshal's %v", err, wantErr)
			}
			if err == nil && !reflect.DeepEqual(got, want) {
				t.Fatalf("got  %+v\nwant %+v", got, want)
			}
		})
	}
}

// A cursor that is not JSON is written as none, so that the record is
// still written and its transcript read from the start.
func TestCursorJSONMarshal(t *testing.T) {
	for _, c := range []struct{ cursor, want string }{
		{`{"offset":5}`, `{"n":0,"src":"","id":"","a":"","p":"","f":"","s":"0001-01-01T00:00:00Z","e":"0001-01-01T00:00:00Z","q":0,"z":0,"m":0,"c":{"offset":5}}`},
		{`{"a":tru}`, `{"n":0,"src":"","id":"","a":"","p":"","f":"","s":"0001-01-01T00:00:00Z","e":"0001-01-01T00:00:00Z","q":0,"z":0,"m":0,"c":null}`},
		{``, `{"n":0,"src":"","id":"","a":"","p":"","f":"","s":"0001-01-01T00:00:00Z","e":"0001-01-01T00:00:00Z","q":0,"z":0,"m":0}`},
	} {
		j, err := json.Marshal(sessionRec{Cursor: cursorJSON(c.cursor)})
		if err != nil || string(j) != c.want {
			t.Errorf("cursor %q: %s, %v; want %s", c.cursor, j, err, c.want)
		}
	}
}
