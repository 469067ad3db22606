package reliability

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"runsdesk/runtime"
)

// faultsTag builds the binary with its fault points (cmd/web/faults_on.go).
const faultsTag = "runsdesk_faults"

// faultLease is the lease of the processes that are killed, so the reaper may take their runs
// back soon.
const faultLease = "RUNSDESK_LEASE=2s"

// overlaid are the arguments ask_amount must receive for the amount 42.5.
const overlaid = `{"order_id":"A-1","amount":42.5}`

// TestKilledOnTheResumePath kills a serve process (built with the fault points) at each point
// of the resume path while it handles an input submission, then recovers the way an operator
// would: resubmit the form (the POST failed), or `runsdesk reap` once the lease lapsed and a
// fresh serve resumes the run from stored state. The person's amount reaches the tool: never
// lost, and never under two call ids.
func TestKilledOnTheResumePath(t *testing.T) {
	d := newDesk(t, faultsTag)
	api := newAPI(d.token)
	cases := []struct {
		point string
		// claimed: the kill leaves a claimed continuation (the reaper must requeue it).
		claimed bool
		// deliveries: how often the endpoint receives the call in all, always under one call
		// id. Every answered call is checkpointed before the next step, so a kill before
		// settle does not call the tool again.
		deliveries int
	}{
		{runtime.HookAfterValidation, false, 1},
		{runtime.HookAfterClaim, true, 1},
		{runtime.HookMidTool, true, 1},
		{runtime.HookBeforeSettle, true, 1},
	}
	for _, c := range cases {
		t.Run(c.point, func(t *testing.T) {
			setup := d.serve()
			run := api.waitingRun(t, setup.url, cfgAsk)
			setup.stop()

			doomed := d.serve(faultLease, "RUNSDESK_FAULT_POINT="+c.point)
			p := login(t, doomed.url)
			form := p.inputForm(run.Pending.TurnDigest, newKey(), "42.5")
			first := p.submitInput(doomed.url, run.UUID, form)
			if !doomed.waitKilled() || !strings.Contains(doomed.stderr.String(), "fault point "+c.point+" reached") {
				t.Fatalf("serve was not killed at %s; POST: %d %v", c.point, first.status, first.err)
			}
			row := readRun(t, d.sql, run.UUID)
			if !c.claimed {
				if first.err == nil {
					t.Errorf("the POST answered %d though the process died before the claim", first.status)
				}
				if row.Status != "waiting_for_input" || decisions(t, d.sql, run.UUID) != 0 || events(t, d.sql, run.UUID, "input") != 0 {
					t.Fatalf("after a kill before the claim: %+v, want the run unchanged", row)
				}
			} else {
				if row.Status != "running" || !row.HasRequest || row.ClaimedBy == "" || decisions(t, d.sql, run.UUID) != 1 {
					t.Fatalf("after a kill past the claim: %+v, want a claimed continuation with its decision", row)
				}
				reapUntil(t, d, "1 requeued")
			}

			fresh := d.serve()
			// The same browser resubmits the same form: its session lives in the database.
			again := p.submitInput(fresh.url, run.UUID, form)
			if again.err != nil || again.status != http.StatusSeeOther || again.location != "/runs/"+run.UUID {
				t.Errorf("resubmitting the same form: %d %q %v; want 303 to the run page", again.status, again.location, again.err)
			}
			final := api.waitStatus(t, fresh.url, run.UUID, "completed", "failed")
			if final.Status != "completed" {
				t.Errorf("run ended %s (%s), want completed", final.Status, final.TerminationReason)
			}
			if n := decisions(t, d.sql, run.UUID); n != 1 {
				t.Errorf("%d decisions, want 1", n)
			}
			if n := events(t, d.sql, run.UUID, "input"); n != 1 {
				t.Errorf("%d input events, want 1", n)
			}
			if audit := auditOf(t, d.sql, run.UUID, "input_submit"); audit["success/"] != 1 {
				t.Errorf("audit %v, want the accepted submission's own row (success/) once, whatever the kill", audit)
			}
			calls := d.tools.forRun(run.UUID)
			ids := map[string]bool{}
			for _, call := range calls {
				ids[call.CallID] = true
				if !sameJSON(call.Arguments, []byte(overlaid)) {
					t.Errorf("tool received %s, want %s", call.Arguments, overlaid)
				}
			}
			if len(ids) != 1 || len(calls) != c.deliveries {
				t.Errorf("tool endpoint: %d deliveries under %d call id(s), want %d under 1", len(calls), len(ids), c.deliveries)
			}
			t.Logf("%s: first POST %d (err %v); resubmit %d; audit %v; deliveries %d under %d call id",
				c.point, first.status, first.err != nil, again.status, auditOf(t, d.sql, run.UUID, "input_submit"), len(calls), len(ids))
			fresh.stop()
			checkInvariants(t, d.sql)
		})
	}
}

// TestKilledMidNonIdempotentWrite approves, on the run page's form, a turn whose tool is a
// non-idempotent write; the serve process (built with the fault points) dies mid-tool with
// the write fenced. `runsdesk reap` dead-letters the run (not_retryable), a fresh serve leaves
// it so, and the write never reaches its endpoint.
func TestKilledMidNonIdempotentWrite(t *testing.T) {
	d := newDesk(t, faultsTag)
	api := newAPI(d.token)
	setup := d.serve()
	run := api.waitingRun(t, setup.url, cfgRefund)
	setup.stop()

	doomed := d.serve(faultLease, "RUNSDESK_FAULT_POINT="+runtime.HookMidTool)
	p := login(t, doomed.url)
	first := p.post(doomed.url+"/runs/"+run.UUID+"/approval", url.Values{"_csrf": {p.csrf},
		"turn_digest": {run.Pending.TurnDigest}, "idempotency_key": {newKey()}, "decision": {"approve"}})
	if !doomed.waitKilled() || !strings.Contains(doomed.stderr.String(), "fault point mid_tool reached") {
		t.Fatalf("serve was not killed mid-tool; POST: %d %v %.300s", first.status, first.err, first.body)
	}
	if row := readRun(t, d.sql, run.UUID); row.Status != "running" || row.PendingEffect != "non_idempotent_write" {
		t.Fatalf("after the kill: %+v, want running with the write fenced", row)
	}
	out := reapUntil(t, d, "1 dead-lettered")
	fresh := d.serve("RUNSDESK_REAP_INTERVAL=1s")
	final := api.waitStatus(t, fresh.url, run.UUID, "failed", "completed")
	if final.Status != "failed" || final.TerminationReason != runtime.ReasonNotRetryable {
		t.Errorf("run ended %s (%s), want failed (not_retryable)", final.Status, final.TerminationReason)
	}
	if calls := d.tools.forRun(run.UUID); len(calls) != 0 {
		t.Errorf("the write reached its endpoint %d time(s), want 0", len(calls))
	}
	if n := decisions(t, d.sql, run.UUID); n != 1 || events(t, d.sql, run.UUID, "approval") != 1 {
		t.Errorf("%d decisions, want 1 with its event", n)
	}
	t.Logf("approval POST %d (err %v); reap: %s", first.status, first.err != nil, strings.TrimSpace(out))
	checkInvariants(t, d.sql)
}

// reapUntil runs `runsdesk reap` until its report contains want (the lease must lapse first)
// and returns that report.
func reapUntil(t *testing.T, d *desk, want string) string {
	t.Helper()
	var out string
	ok := eventually(60*time.Second, 500*time.Millisecond, func() bool {
		out = d.mustCLI("", "reap")
		return strings.Contains(out, want)
	})
	if !ok {
		t.Fatalf("reap never reported %q; last: %s", want, out)
	}
	return out
}
