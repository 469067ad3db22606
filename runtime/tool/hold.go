package tool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Holder keeps a call open while a person answers a request for input its server sent during
// the call (an in-session elicitation/create). Hold returns the answer to send: the person's,
// or a decline whose Note says why nobody is asked (it is told to the model). An error means
// the hold ended before an answer; the call is then abandoned.
type Holder interface {
	Hold(ctx context.Context, el Elicitation) (ElicitationAnswer, error)
}

// ErrHoldEnded is what a Holder returns when the hold ended before an answer.
var ErrHoldEnded = errors.New("the server's request for input ended before an answer")

// HeldTimeout is how long a request for input sent during a call may be held: the server's
// elicitation timeout (DefaultElicitationTimeout when unset), at most MaxHeldElicitation.
func HeldTimeout(d time.Duration) time.Duration {
	if d <= 0 {
		d = DefaultElicitationTimeout
	}
	return min(d, MaxHeldElicitation)
}

// inSession answers the requests for input a server sends during one call: each one a person
// can be asked goes to hold, with the call's deadline extended to the hold's timeout (plus
// heldGrace); any other is declined, the reason kept for the model.
type inSession struct {
	hold    Holder
	clock   *callClock
	timeout time.Duration

	mu    sync.Mutex
	notes []string
	asked int
}

// elicit is the session's elicitation handler.
func (in *inSession) elicit(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	el := &Elicitation{}
	reason := in.ask()
	if reason == "" {
		reason = askable(el, req.Params)
	}
	if reason == "" && in.hold == nil {
		reason = "the server asked for input during the call, where this desk cannot wait for a person; it declined"
	}
	if reason != "" {
		in.note(reason)
		return &mcp.ElicitResult{Action: ElicitDecline}, nil
	}
	el.Timeout = in.timeout
	in.clock.extend(in.timeout + heldGrace)
	a, err := in.hold.Hold(ctx, *el)
	if err != nil {
		return nil, err
	}
	in.note(a.Note)
	res := &mcp.ElicitResult{Action: a.Action}
	if a.Action == ElicitAccept {
		if res.Content, err = plainJSON(a.Content); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// plainJSON is content as encoding/json decodes its encoding (numbers as float64), the form
// the SDK validates an answer in before sending it; nil is an empty object.
func plainJSON(content map[string]any) (map[string]any, error) {
	out := map[string]any{}
	b, err := json.Marshal(content)
	if err == nil && content != nil {
		err = json.Unmarshal(b, &out)
	}
	if err != nil {
		return nil, fmt.Errorf("the answer cannot be encoded: %w", err)
	}
	return out, nil
}

func (in *inSession) note(n string) {
	if n == "" {
		return
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	in.notes = append(in.notes, n)
}

// ask counts one more request for input of the call, and says why it is declined when the
// call has made more than MaxElicitationsPerCall.
func (in *inSession) ask() string {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.asked++
	if in.asked > MaxElicitationsPerCall {
		return fmt.Sprintf("the server asked for input more than %d times in one call; the desk declined", MaxElicitationsPerCall)
	}
	return ""
}

// count is how many requests for input the call has made.
func (in *inSession) count() int {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.asked
}

// taken returns the notes so far and forgets them.
func (in *inSession) taken() []string {
	in.mu.Lock()
	defer in.mu.Unlock()
	n := in.notes
	in.notes = nil
	return n
}

// callClock is a call's deadline, which a held request for input may move.
type callClock struct {
	timer  *time.Timer
	cancel context.CancelCauseFunc
}

// newCallClock is ctx cancelled with cause context.DeadlineExceeded after d (or extend's
// new time), and its clock.
func newCallClock(ctx context.Context, d time.Duration) (context.Context, *callClock) {
	ctx, cancel := context.WithCancelCause(ctx)
	c := &callClock{cancel: cancel}
	c.timer = time.AfterFunc(d, func() { cancel(context.DeadlineExceeded) })
	return ctx, c
}

// extend moves the deadline to d from now, unless it has passed.
func (c *callClock) extend(d time.Duration) { c.timer.Reset(d) }

// stop releases the clock and its context.
func (c *callClock) stop() {
	c.timer.Stop()
	c.cancel(context.Canceled)
}
