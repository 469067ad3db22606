package metrics

import (
	"context"
	"testing"
	"time"

	"runsdesk/db"
	"runsdesk/runtime"
	"runsdesk/runtime/model"
)

// TestNotificationMetrics: delivery outcomes are counted by outcome, and the outbox age is
// the age of the oldest pending or sending notification in the database as of the snapshot,
// 0 once every one is sent.
func TestNotificationMetrics(t *testing.T) {
	ctx := context.Background()
	pool := migratedPool(t)
	s := db.New(pool)
	if _, err := s.UpsertConfiguration(ctx, runtime.Configuration{Identifier: "refunds", Name: "Refunds",
		Provider: model.Settings{Kind: model.KindScripted}, Notify: []runtime.NotifyRule{{Events: []runtime.NotifyEvent{runtime.NotifyWaiting},
			Channel: runtime.ChannelWebhook, URL: "https://hooks.example/", SecretEnv: "S"}}}); err != nil {
		t.Fatal(err)
	}
	cfg, err := s.ConfigurationByIdentifier(ctx, "refunds")
	if err != nil {
		t.Fatal(err)
	}
	r, err := s.CreateRun(ctx, runtime.NewRun{UUID: "6f1c0a52-9d4e-4b8e-a0c4-2f3b1d7e9a10", ConfigurationUID: cfg.UID, QueuedRequest: `{}`,
		Lease: runtime.Lease{Owner: "w", Expires: now, Now: now - 600}, Now: now - 600})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Suspend(ctx, r.UID, "w", runtime.Suspension{Status: runtime.StatusWaitingInput, State: `{}`, Tools: []string{"ask"}}, now-300); err != nil {
		t.Fatal(err)
	}
	clk := &testClock{t: time.Unix(now, 0)}
	m := New(Config{Source: s, Outbox: s, Now: clk.Now})
	m.ObserveNotification("sent")
	m.ObserveNotification("retried")
	m.ObserveNotification("retried")
	e := newEcho(m)
	mustContain(t, scrape(t, e), "runsdesk_notifications_oldest_undelivered_age_seconds 300",
		`runsdesk_notifications_total{outcome="sent"} 1`, `runsdesk_notifications_total{outcome="retried"} 2`,
		`runsdesk_notifications_total{outcome="failed"} 0`, `runsdesk_metrics_source_errors_total{query="oldest_undelivered"} 0`)
	ns, err := s.ClaimNotifications(ctx, "d", now, now+30, 10, runtime.NotifyReach{})
	if err != nil || len(ns) != 1 {
		t.Fatalf("claim: %v %v", ns, err)
	}
	if err := s.NotificationSent(ctx, ns[0].UID, "d", now); err != nil {
		t.Fatal(err)
	}
	clk.advance(time.Minute)
	mustContain(t, scrape(t, e), "runsdesk_notifications_oldest_undelivered_age_seconds 0")
}
