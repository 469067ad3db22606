package main

import (
	"context"
	"strings"
	"testing"

	"runsdesk/app"
	"runsdesk/runtime"
	"runsdesk/runtime/demo"
	"runsdesk/runtime/jsonpatch"
	"runsdesk/runtime/schema"
)

// TestDemoDeskWalkThrough sets the demo desk up on a fresh database and plays every demo run
// to its end as a person would: the refund runs pause for the refund details, then for the
// refund's approval (proposing what the person entered), then for the email and the tag
// together (the email telling what the refund did, an admin's edit included); the
// customer-care runs pause for the email, then for the tag, and the reviewer may approve them
// under four-eyes: the service account demo started every run.
func TestDemoDeskWalkThrough(t *testing.T) {
	t.Parallel()
	env := newDatabase(t)
	c := store(t, env)
	ctx := context.Background()
	tools := demo.Tools()
	rt := app.NewRuntime(app.Config{DB: c.pool, Getenv: env.get, Tools: tools, Workers: 2})
	defer rt.Close()

	desk, err := setUpDemo(ctx, c, rt, tools, env.get)
	if err != nil {
		t.Fatal(err)
	}
	if !desk.fresh || len(desk.logins) != 3 || desk.runs != len(demo.Runs()) {
		t.Fatalf("desk = %+v", desk)
	}
	var out strings.Builder
	desk.print(&out, "http://127.0.0.1:1/", "./var", true)
	for _, l := range desk.logins {
		if strings.Count(out.String(), l.password) != 1 {
			t.Errorf("password of %s printed %d times", l.username, strings.Count(out.String(), l.password))
		}
	}
	admin := authenticate(t, env, "admin", desk.logins[0].password)
	reviewer := authenticate(t, env, "reviewer", desk.logins[1].password)
	authenticate(t, env, "support", desk.logins[2].password)

	for {
		ran, err := rt.RunOnce(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if !ran {
			break
		}
	}
	inbox, err := rt.Inbox(ctx, admin, runtime.WaitingQuery{Limit: 50}, nil)
	if err != nil {
		t.Fatal(err)
	}
	waiting := map[runtime.Status]int{}
	for _, v := range inbox {
		waiting[v.Run.Status]++
		if v.Run.StartedByService != demo.ServiceAccount || v.Run.BeUser != 0 {
			t.Errorf("run %s started by user %d, service account %q; want the service account %s", v.Run.UUID, v.Run.BeUser, v.Run.StartedByService, demo.ServiceAccount)
		}
	}
	if waiting[runtime.StatusWaitingInput] != 2 || waiting[runtime.StatusWaitingApproval] != 2 {
		t.Fatalf("inbox = %v, want 2 waiting for input and 2 for approval", waiting)
	}

	refunds := 0
	for _, v := range inbox {
		id := v.Run.UUID
		steps := []string{"approval send_customer_email", "approval tag_ticket"}
		approver := reviewer
		if v.Run.ConfigurationIdentifier == "refunds" {
			steps = []string{"input ask_refund_amount", "approval issue_refund", "approval send_customer_email,tag_ticket"}
			approver = admin
			refunds++
		}
		edited := refunds == 1
		for _, step := range steps {
			view, err := rt.Get(ctx, admin, id)
			if err != nil || view.Pause == nil {
				t.Fatalf("%s before %q: %+v, %v", id, step, view, err)
			}
			if got := pauseOf(view); got != step {
				t.Fatalf("%s: paused for %q, want %q", id, got, step)
			}
			if strings.HasPrefix(step, "input") {
				_, err = rt.SubmitInput(ctx, admin, id, runtime.InputSubmission{TurnDigest: view.Pause.Digest, Data: map[string]any{
					"amount": 25.5, "reason": "The charger arrived broken.", "refund_method": "store_credit", "customer_email": "ada@example.com",
				}})
			} else {
				d := runtime.ApprovalDecision{Approved: true, TurnDigest: view.Pause.Digest}
				first := view.Pause.PendingCalls[0]
				switch first.Function.Name {
				case "issue_refund":
					if got := string(first.Function.Arguments); got != `{"order_id":"A-1001","amount":25.5,"refund_method":"store_credit"}` {
						t.Errorf("%s: the refund proposed is %s, want what the person entered", id, got)
					}
					if edited {
						d.Edits = map[string]jsonpatch.Patch{first.ID: {{Op: "replace", Path: "/amount", Value: 20}}}
						d.PatchDigest = schema.PatchDigest(view.Pause.Digest, d.Edits)
					}
				case "send_customer_email":
					want := "we are refunding 25.50 EUR as store credit."
					if edited {
						want = "we are refunding 20.00 EUR as store credit."
					}
					if v.Run.ConfigurationIdentifier == "refunds" && !strings.Contains(string(first.Function.Arguments), want) {
						t.Errorf("%s: the email %s does not say %q", id, first.Function.Arguments, want)
					}
				}
				_, err = rt.Approve(ctx, approver, id, d)
			}
			if err != nil {
				t.Fatalf("%s %q: %v", id, step, err)
			}
			rt.Wait()
		}
		view, err := rt.Get(ctx, admin, id)
		if err != nil || view.Run.Status != runtime.StatusCompleted {
			t.Errorf("%s (%s) ended %s %q, want completed", id, v.Run.ConfigurationIdentifier, view.Run.Status, view.Run.ErrorClass)
		}
	}

	again, err := setUpDemo(ctx, c, rt, tools, env.get)
	if err != nil || again.fresh || len(again.logins) != 0 || again.runs != 0 {
		t.Errorf("second set-up = %+v, %v", again, err)
	}
	out.Reset()
	again.print(&out, "http://127.0.0.1:1/", "./var", true)
	if strings.Contains(out.String(), "password:") || !strings.Contains(out.String(), "rm -rf ./var") {
		t.Errorf("second start prints:\n%s", out.String())
	}
}

// pauseOf names what a waiting run waits for: "input TOOL" or "approval TOOL,TOOL".
func pauseOf(v runtime.RunView) string {
	if v.Pause.Status == runtime.StatusWaitingInput {
		return "input " + v.Pause.InputTool
	}
	var names []string
	for _, c := range v.Pause.PendingCalls {
		names = append(names, c.Function.Name)
	}
	return "approval " + strings.Join(names, ",")
}
