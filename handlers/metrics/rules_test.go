package metrics

import (
	"context"
	"encoding/json"
	"testing"

	"runsdesk/db"
	"runsdesk/runtime"
)

// TestStandingApprovalUses: with Config.Rules, /metrics counts each standing approval's
// stored uses as runsdesk_standing_approval_uses_total{rule}.
func TestStandingApprovalUses(t *testing.T) {
	ctx := context.Background()
	pool := migratedPool(t)
	store := db.New(pool)
	rules := []runtime.StandingApproval{
		{Name: "small-refunds", Tool: "issue_refund", When: json.RawMessage(`{}`), AllowWrites: true},
		{Name: "lookups", Tool: "lookup", When: json.RawMessage(`{}`)},
	}
	if err := store.WriteStandingApprovals(ctx, rules, nil, 1); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.ExecContext(ctx, `UPDATE tx_runsdesk_standing_approval SET uses = 7 WHERE name = 'small-refunds'`); err != nil {
		t.Fatal(err)
	}
	got := scrape(t, newEcho(New(Config{Source: store, Rules: store})))
	mustContain(t, got,
		`runsdesk_standing_approval_uses_total{rule="small-refunds"} 7`,
		`runsdesk_standing_approval_uses_total{rule="lookups"} 0`)
}
