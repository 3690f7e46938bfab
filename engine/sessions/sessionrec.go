package sessions

import (
	"bytes"
	"encoding/json"
)

// Session records as the state store holds them: what json.Marshal writes
// of a sessionRec. Every open decodes all of them, and most of a record's
// bytes are its reader's cursor (~4 KB of a Claude Code record's ~4.3 KB:
// the reader's state, base64 in a JSON string), which an open does not
// read: at 5,000 sessions encoding/json spent ~0.28 s of a 1.2 s no-op
// sync checking and copying cursors byte by byte. decodeSessionRec cuts
// the cursor out with a scan that jumps from quote to quote and decodes
// the rest, a few hundred bytes, with encoding/json; the cursor is checked
// where it is used (cursorJSON).

// cursorJSON is a session's cursor, the JSON its Source wrote. An open
// does not check it (decodeSessionRec): the Source's Read takes one that
// does not decode as no cursor (a read from the start), and a record
// written back with one that is not JSON writes none, so that the
// record's next read starts over rather than failing to be written.
type cursorJSON []byte

// MarshalJSON writes the cursor as it is, or null when it is not JSON.
func (c cursorJSON) MarshalJSON() ([]byte, error) {
	if len(c) == 0 || !json.Valid(c) {
		return []byte("null"), nil
	}
	return c, nil
}

// UnmarshalJSON keeps a copy of data, as json.RawMessage does.
func (c *cursorJSON) UnmarshalJSON(data []byte) error {
	*c = append((*c)[:0], data...)
	return nil
}

// cursorKey starts the cursor of a record whose cursor is an object. No
// field before it holds an object, and a quote inside a string is
// escaped, so its first occurrence in a record json.Marshal wrote is the
// record's own cursor.
var cursorKey = []byte(`,"c":{`)

// decodeSessionRec decodes the session record v. buf is scratch space
// kept between calls. A record the cut does not apply to (no cursor, a
// cursor that is not an object, anything the rest does not decode) goes
// whole through json.Unmarshal, so a damaged record fails as it did.
func decodeSessionRec(v []byte, buf *[]byte) (sessionRec, error) {
	var r sessionRec
	if rest, cur, ok := cutCursor(v, buf); ok {
		if json.Unmarshal(rest, &r) == nil && r.Cursor == nil {
			r.Cursor = bytes.Clone(cur)
			return r, nil
		}
		r = sessionRec{}
	}
	err := json.Unmarshal(v, &r)
	return r, err
}

// cutCursor splits v into the record without its cursor (in *buf) and
// the cursor; false when v holds no cursor object that ends.
func cutCursor(v []byte, buf *[]byte) (rest, cur []byte, ok bool) {
	i := bytes.Index(v, cursorKey)
	if i < 0 {
		return nil, nil, false
	}
	start := i + len(cursorKey) - 1
	n, ok := skipObject(v[start:])
	if !ok {
		return nil, nil, false
	}
	end := start + n
	*buf = append(append((*buf)[:0], v[:i]...), v[end:]...)
	return *buf, v[start:end], true
}

// skipObject is the length of the object or array v starts with, found
// by its brackets outside strings (not checked further: see cursorJSON);
// false when it does not end in v.
func skipObject(v []byte) (int, bool) {
	depth := 0
	for i := 0; i < len(v); i++ {
		switch v[i] {
		case '{', '[':
			depth++
		case '}', ']':
			if depth--; depth == 0 {
				return i + 1, true
			}
		case '"':
			n, ok := skipString(v[i+1:])
			if !ok {
				return 0, false
			}
			i += n
		}
	}
	return 0, false
}

// skipString is the length of the rest of a string, v being what follows
// its opening quote, through its closing quote: the first quote not
// escaped by an odd run of backslashes. false when there is none.
func skipString(v []byte) (int, bool) {
	for i := 0; ; i++ {
		j := bytes.IndexByte(v[i:], '"')
		if j < 0 {
			return 0, false
		}
		i += j
		back := 0
		for k := i - 1; k >= 0 && v[k] == '\\'; k-- {
			back++
		}
		if back%2 == 0 {
			return i + 1, true
		}
	}
}
