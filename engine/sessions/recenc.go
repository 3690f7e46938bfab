package sessions

import (
	"encoding/json"
	"strconv"
)

// appendMsgRec appends m as json.Marshal writes it, byte for byte. A sync
// encodes one record a message in the committer's transaction, where
// json.Marshal's reflection cost about 1.5 % of a 100k-message sync's CPU
// and one allocation a record; the committer is a serial stage. The
// shape written here is the one decodeMsgRec reads directly:
// {"i":"…","r":"…","t":"…","l":[…]}. A record whose strings json.Marshal
// would escape (or write as other than ASCII), or whose time it would
// refuse, goes through json.Marshal itself.
func appendMsgRec(buf []byte, m msgRec) ([]byte, error) {
	if y := m.Time.Year(); !plainJSON(m.ID) || !plainJSON(m.Role) || y < 0 || y > 9999 {
		j, err := json.Marshal(m)
		return append(buf, j...), err
	}
	buf = append(buf, `{"i":"`...)
	buf = append(buf, m.ID...)
	buf = append(buf, `","r":"`...)
	buf = append(buf, m.Role...)
	buf = append(buf, `","t":`...)
	buf, err := m.Time.AppendText(append(buf, '"'))
	if err != nil {
		return buf, err
	}
	buf = append(buf, `","l":[`...)
	for i, l := range m.Lens {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = strconv.AppendInt(buf, int64(l), 10)
	}
	return append(buf, "]}"...), nil
}

// plainJSON reports whether json.Marshal writes s as it is between its
// quotes: printable ASCII other than the quote, the backslash and the
// characters it escapes for HTML.
func plainJSON(s string) bool {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c < 0x20 || c > 0x7e, c == '"', c == '\\', c == '<', c == '>', c == '&':
			return false
		}
	}
	return true
}
