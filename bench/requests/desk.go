package main

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"runsdesk/bench/benchapp"
	"runsdesk/bench/benchenv"
	"runsdesk/db"
	"runsdesk/runtime"
	"runsdesk/runtime/apply"
	"runsdesk/runtime/schema"
	"runsdesk/views"
)

// The external configuration the agents ask in, and the action they ask to approve.
const (
	configuration = "bench-requests"
	action        = "bench_transfer"
	// arguments are the action's arguments, compact as the runtime stores them.
	arguments = `{"amount":125,"to":"ACME Ltd","invoice":"INV-42"}`
	title     = "Pay invoice INV-42"
)

// desk is the desk the phases ask on: seeded (benchenv kind inbox, its waiting runs beside
// the requests), with configuration bench-requests taking requests from one service account
// per agent (the API's rate limit is per token).
type desk struct {
	*benchenv.Desk
	// books is the bench's own pool (tokens, counts, server status), not counted.
	books *sql.DB
	// tokens are the agents' tokens, names their service accounts.
	tokens, names []string
	// cfgUID is bench-requests' uid.
	cfgUID int64
}

func newDesk(ctx context.Context, env *benchenv.Env, o options) (*desk, error) {
	bd, err := env.Desk(ctx, benchenv.DeskOptions{Kind: benchenv.KindInbox, Runs: o.runs, Fresh: true})
	if err != nil {
		return nil, err
	}
	return prepare(ctx, bd, max(o.calls, pathAgents))
}

// prepare applies bench-requests to bd with agents service accounts as its callers, and
// creates their tokens.
func prepare(ctx context.Context, bd *benchenv.Desk, agents int) (*desk, error) {
	books, err := db.Open(ctx, bd.DSN)
	if err != nil {
		return nil, fmt.Errorf("bookkeeping pool: %w", err)
	}
	d := &desk{Desk: bd, books: books}
	names := make([]string, agents)
	for i := range names {
		names[i] = fmt.Sprintf("ra-%d", i)
	}
	if err := applyConfiguration(ctx, books, names); err != nil {
		d.close()
		return nil, err
	}
	cfg, err := db.New(books).ConfigurationByIdentifier(ctx, configuration)
	if err != nil {
		d.close()
		return nil, fmt.Errorf("read %s: %w", configuration, err)
	}
	d.cfgUID = cfg.UID
	accounts := db.NewServiceAccounts(books, nil)
	d.names, d.tokens = names, make([]string, len(names))
	for i, name := range names {
		if d.tokens[i], err = accounts.CreateToken(ctx, name, []string{runtime.ScopeRequest}); err != nil {
			d.close()
			return nil, fmt.Errorf("token %s: %w", name, err)
		}
	}
	return d, nil
}

// pathAgents is how many service accounts the path phases spread their requests over: two
// API calls per request at up to ~1,000 requests/s stay within the 10 calls/s of each.
const pathAgents = 200

func (d *desk) close() { d.books.Close() }

// applyConfiguration applies bench-requests, taking requests from callers, with its one
// declared action.
func applyConfiguration(ctx context.Context, pool *sql.DB, callers []string) error {
	file := `configurations:
  - identifier: ` + configuration + `
    name: Bench requests
    kind: external
    callers: [` + strings.Join(callers, ", ") + `]
    tools: [` + action + `]
tools:
  - name: ` + action + `
    description: Transfer money to a supplier.
    parameters: {type: object, properties: {amount: {type: number}, to: {type: string}, invoice: {type: string}}}
    effect: non_idempotent_write
`
	a := apply.New(apply.Config{Catalog: db.New(pool), Builtin: benchenv.Tools()})
	plan, err := a.Plan(ctx, []byte(file))
	if err != nil {
		return fmt.Errorf("plan %s: %w", configuration, err)
	}
	if _, err := a.Apply(ctx, plan); err != nil {
		return fmt.Errorf("apply %s: %w", configuration, err)
	}
	return nil
}

// turnDigest is the digest request id's approval echoes: the run page's turn_digest, computed
// as the runtime computes it from the request's one call.
func turnDigest(id string) string {
	return schema.ApprovalDigest([]runtime.PendingCall{{ID: "request-" + id, Type: "function",
		Function: runtime.PendingFunction{Name: action, Arguments: []byte(arguments)}}})
}

// approve posts a person's approval of request id on its run page, as the form does (the
// session's CSRF token, the turn digest, an idempotency key).
func approve(ctx context.Context, person *benchapp.Client, id string) error {
	form := url.Values{"_csrf": {person.CSRF()}, "turn_digest": {turnDigest(id)}, "idempotency_key": {newKey()},
		views.FieldDecision: {views.DecisionApprove}}
	status, body, err := person.PostForm(ctx, views.RunPath(id)+"/approval", form)
	if err != nil {
		return err
	}
	if status != http.StatusSeeOther {
		return fmt.Errorf("approve %s: status %d: %.200s", id, status, body)
	}
	return nil
}

func newKey() string {
	var k [12]byte
	_, _ = rand.Read(k[:])
	return hex.EncodeToString(k[:])
}
