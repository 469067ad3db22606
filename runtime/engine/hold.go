package engine

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"runsdesk/runtime"
	"runsdesk/runtime/tool"
)

// Defaults of the elicitation hold (docs/state-machine.md, "The elicitation hold").
const (
	// DefaultElicitationHolds is how many calls one process holds open at a time while a
	// person answers their server's request for input.
	DefaultElicitationHolds = 8
	// DefaultHoldPoll is how often the one poll of a process looks at its held runs.
	DefaultHoldPoll = 500 * time.Millisecond
	// DefaultHoldHeartbeat is how often a holder renews its hold heartbeat (a third of the
	// lease when that is shorter, at least a second); a heartbeat older than holdLapses of
	// them has lapsed.
	DefaultHoldHeartbeat = 10 * time.Second
	holdLapses           = 3
)

// holdLost stops a segment whose held call of a write tool (effect) ended before an answer:
// the write's outcome is unknown, so the run is dead-lettered, never retried.
type holdLost struct{ effect tool.Effect }

func (holdLost) Error() string { return "the held call of a write ended before an answer" }

// holdPool is the hold pool of one process, apart from the worker slots: the calls it holds
// open while a person answers their server's request for input (at most cap(slots)), and the
// one poll that renews their heartbeats, picks up answers and ends holds whose run moved on.
type holdPool struct {
	r     *Runtime
	slots chan struct{}
	poll  time.Duration
	beat  time.Duration
	nudge chan struct{}
	once  sync.Once
	// wg counts the poll and the goroutines calls run on (segments count in Runtime.wg).
	wg sync.WaitGroup

	mu    sync.Mutex
	holds map[int64]*callHold // by run uid, while the run waits on the hold or answers it
}

func newHoldPool(r *Runtime, size int, poll, beat time.Duration) *holdPool {
	switch {
	case size == 0:
		size = DefaultElicitationHolds
	case size < 0:
		size = 0
	}
	if poll <= 0 {
		poll = DefaultHoldPoll
	}
	if beat <= 0 {
		beat = min(DefaultHoldHeartbeat, max(r.lease/3, time.Second))
	}
	return &holdPool{r: r, slots: make(chan struct{}, size), poll: poll, beat: beat,
		nudge: make(chan struct{}, 1), holds: map[int64]*callHold{}}
}

// lapse is how old a hold heartbeat may be before its holder counts as gone.
func (p *holdPool) lapse() int64 { return max(int64(holdLapses*p.beat/time.Second), 1) }

// callHold is one call that may be held: the tool runs on its own goroutine (so the segment
// can pause the run and return while the call stays open), Hold hands its server's requests
// to the segment that waits on it (await), and the answer goes back the same way.
type callHold struct {
	pool     *holdPool
	owner    string
	requests chan *holdRequest
	done     chan tool.Result
	cancel   context.CancelFunc
	ended    chan struct{}
	endOnce  sync.Once

	// pending is the request the run waits on (owned by whoever waits on the hold).
	pending *holdRequest

	mu          sync.Mutex
	slot        bool
	uid         int64
	uuid        string
	suspendedAt int64
	expiresAt   int64
	renewed     int64
	waiting     bool
	expiring    bool
}

// holdRequest is a request for input the server sent, and where its answer goes.
type holdRequest struct {
	el     tool.Elicitation
	answer chan tool.ElicitationAnswer
}

// begin starts call of t on its own goroutine with a hold the segment waits on (await).
func (p *holdPool) begin(ctx context.Context, t tool.Tool, call tool.Call) *callHold {
	callCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	h := &callHold{pool: p, owner: p.r.owner("hold"), requests: make(chan *holdRequest), done: make(chan tool.Result, 1),
		cancel: cancel, ended: make(chan struct{})}
	call.Hold = h
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		defer cancel()
		res, err := t.Execute(callCtx, call)
		if err != nil {
			res = tool.Result{Content: fmt.Sprintf("Error: tool %q failed: %v", call.Name, err), IsError: true}
		}
		h.done <- res
	}()
	return h
}

// Hold hands the server's request to the segment waiting on the call and returns the answer
// it gets; tool.ErrHoldEnded when the hold ends first.
func (h *callHold) Hold(ctx context.Context, el tool.Elicitation) (tool.ElicitationAnswer, error) {
	req := &holdRequest{el: el, answer: make(chan tool.ElicitationAnswer, 1)}
	select {
	case h.requests <- req:
	case <-h.ended:
		return tool.ElicitationAnswer{}, tool.ErrHoldEnded
	case <-ctx.Done():
		return tool.ElicitationAnswer{}, ctx.Err()
	}
	select {
	case a := <-req.answer:
		return a, nil
	case <-h.ended:
		return tool.ElicitationAnswer{}, tool.ErrHoldEnded
	case <-ctx.Done():
		return tool.ElicitationAnswer{}, ctx.Err()
	}
}

// await waits for the call's result, or for a request for input a person can be asked: a
// hold slot is taken for it and the request returned as the result's Elicitation (pending
// set). With no slot free the request is declined at once, the model told why, and the wait
// goes on.
func (h *callHold) await(ctx context.Context) (tool.Result, error) {
	for {
		select {
		case res := <-h.done:
			h.finish()
			return res, nil
		case req := <-h.requests:
			if !h.takeSlot() {
				req.answer <- tool.ElicitationAnswer{Action: tool.ElicitDecline, Note: fmt.Sprintf(
					"the server asked for input during the call, but all %d elicitation holds of this process are in use (--elicitation-holds); the desk declined", cap(h.pool.slots))}
				continue
			}
			h.pending = req
			el := req.el
			return tool.Result{Elicitation: &el}, nil
		case <-ctx.Done():
			return tool.Result{}, ctx.Err()
		}
	}
}

// send answers the request the run waited on.
func (h *callHold) send(a tool.ElicitationAnswer) {
	if h.pending != nil {
		h.pending.answer <- a
		h.pending = nil
	}
}

func (h *callHold) takeSlot() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.slot {
		return true
	}
	select {
	case h.pool.slots <- struct{}{}:
		h.slot = true
		return true
	default:
		return false
	}
}

// finish releases what the hold took once its call returned.
func (h *callHold) finish() {
	h.mu.Lock()
	slot, uid := h.slot, h.uid
	h.slot, h.waiting = false, false
	h.mu.Unlock()
	if slot {
		<-h.pool.slots
	}
	h.pool.forget(uid, h)
}

// end abandons the call (its session is closed) and releases the hold; nil-safe.
func (h *callHold) end() {
	if h == nil {
		return
	}
	h.endOnce.Do(func() {
		close(h.ended)
		h.cancel()
	})
	h.finish()
}

// wait registers the hold of run, paused on it at suspendedAt until expiresAt, with the
// process's poll.
func (h *callHold) wait(run runtime.Run, suspendedAt, expiresAt int64) {
	h.mu.Lock()
	h.uid, h.uuid, h.suspendedAt, h.expiresAt, h.renewed, h.waiting, h.expiring = run.UID, run.UUID, suspendedAt, expiresAt, suspendedAt, true, false
	h.mu.Unlock()
	p := h.pool
	p.mu.Lock()
	p.holds[run.UID] = h
	p.mu.Unlock()
	p.once.Do(func() {
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			p.run(p.r.base)
		}()
	})
}

func (p *holdPool) forget(uid int64, h *callHold) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.holds[uid] == h {
		delete(p.holds, uid)
	}
}

// claimedFor is the hold of run uid a decision claimed the run for (lease owner), or nil.
func (p *holdPool) claimedFor(uid int64, owner string) *callHold {
	p.mu.Lock()
	defer p.mu.Unlock()
	h := p.holds[uid]
	if h == nil || h.owner != owner {
		return nil
	}
	return h
}

// wake asks the poll to look now (a decision just claimed a held run).
func (p *holdPool) wake() {
	select {
	case p.nudge <- struct{}{}:
	default:
	}
}

// run is the process's one poll of its held runs, until ctx is done; then every hold ends
// (their runs wait on until their heartbeats lapse, and another process ends them).
func (p *holdPool) run(ctx context.Context) {
	tick := time.NewTicker(p.poll)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			for _, h := range p.waitingHolds() {
				h.end()
			}
			return
		case <-tick.C:
		case <-p.nudge:
		}
		p.check(ctx)
	}
}

func (p *holdPool) waitingHolds() []*callHold {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]*callHold, 0, len(p.holds))
	for _, h := range p.holds {
		h.mu.Lock()
		if h.waiting {
			out = append(out, h)
		}
		h.mu.Unlock()
	}
	return out
}

// check reads every run waiting on a hold of this process in one statement: a run a
// decision claimed for its hold continues here with the answer; a run still waiting has its
// heartbeat renewed, or is ended when its request expired; a run that moved on otherwise
// (cancelled, or ended by another process) ends its hold.
func (p *holdPool) check(ctx context.Context) {
	holds := p.waitingHolds()
	if len(holds) == 0 {
		return
	}
	uids := make([]int64, len(holds))
	for i, h := range holds {
		uids[i] = h.uid
	}
	runs, err := p.r.store.FindHolds(ctx, uids)
	if err != nil {
		if ctx.Err() == nil {
			p.r.log.Warn("reading held runs failed; tried again at the next poll", "err", err)
		}
		return
	}
	now := map[int64]runtime.Run{}
	for _, run := range runs {
		now[run.UID] = run
	}
	for _, h := range holds {
		run, ok := now[h.uid]
		switch {
		case ok && run.Status == runtime.StatusRunning && run.ClaimedBy == h.owner:
			p.pickUp(h)
		case ok && run.Status == runtime.StatusWaitingInput && run.SuspendedAt == h.suspendedAt:
			p.keep(ctx, h)
		default:
			h.end()
		}
	}
}

// pickUp continues a run a decision claimed for hold h, on the hold's own goroutine: the
// segment sends the answer on the open session (callHeld) and continues the run from the
// call's result.
func (p *holdPool) pickUp(h *callHold) {
	h.mu.Lock()
	h.waiting = false
	uid := h.uid
	h.mu.Unlock()
	now := p.r.unix()
	lease := runtime.Lease{Owner: h.owner, Now: now, Expires: now + int64(p.r.lease/time.Second)}
	p.r.wg.Add(1)
	go func() {
		defer p.r.wg.Done()
		out := p.r.execute(p.r.base, uid, lease, nil)
		p.r.log.Debug("held run continued", "run_uid", uid, "outcome", string(out))
		h.mu.Lock()
		waiting := h.waiting
		h.mu.Unlock()
		if !waiting {
			h.end()
		}
	}()
}

// keep renews h's heartbeat when due, or ends its request once it expired (through the one
// decision pipeline, as the expirer would).
func (p *holdPool) keep(ctx context.Context, h *callHold) {
	now := p.r.unix()
	h.mu.Lock()
	expire := now >= h.expiresAt && !h.expiring
	if expire {
		h.expiring = true
	}
	renew := !expire && now-h.renewed >= max(int64(p.beat/time.Second), 1)
	uid, uuid, since := h.uid, h.uuid, h.suspendedAt
	h.mu.Unlock()
	switch {
	case expire:
		p.r.wg.Add(1)
		go func() {
			defer p.r.wg.Done()
			if _, err := p.r.ExpireElicitation(ctx, uuid); err != nil {
				p.r.log.Warn("expired held request for input not ended", "run", uuid, "err", err)
			}
		}()
	case renew:
		err := p.r.store.RenewHold(ctx, uid, since, now)
		if err == nil {
			h.mu.Lock()
			h.renewed = now
			h.mu.Unlock()
		} else if !errors.Is(err, runtime.ErrGuard) && ctx.Err() == nil {
			p.r.log.Warn("hold heartbeat not renewed; tried again at the next poll", "run", uuid, "err", err)
		}
	}
}

// holdLapsed reports whether run waits on a held request whose holder's heartbeat lapsed.
func (r *Runtime) holdLapsed(run runtime.Run, p *runtime.ElicitationPause) bool {
	return p.Held() && run.HoldHeartbeat > 0 && r.unix()-run.HoldHeartbeat >= r.holds.lapse()
}

// maxLapsedHolds bounds how many lapsed holds one EndLapsedHolds pass ends.
const maxLapsedHolds = 100

// EndLapsedHolds ends, through the one decision pipeline, every held request for input whose
// holder's heartbeat lapsed (the holder died): the run continues with the call's honest tool
// error, or is dead-lettered when the call was a write. It returns how many it ended.
func (r *Runtime) EndLapsedHolds(ctx context.Context) (int, error) {
	runs, err := r.store.FindLapsedHolds(ctx, r.unix()-r.holds.lapse()+1, maxLapsedHolds)
	if err != nil {
		return 0, fmt.Errorf("list lapsed holds: %w", err)
	}
	n := 0
	for _, run := range runs {
		ended, err := r.endRequest(ctx, run.UUID, "held request for input ended: its holder is gone")
		if err != nil {
			return n, err
		}
		if ended {
			n++
		}
	}
	return n, nil
}

// callHeld answers a call held open in-session with the person's answer (st.Elicited): the
// hold this segment was claimed for sends it on the session, and the call's result is the
// step's, like any call's (the answer fenced as a non-idempotent write, sent once). Without
// that hold, or when the request ended (st.Elicited nil), the call ends with an honest tool
// error, or, for a write, whose outcome is then unknown, the run is dead-lettered
// (holdLost).
func (s *segment) callHeld(ctx context.Context, st planStep) error {
	c := st.Call
	t, _ := s.reg.Get(c.Function.Name)
	h := s.r.holds.claimedFor(s.run.UID, s.lease.Owner)
	if st.Elicited == nil || h == nil {
		h.end()
		s.record(st, st.Args, tool.Result{IsError: true, Content: fmt.Sprintf("tool %s: %s", c.Function.Name, tool.ErrHoldEnded)}, 0, executedCall(st, st.Args))
		if e := tool.EffectOf(t); e.IsWrite() {
			return holdLost{effect: e}
		}
		return nil
	}
	started := time.Now()
	if err := s.fence(ctx, tool.EffectNonIdempotentWrite); err != nil {
		h.end()
		return err
	}
	answer := *st.Elicited
	res, err := whileHeld(ctx, s, func(ctx context.Context) (tool.Result, error) {
		h.send(answer)
		return h.await(ctx)
	})
	if err != nil {
		h.end()
		if interrupted(err) {
			return err
		}
		res = tool.Result{Content: fmt.Sprintf("Error: tool %q failed: %v", c.Function.Name, err), IsError: true}
	}
	if res.Elicitation != nil {
		st.Elicited = nil
		return &elicited{step: st, request: *res.Elicitation, hold: h}
	}
	s.record(st, st.Args, res, time.Since(started), executedCall(st, st.Args))
	return nil
}

// deadLetterHeld dead-letters a run whose held write ended before an answer: not_retryable,
// error class WriteOutcomeUnknown, the write's effect kept as the fence, like any write whose
// outcome is unknown.
func (s *segment) deadLetterHeld(ctx context.Context, lost holdLost) outcome {
	s.r.log.Error("a held write ended before an answer; its outcome is unknown, so the run is dead-lettered, not retried", "run", s.run.UUID)
	st := s.totals(runtime.StatusFailed, runtime.ReasonNotRetryable, "WriteOutcomeUnknown", false)
	st.PendingEffect = string(lost.effect)
	return s.settle(ctx, st)
}
