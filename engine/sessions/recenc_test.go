package sessions

import (
	"encoding/json"
	"testing"
	"time"

	"mnemo/engine/fulltext"
)

// TestAppendMsgRec holds appendMsgRec to json.Marshal's bytes, on the
// records it writes itself and on those it hands to json.Marshal.
func TestAppendMsgRec(t *testing.T) {
	at := time.Date(2026, 12, 2, 8, 9, 10, 123456789, time.UTC)
	tests := []struct {
		name string
		rec  msgRec
	}{
		{"uuid", msgRec{ID: "0b6c7a52-3f1e-4c7e-9a61-2f7d5d0b9e11", Role: "user", Time: at, Lens: [fulltext.NumFields]int32{12, 0}}},
		{"zero time", msgRec{ID: "m0", Role: "assistant"}},
		{"whole seconds", msgRec{ID: "m1", Role: "tool", Time: at.Truncate(time.Second), Lens: [fulltext.NumFields]int32{0, 7}}},
		{"other zone", msgRec{ID: "m2", Role: "user", Time: at.In(time.FixedZone("x", 5*3600+1800))}},
		{"empty", msgRec{}},
		{"negative length", msgRec{ID: "m3", Lens: [fulltext.NumFields]int32{-1, 2147483647}}},
		{"quote", msgRec{ID: `a"b`, Role: "user", Time: at}},
		{"backslash", msgRec{ID: `a\b`, Role: "user"}},
		{"html", msgRec{ID: "<a&b>", Role: "user"}},
		{"control", msgRec{ID: "a\nb\x00", Role: "user"}},
		{"utf-8", msgRec{ID: "é\u2028", Role: "ユーザー"}},
		{"invalid utf-8", msgRec{ID: "a\xffb", Role: "user"}},
		{"year 10000", msgRec{ID: "m4", Time: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want, wantErr := json.Marshal(tt.rec)
			got, err := appendMsgRec([]byte("prefix"), tt.rec)
			if (err != nil) != (wantErr != nil) {
				t.Fatalf("error %v, json.Marshal's %v", err, wantErr)
			}
			if err == nil && string(got) != "prefix"+string(want) {
				t.Errorf("got  %s\nwant prefix%s", got, want)
			}
			if err != nil {
				return
			}
			if back, err := decodeMsgRec(got[len("prefix"):]); err != nil || !back.Time.Equal(tt.rec.Time) || back.ID != tt.rec.ID && plainJSON(tt.rec.ID) {
				t.Errorf("decoded %+v, %v", back, err)
			}
		})
	}
}
