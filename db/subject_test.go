package db

import (
	"slices"
	"testing"

	"runsdesk/runtime"
)

// TestSuspendStoresTheSubject: the pause's subject is stored in clear as rendered, except a
// default one (the arguments quoted, no template) while states are sealed: then the tool name
// alone. A template's subject is stored sealed or not; a run keeps who started it.
func TestSuspendStoresTheSubject(t *testing.T) {
	plain, pool := newStore(t)
	sealed := New(pool, WithKeys(keyring(t, "k1")))
	quoted := runtime.PauseSubject{Text: "order_id=A-1001, amount=25", Quoted: true, Tool: "issue_refund"}
	templated := runtime.PauseSubject{Text: "Refund A-1001 for 25 EUR", Tool: "issue_refund"}
	for _, tc := range []struct {
		name    string
		s       *Store
		subject runtime.PauseSubject
		want    string
	}{
		{"clear, default", plain, quoted, "order_id=A-1001, amount=25"},
		{"sealed, default", sealed, quoted, "issue_refund"},
		{"clear, template", plain, templated, "Refund A-1001 for 25 EUR"},
		{"sealed, template", sealed, templated, "Refund A-1001 for 25 EUR"},
		{"sealed, template rendering nothing", sealed, runtime.PauseSubject{Tool: "issue_refund"}, "issue_refund"},
	} {
		r := mustCreate(t, tc.s, runtime.NewRun{UUID: newUUID(), ConfigurationUID: 1, ConfigurationIdentifier: "cfg",
			StartedByService: "ci", QueuedRequest: `{}`, Lease: lease("w:1", t0), Now: t0})
		sp := runtime.Suspension{Status: runtime.StatusWaitingApproval, State: `{"messages":[]}`, Tools: []string{"issue_refund"}, Subject: tc.subject}
		if err := tc.s.Suspend(t.Context(), r.UID, "w:1", sp, t0+1); err != nil {
			t.Fatalf("%s: Suspend: %v", tc.name, err)
		}
		var stored string
		if err := pool.QueryRow(`SELECT subject FROM tx_nrllm_agentrun WHERE uid = ?`, r.UID).Scan(&stored); err != nil {
			t.Fatal(err)
		}
		if stored != tc.want {
			t.Errorf("%s: stored subject %q, want %q", tc.name, stored, tc.want)
		}
		got := mustFind(t, tc.s, r.UID)
		if got.Subject != tc.want || got.StartedByService != "ci" || got.BeUser != 0 {
			t.Errorf("%s: read back subject %q, started by service %q, be_user %d", tc.name, got.Subject, got.StartedByService, got.BeUser)
		}
		listed, err := tc.s.ListWaiting(t.Context(), runtime.WaitingQuery{UUIDPrefix: r.UUID, Limit: 5})
		if err != nil || len(listed) != 1 || listed[0].Subject != tc.want || listed[0].StartedByService != "ci" {
			t.Errorf("%s: listed %+v, %v", tc.name, listed, err)
		}
	}
}

// TestNotificationCarriesTheSubjectOnlyWhenTheRuleSaysSo: of two rules on the same event,
// only the one with IncludeSubject gets the pause's subject in its row, for the waiting
// notification as for the decision's.
func TestNotificationCarriesTheSubjectOnlyWhenTheRuleSaysSo(t *testing.T) {
	s, _ := newStore(t)
	with := testRules[0]
	with.IncludeSubject = true
	rules := []runtime.NotifyRule{with, testRules[1], testRules[2]}
	cfg := notifyConfiguration(t, s, rules)
	r := runOf(t, s, cfg)
	sp := runtime.Suspension{Status: runtime.StatusWaitingApproval, State: `{"messages":[]}`, Tools: []string{"issue_refund"},
		Subject: runtime.PauseSubject{Text: "Refund A-1001 for 25 EUR", Tool: "issue_refund"}}
	if err := s.Suspend(t.Context(), r.UID, "w:1", sp, t0+5); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Commit(t.Context(), resumeClaim(mustFind(t, s, r.UID), "resume:1", "k1")); err != nil {
		t.Fatal(err)
	}
	var subjects []string
	for _, n := range outboxOf(t, s, r.UID) {
		subjects = append(subjects, string(n.Event)+"/"+n.Rule.Channel+"="+n.Subject)
	}
	want := []string{"waiting/webhook=Refund A-1001 for 25 EUR", "waiting/email=", "decided/webhook=Refund A-1001 for 25 EUR", "decided/slack="}
	if !slices.Equal(subjects, want) {
		t.Errorf("subjects %q, want %q", subjects, want)
	}
}
