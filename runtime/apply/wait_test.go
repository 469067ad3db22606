package apply_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"runsdesk/runtime/apply"
	"runsdesk/runtime/tool"
	"runsdesk/runtime/wait"
)

const askTool = `  - name: ask_refund_amount
    input_schema: {type: object, required: [amount], properties: {amount: {type: number, minimum: 0}}}
    http: {url: "http://127.0.0.1:9000/a"}
`

// TestWaitRules: every rule of `wait:` is refused with its path and nothing is written.
func TestWaitRules(t *testing.T) {
	cfg := func(w string) string { return "configurations:\n" + okConfiguration + "    wait: " + w + "\n" }
	tl := func(w string) string { return "tools:\n" + askTool + "    wait: " + w + "\n" }
	cases := []struct{ name, file, want string }{
		{"expires_after required", cfg("{on_expiry: deny}"), "configurations[0].wait.expires_after: required"},
		{"on_expiry required", cfg("{expires_after: 4h}"), "configurations[0].wait.on_expiry: required"},
		{"no approve", cfg("{expires_after: 4h, on_expiry: approve}"), "configurations[0].wait.on_expiry: there is no approve"},
		{"unknown action", cfg("{expires_after: 4h, on_expiry: ignore}"), `configurations[0].wait.on_expiry: must be deny, answer, cancel or escalate, not "ignore"`},
		{"unknown key", cfg("{expires_after: 4h, on_expiry: deny, snooze: 1h}"), "configurations[0].wait.snooze: unknown key"},
		{"duration too short", cfg("{expires_after: 10ms, on_expiry: deny}"), "configurations[0].wait.expires_after: must be between 1s and"},
		{"remind after expiry", cfg("{expires_after: 1h, on_expiry: deny, remind_after: 2h}"), "configurations[0].wait.remind_after: must be shorter than expires_after"},
		{"escalate without escalate_after", cfg("{expires_after: 4h, on_expiry: escalate}"), "configurations[0].wait.escalate_after: required with on_expiry: escalate"},
		{"escalate_after not before expiry", cfg("{expires_after: 2h, on_expiry: escalate, escalate_after: 2h}"), "configurations[0].wait.escalate_after: must be shorter than expires_after"},
		{"escalate_after without escalate", cfg("{expires_after: 4h, on_expiry: deny, escalate_after: 2h}"), "configurations[0].wait.escalate_after: only with on_expiry: escalate"},
		{"after_escalation answer", cfg("{expires_after: 4h, on_expiry: escalate, escalate_after: 2h, after_escalation: answer}"), `configurations[0].wait.after_escalation: must be deny or cancel, not "answer"`},
		{"answer on a configuration", cfg("{expires_after: 4h, on_expiry: answer, answer: {amount: 0}}"), "configurations[0].wait.on_expiry: answer exists only for an input tool"},
		{"answer without on_expiry answer", tl("{expires_after: 4h, on_expiry: deny, answer: {amount: 0}}"), "tools[0].wait.answer: only with on_expiry: answer"},
		{"answer on a tool without input", "tools:\n" + okTool + "    wait: {expires_after: 4h, on_expiry: answer, answer: {a: 1}}\n", "tools[0].wait.on_expiry: answer exists only for an input tool, and this tool has no input_schema"},
		{"answer on a write", "tools:\n" + okTool + "    effect: idempotent_write\n    wait: {expires_after: 4h, on_expiry: answer, answer: {a: 1}}\n", "tools[0].wait.on_expiry: answer exists only for an input tool"},
		{"answer missing", tl("{expires_after: 30m, on_expiry: answer}"), "tools[0].wait.answer: required with on_expiry: answer"},
		{"answer fails the schema", tl("{expires_after: 30m, on_expiry: answer, answer: {amount: -5}}"), "tools[0].wait.answer.amount: does not match the tool's input_schema: "},
		{"answer misses a required field", tl("{expires_after: 30m, on_expiry: answer, answer: {note: x}}"), "tools[0].wait.answer"},
		{"answer not a mapping", tl("{expires_after: 30m, on_expiry: answer, answer: [1]}"), "tools[0].wait.answer: must be a mapping"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cat := &fakeCatalog{}
			a := apply.New(apply.Config{Catalog: cat, Builtin: []tool.Tool{builtin{}}, Getenv: fullEnv})
			_, err := a.Plan(context.Background(), []byte(c.file))
			var ps apply.Problems
			if !errors.As(err, &ps) {
				t.Fatalf("Plan error = %v, want Problems", err)
			}
			found := false
			for _, p := range ps {
				found = found || strings.HasPrefix(p.String(), c.want)
			}
			if !found {
				t.Errorf("problems:\n%s\nwant one starting %q", strings.Join(lines(err), "\n"), c.want)
			}
			if cat.writes != 0 {
				t.Errorf("%d writes", cat.writes)
			}
		})
	}
}

// TestWaitApplies: the example applies; the policies reach the catalog as written,
// and applying the same file again changes nothing.
func TestWaitApplies(t *testing.T) {
	file := `configurations:
  - identifier: refunds
    name: Refunds
    provider: {kind: scripted, script: [{content: hi}]}
    tools: [ask_refund_amount]
    wait:
      expires_after: 4h
      on_expiry: escalate
      remind_after: 1h
      escalate_after: 2h
      after_escalation: cancel
tools:
` + askTool + `    wait: {expires_after: 30m, on_expiry: answer, answer: {amount: 0}}
`
	cat := &fakeCatalog{}
	a := apply.New(apply.Config{Catalog: cat, Getenv: fullEnv})
	p, err := a.Plan(context.Background(), []byte(file))
	if err != nil {
		t.Fatalf("plan: %v", err)
	}
	if _, err := a.Apply(context.Background(), p); err != nil {
		t.Fatalf("apply: %v", err)
	}
	want := wait.Policy{ExpiresAfter: 4 * time.Hour, OnExpiry: wait.Escalate, RemindAfter: time.Hour, EscalateAfter: 2 * time.Hour, AfterEscalation: wait.Cancel}
	if got := cat.configs[0].Wait; encode(got) != encode(want) {
		t.Fatalf("configuration wait = %+v, want %+v", got, want)
	}
	if got := cat.tools[0].Wait; got.ExpiresAfter != 30*time.Minute || got.OnExpiry != wait.Answer || string(got.Answer) != `{"amount":0}` {
		t.Fatalf("tool wait = %+v", got)
	}
	again, err := a.Plan(context.Background(), []byte(file))
	if err != nil {
		t.Fatalf("plan again: %v", err)
	}
	for _, c := range again.Changes {
		if c.Action != apply.Unchanged {
			t.Fatalf("second plan: %+v", again.Changes)
		}
	}
}
