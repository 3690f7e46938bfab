package main

import (
	"strings"
	"testing"
	"time"

	"mnemo/engine/sessions"
)

// TestWriteSessionsStatusRecovery: status says what each set-aside copy of a
// damaged state store gave back of the archived history, and what was lost
// and why — never nothing.
func TestWriteSessionsStatusRecovery(t *testing.T) {
	at := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	var b strings.Builder
	err := writeSessionsStatus(&b, sessions.Status{Recovery: []sessions.Recovery{
		{SetAside: "state.db.corrupt-A", At: at, Recovered: 3, Messages: 40, Lost: 1, Error: "archived session s9: message 0 does not decode"},
		{SetAside: "state.db.corrupt-B", At: at, Error: "the copy could not be opened, so its archived sessions are lost: invalid database"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"state store found damaged and set aside", "3 archived sessions (40 messages) recovered from state.db.corrupt-A, 1 could not be read: archived session s9",
		"the archived sessions in state.db.corrupt-B are lost: the copy could not be opened",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("status does not say %q:\n%s", want, b.String())
		}
	}
}
