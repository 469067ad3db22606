package engine_test

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"runsdesk/runtime"
	"runsdesk/runtime/model"
)

// TestConcurrentSubmissions: 32 concurrent SubmitInput of the same valid data on one run give
// exactly one continuation; requests sharing the winner's key get its outcome, the others
// RunAlreadyResuming.
func TestConcurrentSubmissions(t *testing.T) {
	for _, sameKey := range []bool{true, false} {
		t.Run(fmt.Sprintf("sameKey=%v", sameKey), func(t *testing.T) {
			e := newEnv(t, []model.Turn{turn(call("ask_city", `{}`))})
			run := e.startAndRun(admin)
			digest := e.view(run.UUID).Pause.Digest
			const n = 32
			var wg sync.WaitGroup
			outs := make([]runtime.Outcome, n)
			errs := make([]error, n)
			start := make(chan struct{})
			for i := range n {
				wg.Add(1)
				go func() {
					defer wg.Done()
					key := "same"
					if !sameKey {
						key = fmt.Sprintf("k%d", i)
					}
					<-start
					outs[i], errs[i] = e.rt.SubmitInput(e.ctx, admin, run.UUID, runtime.InputSubmission{
						Data: map[string]any{"city": "Berlin"}, TurnDigest: digest, IdempotencyKey: key,
					})
				}()
			}
			close(start)
			wg.Wait()
			e.rt.Wait()
			fresh, replayed, already := 0, 0, 0
			for i := range n {
				switch {
				case errs[i] == nil && !outs[i].Replayed:
					fresh++
				case errs[i] == nil:
					replayed++
				case errors.Is(errs[i], runtime.ErrRunAlreadyResuming):
					already++
				default:
					t.Fatalf("submission %d: %v", i, errs[i])
				}
			}
			if fresh != 1 {
				t.Fatalf("fresh outcomes = %d, want 1 (replayed %d, already %d)", fresh, replayed, already)
			}
			if sameKey && already != 0 {
				t.Fatalf("same key: %d got RunAlreadyResuming, want the first outcome", already)
			}
			if !sameKey && replayed != 0 {
				t.Fatalf("different keys: %d replayed", replayed)
			}
			if got := len(e.rec.get("ask_city")); got != 1 {
				t.Fatalf("tool executed %d times, want 1", got)
			}
			inputs := 0
			for _, k := range e.kinds(run.UUID) {
				if k == runtime.EventInput {
					inputs++
				}
			}
			if inputs != 1 {
				t.Fatalf("input events = %d, want 1", inputs)
			}
			e.wantStatus(run.UUID, runtime.StatusCompleted)
		})
	}
}

// TestConcurrentApprovals: 32 reviewers approve at once; one wins.
func TestConcurrentApprovals(t *testing.T) {
	e := newEnv(t, []model.Turn{turn(call("send_mail", `{}`))})
	run := e.startAndRun(admin)
	digest := e.view(run.UUID).Pause.Digest
	var wg sync.WaitGroup
	var mu sync.Mutex
	wins := 0
	for i := range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			actor := runtime.Actor{UserUID: int64(10 + i), Role: runtime.RoleReviewer}
			_, err := e.rt.Approve(e.ctx, actor, run.UUID, runtime.ApprovalDecision{Approved: i%2 == 0, TurnDigest: digest})
			if err == nil {
				mu.Lock()
				wins++
				mu.Unlock()
			} else if !errors.Is(err, runtime.ErrRunAlreadyResuming) {
				t.Errorf("approve %d: %v", i, err)
			}
		}()
	}
	wg.Wait()
	e.rt.Wait()
	if wins != 1 {
		t.Fatalf("winners = %d, want 1", wins)
	}
}
