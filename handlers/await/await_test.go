package await_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"runsdesk/handlers/await"
	"runsdesk/handlers/waiters"
	"runsdesk/runtime"
)

// desk is one request's answer as a hall's source and as await.Answers read it: its stamp
// moves whenever the answer is set.
type desk struct {
	mu     sync.Mutex
	answer runtime.RequestAnswer
	stamp  int
}

func (d *desk) set(status string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.answer.Status, d.stamp = status, d.stamp+1
}

func (d *desk) Stamps(_ context.Context, kind string, ids []string) (map[string]string, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := map[string]string{}
	for _, id := range ids {
		if kind == waiters.KindRun && id == d.answer.ID {
			out[id] = string(rune('a' + d.stamp))
		}
	}
	return out, nil
}

func (d *desk) RequestAnswer(_ context.Context, _ runtime.Actor, id string) (runtime.RequestAnswer, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if id != d.answer.ID {
		return runtime.RequestAnswer{}, runtime.ErrRunNotFound
	}
	return d.answer, nil
}

var agent = runtime.Actor{Name: "agent", Role: runtime.RoleService}

func newDesk(t *testing.T, max int) (*desk, *waiters.Hall) {
	d := &desk{answer: runtime.RequestAnswer{ID: "r-1", Status: runtime.RequestPending}}
	hall := waiters.New(waiters.Config{Source: d, Interval: 10 * time.Millisecond, Max: max})
	t.Cleanup(hall.Close)
	return d, hall
}

// TestRequestHeldUntilDecided: a pending request is held until its answer changes, calling
// each at the wakes; a decided one and a zero limit answer at once; at the limit the answer
// is pending; an error of each ends the hold with it; another's request is the runtime's
// not found; a full hall is waiters.ErrFull.
func TestRequestHeldUntilDecided(t *testing.T) {
	d, hall := newDesk(t, 1)
	ctx := t.Context()
	if ans, err := await.Request(ctx, hall, d, agent, "r-1", 0, nil); err != nil || ans.Status != runtime.RequestPending {
		t.Fatalf("no wait: %+v, %v", ans, err)
	}
	calls := 0
	go func() {
		time.Sleep(100 * time.Millisecond)
		d.set(runtime.RequestApproved)
	}()
	began := time.Now()
	ans, err := await.Request(ctx, hall, d, agent, "r-1", 10*time.Second, func(context.Context) error { calls++; return nil })
	if err != nil || ans.Status != runtime.RequestApproved || calls == 0 || time.Since(began) > 5*time.Second {
		t.Fatalf("held: %+v, %v after %v, each called %d times", ans, err, time.Since(began), calls)
	}

	d.set(runtime.RequestPending)
	if ans, err := await.Request(ctx, hall, d, agent, "r-1", 200*time.Millisecond, nil); err != nil || ans.Status != runtime.RequestPending {
		t.Errorf("at the limit: %+v, %v", ans, err)
	}
	cut := errors.New("token disabled")
	if _, err := await.Request(ctx, hall, d, agent, "r-1", 5*time.Second, func(context.Context) error { return cut }); !errors.Is(err, cut) {
		t.Errorf("each failing: %v", err)
	}
	if _, err := await.Request(ctx, hall, d, agent, "r-2", 5*time.Second, nil); !errors.Is(err, runtime.ErrRunNotFound) {
		t.Errorf("another's request: %v", err)
	}
	held := make(chan error, 1)
	go func() {
		_, err := await.Request(ctx, hall, d, agent, "r-1", 2*time.Second, nil)
		held <- err
	}()
	time.Sleep(100 * time.Millisecond)
	if _, err := await.Request(ctx, hall, d, agent, "r-1", time.Second, nil); !errors.Is(err, waiters.ErrFull) {
		t.Errorf("a second hold in a hall of one: %v, want waiters.ErrFull", err)
	}
	d.set(runtime.RequestCancelled)
	if err := <-held; err != nil {
		t.Errorf("the first hold: %v", err)
	}
}
