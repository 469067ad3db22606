package engine_test

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"runsdesk/runtime"
	"runsdesk/runtime/model"
	"runsdesk/runtime/quorum"
	"runsdesk/runtime/wait"
)

// voters are n reviewers (uids 10, 11, …) who may approve.
func voters(n int) []runtime.Actor {
	out := make([]runtime.Actor, n)
	for i := range out {
		out[i] = runtime.Actor{UserUID: int64(10 + i), Name: fmt.Sprintf("voter%d", i), Role: runtime.RoleReviewer}
	}
	return out
}

// quorumEnv is a run of send_mail waiting for approval under a configuration that needs
// required approvals.
func quorumEnv(t *testing.T, required int, automatic bool) (*env, runtime.Run) {
	t.Helper()
	e := newEnv(t, []model.Turn{turn(call("send_mail", `{}`)), {Content: "done"}})
	e.cfg.Quorum = quorum.Policy{Required: required, AutomaticVote: automatic}
	e.saveConfig()
	return e, e.startAndRun(admin)
}

func castVote(e *env, actor runtime.Actor, uuid, digest, key string) (runtime.Outcome, error) {
	return e.rt.Approve(e.ctx, actor, uuid, runtime.ApprovalDecision{Approved: true, TurnDigest: digest, IdempotencyKey: key})
}

func (e *env) countRows(query string, args ...any) int {
	e.t.Helper()
	var n int
	if err := e.sql.QueryRowContext(e.ctx, query, args...).Scan(&n); err != nil {
		e.t.Fatal(err)
	}
	return n
}

// TestQuorumTwoOfN: under approvals_required: 2 the first approval is a vote that leaves the
// run waiting (202-like outcome: votes 1 of 2, not resumed, a `vote` event, the card's
// tally); the same person again is already_voted, and with the same key gets the first
// outcome; a second person's approval resumes the run, which completes with the tool run once;
// a third approval is quorum_reached.
func TestQuorumTwoOfN(t *testing.T) {
	e, run := quorumEnv(t, 2, false)
	ppl := voters(3)
	digest := e.view(run.UUID).Pause.Digest
	out, err := castVote(e, ppl[0], run.UUID, digest, "k0")
	if err != nil || out.Resumed || out.Votes != 1 || out.Required != 2 {
		t.Fatalf("first vote: %+v, %v; want 1 of 2, not resumed", out, err)
	}
	e.wantStatus(run.UUID, runtime.StatusWaitingApproval)
	v, err := e.rt.Get(e.ctx, ppl[0], run.UUID)
	if err != nil || v.Pause.Quorum == nil || !v.Pause.Quorum.Voted || len(v.Pause.Quorum.Votes) != 1 || v.Pause.Quorum.Missing() != 1 {
		t.Fatalf("the voter's view: %+v, %v", v.Pause, err)
	}
	if v, _ := e.rt.Get(e.ctx, ppl[1], run.UUID); v.Pause.Quorum == nil || v.Pause.Quorum.Voted {
		t.Fatalf("another's view: %+v", v.Pause.Quorum)
	}
	_, err = castVote(e, ppl[0], run.UUID, digest, "k0-again")
	wantCode(t, err, runtime.CodeAlreadyVoted)
	if again, err := castVote(e, ppl[0], run.UUID, digest, "k0"); err != nil || !again.Replayed || again.Votes != 1 || again.Resumed {
		t.Fatalf("replay of the first vote: %+v, %v", again, err)
	}
	out, err = castVote(e, ppl[1], run.UUID, digest, "k1")
	if err != nil || !out.Resumed || out.Votes != 2 || out.Required != 2 {
		t.Fatalf("second vote: %+v, %v; want 2 of 2, resumed", out, err)
	}
	e.rt.Wait()
	e.wantStatus(run.UUID, runtime.StatusCompleted)
	if n := len(e.rec.get("send_mail")); n != 1 {
		t.Fatalf("send_mail ran %d times, want 1", n)
	}
	_, err = castVote(e, ppl[2], run.UUID, digest, "k2")
	wantCode(t, err, runtime.CodeQuorumReached)
	if n := e.countRows(`SELECT COUNT(*) FROM tx_runsdesk_vote WHERE run = ?`, run.UID); n != 2 {
		t.Errorf("%d votes stored, want 2", n)
	}
	kinds := fmt.Sprint(e.kinds(run.UUID))
	if want := "vote approval"; !strings.Contains(kinds, want) {
		t.Errorf("events %s lack %q", kinds, want)
	}
}

// TestQuorumDenialDecides: one denial on a 2-of-N turn with a vote recorded denies it at once.
func TestQuorumDenialDecides(t *testing.T) {
	e, run := quorumEnv(t, 2, false)
	ppl := voters(2)
	digest := e.view(run.UUID).Pause.Digest
	if _, err := castVote(e, ppl[0], run.UUID, digest, ""); err != nil {
		t.Fatal(err)
	}
	out, err := e.rt.Approve(e.ctx, ppl[1], run.UUID, runtime.ApprovalDecision{Approved: false, TurnDigest: digest, Reason: "wrong customer"})
	if err != nil || !out.Resumed || out.Decision.Approved {
		t.Fatalf("denial: %+v, %v", out, err)
	}
	e.rt.Wait()
	if n := len(e.rec.get("send_mail")); n != 0 {
		t.Fatalf("send_mail ran %d times after a denial", n)
	}
}

// TestQuorumAutomaticVote: a service account's approval of a 2-of-N turn is refused unless
// allow_automatic_vote; with it, it counts as one vote, and a second automatic approval is
// already_voted; a person's then resumes.
func TestQuorumAutomaticVote(t *testing.T) {
	e, run := quorumEnv(t, 2, false)
	digest := e.view(run.UUID).Pause.Digest
	_, err := castVote(e, service, run.UUID, digest, "")
	wantCode(t, err, runtime.CodeApproverNotPermitted)

	e, run = quorumEnv(t, 2, true)
	digest = e.view(run.UUID).Pause.Digest
	if out, err := castVote(e, service, run.UUID, digest, ""); err != nil || out.Resumed {
		t.Fatalf("automatic vote: %+v, %v", out, err)
	}
	other := service
	other.Name = "ci-2"
	_, err = castVote(e, other, run.UUID, digest, "")
	wantCode(t, err, runtime.CodeAlreadyVoted)
	if out, err := castVote(e, reviewer, run.UUID, digest, ""); err != nil || !out.Resumed {
		t.Fatalf("a person's vote completes it: %+v, %v", out, err)
	}
}

// TestQuorumCancelRemovesVotes: cancelling a run with a partial quorum removes its votes.
func TestQuorumCancelRemovesVotes(t *testing.T) {
	e, run := quorumEnv(t, 3, false)
	ppl := voters(2)
	digest := e.view(run.UUID).Pause.Digest
	for _, p := range ppl {
		if _, err := castVote(e, p, run.UUID, digest, ""); err != nil {
			t.Fatal(err)
		}
	}
	if n := e.countRows(`SELECT approvals FROM tx_nrllm_agentrun WHERE uid = ?`, run.UID); n != 2 {
		t.Fatalf("approvals = %d, want 2", n)
	}
	if _, err := e.rt.Cancel(e.ctx, admin, run.UUID); err != nil {
		t.Fatal(err)
	}
	if n := e.countRows(`SELECT COUNT(*) FROM tx_runsdesk_vote WHERE run = ?`, run.UID); n != 0 {
		t.Fatalf("%d votes left after cancel, want 0", n)
	}
}

// TestConcurrentQuorumVotes: 10 people approve a 2-of-N turn at once → exactly one resume,
// exactly 2 votes stored, the tool run once, the 8 others told quorum_reached; with -race.
func TestConcurrentQuorumVotes(t *testing.T) {
	e, run := quorumEnv(t, 2, false)
	ppl := voters(10)
	digest := e.view(run.UUID).Pause.Digest
	outs := make([]runtime.Outcome, len(ppl))
	errs := make([]error, len(ppl))
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i, p := range ppl {
		wg.Go(func() {
			<-start
			outs[i], errs[i] = castVote(e, p, run.UUID, digest, "")
		})
	}
	close(start)
	wg.Wait()
	e.rt.Wait()
	resumed, voted, reached := 0, 0, 0
	for i := range ppl {
		var re *runtime.Error
		switch {
		case errs[i] == nil && outs[i].Resumed:
			resumed++
		case errs[i] == nil:
			voted++
		case errors.As(errs[i], &re) && re.Code == runtime.CodeQuorumReached:
			reached++
		default:
			t.Errorf("approval %d: %v", i, errs[i])
		}
	}
	if resumed != 1 || voted != 1 || reached != 8 {
		t.Fatalf("resumed %d, voted %d, quorum_reached %d; want 1, 1, 8", resumed, voted, reached)
	}
	if n := e.countRows(`SELECT COUNT(*) FROM tx_runsdesk_vote WHERE run = ?`, run.UID); n != 2 {
		t.Errorf("%d votes stored, want 2", n)
	}
	if n := len(e.rec.get("send_mail")); n != 1 {
		t.Errorf("send_mail ran %d times, want 1", n)
	}
	e.wantStatus(run.UUID, runtime.StatusCompleted)
}

// TestConcurrentDenialAndFinalVote: a denial racing the final approval of a 2-of-N turn →
// exactly one outcome.
func TestConcurrentDenialAndFinalVote(t *testing.T) {
	for range 5 {
		e, run := quorumEnv(t, 2, false)
		ppl := voters(3)
		digest := e.view(run.UUID).Pause.Digest
		if _, err := castVote(e, ppl[0], run.UUID, digest, ""); err != nil {
			t.Fatal(err)
		}
		var errA, errD error
		var wg sync.WaitGroup
		start := make(chan struct{})
		wg.Go(func() { <-start; _, errA = castVote(e, ppl[1], run.UUID, digest, "") })
		wg.Go(func() {
			<-start
			_, errD = e.rt.Approve(e.ctx, ppl[2], run.UUID, runtime.ApprovalDecision{Approved: false, TurnDigest: digest})
		})
		close(start)
		wg.Wait()
		e.rt.Wait()
		if (errA == nil) == (errD == nil) {
			t.Fatalf("approval %v, denial %v: want exactly one accepted", errA, errD)
		}
		if n := e.countRows(`SELECT COUNT(*) FROM tx_runsdesk_decision WHERE run = ? AND kind = 'approval'`, run.UID); n != 1 {
			t.Fatalf("%d decisions, want 1", n)
		}
	}
}

// TestQuorumExpiryWithPartialVotes: a 2-of-N turn with one vote that expires under
// on_expiry: deny is denied (never approved), the tool is not run and its votes are removed;
// under cancel the run is cancelled and its votes removed too.
func TestQuorumExpiryWithPartialVotes(t *testing.T) {
	for _, action := range []wait.Action{wait.Deny, wait.Cancel} {
		t.Run(string(action), func(t *testing.T) {
			e := expireEnv(t, []model.Turn{turn(call("send_mail", `{}`)), {Content: "done"}}, wait.Policy{ExpiresAfter: time.Hour, OnExpiry: action})
			e.cfg.Quorum = quorum.Policy{Required: 2}
			e.saveConfig()
			run := e.startAndRun(admin)
			if _, err := castVote(e, voters(1)[0], run.UUID, e.view(run.UUID).Pause.Digest, ""); err != nil {
				t.Fatal(err)
			}
			e.clock.Advance(2 * time.Hour)
			e.expire()
			if n := len(e.rec.get("send_mail")); n != 0 {
				t.Fatalf("send_mail ran %d times after the expiry", n)
			}
			if n := e.countRows(`SELECT COUNT(*) FROM tx_runsdesk_vote WHERE run = ?`, run.UID); n != 0 {
				t.Fatalf("%d votes left after the expiry, want 0", n)
			}
			if action == wait.Cancel {
				e.wantStatus(run.UUID, runtime.StatusCancelled)
			}
		})
	}
}
