package args_test

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"mnemo/engine"
	"mnemo/mcp/args"
)

func TestQueryUnmarshalJSON(t *testing.T) {
	day := func(y int, m time.Month, d int) time.Time { return time.Date(y, m, d, 0, 0, 0, 0, time.UTC) }
	endOf := func(t time.Time) time.Time { return t.AddDate(0, 0, 1).Add(-time.Nanosecond) }
	at := time.Date(2023, 10, 22, 9, 55, 0, 0, time.UTC)
	def := engine.Query{Mode: engine.FullText, PageSize: 100, Tags: []string{"t"}}
	tests := []struct {
		name    string
		start   engine.Query // the defaults the object is decoded over
		in      string
		want    engine.Query
		wantErr string // "" for success
	}{
		{name: "minimal", in: `{"query":"bbolt"}`, want: engine.Query{Text: "bbolt"}},
		{name: "every field, date-only forms", in: `{"query":"q","mode":"Semantic","page":2,"pageSize":5,"folder":"conv-26",
			"tags":["a","b"],"from":"2023-01-01","to":"2023-12-31","now":"2023-10-22","minScore":0.25,"sort":"recency","noSnippets":true}`,
			want: engine.Query{Text: "q", Mode: "Semantic", Page: 2, PageSize: 5, Folder: "conv-26", Tags: []string{"a", "b"},
				From: day(2023, 1, 1), To: endOf(day(2023, 12, 31)), Now: day(2023, 10, 22), MinScore: 0.25, Sort: engine.ByRecency, NoSnippets: true}},
		{name: "RFC 3339 dates are taken as written", in: `{"query":"q","from":"2023-10-22T09:55:00Z","to":"2023-10-22T09:55:00Z","now":"2023-10-22T11:55:00+02:00"}`,
			want: engine.Query{Text: "q", From: at, To: at, Now: at}},
		{name: "snake_case aliases", in: `{"query":"q","page_size":7,"min_score":0.5}`,
			want: engine.Query{Text: "q", PageSize: 7, MinScore: 0.5}},
		{name: "integers written as floats", in: `{"query":"q","page":3.0,"pageSize":2e1}`,
			want: engine.Query{Text: "q", Page: 3, PageSize: 20}},
		{name: "absent fields keep the defaults", start: def, in: `{"query":"x","page_size":5}`,
			want: engine.Query{Text: "x", Mode: engine.FullText, PageSize: 5, Tags: []string{"t"}}},
		{name: "null is absent", start: def, in: `{"query":"x","mode":null,"tags":null,"pageSize":null}`,
			want: engine.Query{Text: "x", Mode: engine.FullText, PageSize: 100, Tags: []string{"t"}}},
		{name: "one tag as a string", in: `{"query":"q","tags":"storage"}`, want: engine.Query{Text: "q", Tags: []string{"storage"}}},
		{name: "tags as a comma-separated string", in: `{"query":"q","tags":" storage, db ,"}`, want: engine.Query{Text: "q", Tags: []string{"storage", "db"}}},
		{name: "explicit zero beats the default", start: def, in: `{"query":"x","pageSize":0,"mode":""}`,
			want: engine.Query{Text: "x", Tags: []string{"t"}}},

		{name: "unknown field", in: `{"query":"q","top_k":5}`, wantErr: `unknown field "top_k"`},
		{name: "alias and name together", in: `{"query":"q","pageSize":5,"page_size":6}`, wantErr: "pageSize and page_size"},
		{name: "bad date", in: `{"query":"q","from":"last week"}`, wantErr: `from "last week": want YYYY-MM-DD or RFC 3339`},
		{name: "impossible day", in: `{"query":"q","to":"2024-02-30"}`, wantErr: `to "2024-02-30"`},
		{name: "date with a space", in: `{"query":"q","now":"2023-10-22 09:55"}`, wantErr: `now "2023-10-22 09:55"`},
		{name: "date not a string", in: `{"query":"q","from":20230101}`, wantErr: "from must be a string"},
		{name: "page a string", in: `{"query":"q","page_size":"ten"}`, wantErr: "page_size must be an integer"},
		{name: "fractional page", in: `{"query":"q","page":1.5}`, wantErr: "page must be an integer"},
		{name: "overflowing page", in: `{"query":"q","page":1e400}`, wantErr: "page must be an integer"},
		{name: "query an object", in: `{"query":{"$ne":""}}`, wantErr: "query must be a string"},
		{name: "tags a number", in: `{"query":"q","tags":3}`, wantErr: "tags must be an array of strings (or one string)"},
		{name: "minScore a word", in: `{"query":"q","minScore":"high"}`, wantErr: "minScore must be a number"},
		{name: "noSnippets a word", in: `{"query":"q","noSnippets":"yes"}`, wantErr: "noSnippets must be true or false"},
		{name: "not an object", in: `["q"]`, wantErr: "must be a JSON object"},
		{name: "not JSON", in: `{"query":`, wantErr: "unexpected end"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q := tt.start
			q.Tags = append([]string(nil), tt.start.Tags...)
			if len(q.Tags) == 0 {
				q.Tags = nil
			}
			err := json.Unmarshal([]byte(tt.in), (*args.Query)(&q))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tt.wantErr)
				}
				if strings.HasPrefix(err.Error(), "json:") {
					t.Errorf("err %q carries the json: prefix", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !q.From.Equal(tt.want.From) || !q.To.Equal(tt.want.To) || !q.Now.Equal(tt.want.Now) {
				t.Fatalf("times = %v / %v / %v, want %v / %v / %v", q.From, q.To, q.Now, tt.want.From, tt.want.To, tt.want.Now)
			}
			q.From, q.To, q.Now = tt.want.From, tt.want.To, tt.want.Now
			if !reflect.DeepEqual(q, tt.want) {
				t.Fatalf("got  %+v\nwant %+v", q, tt.want)
			}
		})
	}
}

// TestQueryJSONRoundTrip checks that every JSON field of args.Query decodes
// (a field added to the struct but not to the decoder fails here) and that
// what Marshal writes reads back as the same query.
func TestQueryJSONRoundTrip(t *testing.T) {
	at := time.Date(2023, 10, 22, 9, 55, 0, 123, time.UTC)
	q := engine.Query{Text: "q", Mode: engine.Semantic, Page: 2, PageSize: 5, Folder: "f", Tags: []string{"a"},
		From: at, To: at.Add(time.Hour), MinScore: 0.5, Sort: engine.ByRecency, Now: at.Add(2 * time.Hour), NoSnippets: true}
	v := reflect.ValueOf(q)
	for i := range v.NumField() {
		if v.Field(i).IsZero() {
			t.Fatalf("field %s is zero: set every field so the round trip covers it", v.Type().Field(i).Name)
		}
	}
	b, err := json.Marshal(args.Query(q))
	if err != nil {
		t.Fatal(err)
	}
	var got engine.Query
	if err := json.Unmarshal(b, (*args.Query)(&got)); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	if !got.From.Equal(q.From) || !got.To.Equal(q.To) || !got.Now.Equal(q.Now) {
		t.Fatalf("times changed: %s", b)
	}
	got.From, got.To, got.Now = q.From, q.To, q.Now
	if !reflect.DeepEqual(got, q) {
		t.Fatalf("got  %+v\nwant %+v", got, q)
	}
}

func TestDecodeOther(t *testing.T) {
	var seen []string
	var q engine.Query
	err := args.Decode([]byte(`{"id":"q1","query":"x","relevant":["a.md"]}`), &q, func(name string, _ json.RawMessage) error {
		seen = append(seen, name)
		return nil
	})
	if err != nil || q.Text != "x" || strings.Join(seen, ",") != "id,relevant" {
		t.Fatalf("err %v, query %q, others %v", err, q.Text, seen)
	}
	stop := errors.New("stop")
	if err := args.Decode([]byte(`{"id":1}`), &q, func(string, json.RawMessage) error { return stop }); !errors.Is(err, stop) {
		t.Fatalf("err = %v, want the callback's", err)
	}
}

// TestQueryJSONSpeaksTheToolsNames: a Query written as JSON uses the
// SearchMemories argument names and reads back the same.
func TestQueryJSONSpeaksTheToolsNames(t *testing.T) {
	q := args.Query{Text: "wombat", Mode: engine.Semantic, Page: 2, PageSize: 5, Folder: "notes", Tags: []string{"db"},
		From: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC), MinScore: 0.25, Sort: engine.ByRecency}
	b, err := json.Marshal(q)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"query":"wombat","mode":"semantic","page":2,"pageSize":5,"folder":"notes","tags":["db"],"from":"2025-01-01T00:00:00Z","minScore":0.25,"sort":"recency"}`
	if string(b) != want {
		t.Fatalf("JSON\n got %s\nwant %s", b, want)
	}
	var back args.Query
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, q) {
		t.Fatalf("round trip: %+v, want %+v", back, q)
	}
}
