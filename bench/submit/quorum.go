package main

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"

	"runsdesk/bench/benchapp"
	"runsdesk/views"
)

// The quorum phases run on a desk where every other waiting run waits for two approvals of
// one send_customer_email call on configuration bench-quorum (approvals_required: 2).
// quorum2 decides each run by two votes over HTTP, posted as a person posts the approval form
// (the session's CSRF token, the turn and pin digests, an idempotency key): the bench
// admin's first, which only records the vote and leaves the run waiting, then the bench
// reviewer's, which completes the quorum and resumes the run (the e-mail is sent and the run
// settles on the worker pool). quorum2-first casts the first vote alone on each run, so what
// a vote that does not decide costs is measured by itself: its "settled" counts votes.
const (
	phaseQuorum2        = "quorum2"
	phaseQuorum2First   = "quorum2-first"
	quorumConfiguration = "bench-quorum"
)

// quorumPhase reports whether phase decides bench-quorum's runs.
func quorumPhase(phase string) bool { return phase == phaseQuorum2 || phase == phaseQuorum2First }

// quorum reports whether a quorum phase is to run (the desk then holds runs for it).
func (o options) quorum() bool { return slices.ContainsFunc(o.phases, quorumPhase) }

// quorum2 takes the next run waiting for two approvals and approves it as the admin, then as
// the reviewer.
func (b *bench) quorum2(ctx context.Context, c int) error {
	ctx = context.WithoutCancel(ctx)
	t, err := b.quorum.take()
	if err != nil {
		return err
	}
	if err := b.approve(ctx, b.clients[c], t); err != nil {
		return err
	}
	return b.approve(ctx, b.voters[c], t)
}

// quorum2First takes the next run waiting for two approvals and casts the admin's vote only.
func (b *bench) quorum2First(ctx context.Context, c int) error {
	ctx = context.WithoutCancel(ctx)
	t, err := b.quorum.take()
	if err != nil {
		return err
	}
	return b.approve(ctx, b.clients[c], t)
}

// approve posts client's approval of run t's turn. The page answers 303 to an accepted vote
// and to a refused one alike (a flash says which), so the phases count what settled instead.
func (b *bench) approve(ctx context.Context, client *benchapp.Client, t target) error {
	form := url.Values{"_csrf": {client.CSRF()}, "turn_digest": {b.approval.digest}, views.FieldPinDigest: {b.approval.pin},
		"idempotency_key": {newKey()}, views.FieldDecision: {views.DecisionApprove}}
	status, body, err := client.PostForm(ctx, "/runs/"+url.PathEscape(t.uuid)+"/approval", form)
	if err != nil {
		return err
	}
	if status != http.StatusSeeOther {
		return fmt.Errorf("POST approval: status %d: %.200s", status, body)
	}
	return nil
}
