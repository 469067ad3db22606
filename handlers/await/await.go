// Package await holds a caller until something it watches in a waiters hall is done: a run
// that moved (the API's GET /runs/:uuid?wait=), or the decision on an external request
// (Request: GET /api/v1/requests/:id?wait=, and the MCP server's held calls). It knows
// nothing of HTTP: the caller sets its connection's deadlines and answers waiters.ErrFull
// itself.
package await

import (
	"context"
	"time"

	"runsdesk/handlers/waiters"
	"runsdesk/runtime"
)

// ReadTimeout bounds each read a hold makes (the item, the caller's token): the hold itself
// has no deadline but its limit.
const ReadTimeout = 5 * time.Second

// Hold enters hall watching keys and calls look at every wake (the first comes once the
// hall's poll has read the keys, so nothing that changed before is missed) and, when every
// is positive, at least that often, until look reports done or fails; at limit it calls look
// once more (last true) and returns. When ctx ends or the hall closes (shutdown) it returns
// nil at once: the caller answers with what look last saw. waiters.ErrFull when the hall is
// full.
func Hold(ctx context.Context, hall *waiters.Hall, keys []waiters.Key, limit, every time.Duration,
	look func(ctx context.Context, last bool) (done bool, err error)) error {
	w, err := hall.Enter(keys...)
	if err != nil {
		return err
	}
	defer w.Leave()
	timer := time.NewTimer(limit)
	defer timer.Stop()
	var tick <-chan time.Time
	if every > 0 {
		t := time.NewTicker(every)
		defer t.Stop()
		tick = t.C
	}
	for {
		select {
		case <-w.Closing():
			return nil
		case <-ctx.Done():
			return nil
		case <-timer.C:
			_, err := look(ctx, true)
			return err
		case <-w.Wake():
		case <-tick:
		}
		if done, err := look(ctx, false); done || err != nil {
			return err
		}
	}
}

// RunKeys are what a hold about run uuid for actor watches: the run, and actor's service
// account (its token disabled, rotated or rescoped wakes the hold, to check it again).
func RunKeys(uuid string, actor runtime.Actor) []waiters.Key {
	return []waiters.Key{{Kind: waiters.KindRun, ID: uuid}, {Kind: waiters.KindServiceAccount, ID: actor.Name}}
}

// Answers reads the answer of an external request for its caller (*engine.Runtime
// implements it).
type Answers interface {
	RequestAnswer(ctx context.Context, actor runtime.Actor, id string) (runtime.RequestAnswer, error)
}

// Request holds actor's request id until it is no longer pending or limit passes (then, or
// when ctx ends or the hall closes, the answer as it is: pending), and returns its answer.
// Before each look after the first read, each (nil: none) is called: an error from it ends
// the hold with that error (the API checks the caller's token again there; an MCP server can
// send a progress notification). It is called at every wake and at least every Tick. A
// request the actor may not read is the runtime's RunNotFound, a full hall waiters.ErrFull.
func Request(ctx context.Context, hall *waiters.Hall, rt Answers, actor runtime.Actor, id string, limit time.Duration,
	each func(ctx context.Context) error) (runtime.RequestAnswer, error) {
	ans, err := readAnswer(ctx, rt, actor, id)
	if err != nil || ans.Status != runtime.RequestPending || limit <= 0 {
		return ans, err
	}
	err = Hold(ctx, hall, RunKeys(id, actor), limit, Tick, func(ctx context.Context, last bool) (bool, error) {
		if each != nil && !last {
			if err := each(ctx); err != nil {
				return true, err
			}
		}
		now, err := readAnswer(ctx, rt, actor, id)
		if err != nil {
			return true, err
		}
		ans = now
		return ans.Status != runtime.RequestPending, nil
	})
	return ans, err
}

// Tick is how often Request calls its each while nothing wakes it.
const Tick = 15 * time.Second

// readAnswer reads the answer of request id within ReadTimeout.
func readAnswer(ctx context.Context, rt Answers, actor runtime.Actor, id string) (runtime.RequestAnswer, error) {
	ctx, cancel := context.WithTimeout(ctx, ReadTimeout)
	defer cancel()
	return rt.RequestAnswer(ctx, actor, id)
}
