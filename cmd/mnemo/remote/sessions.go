package remote

import (
	"context"
	"errors"
	"fmt"

	"mnemo/engine/sessions"
)

var _ sessions.Index = (*SessionsClient)(nil)

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
func handleSessions(ctx context.Context, s sessions.Index, req request) (res any, ok bool, err error) {
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
// methods match *sessions.Corpus'.
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
func (s *SessionsClient) Search(ctx context.Context, q sessions.Query) (sessions.Page, error) {
	var p sessions.Page
	err := s.c.call(ctx, request{Op: opSessionsSearch, Sessions: &q}, &p)
	return p, err
}

// GetSession reads messages of a session through the server.
func (s *SessionsClient) GetSession(ctx context.Context, id string, offset, limit int) (sessions.View, error) {
	var v sessions.View
	err := s.c.call(ctx, request{Op: opSessionsGet, ID: id, Offset: offset, Limit: limit}, &v)
	return v, err
}

// GetMessage reads one message and its context through the server.
func (s *SessionsClient) GetMessage(ctx context.Context, id, messageID string, n int) (sessions.View, error) {
	var v sessions.View
	err := s.c.call(ctx, request{Op: opSessionsMessage, ID: id, Message: messageID, Around: n}, &v)
	return v, err
}

// Sync has the server sync its sessions index.
func (s *SessionsClient) Sync(ctx context.Context, full bool) (sessions.Report, error) {
	var r sessions.Report
	err := s.c.call(ctx, request{Op: opSessionsSync, Full: full}, &r)
	return r, err
}

// Status describes the server's sessions index.
func (s *SessionsClient) Status(ctx context.Context) (sessions.Status, error) {
	var st sessions.Status
	err := s.c.call(ctx, request{Op: opSessionsStatus}, &st)
	return st, err
}

// List lists the server's sessions.
func (s *SessionsClient) List(ctx context.Context, q sessions.ListQuery) (sessions.Listing, error) {
	var l sessions.Listing
	err := s.c.call(ctx, request{Op: opSessionsList, List: &q}, &l)
	return l, err
}

// Forget has the server forget sessions, with every trace of them.
func (s *SessionsClient) Forget(ctx context.Context, q sessions.ForgetQuery) (sessions.ForgetReport, error) {
	var r sessions.ForgetReport
	err := s.c.call(ctx, request{Op: opSessionsForget, Forget: &q}, &r)
	return r, err
}
