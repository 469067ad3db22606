package db

import (
	"context"
	"errors"
	"math"
	"reflect"
	"testing"

	"runsdesk/runtime"
)

type transitionCase struct {
	name  string
	setup func(t *testing.T, s *Store) runtime.Run
	op    func(ctx context.Context, s *Store, r runtime.Run) error
	// want derives the expected row from the row before; nil means the guard must refuse and
	// leave the row unchanged.
	want func(r runtime.Run) runtime.Run
}

func runTransitionCases(t *testing.T, cases []transitionCase) {
	t.Helper()
	s, _ := newStore(t)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := tc.setup(t, s)
			before = mustFind(t, s, before.UID)
			err := tc.op(t.Context(), s, before)
			after := mustFind(t, s, before.UID)
			if tc.want == nil {
				wantGuard(t, err)
				if !reflect.DeepEqual(after, before) {
					t.Fatalf("refused transition changed the row:\ngot  %+v\nwant %+v", after, before)
				}
				return
			}
			if err != nil {
				t.Fatalf("got error %v, want nil", err)
			}
			if want := tc.want(before); !reflect.DeepEqual(after, want) {
				t.Fatalf("row after transition:\ngot  %+v\nwant %+v", after, want)
			}
		})
	}
}

const now1 = t0 + 100

func setTotals(t *testing.T, s *Store, uid int64) {
	t.Helper()
	_, err := s.db.Exec(`UPDATE tx_nrllm_agentrun SET iterations = 3, truncated = 1,
		total_prompt_tokens = 10, total_completion_tokens = 5, total_tokens = 15,
		estimated_cost = 0.25, pending_effect = 'idempotent_write' WHERE uid = ?`, uid)
	if err != nil {
		t.Fatal(err)
	}
}

func TestCreateRun(t *testing.T) {
	s, _ := newStore(t)
	tests := []struct {
		name string
		in   runtime.NewRun
		want func(uid int64, in runtime.NewRun) runtime.Run
	}{
		{"CreateRun born running", runtime.NewRun{UUID: newUUID(), ConfigurationUID: 2,
			ConfigurationIdentifier: "c", BeUser: 3, QueuedRequest: "req",
			Lease: lease("interactive:h:1", t0), Now: t0},
			func(uid int64, in runtime.NewRun) runtime.Run {
				return runtime.Run{UID: uid, UUID: in.UUID, Status: runtime.StatusRunning,
					ConfigurationUID: 2, ConfigurationIdentifier: "c", BeUser: 3,
					QueuedRequest: "req", ClaimedBy: "interactive:h:1", LeaseExpires: t0 + 900,
					StartedAt: t0, Tstamp: t0, Crdate: t0}
			}},
		{"CreateRun born queued", runtime.NewRun{UUID: newUUID(), ConfigurationUID: 2,
			ConfigurationIdentifier: "c", QueuedRequest: "req", Now: t0},
			func(uid int64, in runtime.NewRun) runtime.Run {
				return runtime.Run{UID: uid, UUID: in.UUID, Status: runtime.StatusQueued,
					ConfigurationUID: 2, ConfigurationIdentifier: "c", QueuedRequest: "req",
					Tstamp: t0, Crdate: t0}
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := s.CreateRun(t.Context(), tc.in)
			if err != nil {
				t.Fatalf("got error %v, want nil", err)
			}
			want := tc.want(got.UID, tc.in)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("returned run:\ngot  %+v\nwant %+v", got, want)
			}
			if stored := mustFind(t, s, got.UID); !reflect.DeepEqual(stored, want) {
				t.Fatalf("stored run:\ngot  %+v\nwant %+v", stored, want)
			}
			byUUID, err := s.FindByUUID(t.Context(), tc.in.UUID)
			if err != nil || byUUID.UID != got.UID {
				t.Fatalf("FindByUUID: got %d, %v, want %d, nil", byUUID.UID, err, got.UID)
			}
		})
	}
}

func TestClaimQueued(t *testing.T) {
	runTransitionCases(t, []transitionCase{
		{"ClaimQueued queued to running", func(t *testing.T, s *Store) runtime.Run { return queuedRun(t, s) },
			func(ctx context.Context, s *Store, r runtime.Run) error {
				return s.ClaimQueued(ctx, r.UID, lease("worker:h:2", now1))
			},
			func(r runtime.Run) runtime.Run {
				r.Status, r.ClaimedBy, r.LeaseExpires = runtime.StatusRunning, "worker:h:2", now1+900
				r.StartedAt, r.Tstamp = now1, now1
				return r
			}},
		{"ClaimQueued keeps an earlier started_at", func(t *testing.T, s *Store) runtime.Run {
			r := runningRun(t, s, "w:1")
			if err := s.Requeue(t.Context(), r.UID, "w:1", t0+1, 0); err != nil {
				t.Fatal(err)
			}
			return r
		},
			func(ctx context.Context, s *Store, r runtime.Run) error {
				return s.ClaimQueued(ctx, r.UID, lease("worker:h:2", now1))
			},
			func(r runtime.Run) runtime.Run {
				r.Status, r.ClaimedBy, r.LeaseExpires, r.Tstamp = runtime.StatusRunning, "worker:h:2", now1+900, now1
				return r
			}},
		{"claim refuses a run before its retry time", retrying(now1 + 1),
			func(ctx context.Context, s *Store, r runtime.Run) error {
				return s.ClaimQueued(ctx, r.UID, lease("worker:h:2", now1))
			}, nil},
		{"claim takes a run at its retry time and clears it", retrying(now1),
			func(ctx context.Context, s *Store, r runtime.Run) error {
				return s.ClaimQueued(ctx, r.UID, lease("worker:h:2", now1))
			},
			func(r runtime.Run) runtime.Run {
				r.Status, r.ClaimedBy, r.LeaseExpires, r.Tstamp = runtime.StatusRunning, "worker:h:2", now1+900, now1
				r.RetryAt = 0
				return r
			}},
		{"ClaimQueued refuses a running run", func(t *testing.T, s *Store) runtime.Run { return runningRun(t, s, "w:1") },
			func(ctx context.Context, s *Store, r runtime.Run) error {
				return s.ClaimQueued(ctx, r.UID, lease("worker:h:2", now1))
			}, nil},
		{"ClaimQueued refuses a waiting run", func(t *testing.T, s *Store) runtime.Run {
			return waitingRun(t, s, runtime.StatusWaitingApproval, t0+1, "a")
		},
			func(ctx context.Context, s *Store, r runtime.Run) error {
				return s.ClaimQueued(ctx, r.UID, lease("worker:h:2", now1))
			}, nil},
		{"ClaimQueued refuses a terminal run", func(t *testing.T, s *Store) runtime.Run {
			return terminalRun(t, s, runtime.StatusCancelled, t0+1)
		},
			func(ctx context.Context, s *Store, r runtime.Run) error {
				return s.ClaimQueued(ctx, r.UID, lease("worker:h:2", now1))
			}, nil},
	})
}

// retrying returns a setup of a run handed back by its owner to be claimed from at.
func retrying(at int64) func(t *testing.T, s *Store) runtime.Run {
	return func(t *testing.T, s *Store) runtime.Run {
		r := runningRun(t, s, "w:1")
		if err := s.Requeue(t.Context(), r.UID, "w:1", t0+1, at); err != nil {
			t.Fatal(err)
		}
		return r
	}
}

func TestSuspend(t *testing.T) {
	suspend := func(status runtime.Status, owner string) func(context.Context, *Store, runtime.Run) error {
		return func(ctx context.Context, s *Store, r runtime.Run) error {
			return s.Suspend(ctx, r.UID, owner, runtime.Suspension{Status: status, State: "sealed",
				Tools: []string{"a", "b", "a"}, Iterations: 2, PromptTokens: 7, CompletionTokens: 3, EstimatedCost: 0.125}, now1)
		}
	}
	running := func(t *testing.T, s *Store) runtime.Run {
		r := runningRun(t, s, "w:1")
		if err := s.MarkPendingEffect(t.Context(), r.UID, lease("w:1", t0+1), "read_only"); err != nil {
			t.Fatal(err)
		}
		return r
	}
	paused := func(status runtime.Status) func(runtime.Run) runtime.Run {
		return func(r runtime.Run) runtime.Run {
			r.Status, r.SuspendedState, r.SuspendedAt, r.PendingTools = status, "sealed", now1, "a,b"
			r.ClaimedBy, r.LeaseExpires, r.PendingEffect, r.Tstamp = "", 0, "", now1
			r.Iterations, r.PromptTokens, r.CompletionTokens, r.TotalTokens, r.EstimatedCost = 2, 7, 3, 10, 0.125
			r.PauseNumber = 1
			return r
		}
	}
	runTransitionCases(t, []transitionCase{
		{"Suspend running to waiting_for_approval clears the lease", running,
			suspend(runtime.StatusWaitingApproval, "w:1"), paused(runtime.StatusWaitingApproval)},
		{"Suspend running to waiting_for_input", running,
			suspend(runtime.StatusWaitingInput, "w:1"), paused(runtime.StatusWaitingInput)},
		{"refuses another owner", running, suspend(runtime.StatusWaitingApproval, "w:2"), nil},
		{"refuses a queued run", func(t *testing.T, s *Store) runtime.Run { return queuedRun(t, s) },
			suspend(runtime.StatusWaitingApproval, ""), nil},
		{"refuses a waiting run", func(t *testing.T, s *Store) runtime.Run {
			return waitingRun(t, s, runtime.StatusWaitingInput, t0+1, "x")
		}, suspend(runtime.StatusWaitingApproval, ""), nil},
		{"refuses a terminal run", func(t *testing.T, s *Store) runtime.Run {
			return terminalRun(t, s, runtime.StatusCompleted, t0+1)
		}, suspend(runtime.StatusWaitingApproval, ""), nil},
	})

	s, _ := newStore(t)
	r := runningRun(t, s, "w:1")
	for _, sp := range []runtime.Suspension{
		{Status: runtime.StatusCompleted, State: "x"},
		{Status: runtime.StatusWaitingApproval, State: "x", Tools: []string{"a,b"}},
	} {
		err := s.Suspend(t.Context(), r.UID, "w:1", sp, now1)
		if err == nil {
			t.Fatalf("Suspend(%+v): got nil error, want a refusal", sp)
		}
		if got := mustFind(t, s, r.UID); got.Status != runtime.StatusRunning {
			t.Fatalf("refused Suspend(%+v): got status %q, want running", sp, got.Status)
		}
	}
}

func TestLeaseRenewalAndPendingEffect(t *testing.T) {
	renew := func(owner string, at int64) func(context.Context, *Store, runtime.Run) error {
		return func(ctx context.Context, s *Store, r runtime.Run) error {
			return s.RenewLease(ctx, r.UID, lease(owner, at))
		}
	}
	mark := func(owner, effect string) func(context.Context, *Store, runtime.Run) error {
		return func(ctx context.Context, s *Store, r runtime.Run) error {
			return s.MarkPendingEffect(ctx, r.UID, lease(owner, now1), effect)
		}
	}
	running := func(t *testing.T, s *Store) runtime.Run { return runningRun(t, s, "w:1") }
	runTransitionCases(t, []transitionCase{
		{"RenewLease renews the lease", running, renew("w:1", now1), func(r runtime.Run) runtime.Run {
			r.LeaseExpires, r.Tstamp = now1+900, now1
			return r
		}},
		{"RenewLease repeated in the same second still succeeds", running,
			func(ctx context.Context, s *Store, r runtime.Run) error {
				if err := s.RenewLease(ctx, r.UID, lease("w:1", t0)); err != nil {
					return err
				}
				return s.RenewLease(ctx, r.UID, lease("w:1", t0))
			}, func(r runtime.Run) runtime.Run { return r }},
		{"RenewLease refuses another owner", running, renew("w:2", now1), nil},
		{"RenewLease refuses a waiting run", func(t *testing.T, s *Store) runtime.Run {
			return waitingRun(t, s, runtime.StatusWaitingApproval, t0+1, "a")
		}, renew("", now1), nil},
		{"RenewLease refuses a terminal run", func(t *testing.T, s *Store) runtime.Run {
			return terminalRun(t, s, runtime.StatusFailed, t0+1)
		}, renew("", now1), nil},
		{"MarkPendingEffect sets the write fence and renews", running, mark("w:1", "non_idempotent_write"),
			func(r runtime.Run) runtime.Run {
				r.PendingEffect, r.LeaseExpires, r.Tstamp = "non_idempotent_write", now1+900, now1
				return r
			}},
		{"MarkPendingEffect repeated with the same values still succeeds", running,
			func(ctx context.Context, s *Store, r runtime.Run) error {
				if err := s.MarkPendingEffect(ctx, r.UID, lease("w:1", now1), "read_only"); err != nil {
					return err
				}
				return s.MarkPendingEffect(ctx, r.UID, lease("w:1", now1), "read_only")
			}, func(r runtime.Run) runtime.Run {
				r.PendingEffect, r.LeaseExpires, r.Tstamp = "read_only", now1+900, now1
				return r
			}},
		{"MarkPendingEffect clears the write fence", func(t *testing.T, s *Store) runtime.Run {
			r := runningRun(t, s, "w:1")
			if err := s.MarkPendingEffect(t.Context(), r.UID, lease("w:1", t0), "read_only"); err != nil {
				t.Fatal(err)
			}
			return r
		}, mark("w:1", ""), func(r runtime.Run) runtime.Run {
			r.PendingEffect, r.LeaseExpires, r.Tstamp = "", now1+900, now1
			return r
		}},
		{"MarkPendingEffect refuses another owner", running, mark("w:2", "read_only"), nil},
		{"MarkPendingEffect refuses a queued run", func(t *testing.T, s *Store) runtime.Run { return queuedRun(t, s) },
			mark("", "read_only"), nil},
	})
}

func TestRequeue(t *testing.T) {
	fencedFor := func(effect string) func(t *testing.T, s *Store) runtime.Run {
		return func(t *testing.T, s *Store) runtime.Run {
			r := runningRun(t, s, "w:1")
			if err := s.MarkPendingEffect(t.Context(), r.UID, lease("w:1", t0), effect); err != nil {
				t.Fatal(err)
			}
			return r
		}
	}
	running := fencedFor("read_only")
	midWrite := fencedFor("non_idempotent_write")
	requeued := func(r runtime.Run) runtime.Run {
		r.Status, r.RequeueCount, r.ClaimedBy, r.LeaseExpires = runtime.StatusQueued, r.RequeueCount+1, "", 0
		r.PendingEffect, r.Tstamp = "", now1+900+1
		return r
	}
	atLapse := now1 + 900 + 1
	runTransitionCases(t, []transitionCase{
		{"Requeue by the owner, request kept", running,
			func(ctx context.Context, s *Store, r runtime.Run) error {
				return s.Requeue(ctx, r.UID, "w:1", atLapse, 0)
			},
			requeued},
		{"owner requeues with a retry time", running,
			func(ctx context.Context, s *Store, r runtime.Run) error {
				return s.Requeue(ctx, r.UID, "w:1", atLapse, atLapse+30)
			},
			func(r runtime.Run) runtime.Run {
				r = requeued(r)
				r.RetryAt = atLapse + 30
				return r
			}},
		{"Requeue refuses another owner", running,
			func(ctx context.Context, s *Store, r runtime.Run) error {
				return s.Requeue(ctx, r.UID, "w:2", atLapse, 0)
			},
			nil},
		{"Requeue requeues an idempotent write, fence cleared", fencedFor("idempotent_write"),
			func(ctx context.Context, s *Store, r runtime.Run) error {
				return s.Requeue(ctx, r.UID, "w:1", atLapse, 0)
			},
			requeued},
		{"Requeue refuses a non-idempotent write in flight", midWrite,
			func(ctx context.Context, s *Store, r runtime.Run) error {
				return s.Requeue(ctx, r.UID, "w:1", atLapse, 0)
			},
			nil},
		{"RequeueStale refuses a non-idempotent write in flight", midWrite,
			func(ctx context.Context, s *Store, r runtime.Run) error { return s.RequeueStale(ctx, r.UID, atLapse) },
			nil},
		{"Requeue refuses a waiting run", func(t *testing.T, s *Store) runtime.Run {
			return waitingRun(t, s, runtime.StatusWaitingApproval, t0+1, "a")
		}, func(ctx context.Context, s *Store, r runtime.Run) error { return s.Requeue(ctx, r.UID, "", atLapse, 0) },
			nil},
		{"RequeueStale requeues a lapsed lease", running,
			func(ctx context.Context, s *Store, r runtime.Run) error {
				return s.RequeueStale(ctx, r.UID, r.LeaseExpires+1)
			}, func(r runtime.Run) runtime.Run {
				r = requeued(r)
				r.Tstamp = t0 + 900 + 1
				return r
			}},
		{"RequeueStale refuses a lease not yet expired", running,
			func(ctx context.Context, s *Store, r runtime.Run) error {
				return s.RequeueStale(ctx, r.UID, r.LeaseExpires)
			}, nil},
		{"RequeueStale never touches a waiting run", func(t *testing.T, s *Store) runtime.Run {
			return waitingRun(t, s, runtime.StatusWaitingInput, t0+1, "a")
		}, func(ctx context.Context, s *Store, r runtime.Run) error { return s.RequeueStale(ctx, r.UID, atLapse) },
			nil},
		{"RequeueStale refuses a queued run", func(t *testing.T, s *Store) runtime.Run { return queuedRun(t, s) },
			func(ctx context.Context, s *Store, r runtime.Run) error { return s.RequeueStale(ctx, r.UID, atLapse) },
			nil},
	})
}

func TestDeadLetterStale(t *testing.T) {
	running := func(t *testing.T, s *Store) runtime.Run {
		r := runningRun(t, s, "w:1")
		setTotals(t, s, r.UID)
		return r
	}
	lapsed := t0 + 900 + 1
	deadLetter := func(at int64) func(context.Context, *Store, runtime.Run) error {
		return func(ctx context.Context, s *Store, r runtime.Run) error {
			return s.DeadLetterStale(ctx, r.UID, runtime.ReasonNotRetryable, at)
		}
	}
	runTransitionCases(t, []transitionCase{
		{"DeadLetterStale fails a lapsed run, totals zeroed, payloads blanked", running, deadLetter(lapsed),
			func(r runtime.Run) runtime.Run {
				r.Status, r.TerminationReason, r.ErrorClass = runtime.StatusFailed, runtime.ReasonNotRetryable, ""
				r.Iterations, r.Truncated, r.PromptTokens, r.CompletionTokens, r.TotalTokens, r.EstimatedCost = 0, false, 0, 0, 0, 0
				r.SuspendedState, r.QueuedRequest, r.ClaimedBy, r.LeaseExpires = "", "", "", 0
				r.FinishedAt, r.Tstamp = lapsed, lapsed
				return r
			}},
		{"DeadLetterStale refuses a lease not yet expired", running, deadLetter(t0 + 900), nil},
		{"DeadLetterStale never touches a waiting run", func(t *testing.T, s *Store) runtime.Run {
			return waitingRun(t, s, runtime.StatusWaitingApproval, t0+1, "a")
		}, deadLetter(lapsed), nil},
		{"DeadLetterStale refuses a terminal run", func(t *testing.T, s *Store) runtime.Run {
			return terminalRun(t, s, runtime.StatusCompleted, t0+1)
		}, deadLetter(lapsed), nil},
	})
}

func TestFinish(t *testing.T) {
	st := runtime.Settlement{Status: runtime.StatusCompleted, Iterations: 4, Truncated: true,
		PromptTokens: 100, CompletionTokens: 50, TotalTokens: 150, EstimatedCost: 0.012345,
		ErrorClass: "", Reason: runtime.ReasonMaxIterations}
	finish := func(owner string, st runtime.Settlement) func(context.Context, *Store, runtime.Run) error {
		return func(ctx context.Context, s *Store, r runtime.Run) error {
			return s.Finish(ctx, r.UID, owner, st, now1)
		}
	}
	settled := func(r runtime.Run) runtime.Run {
		r.Status, r.Iterations, r.Truncated = st.Status, st.Iterations, st.Truncated
		r.PromptTokens, r.CompletionTokens, r.TotalTokens, r.EstimatedCost = 100, 50, 150, 0.012345
		r.ErrorClass, r.TerminationReason = "", st.Reason
		r.SuspendedState, r.QueuedRequest, r.ClaimedBy, r.LeaseExpires, r.PendingEffect = "", "", "", 0, ""
		r.SuspendedAt, r.PendingTools, r.FinishedAt, r.Tstamp = 0, "", now1, now1
		return r
	}
	running := func(t *testing.T, s *Store) runtime.Run {
		r := runningRun(t, s, "w:1")
		if err := s.MarkPendingEffect(t.Context(), r.UID, lease("w:1", t0), "idempotent_write"); err != nil {
			t.Fatal(err)
		}
		return r
	}
	failed := runtime.Settlement{Status: runtime.StatusFailed, ErrorClass: "Provider\\Down",
		Reason: runtime.ReasonProviderFailed}
	unrecordedWrite := runtime.Settlement{Status: runtime.StatusFailed, ErrorClass: "WriteOutcomeNotRecorded",
		Reason: runtime.ReasonNotRetryable, PendingEffect: "non_idempotent_write"}
	runTransitionCases(t, []transitionCase{
		{"Finish owner settles a running run, fence cleared", running, finish("w:1", st), settled},
		{"Finish without owner settles a running run", running, finish("", st), settled},
		{"Finish settles a waiting run, pause cleared", func(t *testing.T, s *Store) runtime.Run {
			return waitingRun(t, s, runtime.StatusWaitingApproval, t0+1, "a")
		}, finish("", st), settled},
		{"Finish settles a queued run", func(t *testing.T, s *Store) runtime.Run { return queuedRun(t, s) },
			finish("", st), settled},
		{"Finish refuses another owner", running, finish("w:2", st), nil},
		{"Finish keeps the fence it is given", running, finish("w:1", unrecordedWrite), func(r runtime.Run) runtime.Run {
			r = settled(r)
			r.Status, r.Iterations, r.Truncated = runtime.StatusFailed, 0, false
			r.PromptTokens, r.CompletionTokens, r.TotalTokens, r.EstimatedCost = 0, 0, 0, 0
			r.ErrorClass, r.TerminationReason = "WriteOutcomeNotRecorded", runtime.ReasonNotRetryable
			r.PendingEffect = "non_idempotent_write"
			return r
		}},
		{"Finish keeps the first outcome", func(t *testing.T, s *Store) runtime.Run {
			r := running(t, s)
			if err := s.Finish(t.Context(), r.UID, "", failed, t0+5); err != nil {
				t.Fatal(err)
			}
			return r
		}, finish("", st), nil},
		{"Finish cannot settle a cancelled run", func(t *testing.T, s *Store) runtime.Run {
			r := running(t, s)
			if err := s.Cancel(t.Context(), r.UID, t0+5); err != nil {
				t.Fatal(err)
			}
			return r
		}, finish("", failed), nil},
	})

	s, _ := newStore(t)
	r := runningRun(t, s, "w:1")
	if err := s.Finish(t.Context(), r.UID, "", runtime.Settlement{Status: runtime.StatusRunning}, now1); err == nil {
		t.Fatalf("Finish with a non-terminal status: got nil error, want a refusal")
	}
}

func TestCancel(t *testing.T) {
	cancel := func(ctx context.Context, s *Store, r runtime.Run) error { return s.Cancel(ctx, r.UID, now1) }
	cancelled := func(r runtime.Run) runtime.Run {
		r.Status, r.ErrorClass, r.TerminationReason = runtime.StatusCancelled, "", runtime.ReasonCancelled
		r.SuspendedState, r.QueuedRequest, r.ClaimedBy, r.LeaseExpires = "", "", "", 0
		r.SuspendedAt, r.PendingTools, r.FinishedAt, r.Tstamp = 0, "", now1, now1
		return r
	}
	runTransitionCases(t, []transitionCase{
		{"Cancel cancels a queued run", func(t *testing.T, s *Store) runtime.Run { return queuedRun(t, s) },
			cancel, cancelled},
		{"Cancel cancels a running run, totals and fence kept", func(t *testing.T, s *Store) runtime.Run {
			r := runningRun(t, s, "w:1")
			setTotals(t, s, r.UID)
			return r
		}, cancel, cancelled},
		{"Cancel cancels a waiting run, pause cleared", func(t *testing.T, s *Store) runtime.Run {
			return waitingRun(t, s, runtime.StatusWaitingInput, t0+1, "a", "b")
		}, cancel, cancelled},
		{"Cancel refuses a completed run", func(t *testing.T, s *Store) runtime.Run {
			return terminalRun(t, s, runtime.StatusCompleted, t0+1)
		}, cancel, nil},
		{"Cancel refuses a cancelled run", func(t *testing.T, s *Store) runtime.Run {
			return terminalRun(t, s, runtime.StatusCancelled, t0+1)
		}, cancel, nil},
	})
}

func TestRecordCancelledTotals(t *testing.T) {
	cancelledWithTotals := func(t *testing.T, s *Store) runtime.Run {
		r := runningRun(t, s, "w:1")
		setTotals(t, s, r.UID)
		if err := s.Cancel(t.Context(), r.UID, t0+1); err != nil {
			t.Fatal(err)
		}
		return r
	}
	record := func(iterations int, prompt, completion int64) func(context.Context, *Store, runtime.Run) error {
		return func(ctx context.Context, s *Store, r runtime.Run) error {
			return s.RecordCancelledTotals(ctx, r.UID, iterations, prompt, completion, 0.5, now1)
		}
	}
	runTransitionCases(t, []transitionCase{
		{"raises the totals of a cancelled run", cancelledWithTotals, record(4, 12, 6), func(r runtime.Run) runtime.Run {
			r.Iterations, r.PromptTokens, r.CompletionTokens, r.TotalTokens, r.EstimatedCost, r.Tstamp = 4, 12, 6, 18, 0.5, now1
			return r
		}},
		{"never lowers them", cancelledWithTotals, record(2, 40, 40), nil},
		{"refuses a running run", func(t *testing.T, s *Store) runtime.Run { return runningRun(t, s, "w:1") },
			record(4, 12, 6), nil},
	})
}

func TestTransitionOnMissingRunIsGuard(t *testing.T) {
	s, _ := newStore(t)
	wantGuard(t, s.ClaimQueued(t.Context(), 999, lease("w", now1)))
	wantGuard(t, s.Cancel(t.Context(), 999, now1))
}

// TestCheckpoint: the owner of a running run stores its progress, which clears the write
// fence and renews the lease; anyone else, or a run not running, is refused.
func TestCheckpoint(t *testing.T) {
	ctx := t.Context()
	s, _ := newStore(t)
	r := runningRun(t, s, "w:1")
	if err := s.MarkPendingEffect(ctx, r.UID, lease("w:1", t0+1), "non_idempotent_write"); err != nil {
		t.Fatal(err)
	}
	if err := s.Checkpoint(ctx, r.UID, lease("w:2", t0+2), `{"messages":[]}`, `{"kind":"plan"}`); !errors.Is(err, runtime.ErrGuard) {
		t.Fatalf("checkpoint by another owner: %v, want ErrGuard", err)
	}
	if err := s.Checkpoint(ctx, r.UID, lease("w:1", t0+2), `{"messages":[]}`, `{"kind":"plan"}`); err != nil {
		t.Fatalf("checkpoint: %v", err)
	}
	if err := s.Checkpoint(ctx, r.UID, lease("w:1", t0+2), `{"messages":[]}`, `{"kind":"plan"}`); err != nil {
		t.Fatalf("repeated checkpoint in the same second: %v", err)
	}
	got := mustFind(t, s, r.UID)
	if got.SuspendedState != `{"messages":[]}` || got.QueuedRequest != `{"kind":"plan"}` || got.PendingEffect != "" ||
		got.LeaseExpires != t0+2+900 || got.Status != runtime.StatusRunning {
		t.Fatalf("after checkpoint: %+v", got)
	}
	w := waitingRun(t, s, runtime.StatusWaitingInput, t0+3, "x")
	if err := s.Checkpoint(ctx, w.UID, lease("w:1", t0+4), "{}", "{}"); !errors.Is(err, runtime.ErrGuard) {
		t.Fatalf("checkpoint of a waiting run: %v, want ErrGuard", err)
	}
}

// TestTotalsSaturate: totals beyond what the columns hold (int unsigned tokens, decimal(10,6)
// cost), or below 0, are stored at the column's bound by Suspend, Finish and
// RecordCancelledTotals instead of failing the save.
func TestTotalsSaturate(t *testing.T) {
	ctx := t.Context()
	s, _ := newStore(t)
	const huge = int64(1) << 40
	want := func(r runtime.Run, prompt, completion, total int64, cost float64) {
		t.Helper()
		got := mustFind(t, s, r.UID)
		if got.PromptTokens != prompt || got.CompletionTokens != completion || got.TotalTokens != total || got.EstimatedCost != cost {
			t.Fatalf("stored totals %d/%d/%d, cost %f; want %d/%d/%d, cost %f", got.PromptTokens, got.CompletionTokens,
				got.TotalTokens, got.EstimatedCost, prompt, completion, total, cost)
		}
	}
	suspended := runningRun(t, s, "w:1")
	if err := s.Suspend(ctx, suspended.UID, "w:1", runtime.Suspension{Status: runtime.StatusWaitingInput, State: "{}",
		PromptTokens: huge, CompletionTokens: -5, EstimatedCost: 1e12}, now1); err != nil {
		t.Fatalf("suspend: %v", err)
	}
	want(suspended, maxTokensColumn, 0, maxTokensColumn, maxCostColumn)
	finished := runningRun(t, s, "w:1")
	if err := s.Finish(ctx, finished.UID, "w:1", runtime.Settlement{Status: runtime.StatusCompleted, Reason: "completed",
		PromptTokens: -huge, CompletionTokens: huge, TotalTokens: huge, EstimatedCost: math.NaN()}, now1); err != nil {
		t.Fatalf("finish: %v", err)
	}
	want(finished, 0, maxTokensColumn, maxTokensColumn, maxCostColumn)
	cancelled := runningRun(t, s, "w:1")
	if err := s.Cancel(ctx, cancelled.UID, now1); err != nil {
		t.Fatal(err)
	}
	if err := s.RecordCancelledTotals(ctx, cancelled.UID, 3, huge, huge, -1, now1); err != nil {
		t.Fatalf("record cancelled totals: %v", err)
	}
	want(cancelled, maxTokensColumn, maxTokensColumn, maxTokensColumn, 0)
}
