package remote

import (
	"context"
	"errors"
	"fmt"

	"mnemo/engine"
)

var _ engine.SessionsIndex = (*SessionsClient)(nil)

// The sessions ops.
const (
	opSessionsSearch  = "sessions.search"
	opSessionsGet     = "sessions.get"
	opSessionsMessage = "sessions.message"
	opSessionsSync    = "sessions.sync"
	opSessionsStatus  = "sessions.status"
	opSessionsList    = "sessions.list"
	opSessionsForget  = "sessions.forget"
)

// ErrNoSessions answers a sessions op on a server without a sessions index.
var ErrNoSessions = errors.New("this mnemo serve has no sessions index")

// handleSessions answers a sessions op; ok is false for any other op.
func handleSessions(ctx context.Context, s engine.SessionsIndex, req request) (res any, ok bool, err error) {
	switch req.Op {
	case opSessionsSearch, opSessionsGet, opSessionsMessage, opSessionsSync, opSessionsStatus, opSessionsList, opSessionsForget:
	default:
		return nil, false, nil
	}
	if s == nil {
		return nil, true, ErrNoSessions
	}
	switch req.Op {
	case opSessionsSearch:
		if req.Sessions == nil {
			return nil, true, errors.New(`bad request: sessions.search needs "sessions"`)
		}
		res, err = s.Search(ctx, *req.Sessions)
	case opSessionsGet:
		res, err = s.GetSession(ctx, req.ID, req.Offset, req.Limit)
	case opSessionsMessage:
		res, err = s.GetMessage(ctx, req.ID, req.Message, req.Around)
	case opSessionsSync:
		res, err = s.Sync(ctx, req.Full)
	case opSessionsStatus:
		res, err = s.Status(ctx)
	case opSessionsList:
		if req.List == nil {
			return nil, true, errors.New(`bad request: sessions.list needs "list"`)
		}
		res, err = s.List(ctx, *req.List)
	case opSessionsForget:
		if req.Forget == nil {
			return nil, true, errors.New(`bad request: sessions.forget needs "forget"`)
		}
		res, err = s.Forget(ctx, *req.Forget)
	}
	return res, true, err
}

// SessionsClient reaches the sessions index of a running serve. Its
// methods match *engine.Sessions'.
type SessionsClient struct{ c *Client }

// DialSessions connects to the serve of the index in indexDir and checks
// that it serves a sessions index; it fails if none does.
func DialSessions(indexDir string) (*SessionsClient, error) {
	c, err := Dial(indexDir)
	if err != nil {
		return nil, err
	}
	s := &SessionsClient{c: c}
	if _, err := s.Status(context.Background()); err != nil {
		c.Close()
		return nil, fmt.Errorf("mnemo serve: %w", err)
	}
	return s, nil
}

// Close closes the connection.
func (s *SessionsClient) Close() error { return s.c.Close() }

// Search runs q on the server's sessions index.
func (s *SessionsClient) Search(ctx context.Context, q engine.SessionQuery) (engine.SessionPage, error) {
	var p engine.SessionPage
	err := s.c.call(ctx, request{Op: opSessionsSearch, Sessions: &q}, &p)
	return p, err
}

// GetSession reads messages of a session through the server.
func (s *SessionsClient) GetSession(ctx context.Context, id string, offset, limit int) (engine.SessionView, error) {
	var v engine.SessionView
	err := s.c.call(ctx, request{Op: opSessionsGet, ID: id, Offset: offset, Limit: limit}, &v)
	return v, err
}

// GetMessage reads one message and its context through the server.
func (s *SessionsClient) GetMessage(ctx context.Context, id, messageID string, n int) (engine.SessionView, error) {
	var v engine.SessionView
	err := s.c.call(ctx, request{Op: opSessionsMessage, ID: id, Message: messageID, Around: n}, &v)
	return v, err
}

// Sync has the server sync its sessions index.
func (s *SessionsClient) Sync(ctx context.Context, full bool) (engine.SessionsReport, error) {
	var r engine.SessionsReport
	err := s.c.call(ctx, request{Op: opSessionsSync, Full: full}, &r)
	return r, err
}

// Status describes the server's sessions index.
func (s *SessionsClient) Status(ctx context.Context) (engine.SessionsStatus, error) {
	var st engine.SessionsStatus
	err := s.c.call(ctx, request{Op: opSessionsStatus}, &st)
	return st, err
}

// List lists the server's sessions.
func (s *SessionsClient) List(ctx context.Context, q engine.SessionListQuery) (engine.SessionList, error) {
	var l engine.SessionList
	err := s.c.call(ctx, request{Op: opSessionsList, List: &q}, &l)
	return l, err
}

// Forget has the server forget sessions, with every trace of them.
func (s *SessionsClient) Forget(ctx context.Context, q engine.ForgetQuery) (engine.ForgetReport, error) {
	var r engine.ForgetReport
	err := s.c.call(ctx, request{Op: opSessionsForget, Forget: &q}, &r)
	return r, err
}
