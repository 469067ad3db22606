package engine_test

import (
	"strings"
	"testing"

	"runsdesk/runtime"
	"runsdesk/runtime/model"
)

// TestDuplicateKeyArgumentsRefused: the model's arguments are read as strictly as a request
// body, so a key given twice (at the top or nested) is a tool error the model is told,
// before a standing approval, the pause or the tool sees the call; a rule for amounts up to
// 50 never approves {"amount":100000,"amount":10}.
func TestDuplicateKeyArgumentsRefused(t *testing.T) {
	cases := []struct{ name, tool, args, told string }{
		{"top level", "tag_order", `{"amount":100000,"amount":10}`, "duplicate key amount"},
		{"nested", "tag_order", `{"amount":10,"payment":{"amount":100000,"amount":10}}`, "duplicate key amount in payment"},
		{"in a list", "tag_order", `{"amount":10,"lines":[{"sku":"a","sku":"b"}]}`, "duplicate key sku in lines[0]"},
		{"never pauses for approval", "send_mail", `{"to":"a@example.com","to":"b@example.com"}`, "duplicate key to"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, []model.Turn{turn(call(tc.tool, tc.args)), turn(call("send_mail", `{}`))})
			e.writeRules(1, smallTags())
			run := e.startRuled(reviewer)
			run = e.wantStatus(run.UUID, runtime.StatusWaitingApproval)
			if n := len(e.rec.get(tc.tool)); n != 0 {
				t.Fatalf("%s ran %d times, want 0", tc.tool, n)
			}
			if n := e.ruleUses("small-tags"); n != 0 {
				t.Fatalf("the rule was used %d times, want 0", n)
			}
			want := `Error: the arguments for tool \"` + tc.tool + `\" were refused: ` + tc.told + "."
			if !strings.Contains(run.SuspendedState, want) {
				t.Fatalf("the model was not told %q; transcript %s", want, run.SuspendedState)
			}
		})
	}
}
