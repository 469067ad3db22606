// Package sse serves the live desk as Server-Sent Events: one stream per client, held in the
// hall of package waiters (watching the whole desk), sending what the viewer may see of each
// batch of run changes the hall's shared poll read:
//
//	event: run     data {"uuid":"…","status":"…"}, for each run whose status, pause or
//	               assignee changed and that the viewer may read
//	event: inbox   data {"approval":N,"input":N,"capped":false}: the inbox changed (its
//	               unfiltered counts after the change)
//	event: resync  data {}: the server cannot tell what changed since the client's
//	               Last-Event-ID; read afresh
//
// Every event carries the id to resume after (Last-Event-ID, or ?after= on a first connect);
// a comment is sent as a heartbeat every hall heartbeat. The web page (GET /events)
// and the API (GET /api/v1/events) serve the same stream; they differ in how they check the
// viewer again at every wake.
package sse

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"runsdesk/handlers/waiters"
	"runsdesk/runtime"
)

// writeSlack is how long past a heartbeat's due time a stream's connection may still write.
const writeSlack = 10 * time.Second

// reconnectMillis is the delay a client waits before it reconnects (the retry field).
const reconnectMillis = 3000

// Recheck checks the stream's viewer again (the session, the token) and returns them as they
// are now; an error ends the stream.
type Recheck func(ctx context.Context) (runtime.Actor, error)

// Serve streams the desk to c's client for viewer until the client goes away, the hall
// closes (shutdown) or recheck fails; recheck runs at every wake and heartbeat. watch are
// further items whose change wakes the stream at once (the API's service account). It
// returns waiters.ErrFull, having written nothing, when the hall holds its maximum, and nil
// when the stream ends (a failed write is a client gone).
func Serve(c echo.Context, hall *waiters.Hall, viewer runtime.Actor, recheck Recheck, watch ...waiters.Key) error {
	w, err := hall.Enter(append(watch, waiters.Key{Kind: waiters.KindDesk})...)
	if err != nil {
		return err
	}
	defer w.Leave()
	s := &stream{c: c, hall: hall, viewer: viewer, beat: hall.Heartbeat()}
	s.cursor, s.resume = lastEventID(c.Request())
	if !s.resume {
		s.cursor = hall.Cursor()
	}
	if err := s.start(); err != nil {
		return nil
	}
	ctx := c.Request().Context()
	heartbeat := time.NewTicker(s.beat)
	defer heartbeat.Stop()
	for {
		select {
		case <-w.Closing():
			return nil
		case <-ctx.Done():
			return nil
		case <-heartbeat.C:
			if s.viewer, err = recheck(ctx); err != nil {
				return nil
			}
			if err := s.write(": heartbeat\n\n"); err != nil {
				return nil
			}
		case <-w.Wake():
			if s.viewer, err = recheck(ctx); err != nil {
				return nil
			}
			if err := s.send(); err != nil {
				return nil
			}
		}
	}
}

// stream is one client's stream: the viewer as last checked and the id it has been sent up
// to.
type stream struct {
	c      echo.Context
	hall   *waiters.Hall
	viewer runtime.Actor
	beat   time.Duration
	cursor int64
	resume bool
}

// start answers the headers and the stream's first lines: the reconnect delay, the id a new
// client resumes after and, for a resuming client, what it missed.
func (s *stream) start() error {
	h := s.c.Response().Header()
	h.Set(echo.HeaderContentType, "text/event-stream")
	h.Set(echo.HeaderCacheControl, "no-store")
	h.Set("X-Accel-Buffering", "no")
	s.c.Response().WriteHeader(http.StatusOK)
	var b strings.Builder
	fmt.Fprintf(&b, "retry: %d\n", reconnectMillis)
	if !s.resume && s.cursor >= 0 {
		fmt.Fprintf(&b, "id: %d\n", s.cursor)
	}
	b.WriteString("\n")
	if err := s.write(b.String()); err != nil {
		return err
	}
	if s.resume {
		return s.send()
	}
	return nil
}

// send writes what the viewer may see of the batches after the stream's cursor, or resync
// when the hall cannot tell what they were; when the viewer may see none of them, the new
// id alone, so a client resumes after them.
func (s *stream) send() error {
	batches, next, ok := s.hall.Since(s.cursor)
	var b strings.Builder
	if !ok {
		event(&b, "resync", next, struct{}{})
	}
	for _, batch := range batches {
		for _, ch := range batch.Runs {
			if runtime.MayAct(s.viewer, runtime.ActionRead, ch.Run) {
				event(&b, "run", batch.ID, runData{UUID: ch.Run.UUID, Status: string(ch.Run.Status)})
			}
		}
		if batch.Inbox && runtime.MayAct(s.viewer, runtime.ActionRead, runtime.Run{}) {
			event(&b, "inbox", batch.ID, inboxData{Approval: batch.Counts.Approval, Input: batch.Counts.Input, Capped: batch.Counts.Capped})
		}
	}
	moved := next != s.cursor
	if ok {
		next = max(s.cursor, next)
	}
	s.cursor = next
	if b.Len() == 0 && moved && next >= 0 {
		fmt.Fprintf(&b, "id: %d\n\n", next)
	}
	if b.Len() == 0 {
		return nil
	}
	return s.write(b.String())
}

// runData is the data of event run.
type runData struct {
	UUID   string `json:"uuid"`
	Status string `json:"status"`
}

// inboxData is the data of event inbox.
type inboxData struct {
	Approval int  `json:"approval"`
	Input    int  `json:"input"`
	Capped   bool `json:"capped"`
}

// event appends one event named name with id (none when negative: the hall has not read the
// desk yet) and data as JSON.
func event(b *strings.Builder, name string, id int64, data any) {
	raw, _ := json.Marshal(data)
	fmt.Fprintf(b, "event: %s\n", name)
	if id >= 0 {
		fmt.Fprintf(b, "id: %d\n", id)
	}
	fmt.Fprintf(b, "data: %s\n\n", raw)
}

// write sends text at once, the connection's deadlines pushed past the next heartbeat.
func (s *stream) write(text string) error {
	res := s.c.Response()
	if err := waiters.SetDeadlines(res, s.beat+writeSlack); err != nil {
		return fmt.Errorf("sse: set deadlines: %w", err)
	}
	if _, err := io.WriteString(res, text); err != nil {
		return fmt.Errorf("sse: write: %w", err)
	}
	if err := http.NewResponseController(res).Flush(); err != nil && !errors.Is(err, http.ErrNotSupported) {
		return fmt.Errorf("sse: flush: %w", err)
	}
	return nil
}

// lastEventID is the request's Last-Event-ID as a cursor, else its ?after= (the cursor of the
// page that opens the stream); present reports whether it sent one. One that is no id of this
// server's is -2, which the hall answers with a resync.
func lastEventID(r *http.Request) (cursor int64, present bool) {
	v := r.Header.Get("Last-Event-ID")
	if v == "" {
		v = r.URL.Query().Get("after")
	}
	if v == "" {
		return 0, false
	}
	id, err := strconv.ParseInt(v, 10, 64)
	if err != nil || id < 0 {
		return -2, true
	}
	return id, true
}
