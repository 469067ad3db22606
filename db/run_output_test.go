package db

import (
	"errors"
	"testing"

	"runsdesk/runtime"
)

// TestFinishCarriesTheOutputInItsBatch: the settle of a run this Store claimed writes its
// output in its one batch (the application pool sends no statement) when its configuration
// has no `finished` rule; a second settle misses its guard and leaves the output as it was;
// with a `finished` rule the settle writes the notification with the output, in a transaction.
func TestFinishCarriesTheOutputInItsBatch(t *testing.T) {
	dsn := newMigrated(t)
	batches, err := OpenBatches(t.Context(), dsn, testLayout()...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { batches.Close() })
	rec := &recorder{}
	s := New(openRecording(t, dsn, rec), WithBatches(batches))
	settle := func(cfg *runtime.Configuration, output string) runtime.Run {
		r := waitingRun(t, s, runtime.StatusWaitingApproval, t0+1, "lookup")
		c := resumeClaim(mustFind(t, s, r.UID), "resume:h:1", "k")
		if _, _, err := s.Commit(t.Context(), c); err != nil {
			t.Fatal(err)
		}
		rec.reset()
		st := runtime.Settlement{Status: runtime.StatusCompleted, Reason: runtime.ReasonCompleted, Output: output, Configuration: cfg}
		if err := s.Finish(t.Context(), r.UID, c.Resume.Lease.Owner, st, t0+5, stepEvents(r.UID)...); err != nil {
			t.Fatal(err)
		}
		return r
	}
	quiet := &runtime.Configuration{Identifier: "cfg", Notify: []runtime.NotifyRule{{Events: []runtime.NotifyEvent{runtime.NotifyWaiting},
		Channel: runtime.ChannelWebhook, URL: "https://hooks.example/w", SecretEnv: "HOOK"}}}
	r := settle(quiet, "the answer")
	if qs := rec.take(); len(qs) != 0 {
		t.Fatalf("the settle sent %d statements outside its batch: %v", len(qs), qs)
	}
	if out, ok, err := s.RunOutput(t.Context(), r.UID, r.UUID); err != nil || !ok || out.Text != "the answer" || out.Finished != t0+5 {
		t.Fatalf("RunOutput = %+v, %v, %v", out, ok, err)
	}
	again := runtime.Settlement{Status: runtime.StatusFailed, Reason: runtime.ReasonNotRetryable, Output: "another"}
	if err := s.Finish(t.Context(), r.UID, "", again, t0+9); !errors.Is(err, runtime.ErrGuard) {
		t.Fatalf("second settle: %v, want ErrGuard", err)
	}
	if out, _, _ := s.RunOutput(t.Context(), r.UID, r.UUID); out.Text != "the answer" || out.Finished != t0+5 {
		t.Fatalf("after a missed settle the output is %+v", out)
	}

	told := &runtime.Configuration{Identifier: "cfg", Name: "Config", Notify: []runtime.NotifyRule{{Events: []runtime.NotifyEvent{runtime.NotifyFinished},
		Channel: runtime.ChannelWebhook, URL: "https://hooks.example/f", SecretEnv: "HOOK", IncludeOutput: true}}}
	r = settle(told, "told answer")
	ns, err := s.RunNotifications(t.Context(), r.UID, 10)
	if err != nil || len(ns) != 1 || ns[0].Event != runtime.NotifyFinished || ns[0].TerminationReason != runtime.ReasonCompleted ||
		ns[0].ConfigurationName != "Config" || ns[0].RunUUID != r.UUID {
		t.Fatalf("notifications %+v, %v; want one run.finished named by the known configuration", ns, err)
	}
	if out, ok, _ := s.RunOutput(t.Context(), r.UID, r.UUID); !ok || out.Text != "told answer" {
		t.Fatalf("RunOutput with a finished rule = %+v, %v", out, ok)
	}
}
