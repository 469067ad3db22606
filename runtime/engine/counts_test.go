package engine_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"runsdesk/runtime"
	"runsdesk/runtime/engine"
	"runsdesk/runtime/model"
)

// countingStore counts CountWaiting calls.
type countingStore struct {
	runtime.Store
	n atomic.Int32
}

func (s *countingStore) CountWaiting(ctx context.Context, q runtime.WaitingQuery) (runtime.WaitingCounts, error) {
	s.n.Add(1)
	return s.Store.CountWaiting(ctx, q)
}

// TestCountsAreRememberedBriefly: the counts of one set of filters are counted once per two
// seconds of the runtime's clock (paging and the kind tab share them), other filters are
// counted apart, and a viewer who may not read the inbox is refused even while they are
// remembered.
func TestCountsAreRememberedBriefly(t *testing.T) {
	store := &countingStore{}
	e := newEnv(t, []model.Turn{turn(call("send_mail", `{}`))}, func(_ *env, c *engine.Config) {
		store.Store = c.Store
		c.Store = store
	})
	e.startAndRun(admin)
	counts := func(actor runtime.Actor, q runtime.WaitingQuery) runtime.WaitingCounts {
		t.Helper()
		c, err := e.rt.Counts(e.ctx, actor, q)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	want := func(got runtime.WaitingCounts, approval int, reads int32) {
		t.Helper()
		if got.Approval != approval || got.Input != 0 || store.n.Load() != reads {
			t.Errorf("counts %+v after %d store reads, want %d approval after %d", got, store.n.Load(), approval, reads)
		}
	}
	want(counts(admin, runtime.WaitingQuery{Limit: 26}), 1, 1)
	e.startAndRun(admin)
	want(counts(support, runtime.WaitingQuery{Status: runtime.StatusWaitingApproval, AfterUID: 9, Limit: 26}), 1, 1)
	e.clock.Advance(time.Second)
	want(counts(admin, runtime.WaitingQuery{}), 1, 1)
	want(counts(admin, runtime.WaitingQuery{ConfigurationUID: e.cfg.UID}), 2, 2)
	e.clock.Advance(time.Second)
	want(counts(admin, runtime.WaitingQuery{}), 2, 3)
	e.clock.Advance(-time.Minute)
	want(counts(admin, runtime.WaitingQuery{}), 2, 4)

	var re *runtime.Error
	noRead := runtime.Actor{Name: "ci", Role: runtime.RoleService, Scopes: []string{"run"}}
	if _, err := e.rt.Counts(e.ctx, noRead, runtime.WaitingQuery{}); !errors.As(err, &re) || re.Code != runtime.CodeRunAccessDenied {
		t.Errorf("a viewer who may not read the inbox gets %v, want %s", err, runtime.CodeRunAccessDenied)
	}
}
