package sessions

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"
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
