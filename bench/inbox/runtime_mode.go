package main

import (
	"context"
	"fmt"

	"runsdesk/bench/benchapp"
	"runsdesk/bench/benchenv"
	"runsdesk/runtime"
)

// pageSize is what the inbox page asks the store for: its default 25 runs plus one to know
// whether there is a next page.
const pageSize = 26

// runtimeScenarios call, for each of names, what the inbox page calls before rendering: one
// page of waiting runs with their pauses, and the counts per kind (Runtime.Inbox and
// Runtime.Counts); with storeOnly, only the Store queries beneath them (ListWaiting and
// CountWaiting). The Mine tab asks for the bench admin's runs, the assignee filter for the
// bench reviewer's (uid 2; the page resolves the username to it).
func runtimeScenarios(app *benchapp.App, desk *benchenv.Desk, deep cursor, storeOnly bool, names []string) []scenario {
	actor := runtime.Actor{UserUID: 1, Name: benchenv.Users[0].Name, Role: runtime.RoleAdmin}
	filtered := runtime.WaitingQuery{Status: runtime.StatusWaitingInput,
		ConfigurationUID: desk.Configurations["refunds"], Limit: pageSize}
	page := func(q runtime.WaitingQuery) func(context.Context, int) error {
		counts := q
		counts.AfterSuspendedAt, counts.AfterUID = 0, 0
		if storeOnly {
			return func(ctx context.Context, _ int) error {
				runs, err := app.Store.ListWaiting(ctx, q)
				if err != nil {
					return err
				}
				if len(runs) == 0 {
					return fmt.Errorf("empty page")
				}
				_, err = app.Store.CountWaiting(ctx, counts)
				return err
			}
		}
		return func(ctx context.Context, _ int) error {
			views, err := app.Runtime.Inbox(ctx, actor, q, nil)
			if err != nil {
				return err
			}
			if len(views) == 0 {
				return fmt.Errorf("empty page")
			}
			for _, v := range views {
				if v.Unreadable != "" {
					return fmt.Errorf("run %s unreadable: %s", v.Run.UUID, v.Unreadable)
				}
			}
			_, err = app.Runtime.Counts(ctx, actor, counts)
			return err
		}
	}
	queries := map[string]runtime.WaitingQuery{
		scenarioFirst:    {Limit: pageSize},
		scenarioFiltered: filtered,
		scenarioDeep:     {AfterSuspendedAt: deep.at, AfterUID: deep.uid, Limit: pageSize},
		scenarioMine:     {Assignee: actor.UserUID, Limit: pageSize},
		scenarioAssignee: {Assignee: 2, Limit: pageSize},
	}
	out := make([]scenario, 0, len(names))
	for _, name := range names {
		out = append(out, scenario{name: name, op: page(queries[name])})
	}
	return out
}

// The scenarios: the inbox's first page, the page filtered by -filter, the deep keyset page,
// the Mine tab (?assigned=me) and the assignee filter (?assignee=bench-reviewer, a colleague).
const (
	scenarioFirst    = "first"
	scenarioFiltered = "filtered"
	scenarioDeep     = "deep"
	scenarioMine     = "mine"
	scenarioAssignee = "assignee"
)

// scenarioNames are the scenarios -scenarios accepts, in the order the sweep runs them.
var scenarioNames = []string{scenarioFirst, scenarioFiltered, scenarioDeep, scenarioMine, scenarioAssignee}

// cursor is a keyset position in the inbox.
type cursor struct{ at, uid int64 }

// deepCursor returns the position of the middle waiting run: the deep page starts there.
func deepCursor(ctx context.Context, app *benchapp.App, desk *benchenv.Desk) (cursor, error) {
	var c cursor
	waiting := desk.Seed.Approval + desk.Seed.Input
	err := app.Pool.QueryRowContext(ctx, `SELECT suspended_at, uid FROM tx_nrllm_agentrun
		WHERE suspended_at > 0 ORDER BY suspended_at, uid LIMIT 1 OFFSET ?`, waiting/2).Scan(&c.at, &c.uid)
	if err != nil {
		return c, fmt.Errorf("deep page cursor: %w", err)
	}
	return c, nil
}
