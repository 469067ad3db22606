package benchenv

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"runsdesk/app"
	"runsdesk/bench/seed"
	"runsdesk/db"
	"runsdesk/runtime"
	"runsdesk/runtime/engine"
)

// templates runs real runs of the desk's scripted configurations to their pauses and returns
// their stored states: for KindInbox the refund details form (input), the customer e-mail
// (approval) and, after submitting the form, the refund itself (approval); for KindSubmit the
// bench-input form; for KindQuorum also bench-quorum's approval of two.
func templates(ctx context.Context, pool *sql.DB, kind Kind) ([]seed.Template, error) {
	store := db.New(pool)
	rt := app.NewRuntime(app.Config{DB: pool, Tools: Tools(), Workers: 1})
	defer rt.Close()
	reviewer := runtime.Actor{UserUID: 2, Name: Users[1].Name, Role: runtime.RoleReviewer}
	admin := runtime.Actor{UserUID: 1, Name: Users[0].Name, Role: runtime.RoleAdmin}
	starts := []string{"refunds", "customer-care"}
	switch kind {
	case KindSubmit:
		starts = []string{"bench-input"}
	case KindQuorum:
		starts = []string{"bench-input", "bench-quorum"}
	}
	var out []seed.Template
	var uuids []string
	for _, cfg := range starts {
		id, err := pause(ctx, rt, reviewer, cfg)
		if err != nil {
			return nil, err
		}
		t, err := capture(ctx, store, id)
		if err != nil {
			return nil, err
		}
		out, uuids = append(out, t), append(uuids, id)
	}
	if kind == KindInbox {
		if err := submitRefundForm(ctx, rt, admin, uuids[0]); err != nil {
			return nil, err
		}
		t, err := capture(ctx, store, uuids[0])
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}

// capture returns the pause of run id as a template.
func capture(ctx context.Context, store *db.Store, id string) (seed.Template, error) {
	run, err := store.FindByUUID(ctx, id)
	if err != nil {
		return seed.Template{}, fmt.Errorf("benchenv: template run: %w", err)
	}
	if !run.Status.Waiting() {
		return seed.Template{}, fmt.Errorf("benchenv: template run of %s is %s, not paused", run.ConfigurationIdentifier, run.Status)
	}
	return seed.Template{Status: string(run.Status), ConfigurationUID: run.ConfigurationUID,
		ConfigurationIdentifier: run.ConfigurationIdentifier, State: run.SuspendedState,
		Tools: strings.Split(run.PendingTools, ",")}, nil
}

// pause starts a run of cfg and executes it until it pauses.
func pause(ctx context.Context, rt *engine.Runtime, actor runtime.Actor, cfg string) (string, error) {
	run, err := rt.Start(ctx, actor, cfg, "Order A-1001 arrived with a broken charger. Please refund the customer.")
	if err != nil {
		return "", fmt.Errorf("benchenv: start %s: %w", cfg, err)
	}
	for range 10 {
		ran, err := rt.RunOnce(ctx)
		if err != nil {
			return "", fmt.Errorf("benchenv: execute %s: %w", cfg, err)
		}
		if !ran {
			break
		}
	}
	return run.UUID, nil
}

// RefundForm is a valid submission of the demo's refund details form.
func RefundForm() map[string]any {
	return map[string]any{"amount": 25.0, "reason": "The charger arrived broken.",
		"refund_method": "original_payment", "customer_email": "ada@example.com"}
}

// submitRefundForm submits the refund details form of run id and waits for the continuation,
// which pauses again for the refund's approval.
func submitRefundForm(ctx context.Context, rt *engine.Runtime, actor runtime.Actor, id string) error {
	v, err := rt.Get(ctx, actor, id)
	if err != nil || v.Pause == nil {
		return fmt.Errorf("benchenv: read the refund form of %s: %v", id, err)
	}
	if _, err := rt.SubmitInput(ctx, actor, id, runtime.InputSubmission{Data: RefundForm(),
		TurnDigest: v.Pause.Digest, IdempotencyKey: "bench-template"}); err != nil {
		return fmt.Errorf("benchenv: submit the refund form of %s: %w", id, err)
	}
	rt.Wait()
	return nil
}
