package engine_test

import (
	"slices"
	"testing"
	"time"

	"runsdesk/runtime"
	"runsdesk/runtime/engine"
	"runsdesk/runtime/model"
	"runsdesk/runtime/quorum"
	"runsdesk/runtime/wait"
)

// decisionAudit lists run's audit rows of decisions as "actor action/outcome reason", oldest
// first.
func (e *env) decisionAudit(uuid string) []string {
	e.t.Helper()
	rows, err := e.sql.QueryContext(e.ctx, `SELECT CONCAT(actor_name, ' ', action, '/', outcome, ' ', reason) FROM tx_runsdesk_audit
		WHERE run_uuid = ? AND action IN ('approval', 'expiry', 'elicitation_expiry', 'input_submit') ORDER BY uid`, uuid)
	if err != nil {
		e.t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var row string
		if err := rows.Scan(&row); err != nil {
			e.t.Fatal(err)
		}
		out = append(out, row)
	}
	if err := rows.Err(); err != nil {
		e.t.Fatal(err)
	}
	return out
}

// TestEveryDecisionKindIsCountedAndAudited: the decision pipeline's observers count and
// audit each decision once, whoever decides: a standing approval, an expiry that denies, the
// desk's cancel of an expired request for input, and a vote of a turn that needs two
// approvals, whose repeat by the same person is counted and audited as refused.
func TestEveryDecisionKindIsCountedAndAudited(t *testing.T) {
	observe := func(c *stepCounter) envOption { return func(_ *env, cfg *engine.Config) { cfg.Observer = c } }
	note := &runtime.AuditNote{Action: "approval", IP: "192.0.2.1", Outcome: "approved"}
	cases := []struct {
		name string
		// decide starts a run in a world observed by counted and decides it; it returns the run.
		decide  func(t *testing.T, counted *stepCounter) (*env, runtime.Run)
		counted []string
		audit   []string
		// decided is the time to decision observed, when the case checks it.
		decided []string
	}{
		{name: "standing approval", decide: func(t *testing.T, counted *stepCounter) (*env, runtime.Run) {
			e := newEnv(t, []model.Turn{turn(call("tag_order", `{"amount":5}`))}, observe(counted))
			e.writeRules(1, smallTags())
			return e, e.startRuled(reviewer)
		}, counted: []string{"approval/approved"}, audit: []string{"rule:small-tags approval/approved standing approval small-tags"}},
		{name: "expiry", decide: func(t *testing.T, counted *stepCounter) (*env, runtime.Run) {
			e := expireEnv(t, []model.Turn{turn(call("send_mail", `{}`)), {Content: "done"}},
				wait.Policy{ExpiresAfter: time.Hour, OnExpiry: wait.Deny}, observe(counted))
			run := e.startAndRun(reviewer)
			e.clock.Advance(time.Hour)
			e.expire()
			return e, run
		}, counted: []string{"expiry/deny"}, audit: []string{"system:expiry expiry/deny "}},
		{name: "elicitation timeout", decide: func(t *testing.T, counted *stepCounter) (*env, runtime.Run) {
			srv := elicitingServer(t, &answerLog{}, amountSchema)
			def := srv.Definition(t, "crm_refund", "confirm_refund", false)
			def.MCP.ElicitationTimeout = 2 * time.Minute
			e := remoteEnvWith(t, []model.Turn{turn(call("crm_refund", `{"order":"A1"}`)), {Content: "done"}}, []envOption{observe(counted)}, def)
			run := e.startAndRun(admin)
			e.clock.Advance(2*time.Minute + time.Second)
			e.expire()
			return e, run
		}, counted: []string{"elicitation_expiry/cancel"}, audit: []string{"elicitation timeout elicitation_expiry/cancel "},
			decided: []string{"elicitation test expiry 121"}},
		{name: "quorum vote", decide: func(t *testing.T, counted *stepCounter) (*env, runtime.Run) {
			e := newEnv(t, []model.Turn{turn(call("send_mail", `{}`)), {Content: "done"}}, observe(counted))
			e.cfg.Quorum = quorum.Policy{Required: 2}
			e.saveConfig()
			run := e.startAndRun(admin)
			digest := e.view(run.UUID).Pause.Digest
			for _, key := range []string{"k1", "k2"} {
				_, err := e.rt.Approve(e.ctx, reviewer, run.UUID, runtime.ApprovalDecision{Approved: true, TurnDigest: digest, IdempotencyKey: key, Audit: note})
				if key == "k2" {
					wantCode(t, err, runtime.CodeAlreadyVoted)
				} else if err != nil {
					t.Fatal(err)
				}
			}
			e.wantStatus(run.UUID, runtime.StatusWaitingApproval)
			return e, run
		}, counted: []string{"approval/approved", "approval/already_voted"},
			audit: []string{"rita approval/voted ", "rita approval/already_voted "}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			counted := &stepCounter{}
			e, run := c.decide(t, counted)
			if got := counted.countedDecisions(); !slices.Equal(got, c.counted) {
				t.Errorf("counted %q, want %q", got, c.counted)
			}
			if got := e.decisionAudit(run.UUID); !slices.Equal(got, c.audit) {
				t.Errorf("audit rows %q, want %q", got, c.audit)
			}
			if got := counted.decisions(); c.decided != nil && !slices.Equal(got, c.decided) {
				t.Errorf("times to decision %q, want %q", got, c.decided)
			}
		})
	}
}

// TestRefusedAndReplayedInputIsAudited: the pipeline audits a submission it refuses or
// replays from the caller's note, as the desk's form shapes it: a replay keeps the note's
// outcome with reason "replayed", invalid values are a failure naming how many fields, a stale
// form a failure naming its code; an unknown run writes no row. Each is counted once.
func TestRefusedAndReplayedInputIsAudited(t *testing.T) {
	counted := &stepCounter{}
	e := newEnv(t, []model.Turn{turn(call("ask_city", `{}`)), {Content: "done"}},
		func(_ *env, cfg *engine.Config) { cfg.Observer = counted })
	run := e.startAndRun(reviewer)
	digest := e.view(run.UUID).Pause.Digest
	note := &runtime.AuditNote{Action: "input_submit", IP: "192.0.2.1", Outcome: "success"}
	submit := func(uuid string, data map[string]any, digest, key string) error {
		_, err := e.rt.SubmitInput(e.ctx, reviewer, uuid, runtime.InputSubmission{Data: data, TurnDigest: digest, IdempotencyKey: key, Audit: note})
		e.rt.Wait()
		return err
	}
	wantCode(t, submit(run.UUID, map[string]any{"city": "O"}, digest, "bad"), runtime.CodeInvalidInputSubmission)
	wantCode(t, submit(run.UUID, map[string]any{"city": "Oslo"}, "sha256:0000", "stale"), runtime.CodeStaleInputTurn)
	wantCode(t, submit("00000000-0000-4000-8000-000000000000", map[string]any{"city": "Oslo"}, digest, "gone"), runtime.CodeRunNotFound)
	for range 2 {
		if err := submit(run.UUID, map[string]any{"city": "Oslo"}, digest, "good"); err != nil {
			t.Fatal(err)
		}
	}
	want := []string{"rita input_submit/failure invalid input: 1 field(s)", "rita input_submit/failure stale_input_turn",
		"rita input_submit/success ", "rita input_submit/success replayed"}
	if got := e.decisionAudit(run.UUID); !slices.Equal(got, want) {
		t.Errorf("audit rows %q, want %q", got, want)
	}
	wantCounted := []string{"input/invalid_input_submission", "input/stale_input_turn", "input/run_not_found", "input/submitted", "input/replayed"}
	if got := counted.countedDecisions(); !slices.Equal(got, wantCounted) {
		t.Errorf("counted %q, want %q", got, wantCounted)
	}
}
