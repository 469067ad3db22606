package db

import (
	"slices"
	"strings"
	"testing"

	"runsdesk/runtime"
)

// TestListWaitingSearch: Search finds a waiting run by the start of its uuid, its
// configuration's identifier or name, one of its pause's tools, its subject, or who started
// it (a person or a service account), case- and accent-insensitively, with LIKE wildcards
// taken literally; the counts follow; every listed run names who started it.
func TestListWaitingSearch(t *testing.T) {
	s, pool := newStore(t)
	ctx := t.Context()
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := pool.ExecContext(ctx, q, args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	exec(`INSERT INTO be_users (uid, username) VALUES (7, 'Zoë Ünal'), (8, 'rita')`)
	exec(`INSERT INTO tx_nrllm_configuration (uid, identifier, name, provider_options, system_prompt, allowed_tools, notify)
		VALUES (1, 'refunds', 'Refund desk', '{}', '', '[]', ''), (2, 'care', 'Customer care', '{}', '', '[]', '')`)
	mk := func(uuid string, cfg int64, ident string, owner int64, status runtime.Status, at int64, tools ...string) runtime.Run {
		service := ""
		if owner == 0 {
			service = "ci-bot"
		}
		r := mustCreate(t, s, runtime.NewRun{UUID: uuid, ConfigurationUID: cfg, ConfigurationIdentifier: ident, BeUser: owner,
			StartedByService: service, Lease: lease("w:1", t0), Now: t0})
		subject := runtime.PauseSubject{Text: "order_id=Q-" + uuid[:4], Quoted: true, Tool: tools[0]}
		if err := s.Suspend(ctx, r.UID, "w:1", runtime.Suspension{Status: status, State: "s", Tools: tools, Subject: subject}, at); err != nil {
			t.Fatal(err)
		}
		return mustFind(t, s, r.UID)
	}
	refund := mk("d00d0001-0000-4000-8000-000000000001", 1, "refunds", 7, runtime.StatusWaitingApproval, t0+10, "lookup", "issue_refund")
	care := mk("cafe0002-0000-4000-8000-000000000002", 2, "care", 8, runtime.StatusWaitingInput, t0+20, "ask_amount")
	service := mk("beef0003-0000-4000-8000-000000000003", 2, "care", 0, runtime.StatusWaitingApproval, t0+30, "send_mail")

	for _, tc := range []struct {
		search string
		want   []runtime.Run
		counts runtime.WaitingCounts
	}{
		{"cafe", []runtime.Run{care}, runtime.WaitingCounts{Input: 1}},
		{"refunds", []runtime.Run{refund}, runtime.WaitingCounts{Approval: 1}},
		{"customer", []runtime.Run{care, service}, runtime.WaitingCounts{Approval: 1, Input: 1}},
		{"DESK", []runtime.Run{refund}, runtime.WaitingCounts{Approval: 1}},
		{"refund", []runtime.Run{refund}, runtime.WaitingCounts{Approval: 1}},
		{"amount", []runtime.Run{care}, runtime.WaitingCounts{Input: 1}},
		{"send_mail", []runtime.Run{service}, runtime.WaitingCounts{Approval: 1}},
		{"zoe", []runtime.Run{refund}, runtime.WaitingCounts{Approval: 1}},
		{"unal", []runtime.Run{refund}, runtime.WaitingCounts{Approval: 1}},
		{"RITA", []runtime.Run{care}, runtime.WaitingCounts{Input: 1}},
		{"q-CAFE", []runtime.Run{care}, runtime.WaitingCounts{Input: 1}},
		{"order_id=", []runtime.Run{refund, care, service}, runtime.WaitingCounts{Approval: 2, Input: 1}},
		{"CI-bot", []runtime.Run{service}, runtime.WaitingCounts{Approval: 1}},
		{"%", nil, runtime.WaitingCounts{}},
		{"send%mail", nil, runtime.WaitingCounts{}},
		{"nobody at all", nil, runtime.WaitingCounts{}},
		{strings.Repeat("x", maxSearch+1), nil, runtime.WaitingCounts{}},
	} {
		q := runtime.WaitingQuery{Search: tc.search, Limit: 50}
		got, err := s.ListWaiting(ctx, q)
		if err != nil {
			t.Fatalf("search %.20q: %v", tc.search, err)
		}
		if gu, wu := uids(got), uids(tc.want); !slices.Equal(gu, wu) {
			t.Errorf("search %.20q: runs %v, want %v", tc.search, gu, wu)
		}
		if c, err := s.CountWaiting(ctx, q); err != nil || c != tc.counts {
			t.Errorf("search %.20q: counts %+v, %v, want %+v", tc.search, c, err, tc.counts)
		}
	}
	approvals, err := s.ListWaiting(ctx, runtime.WaitingQuery{Status: runtime.StatusWaitingApproval, Search: "e", Limit: 1,
		AfterSuspendedAt: refund.SuspendedAt, AfterUID: refund.UID})
	if err != nil || !slices.Equal(uids(approvals), []int64{service.UID}) {
		t.Errorf("search with kind and keyset: %v, %v, want the service run", uids(approvals), err)
	}

	all, err := s.ListWaiting(ctx, runtime.WaitingQuery{Limit: 50})
	if err != nil {
		t.Fatal(err)
	}
	var by []string
	for _, r := range all {
		by = append(by, r.StartedBy+"/"+r.StartedByService)
	}
	if want := []string{"Zoë Ünal/", "rita/", "/ci-bot"}; !slices.Equal(by, want) {
		t.Errorf("StartedBy %q, want %q", by, want)
	}
}
