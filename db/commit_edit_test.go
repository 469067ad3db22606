package db

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"runsdesk/runtime"
	"runsdesk/seal"
)

// votePlan is the record-only plan of voter's vote on r's pause (no decision row).
func votePlan(r runtime.Run, voter string, key string) runtime.CommitPlan {
	return runtime.CommitPlan{
		Read: r, Now: now1,
		Vote:  &runtime.Vote{Voter: voter, VoterName: voter, IdempotencyKey: key, TurnDigest: "d0", PinDigest: "p", Required: 3},
		Event: runtime.NewEvent{Kind: runtime.EventVote, Payload: json.RawMessage(`{"approved":true,"votes":1,"required":3}`)},
	}
}

// editPlan is votePlan of an edit: the pause's state replaced by state, its earlier votes
// voided.
func editPlan(r runtime.Run, voter, key, state string) runtime.CommitPlan {
	p := votePlan(r, voter, key)
	p.Vote.TurnDigest = "d1"
	p.DropVotes = true
	p.Replace = &runtime.PauseReplacement{State: state, Subject: runtime.PauseSubject{Text: "refund 40", Tool: "refund"}}
	return p
}

// TestCommitEditOnPause: an edit's plan, clear (batched) and sealed (statement by statement),
// rewrites the pause's state and subject, voids the earlier votes (the editor's own included)
// and restarts the count at its vote; the state is stored sealed under keys, and a claim of
// the run as the plan returned it holds. A plan of the state as read before the edit is a
// guard, and a replacement without a vote that voids the others is refused before any write.
func TestCommitEditOnPause(t *testing.T) {
	for _, sealed := range []bool{false, true} {
		t.Run(map[bool]string{false: "clear", true: "sealed"}[sealed], func(t *testing.T) {
			s, pool := newStore(t)
			if sealed {
				s = New(pool, WithKeys(keyring(t, "k1")))
			}
			r := waitingRun(t, s, runtime.StatusWaitingApproval, t0+1, "refund")
			for i, voter := range []string{"user:1", "user:2"} {
				if _, _, err := s.Commit(t.Context(), votePlan(mustFind(t, s, r.UID), voter, fmt.Sprintf("v%d", i))); err != nil {
					t.Fatalf("vote %d: %v", i, err)
				}
			}
			read := mustFind(t, s, r.UID)
			const state = `{"messages":[],"edit":{"by":1}}`
			run, ev, err := s.Commit(t.Context(), editPlan(read, "user:1", "e1", state))
			if err != nil {
				t.Fatalf("edit: %v", err)
			}
			if run.SuspendedState != state || run.Approvals != 1 || run.Status != runtime.StatusWaitingApproval || ev.Kind != runtime.EventVote {
				t.Fatalf("edit returned %+v, event %+v", run, ev)
			}
			stored := mustFind(t, s, r.UID)
			if stored.SuspendedState != state || stored.Approvals != 1 || stored.Subject != "refund 40" || stored.SuspendedAt != read.SuspendedAt {
				t.Fatalf("stored after the edit: %+v", stored)
			}
			var raw string
			if err := pool.QueryRow(`SELECT suspended_state FROM tx_nrllm_agentrun WHERE uid = ?`, r.UID).Scan(&raw); err != nil {
				t.Fatal(err)
			}
			if strings.HasPrefix(raw, seal.Prefix) != sealed {
				t.Fatalf("state stored as %.40q; sealed should be %v", raw, sealed)
			}
			votes, err := s.Votes(t.Context(), r.UID, read.PauseNumber)
			if err != nil || len(votes) != 1 || votes[0].IdempotencyKey != "e1" || votes[0].TurnDigest != "d1" {
				t.Fatalf("votes after the edit: %+v, %v; want the editor's only", votes, err)
			}
			_, _, err = s.Commit(t.Context(), editPlan(read, "user:3", "e3", state))
			wantGuard(t, err)
			bad := editPlan(run, "user:3", "e4", state)
			bad.DropVotes = false
			if _, _, err := s.Commit(t.Context(), bad); err == nil || errors.Is(err, runtime.ErrGuard) {
				t.Fatalf("a replacement that keeps the votes: %v; want refused", err)
			}
			if _, _, err := s.Commit(t.Context(), resumeClaim(run, "resume:h:1", "final")); err != nil {
				t.Fatalf("a claim of the run as the edit returned it: %v", err)
			}
		})
	}
}

// TestCommitStaleVotePlanWritesNothing: a batched plan that voids the pause's votes first (an
// edit's vote, an expiry's claim) whose guard misses, the run read again meanwhile so its
// event sequence is free, is refused as a guard and writes nothing: the votes, events,
// decisions and audit rows stay as they were.
func TestCommitStaleVotePlanWritesNothing(t *testing.T) {
	plans := map[string]func(stale runtime.Run) runtime.CommitPlan{
		"edit": func(stale runtime.Run) runtime.CommitPlan {
			return editPlan(stale, "user:3", "e3", `{"messages":[],"edit":{"by":3}}`)
		},
		"expiry": func(stale runtime.Run) runtime.CommitPlan {
			p := resumeClaim(stale, "resume:h:2", "expired")
			p.DropVotes, p.Configuration = true, &runtime.Configuration{Identifier: "refunds"}
			return p
		},
	}
	for name, plan := range plans {
		t.Run(name, func(t *testing.T) {
			s, pool := newStore(t)
			r := waitingRun(t, s, runtime.StatusWaitingApproval, t0+1, "refund")
			if _, _, err := s.Commit(t.Context(), votePlan(mustFind(t, s, r.UID), "user:1", "v1")); err != nil {
				t.Fatalf("vote: %v", err)
			}
			stale, err := s.FindByUUID(t.Context(), r.UUID)
			if err != nil {
				t.Fatal(err)
			}
			if _, _, err := s.Commit(t.Context(), editPlan(stale, "user:2", "e2", `{"messages":[],"edit":{"by":2}}`)); err != nil {
				t.Fatalf("edit: %v", err)
			}
			if _, err := s.FindByUUID(t.Context(), r.UUID); err != nil {
				t.Fatal(err)
			}
			count := func() string {
				var votes, events, decisions, audit int
				for q, n := range map[string]*int{
					`SELECT COUNT(*) FROM tx_runsdesk_vote WHERE run = ? AND idempotency_key = 'e3'`:                             &votes,
					`SELECT COUNT(*) FROM tx_nrllm_agentrun_event WHERE run = ?`:                                                 &events,
					`SELECT COUNT(*) FROM tx_runsdesk_decision WHERE run = ?`:                                                    &decisions,
					`SELECT COUNT(*) FROM tx_runsdesk_audit WHERE run_uuid = (SELECT uuid FROM tx_nrllm_agentrun WHERE uid = ?)`: &audit,
				} {
					if err := pool.QueryRow(q, r.UID).Scan(n); err != nil {
						t.Fatalf("%s: %v", q, err)
					}
				}
				all, err := s.Votes(t.Context(), r.UID, stale.PauseNumber)
				if err != nil {
					t.Fatal(err)
				}
				return fmt.Sprintf("%d votes (the stale one's %d), %d events, %d decisions, %d audit rows", len(all), votes, events, decisions, audit)
			}
			before := count()
			_, _, err = s.Commit(t.Context(), plan(stale))
			wantGuard(t, err)
			if after := count(); after != before {
				t.Fatalf("a plan whose guard missed left %s; before it: %s", after, before)
			}
		})
	}
}
