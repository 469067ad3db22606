package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"runsdesk/db"
	"runsdesk/runtime"
	"runsdesk/runtime/model"
)

// The suspend phases: each call creates a run born running and suspends it waiting for input
// (the store's Suspend: the guarded UPDATE, a step event and the notifications enqueue, in
// one transaction), passing the configuration as a segment does (so the rules are not read
// again), on configuration bench-suspend (no notify rules) or bench-suspend-notify
// (one webhook rule subscribed to waiting, so every suspend also writes one outbox row). The
// application's dispatcher delivers those rows meanwhile to a loopback endpoint answering 204,
// as it would in production. The phases report suspends per second and the mean time of the
// Suspend call alone.
const (
	phaseSuspend       = "suspend"
	phaseSuspendNotify = "suspend-notify"
	hookSecretEnv      = "BENCH_HOOK_SECRET"
)

// suspender holds the two configurations and the time spent in Suspend per phase.
type suspender struct {
	once  sync.Once
	err   error
	store *db.Store
	cfg   map[string]runtime.Configuration
	state string
	hook  *http.Server
	spent map[string]*atomic.Int64
	calls map[string]*atomic.Int64
}

// setUp stores the two configurations and starts the webhook endpoint, once.
func (s *suspender) setUp(ctx context.Context, b *bench) error {
	s.once.Do(func() {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			s.err = err
			return
		}
		s.hook = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) }),
			ReadHeaderTimeout: 5 * time.Second}
		go func() { _ = s.hook.Serve(ln) }()
		if err := os.Setenv(hookSecretEnv, "bench-signing-secret"); err != nil {
			s.err = err
			return
		}
		rule := runtime.NotifyRule{Events: []runtime.NotifyEvent{runtime.NotifyWaiting}, Channel: runtime.ChannelWebhook,
			URL: "http://" + ln.Addr().String() + "/hook", SecretEnv: hookSecretEnv}
		s.store, s.state = b.app.Store, b.state
		s.cfg = map[string]runtime.Configuration{}
		s.spent = map[string]*atomic.Int64{phaseSuspend: {}, phaseSuspendNotify: {}}
		s.calls = map[string]*atomic.Int64{phaseSuspend: {}, phaseSuspendNotify: {}}
		for phase, ident := range map[string]string{phaseSuspend: "bench-suspend", phaseSuspendNotify: "bench-suspend-notify"} {
			c := runtime.Configuration{Identifier: ident, Name: ident, Provider: model.Settings{Kind: model.KindScripted,
				Script: []model.Turn{{Content: "unused"}}}, Tools: []string{"ask_refund_amount"}}
			if phase == phaseSuspendNotify {
				c.Notify = []runtime.NotifyRule{rule}
			}
			if _, err := s.store.UpsertConfiguration(ctx, c); err != nil {
				s.err = err
				return
			}
			stored, err := s.store.ConfigurationByIdentifier(ctx, ident)
			if err != nil {
				s.err = err
				return
			}
			s.cfg[phase] = stored
		}
	})
	return s.err
}

// op is one call of phase: create a running run and suspend it.
func (s *suspender) op(phase string) func(context.Context, int) error {
	return func(ctx context.Context, _ int) error {
		ctx = context.WithoutCancel(ctx)
		now := time.Now().Unix()
		cfg := s.cfg[phase]
		r, err := s.store.CreateRun(ctx, runtime.NewRun{UUID: uuid.NewString(), ConfigurationUID: cfg.UID,
			ConfigurationIdentifier: phase, BeUser: 1, QueuedRequest: `{}`,
			Lease: runtime.Lease{Owner: "bench:suspend", Expires: now + 60, Now: now}, Now: now})
		if err != nil {
			return err
		}
		start := time.Now()
		err = s.store.Suspend(ctx, r.UID, "bench:suspend", runtime.Suspension{Status: runtime.StatusWaitingInput,
			State: s.state, Tools: []string{"ask_refund_amount"}, Iterations: 1, Configuration: &cfg}, now,
			runtime.NewEvent{Kind: runtime.EventLLM, Round: 1, Payload: []byte(`{"finishReason":"tool_calls"}`), Now: now})
		s.spent[phase].Add(int64(time.Since(start)))
		s.calls[phase].Add(1)
		return err
	}
}

// mean returns the mean Suspend time of phase since the last call, and resets it.
func (s *suspender) mean(phase string) time.Duration {
	n := s.calls[phase].Swap(0)
	spent := s.spent[phase].Swap(0)
	if n == 0 {
		return 0
	}
	return time.Duration(spent / n)
}

// undelivered counts the outbox rows not yet sent, to report whether the dispatcher kept up.
func (s *suspender) undelivered(ctx context.Context, b *bench) (int, error) {
	var n int
	err := b.books.QueryRowContext(ctx, `SELECT COUNT(*) FROM tx_runsdesk_outbox WHERE state IN ('pending', 'sending')`).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("count undelivered notifications: %w", err)
	}
	return n, nil
}

func (s *suspender) close() {
	if s.hook != nil {
		_ = s.hook.Close()
	}
}
