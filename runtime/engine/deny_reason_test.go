package engine_test

import (
	"errors"
	"strings"
	"testing"

	"runsdesk/runtime"
	"runsdesk/seal"
)

// TestDenialTellsTheModelWhoAndWhy: the tool result the model gets for a denied call names
// who denied (a person by display name, else username, and role; a service account by name)
// and their reason, or says none was given; the reason is stored with the decision (sealed
// when keys are set), placed on the timeline by the decision's event, and the event records
// only reasonGiven.
func TestDenialTellsTheModelWhoAndWhy(t *testing.T) {
	ada := runtime.Actor{UserUID: 3, Name: "rita", DisplayName: "Ada", Role: runtime.RoleReviewer}
	for _, tc := range []struct {
		name   string
		actor  runtime.Actor
		reason string
		keys   bool
		want   string
	}{
		{"person with a display name", ada, "wrong customer, use order B-2", false,
			`Error: tool "send_mail" was denied by Ada (reviewer): wrong customer, use order B-2`},
		{"person by username, sealed", admin2, "not today", true, `Error: tool "send_mail" was denied by bob (admin): not today`},
		{"service account", service, "blocked by policy", false, `Error: tool "send_mail" was denied by service account ci: blocked by policy`},
		{"no reason", ada, "", false, `Error: tool "send_mail" was denied by Ada (reviewer); no reason given`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := newRecordingModel(t, toolCall("send_mail"), textAnswer("understood"))
			var opts []envOption
			if tc.keys {
				opts = append(opts, withKeys(t))
			}
			e := newEnv(t, nil, opts...)
			e.useModel(m.url)
			run := e.startAndRun(admin)
			e.wantStatus(run.UUID, runtime.StatusWaitingApproval)
			digest := e.view(run.UUID).Pause.Digest
			out, err := e.rt.Approve(e.ctx, tc.actor, run.UUID, runtime.ApprovalDecision{TurnDigest: digest, Reason: tc.reason})
			if err != nil {
				t.Fatal(err)
			}
			if out.Decision.Reason != tc.reason {
				t.Errorf("outcome's decision reason %q, want %q", out.Decision.Reason, tc.reason)
			}
			e.rt.Wait()
			e.wantStatus(run.UUID, runtime.StatusCompleted)
			sent := m.request(1)
			if got := sent[len(sent)-1]; got.Role != "tool" || got.Content != tc.want {
				t.Fatalf("the model was told %q (%s), want %q", got.Content, got.Role, tc.want)
			}
			p := e.eventPayload(run.UUID, runtime.EventApproval)
			if given, _ := p["reasonGiven"].(bool); given != (tc.reason != "") {
				t.Errorf("approval event %v: reasonGiven should be %v", p, tc.reason != "")
			}
			for _, ev := range e.events(run.UUID) {
				if tc.reason != "" && strings.Contains(string(ev.Payload), tc.reason) {
					t.Errorf("event %s carries the reason's text: %s", ev.Kind, ev.Payload)
				}
			}
			var stored string
			if err := e.sql.QueryRow(`SELECT reason FROM tx_runsdesk_decision WHERE run = ?`, run.UID).Scan(&stored); err != nil {
				t.Fatal(err)
			}
			if sealed := strings.HasPrefix(stored, seal.Prefix); tc.reason != "" && (sealed != tc.keys || tc.keys && strings.Contains(stored, tc.reason)) {
				t.Errorf("reason stored as %.60q: sealed should be %v", stored, tc.keys)
			}
			tl, err := e.rt.Timeline(e.ctx, support, e.run(run.UUID))
			if err != nil {
				t.Fatal(err)
			}
			var onTimeline string
			for _, ev := range tl.Events {
				if ev.Kind == runtime.EventApproval {
					onTimeline = tl.Reasons[ev.Sequence]
				}
			}
			if onTimeline != tc.reason {
				t.Errorf("the timeline shows the reason %q on the approval event, want %q", onTimeline, tc.reason)
			}
		})
	}
}

// TestReasonIsCapped: a reason of 1,000 characters is accepted, one longer or not UTF-8 is
// invalid_request and decides nothing.
func TestReasonIsCapped(t *testing.T) {
	e := newEnv(t, nil)
	m := newRecordingModel(t, toolCall("send_mail"), textAnswer("understood"))
	e.useModel(m.url)
	run := e.startAndRun(admin)
	digest := e.view(run.UUID).Pause.Digest
	for _, bad := range []string{strings.Repeat("é", runtime.MaxReasonCharacters+1), "\xff"} {
		_, err := e.rt.Approve(e.ctx, reviewer, run.UUID, runtime.ApprovalDecision{TurnDigest: digest, Reason: bad})
		if !errors.Is(err, runtime.ErrInvalidRequest) {
			t.Fatalf("reason of %d bytes: %v, want invalid_request", len(bad), err)
		}
	}
	e.wantStatus(run.UUID, runtime.StatusWaitingApproval)
	if _, err := e.rt.Approve(e.ctx, reviewer, run.UUID, runtime.ApprovalDecision{TurnDigest: digest, Reason: strings.Repeat("é", runtime.MaxReasonCharacters)}); err != nil {
		t.Fatalf("a reason of %d characters: %v", runtime.MaxReasonCharacters, err)
	}
}
