package main

import (
	"context"
	"fmt"

	"runsdesk/bench/benchapp"
	"runsdesk/bench/benchenv"
	"runsdesk/runtime"
)

// pageSize is the inbox page the scenarios ask for.
const pageSize = 50

// runtimeScenarios call what the inbox page calls before rendering: one page of waiting runs
// with their pauses, and the counts per kind.
func runtimeScenarios(ctx context.Context, app *benchapp.App, desk *benchenv.Desk) ([]scenario, error) {
	actor := runtime.Actor{UserUID: 1, Name: benchenv.Users[0].Name, Role: runtime.RoleAdmin}
	var deep runtime.WaitingQuery
	waiting := desk.Seed.Approval + desk.Seed.Input
	err := app.Pool.QueryRowContext(ctx, `SELECT suspended_at, uid FROM tx_nrllm_agentrun
		WHERE suspended_at > 0 ORDER BY suspended_at, uid LIMIT 1 OFFSET ?`, waiting/2).
		Scan(&deep.AfterSuspendedAt, &deep.AfterUID)
	if err != nil {
		return nil, fmt.Errorf("deep page cursor: %w", err)
	}
	deep.Limit = pageSize
	filtered := runtime.WaitingQuery{Status: runtime.StatusWaitingInput,
		ConfigurationUID: desk.Configurations["refunds"], Limit: pageSize}
	page := func(q runtime.WaitingQuery) func(context.Context, int) error {
		counts := q
		counts.AfterSuspendedAt, counts.AfterUID = 0, 0
		return func(ctx context.Context, _ int) error {
			views, err := app.Runtime.Inbox(ctx, actor, q)
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
	return []scenario{
		{name: "first", op: page(runtime.WaitingQuery{Limit: pageSize})},
		{name: "filtered", op: page(filtered)},
		{name: "deep", op: page(deep)},
	}, nil
}
