package main

import (
	"bufio"
	"io"
	"strings"
	"sync"
	"time"
)

// childLog collects the stderr lines of a mnemo the tests started and
// wakes whoever waits for one, so a test waits on the line it needs
// instead of polling for it.
type childLog struct {
	mu    sync.Mutex
	lines []string
	more  chan struct{} // closed, and replaced, when a line arrives or the stream ends
	ended bool
}

func newChildLog() *childLog { return &childLog{more: make(chan struct{})} }

// collect reads r, a child's stderr, until it ends.
func (l *childLog) collect(r io.Reader) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		l.mu.Lock()
		l.lines = append(l.lines, sc.Text())
		close(l.more)
		l.more = make(chan struct{})
		l.mu.Unlock()
	}
	l.mu.Lock()
	l.ended = true
	close(l.more)
	l.mu.Unlock()
}

// waitFor waits until cond holds over the lines so far and reports true,
// or reports false once the stream ends without it or limit passes.
func (l *childLog) waitFor(limit time.Duration, cond func(lines []string) bool) bool {
	timer := time.NewTimer(limit)
	defer timer.Stop()
	for {
		l.mu.Lock()
		ok, ended, more := cond(l.lines), l.ended, l.more
		l.mu.Unlock()
		switch {
		case ok:
			return true
		case ended:
			return false
		}
		select {
		case <-more:
		case <-timer.C:
			return false
		}
	}
}

// count returns how many lines contain s.
func (l *childLog) count(s string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return countContaining(l.lines, s)
}

// snapshot returns a copy of the lines so far.
func (l *childLog) snapshot() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.lines...)
}

func (l *childLog) String() string { return strings.Join(l.snapshot(), "\n") }

func countContaining(lines []string, s string) int {
	n := 0
	for _, x := range lines {
		if strings.Contains(x, s) {
			n++
		}
	}
	return n
}
