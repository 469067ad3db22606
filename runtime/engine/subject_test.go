package engine_test

import (
	"testing"

	"runsdesk/runtime"
	"runsdesk/runtime/model"
)

// TestPauseSubject: a pause's subject comes from the configuration's template over the first
// pending call's arguments; without a template it is those arguments compactly, and with
// sealing keys the tool name alone. A run a service account started names the account.
func TestPauseSubject(t *testing.T) {
	script := []model.Turn{turn(call("send_mail", `{"order_id":"A-1001","amount":25,"customer":{"name":"Ada"}}`), call("notify", `{"x":1}`))}
	for _, tc := range []struct {
		name     string
		template string
		sealed   bool
		want     string
	}{
		{"default", "", false, `order_id=A-1001, amount=25, customer={"name":"Ada"}`},
		{"default, sealed", "", true, "send_mail"},
		{"template", "Mail {{customer.name}} about {{order_id}} ({{amount}} EUR){{missing}}", false, "Mail Ada about A-1001 (25 EUR)"},
		{"template, sealed", "Mail {{customer.name}} about {{order_id}}", true, "Mail Ada about A-1001"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var opts []envOption
			if tc.sealed {
				opts = append(opts, withKeys(t))
			}
			e := newEnv(t, script, opts...)
			e.cfg.Subject = tc.template
			e.saveConfig()
			run := e.startAndRun(service)
			if run.Status != runtime.StatusWaitingApproval {
				t.Fatalf("status %s", run.Status)
			}
			if run.Subject != tc.want || run.StartedByService != "ci" {
				t.Errorf("subject %q, started by service %q; want %q, ci", run.Subject, run.StartedByService, tc.want)
			}
		})
	}
}
