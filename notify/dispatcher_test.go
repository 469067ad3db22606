package notify_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"runsdesk/notify"
	"runsdesk/runtime"
)

// hanging is a receiver that never answers: each request is held until its client gives up.
// It counts the requests and the most it held at once.
type hanging struct {
	mu                  sync.Mutex
	held, most, arrived int
	srv                 *httptest.Server
}

func newHanging(t *testing.T) *hanging {
	h := &hanging{}
	stop := make(chan struct{})
	h.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		h.mu.Lock()
		h.held++
		h.arrived++
		h.most = max(h.most, h.held)
		h.mu.Unlock()
		select {
		case <-r.Context().Done():
		case <-stop:
		}
		h.mu.Lock()
		h.held--
		h.mu.Unlock()
	}))
	t.Cleanup(func() { close(stop); h.srv.Close() })
	return h
}

func (h *hanging) counts() (held, most, arrived int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.held, h.most, h.arrived
}

// TestHangingReceiverDelaysNoOther: with 200 notifications queued for a receiver that never
// answers, another configuration's webhook arrives within one attempt timeout of being
// queued, and the hanging receiver never has more than the per-host limit (4) in flight.
func TestHangingReceiverDelaysNoOther(t *testing.T) {
	const timeout = time.Second
	stuck := newHanging(t)
	ok := newEndpoint(t, http.StatusOK)
	hook := func(url string) runtime.NotifyRule {
		return runtime.NotifyRule{Events: []runtime.NotifyEvent{runtime.NotifyWaiting}, Channel: runtime.ChannelWebhook, URL: url, SecretEnv: "S"}
	}
	d := newDesk(t, hook(stuck.srv.URL))
	payouts := d.configure(t, "payouts", hook(ok.srv.URL))
	for range 200 {
		d.wait(t)
	}
	start := time.Now()
	disp := notify.New(notify.Config{Outbox: d.store, Getenv: func(string) string { return "secret" },
		Now: func() time.Time { return t0.Add(time.Since(start)) }, Interval: 20 * time.Millisecond,
		Timeout: timeout, Backoff: time.Hour, MaxAttempts: 3})
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- disp.Run(ctx) }()
	defer func() {
		cancel()
		<-done
	}()

	until(t, 5*time.Second, func() bool { held, _, _ := stuck.counts(); return held == notify.DefaultPerHost })
	queued := time.Now()
	d.waitIn(t, payouts, "payouts")
	until(t, 10*time.Second, func() bool { return len(ok.requests()) == 1 })
	if delay := time.Since(queued); delay > timeout+time.Second {
		t.Fatalf("the other configuration's webhook arrived %s after it was queued, want within %s (plus 1s)", delay, timeout)
	}
	time.Sleep(timeout + timeout/2)
	if _, most, arrived := stuck.counts(); most != notify.DefaultPerHost || arrived <= notify.DefaultPerHost {
		t.Fatalf("hanging receiver: at most %d in flight (want %d), %d requests (want more than one round)", most, notify.DefaultPerHost, arrived)
	}
}

// until polls cond every 10ms until it holds, failing the test after limit.
func until(t *testing.T, limit time.Duration, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(limit); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("condition not met within %s", limit)
		}
	}
}
