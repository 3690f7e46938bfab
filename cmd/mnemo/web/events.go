package web

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"mnemo/cmd/mnemo/remote"
)

// statusEvery is how often the event stream looks at the corpora's status:
// often enough that a person watching a first sync sees the count move.
const statusEvery = 500 * time.Millisecond

// events streams the corpora's status as server-sent events, one "status"
// event whenever it changes (and one at once), until the page goes away.
// The page reads the stream with fetch, which can send the bearer token
// (EventSource cannot).
func (s *Server) events(w http.ResponseWriter, r *http.Request) {
	rc := http.NewResponseController(w)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	rc.SetWriteDeadline(time.Time{}) // a stream has no end to write by
	tick := time.NewTicker(statusEvery)
	defer tick.Stop()
	var last []byte
	for {
		var b []byte
		if c := s.corpora.Load(); c == nil || c.Memories == nil {
			b, _ = json.Marshal(map[string]string{"error": errNoCorpora.Error()})
		} else if st, err := s.statusOf(r.Context(), c); errors.Is(err, remote.ErrGone) {
			b, _ = json.Marshal(map[string]string{"error": errHandover.Error()})
		} else if err != nil {
			b, _ = json.Marshal(map[string]string{"error": err.Error()})
		} else {
			b, _ = json.Marshal(st)
		}
		if !bytes.Equal(b, last) {
			if _, err := fmt.Fprintf(w, "event: status\ndata: %s\n\n", b); err != nil {
				return
			}
			if err := rc.Flush(); err != nil {
				return
			}
			last = b
		}
		select {
		case <-r.Context().Done():
			return
		case <-tick.C:
		}
	}
}
